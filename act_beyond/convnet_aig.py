"""ConvNet-AIG (Veit & Belongie, ECCV 2018): a residual network whose blocks each have a gate.

A residual block computes x_l = x_{l-1} + F_l(x_{l-1}). ConvNet-AIG puts a gate in front of
every block and lets each image decide whether to run it:

    x_l = x_{l-1} + z_l(x_{l-1}) F_l(x_{l-1}),        z_l in {0, 1}, one per image and block

The gate reads the block's input through global average pooling and a small MLP
(C -> 16 -> BatchNorm -> ReLU -> 2 logits, "skip" and "execute"), and makes a hard decision with
the straight-through Gumbel-softmax at temperature 1: the forward pass uses the one-hot argmax of
logits + Gumbel noise, the backward pass the gradient of the softmax of the same sum. The open
logit starts with a bias so that most gates start open. A closed gate leaves the image untouched
(no remainder, no averaging: the skip connection carries x_{l-1} on as it is), and at inference a
closed block is not computed at all. Nothing halts: every block has its own gate, and block 4
can run for an image that skipped block 3.

What keeps the gates from all staying open is the target-rate loss: for each block l, the
fraction of the batch that executes it, zbar_l = (1/B) sum_b z_bl, is pulled towards a target t,

    L_target = sum_l (t - zbar_l)^2,        L = cross-entropy + lambda * L_target

(The paper writes it as a mean over the blocks; a sum is the same loss with lambda multiplied by
the number of blocks.)

This module holds the pieces, all in PyTorch (the training loop is the experiment's,
``act_experiments.experiments.convnet_aig.train``):

    data = load_digits_split(seed=0)                       # scikit-learn's 8 x 8 digits, offline
    model = build(gates="hard", blocks=6, seed=0)          # a ConvNet-AIG; "soft"; "none" = ResNet
    result = evaluate(model, data["x_test"], data["y_test"])
    result["accuracy"], result["z"].mean()                 # accuracy, fraction of blocks executed

Shapes: images (B, 1, 8, 8) float32 in [0, 1], labels (B,) int64, feature maps (B, C, 8, 8),
gate logits (B, 2) with column 0 "skip" and column 1 "execute", gates z (B,) per block and
(B, L) for the network.

Randomness: the initial weights come from torch's default initialisers, which take no generator;
``build`` draws them inside ``torch.random.fork_rng`` after ``torch.manual_seed(seed)``, so the
global generator is left as it was. Gumbel noise comes from a torch.Generator passed in.
"""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from act_numpy.checks import check_float, check_int


GATE_KINDS = ("hard", "soft", "none")
# how a forward pass sets the gates: Gumbel sample (straight-through), argmax of the logits
# without noise, the softmax probability of "execute" (a soft, highway-like gate), or all open
GATE_MODES = ("sample", "argmax", "soft", "open")
SKIP, EXECUTE = 0, 1          # the two columns of a gate's logits
DIGIT_CLASSES = 10


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------

def load_digits_split(seed=0, test_fraction=0.25):
    """scikit-learn's 8 x 8 handwritten digits (1797 images, shipped inside the package), split
    at random into a training and a test set, the same split for the same seed.

    Returns a dict of tensors: x_train (N_train, 1, 8, 8) and x_test (N_test, 1, 8, 8) float32 in
    [0, 1] (the 0..16 grey levels divided by 16), y_train (N_train,) and y_test (N_test,) int64
    labels 0..9. Nothing is downloaded.
    """
    check_float("test_fraction", test_fraction, 0.0, 1.0, low_open=True, high_open=True)
    try:
        from sklearn.datasets import load_digits
    except ImportError as err:    # pragma: no cover - scikit-learn is in requirements.txt
        raise ImportError("the 8 x 8 digits ship with scikit-learn: pip install scikit-learn") from err
    digits = load_digits()
    images = digits.images.astype(np.float32) / 16.0
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = int(round(test_fraction * len(labels)))
    test, train_ = order[:n_test], order[n_test:]
    as_x = lambda idx: torch.from_numpy(images[idx][:, None, :, :].copy())
    as_y = lambda idx: torch.from_numpy(labels[idx].copy())
    return {"x_train": as_x(train_), "y_train": as_y(train_), "x_test": as_x(test), "y_test": as_y(test)}


# ---------------------------------------------------------------------------------------------
# the gate
# ---------------------------------------------------------------------------------------------

def open_bias(open_fraction):
    """The bias of the "execute" logit (over "skip") that opens a gate with probability
    ``open_fraction`` when the rest of the logits are 0: log(q / (1 - q)).

    With the Gumbel-max trick, argmax(l + g) picks column k with probability softmax(l)_k, and
    softmax((0, b))_1 = sigmoid(b), so b = logit(q). 0.85 gives about 1.73.
    """
    q = check_float("open_fraction", open_fraction, 0.0, 1.0, low_open=True, high_open=True)
    return math.log(q / (1.0 - q))


def gumbel_noise(shape, generator=None, dtype=torch.float32, device="cpu"):
    """Standard Gumbel noise g = -log(-log u), u ~ Uniform(0, 1), of the given shape.

    u is kept inside [tiny, 1 - eps/2] so that neither logarithm sees 0.
    """
    u = torch.rand(shape, generator=generator, dtype=dtype, device=device)
    info = torch.finfo(dtype)
    u = u.clamp(min=info.tiny, max=1.0 - info.eps / 2)
    return -torch.log(-torch.log(u))


def gumbel_softmax(logits, temperature=1.0, hard=True, noise=None, generator=None):
    """The (straight-through) Gumbel-softmax of logits (..., c) over c categories, along the last axis.

    y = softmax((logits + g) / temperature), with g Gumbel noise (``noise`` if given, of the
    logits' shape, else drawn from ``generator``). With hard=True the forward value is the
    one-hot argmax of y (equivalently of logits + g), while the gradient is y's:

        y_hard = onehot(argmax y) - y.detach() + y        (value onehot, gradient d y)

    Returns a tensor of the logits' shape.
    """
    check_float("temperature", temperature, 0.0, low_open=True)
    if noise is None:
        noise = gumbel_noise(logits.shape, generator, dtype=logits.dtype, device=logits.device)
    elif noise.shape != logits.shape:
        raise ValueError(f"noise must have the logits' shape {tuple(logits.shape)}, got {tuple(noise.shape)}")
    y = torch.softmax((logits + noise) / temperature, dim=-1)
    if not hard:
        return y
    onehot = F.one_hot(y.argmax(dim=-1), y.shape[-1]).to(y.dtype)
    return onehot - y.detach() + y


class Gate(nn.Module):
    """One block's gate: global average pooling -> Linear(C, hidden) -> BatchNorm -> ReLU ->
    Linear(hidden, 2), whose two outputs are the logits of "skip" (column 0) and "execute"
    (column 1). The execute logit's bias starts at ``open_bias(open_fraction)``.

    forward(x (B, C, H, W), mode, generator) -> (z (B,), logits (B, 2)), with z per mode:
        "sample"  straight-through Gumbel-softmax at temperature 1: z in {0, 1}, gradient of
                  softmax(logits + g)_1
        "argmax"  1 where the execute logit is larger, else 0; no noise, no gradient
        "soft"    softmax(logits)_1 in (0, 1): a soft gate, no noise
        "open"    1 for every image
    """

    def __init__(self, channels, hidden=16, open_fraction=0.85):
        super().__init__()
        check_int("channels", channels)
        check_int("hidden", hidden)
        self.fc1 = nn.Linear(channels, hidden)
        self.bn = nn.BatchNorm1d(hidden)
        self.fc2 = nn.Linear(hidden, 2)
        with torch.no_grad():
            self.fc2.bias.copy_(torch.tensor([0.0, open_bias(open_fraction)]))

    def logits(self, x):
        """(B, 2) logits of skip and execute from feature maps (B, C, H, W)."""
        pooled = x.mean(dim=(2, 3))                                    # (B, C)
        return self.fc2(F.relu(self.bn(self.fc1(pooled))))

    def forward(self, x, mode="sample", generator=None):
        logits = self.logits(x)
        if mode == "sample":
            z = gumbel_softmax(logits, temperature=1.0, hard=True, generator=generator)[:, EXECUTE]
        elif mode == "argmax":
            z = (logits[:, EXECUTE] > logits[:, SKIP]).to(logits.dtype)
        elif mode == "soft":
            z = torch.softmax(logits, dim=-1)[:, EXECUTE]
        elif mode == "open":
            z = torch.ones(x.shape[0], dtype=x.dtype, device=x.device)
        else:
            raise ValueError(f"mode must be one of {GATE_MODES}, got {mode!r}")
        return z, logits


# ---------------------------------------------------------------------------------------------
# the network
# ---------------------------------------------------------------------------------------------

class Block(nn.Module):
    """The residual function F of one block, (B, C, H, W) -> same shape.

    convs=2: F(x) = BN(conv3x3(ReLU(BN(conv3x3(x))))), ResNet's basic block;
    convs=1: F(x) = BN(conv3x3(ReLU(x))), one convolution (half the cost; each block widens the
    receptive field by 2 pixels instead of 4).
    No ReLU after the sum x + z F(x): a closed gate then passes x on exactly.
    """

    def __init__(self, channels, convs=2):
        super().__init__()
        self.convs = check_int("convs", convs, 1, 2)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        if convs == 2:
            self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        if self.convs == 1:
            return self.bn1(self.conv1(F.relu(x)))
        return self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))


class AIGNet(nn.Module):
    """A small ConvNet-AIG for 8 x 8 images: stem -> L gated residual blocks -> pooling -> classes.

    stem: conv3x3(1 -> C) + BN + ReLU; each block l: x_l = x_{l-1} + z_l F_l(x_{l-1}) with its
    own Gate; head: global average pooling and Linear(C, classes). Every block keeps the 8 x 8
    resolution and C channels, so each one costs the same.

    gates: "hard" (ConvNet-AIG: Gumbel samples in training, argmax at evaluation), "soft"
    (softmax probabilities, a highway-like gate, in training and evaluation) or "none" (a plain
    ResNet: every block always runs).

    forward(x (B, 1, 8, 8), mode=None, generator=None, skip=False) -> (logits (B, classes),
    z (B, L)). mode overrides the gates (one of GATE_MODES; default from ``gates`` and
    ``self.training``). skip=True computes each block only on the images whose gate is exactly
    1 and leaves the rest untouched, which needs z in {0, 1} (mode "argmax" or "open") and gives
    the same result as computing every block and multiplying by z (in eval mode).
    """

    def __init__(self, blocks=6, channels=16, classes=DIGIT_CLASSES, gates="hard", gate_hidden=16,
                 open_fraction=0.85, convs=2):
        super().__init__()
        if gates not in GATE_KINDS:
            raise ValueError(f"gates must be one of {GATE_KINDS}, got {gates!r}")
        check_int("blocks", blocks, 0)
        check_int("channels", channels)
        check_int("classes", classes, 2)
        self.gates = gates
        self.stem = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
                                  nn.ReLU())
        self.blocks = nn.ModuleList(Block(channels, convs) for _ in range(blocks))
        # a plain ResNet (gates="none") has no gate units at all
        self.gate_units = nn.ModuleList(Gate(channels, gate_hidden, open_fraction)
                                        for _ in range(blocks if gates != "none" else 0))
        self.head = nn.Linear(channels, classes)

    @property
    def num_blocks(self):
        return len(self.blocks)

    def default_mode(self):
        if self.gates == "none":
            return "open"
        if self.gates == "soft":
            return "soft"
        return "sample" if self.training else "argmax"

    def forward(self, x, mode=None, generator=None, skip=False):
        if x.dim() != 4:
            raise ValueError(f"x must be (B, C, H, W), got shape {tuple(x.shape)}")
        mode = mode or self.default_mode()
        if mode not in GATE_MODES:
            raise ValueError(f"mode must be one of {GATE_MODES}, got {mode!r}")
        if self.gates == "none" and mode != "open":
            raise ValueError(f"a network built with gates='none' has no gates: mode must be 'open', got {mode!r}")
        if skip and mode not in ("argmax", "open"):
            raise ValueError(f"skip=True needs gates that are exactly 0 or 1 (mode 'argmax' or 'open'), "
                             f"got mode {mode!r}")
        x_l = self.stem(x)                                   # the feature map x_l, x_0 from the stem
        zs = []
        for l, block in enumerate(self.blocks):
            if mode == "open":
                z = torch.ones(x.shape[0], dtype=x_l.dtype, device=x_l.device)
            else:
                z, _ = self.gate_units[l](x_l, mode, generator)
            if skip:
                run = z > 0.5
                if run.any():
                    x_l = x_l.clone()
                    x_l[run] = x_l[run] + block(x_l[run])        # closed gates: nothing computed
            else:
                x_l = x_l + z[:, None, None, None] * block(x_l)  # x_l = x_{l-1} + z_l F_l(x_{l-1})
            zs.append(z)
        z_all = torch.stack(zs, dim=1) if zs else x_l.new_zeros(x.shape[0], 0)
        return self.head(x_l.mean(dim=(2, 3))), z_all


def build(gates="hard", blocks=6, channels=16, seed=0, **kwargs):
    """An AIGNet whose initial weights depend on ``seed`` only (drawn by torch's default
    initialisers inside fork_rng after manual_seed(seed): the global generator is untouched)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return AIGNet(blocks=blocks, channels=channels, gates=gates, **kwargs)


def block_macs(channels=16, size=8, convs=2):
    """Multiply-accumulates of one residual block on one image: ``convs`` 3 x 3 convolutions,
    C -> C, on a size x size map (the batch norms, the ReLU and the sum are not counted)."""
    return convs * size * size * channels * channels * 9


def gate_macs(channels=16, hidden=16, size=8):
    """Multiply-accumulates (additions of the pooling counted as such) of one gate on one image."""
    return size * size * channels + channels * hidden + hidden * 2


# ---------------------------------------------------------------------------------------------
# the loss
# ---------------------------------------------------------------------------------------------

def target_rate_loss(z, target, reduction="sum"):
    """The target-rate loss sum_l (t - zbar_l)^2, zbar_l = mean over the batch of z[:, l].

    z (B, L): the gates of a batch (0/1 with straight-through gradients, or soft values);
    target: t in [0, 1]. reduction "sum" (over the blocks) or "mean" (the paper's form).
    Returns a scalar tensor; its gradient on z[b, l] is -2 (t - zbar_l) / B (divided by L for
    "mean"): every image's gate in a block that runs too rarely is pushed open, too often closed.
    """
    check_float("target", target, 0.0, 1.0)
    if z.dim() != 2:
        raise ValueError(f"z must be (B, L), got shape {tuple(z.shape)}")
    if reduction not in ("sum", "mean"):
        raise ValueError(f"reduction must be 'sum' or 'mean', got {reduction!r}")
    per_block = (float(target) - z.mean(dim=0)) ** 2
    return per_block.sum() if reduction == "sum" else per_block.mean()


@torch.no_grad()
def evaluate(model, x, y, mode=None, skip=False):
    """Accuracy and gates of ``model`` (in eval mode) on images x (N, 1, 8, 8), labels y (N,).

    mode: as in AIGNet.forward (default: argmax for hard gates, soft for soft, open for none).
    Returns {"accuracy": float, "z": (N, L) NumPy gates, "predictions": (N,) NumPy,
    "executed": mean gate value, "computed": fraction of (image, block) pairs whose block must
    be computed, i.e. with z > 0}.
    """
    model.eval()
    logits, z = model(x, mode=mode, skip=skip)
    predictions = logits.argmax(dim=1)
    z = z.numpy().astype(np.float64)
    return {"accuracy": (predictions == y).float().mean().item(), "z": z, "predictions": predictions.numpy(),
            "executed": float(z.mean()) if z.size else 0.0,
            "computed": float((z > 0).mean()) if z.size else 0.0}


def class_block_usage(z, labels, classes=DIGIT_CLASSES):
    """Fraction of the images of each class that execute each block: (classes, L) from gates
    z (N, L) and labels (N,). A class without images gets NaN."""
    z, labels = np.asarray(z, dtype=float), np.asarray(labels)
    if z.ndim != 2 or labels.shape != (z.shape[0],):
        raise ValueError(f"z must be (N, L) and labels (N,), got {z.shape} and {labels.shape}")
    usage = np.full((classes, z.shape[1]), np.nan)
    for c in range(classes):
        rows = labels == c
        if rows.any():
            usage[c] = z[rows].mean(axis=0)
    return usage


# ---------------------------------------------------------------------------------------------
# one run of the sweep, and the figures
# ---------------------------------------------------------------------------------------------
