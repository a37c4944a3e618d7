"""PonderNet (Banino, Balaguer and Blundell 2021) in PyTorch, on the same ponder step as ACT.

    out = ponder_forward(x, params, max_steps=20)            # every step's output and halting
    loss, parts = pondernet_loss(out, target, beta=0.01, lambda_p=0.2)
    n = halting_step(out, mode="sample", generator=g)          # inference: where each row stops
    y = output_at(out, n)

The network is ACT's (``act_torch``): the seven parameters W_x, W_s, b_s, W_h, b_h, W_y, b_y,
the first-step flag, a tanh RNN or LSTM cell. One input x (B, 1, D) is fed to every step, as in
ACT's parity, and step n makes the state s^n by eq. (3) of Graves (2016), through the very ponder
step ``act_torch.act`` uses. From that state come an output and a halting probability,

    y^n = W_y s^n + b_y,         lambda_n = sigmoid(W_h s^n + b_h)        (ACT's eqs 4 and 5),

so a PonderNet and an ACT network with the same parameters take the same states and the same
halting units (h^n of ACT is lambda_n here). What differs is what is done with them:

    ACT        p^n = h^n for n < N(t), p^N = R(t): a mean field y = sum_n p^n y^n, and the
               loss of that mean output, L(y) + tau (N + R)
    PonderNet  p_n = lambda_n prod_{j<n} (1 - lambda_j): the probability of halting at step n
               (first success of a coin with bias lambda_n at step n); the loss is the expected
               loss over the halting step plus a KL term to a geometric prior,

                   L = sum_n p_n L(y, y^n) + beta KL(p || p_G),
                   p_G(n) = lambda_p (1 - lambda_p)^(n-1) / Z   (truncated at the step limit N
                   and normalised: Z = 1 - (1 - lambda_p)^N)

Both p are distributions over the steps: attention weights over the ponder steps. ACT reads the
steps out *softly* (the output is the weighted mean); PonderNet reads them out *hard* at
inference: it samples one halting step (or takes the first step where the cumulative p reaches
a threshold) and answers with that step's output.

Training runs a fixed number of steps N (``max_steps``) and gives the last step all the
probability that remains: lambda_N = 1, so sum_n p_n = 1 exactly. At inference the limit may be
larger than in training (``max_steps`` is an argument of ``ponder_forward``, not of the
parameters).

Shapes carry an optional leading member axis: K networks of one shape at once, their parameters
stacked (W_s (K, H, G), ...) as in ``act_engine.torch_population``; x is then (K, B, 1, D) and every
result gains a leading K. ``Population`` trains K PonderNets (seeds, beta, lambda_p, lr per
member) that way, with ``act_engine.adam``'s update.
"""

import time
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from act_experiments import checkpoints, config, tasks, training
from act_numpy.params import PARAM_NAMES, init_params
from act_engine import adam
from act_numpy.checks import check_float, check_int
from act_torch.act import ponder_step, prepare

MODES = ("sample", "cumulative")
_DTYPES = {"float32": torch.float32, "float64": torch.float64}


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------







# ---------------------------------------------------------------------------------------------
# The halting distribution, the prior and the KL term
# ---------------------------------------------------------------------------------------------

def halting_distribution(lam):
    """PonderNet's p from the halting probabilities, with the last step taking what remains.

    lam (..., N): lambda_1..lambda_N in [0, 1]. Returns p (..., N) with

        p_n = lambda_n prod_{j<n} (1 - lambda_j)   for n < N,
        p_N =          prod_{j<N} (1 - lambda_j)   (lambda_N taken as 1),

    so that every p_n >= 0 and sum_n p_n = 1. The product is the probability of not having
    halted before step n.
    """
    if not isinstance(lam, torch.Tensor) or lam.dim() < 1 or lam.shape[-1] < 1:
        raise ValueError("lam must be a tensor (..., N) with N >= 1")
    still = torch.cumprod(1.0 - lam, dim=-1)                     # prod_{j<=n} (1 - lambda_j)
    not_yet = torch.cat([torch.ones_like(lam[..., :1]), still[..., :-1]], dim=-1)   # prod_{j<n}
    last = torch.zeros_like(lam, dtype=torch.bool)
    last[..., -1] = True
    return torch.where(last, not_yet, lam * not_yet)


def geometric_prior(lambda_p, max_steps, *, dtype=torch.float64, device=None):
    """The truncated, normalised geometric prior p_G (max_steps,): p_G(n) proportional to
    lambda_p (1 - lambda_p)^(n-1) for n = 1..max_steps, divided by its sum 1 - (1 - lambda_p)^N.

    Its mean is close to 1 / lambda_p when max_steps is well beyond it.
    """
    lambda_p = check_float("lambda_p", lambda_p, 0.0, 1.0, low_open=True, high_open=True)
    max_steps = check_int("max_steps", max_steps)
    n = torch.arange(max_steps, dtype=torch.float64)
    prior = lambda_p * (1.0 - lambda_p) ** n
    return (prior / prior.sum()).to(dtype=dtype, device=device)


def kl_divergence(p, prior):
    """KL(p || p_G) = sum_n p_n log(p_n / p_G(n)), over the last axis; p (..., N), prior (N,)
    or broadcastable. A step with p_n = 0 adds 0 (the limit of p log p). This is the direction
    PonderNet's loss uses: the halting distribution first, the prior second. (torch's
    ``F.kl_div(p.log(), prior)`` computes the other one, KL(p_G || p).)
    """
    # log of p clamped to the smallest normal number: the value is unchanged (p log p -> 0), and
    # the gradient stays finite where a saturated lambda makes some p_n exactly 0
    tiny = torch.finfo(p.dtype).tiny
    return (p * (torch.log(p.clamp_min(tiny)) - torch.log(prior))).sum(dim=-1)


def expected_steps(p):
    """E[n] = sum_n n p_n over the last axis: the mean number of steps PonderNet takes."""
    n = torch.arange(1, p.shape[-1] + 1, dtype=p.dtype, device=p.device)
    return (p * n).sum(dim=-1)


# ---------------------------------------------------------------------------------------------
# The forward pass: every step's output and halting probability
# ---------------------------------------------------------------------------------------------

class PonderOutput(NamedTuple):
    """What ``ponder_forward`` returns ((...) is () for one network, (K,) for K of them).

    y     (..., B, N, O)  each step's output y^n (logits)
    lam   (..., B, N)     halting probabilities lambda_n = sigmoid(W_h s^n + b_h), as computed
                          (lambda_N is not yet replaced by 1: p does that)
    p     (..., B, N)     the halting distribution (``halting_distribution``)
    states (..., B, N, H) the states s^n
    """
    y: torch.Tensor
    lam: torch.Tensor
    p: torch.Tensor
    states: torch.Tensor


def _check_members(x, P, cell):
    """Light checks for K stacked networks (one network goes through act_torch.act.prepare)."""
    if x.dim() != 4:
        raise ValueError(f"x must be (K, B, 1, D) for stacked parameters, got shape {tuple(x.shape)}")
    K, _, _, D = x.shape
    G = P["W_s"].shape[-1]
    H = P["W_s"].shape[-2]
    O = P["W_y"].shape[-1]
    want = {"W_x": (K, D + 1, G), "W_s": (K, H, G), "b_s": (K, G), "W_h": (K, H, 1), "b_h": (K, 1),
            "W_y": (K, H, O), "b_y": (K, O)}
    for name, shape in want.items():
        if tuple(P[name].shape) != shape:
            raise ValueError(f"params[{name!r}] must have shape {shape}, got {tuple(P[name].shape)}")
    if G != (4 * H if cell == "lstm" else H):
        raise ValueError(f"W_s (K, H, G) must have G = {'4H' if cell == 'lstm' else 'H'} for cell {cell!r}")
    return x, {k: P[k].to(dtype=x.dtype, device=x.device) for k in PARAM_NAMES}


def ponder_forward(x, params, *, max_steps=20, cell="rnn"):
    """Run ``max_steps`` steps on one input and return every step's output and halting.

    x (B, 1, D) float tensor, or (K, B, 1, D) with every parameter stacked on a leading K axis.
    params: ACT's seven parameters (``act_numpy.params``), tensors or arrays. max_steps: the
    step limit N >= 1. cell: "rnn" or "lstm". Returns a ``PonderOutput``.

    Step n is ACT's ponder step (``act_torch.act``): s^n = S(s^{n-1}, x + delta_{n,1}) with
    s^0 = 0 (eq. 3), so step 1's output and lambda come from the state after the first update,
    never from the zero state. The steps after the one a row halts at change nothing before
    it, so computing all N and picking one later gives what stopping there would give.
    """
    max_steps = check_int("max_steps", max_steps)
    if cell not in ("rnn", "lstm"):
        raise ValueError(f"cell must be 'rnn' or 'lstm', got {cell!r}")
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    stacked = x.dim() == 4
    if stacked:
        if not isinstance(params, dict):
            raise ValueError("params must be a dict of the seven ACT parameters")
        P = {k: v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for k, v in params.items()}
        missing = sorted(set(PARAM_NAMES) - set(P))
        if missing:
            raise ValueError(f"params lacks {missing}")
        if not x.is_floating_point():
            raise ValueError(f"x must be a float tensor, got dtype {x.dtype}")
        x, P = _check_members(x, P, cell)
    else:
        # act_torch's checks: shapes, cell, NaN; max_steps plays the part of ACT's cap M
        x, P, _ = prepare(x, params, cell, 0.01, max_steps)
    if x.shape[-2] != 1:
        raise ValueError(f"x must hold one input per row (T = 1), got T = {x.shape[-2]}")
    # a bias of K members, (K, G), broadcasts over each member's rows as (K, 1, G)
    rows = (lambda v: v.unsqueeze(-2)) if stacked else (lambda v: v)
    D, H = x.shape[-1], P["W_s"].shape[-2]
    x_part = x[..., 0, :] @ P["W_x"][..., :D, :] + rows(P["b_s"])    # eq. (3)'s input part, (..., B, G)
    x_first = x_part + rows(P["W_x"][..., D, :])                     # n = 1: the flag delta_{n,1}
    zeros = x.new_zeros(*x_part.shape[:-1], H)
    state, states = ((zeros, zeros) if cell == "lstm" else zeros), []
    for n in range(1, max_steps + 1):
        s, state = ponder_step(x_first if n == 1 else x_part, state, P["W_s"], cell)   # ACT's own step
        states.append(s)
    S = torch.stack(states, dim=-2)                              # (..., B, N, H)
    flat = S.flatten(-3, -2) if stacked else S.reshape(-1, S.shape[-1])

    def affine(bias, W):
        out = torch.baddbmm(rows(bias), flat, W) if stacked else torch.addmm(bias, flat, W)
        return out.view(*S.shape[:-1], -1)                       # (..., B, N, out)

    lam = torch.sigmoid(affine(P["b_h"], P["W_h"]))[..., 0]     # (..., B, N): eq. (5)
    y = affine(P["b_y"], P["W_y"])                               # (..., B, N, O): eq. (4)
    return PonderOutput(y, lam, halting_distribution(lam), S)


# ---------------------------------------------------------------------------------------------
# The loss
# ---------------------------------------------------------------------------------------------

def step_losses(y, target):
    """Binary cross-entropy of every step's output: y (..., B, N, 1) logits, target (..., B)
    0/1. Returns (..., B, N)."""
    z = y[..., 0]
    return F.binary_cross_entropy_with_logits(z, target[..., None].expand_as(z).to(z.dtype), reduction="none")


def pondernet_loss(out, target, *, beta=0.01, lambda_p=0.2):
    """PonderNet's loss for a sigmoid output, averaged over the batch.

        L = mean_b [ sum_n p_n BCE(y^n, target) ]  +  beta mean_b [ KL(p || p_G(lambda_p)) ]

    out: a ``PonderOutput``; target (..., B) 0/1 tensor. beta >= 0 and lambda_p in (0, 1) are
    numbers, or (K,) tensors for K stacked networks (one per member). Returns loss (...) with
    gradient and a dict of its parts without gradient: "reconstruction" (...), "kl" (...) and
    "steps" (...), the batch mean of E[n].
    """
    p = out.p
    N = p.shape[-1]
    per_step = step_losses(out.y, target)                                  # (..., B, N)
    reconstruction = (p * per_step).sum(dim=-1).mean(dim=-1)               # (...)
    if isinstance(lambda_p, torch.Tensor):
        prior = torch.stack([geometric_prior(float(v), N, dtype=p.dtype, device=p.device)
                             for v in lambda_p.reshape(-1).tolist()]).view(*lambda_p.shape, 1, N)
    else:
        prior = geometric_prior(lambda_p, N, dtype=p.dtype, device=p.device)
    kl = kl_divergence(p, prior).mean(dim=-1)                              # (...)
    if isinstance(beta, torch.Tensor):
        beta = beta.to(dtype=p.dtype, device=p.device)
    else:
        beta = check_float("beta", beta, 0.0)
    loss = reconstruction + beta * kl
    parts = {"reconstruction": reconstruction.detach(), "kl": kl.detach(),
             "steps": expected_steps(p).mean(dim=-1).detach()}
    return loss, parts


# ---------------------------------------------------------------------------------------------
# Inference: where to halt
# ---------------------------------------------------------------------------------------------

def halting_step(out, *, mode="sample", generator=None, threshold=0.5):
    """The step each row halts at during inference, 1..N (int64, shape (..., B)).

    mode "sample": walk the steps and halt at step n with probability lambda_n (lambda_N = 1,
    so every row halts by the step limit); the halting step is then distributed as p. The coin
    flips come from ``generator`` (a torch.Generator on the CPU; required).
    mode "cumulative": halt at the first step whose cumulative p reaches ``threshold`` (in
    (0, 1]); 0.5 gives the median of p. No randomness.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    lam, p = out.lam, out.p
    N = lam.shape[-1]
    if mode == "sample":
        if not isinstance(generator, torch.Generator):
            raise ValueError("generator must be a torch.Generator for mode 'sample'")
        u = torch.rand(lam.shape, generator=generator, dtype=torch.float64).to(lam.device)
        halts = u < lam.detach().to(torch.float64)
        halts[..., -1] = True                                   # lambda_N = 1
    else:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}")
        # the small allowance keeps a row whose p sums to 1 up to rounding from missing 1.0
        halts = torch.cumsum(p.detach(), dim=-1) >= threshold - 1e-6
        halts[..., -1] = True
    first = torch.argmax(halts.to(torch.int8), dim=-1)          # index of the first True
    return (first + 1).clamp(max=N)


def output_at(out, n):
    """The output of the step each row halted at: y (..., B, O) from n (..., B) in 1..N."""
    index = (n - 1)[..., None, None].expand(*n.shape, 1, out.y.shape[-1])
    return out.y.gather(-2, index)[..., 0, :]


# ---------------------------------------------------------------------------------------------
# Evaluation on parity (PonderNet, and ACT for comparison)
# ---------------------------------------------------------------------------------------------

def _counts(x):
    return np.count_nonzero(np.asarray(x)[..., 0, :], axis=-1)


def per_count(values, counts):
    """{count: mean of values over the rows with that many non-zero bits}; values, counts (B,)."""
    values, counts = np.asarray(values, dtype=np.float64), np.asarray(counts)
    return {int(k): float(values[counts == k].mean()) for k in np.unique(counts)}


@torch.no_grad()
def evaluate_pondernet(params, x, y, *, max_steps=20, cell="rnn", mode="sample", generator=None,
                       threshold=0.5, dtype=torch.float32):
    """Error and steps of one PonderNet on a parity batch, halting as ``halting_step`` says.

    params: the seven parameters (NumPy or tensors); x (B, 1, D), y (B, 1, 1) from
    ``tasks.make_batch``. Returns a dict: "error" (fraction wrong), "steps" (mean halting
    step), "expected_steps" (mean E[n]), and per row "wrong" (B,) bool, "n" (B,) halting steps,
    "counts" (B,) non-zero bits.
    """
    xt = torch.as_tensor(np.asarray(x), dtype=dtype)
    out = ponder_forward(xt, params, max_steps=max_steps, cell=cell)
    n = halting_step(out, mode=mode, generator=generator, threshold=threshold)
    z = output_at(out, n)[:, 0]
    target = torch.as_tensor(np.asarray(y).reshape(-1) > 0.5)
    wrong = ((z > 0) != target).numpy()
    return {"error": float(wrong.mean()), "steps": float(n.double().mean()),
            "expected_steps": float(expected_steps(out.p).mean()),
            "wrong": wrong, "n": n.numpy(), "counts": _counts(x)}


@torch.no_grad()
def evaluate_act(params, x, y, *, cell="rnn", epsilon=0.01, max_ponder=100, dtype=torch.float32):
    """Error and ponder of one ACT network on a parity batch (``act_torch.act.act_forward``).

    Returns a dict: "error", "ponder" (mean rho = N + R), "steps" (mean N), and per row "wrong",
    "N", "counts" (B,).
    """
    from act_torch.act import act_forward
    xt = torch.as_tensor(np.asarray(x), dtype=dtype)
    P = {k: torch.as_tensor(np.asarray(v), dtype=dtype) for k, v in params.items()}
    y_hat, N, R = act_forward(xt, P, cell=cell, epsilon=epsilon, max_ponder=max_ponder)
    wrong = ((y_hat[:, 0, 0] > 0) != torch.as_tensor(np.asarray(y).reshape(-1) > 0.5)).numpy()
    return {"error": float(wrong.mean()), "ponder": float((N + R).double().mean()),
            "steps": float(N.double().mean()), "wrong": wrong, "N": N[:, 0].numpy(), "counts": _counts(x)}


# ---------------------------------------------------------------------------------------------
# Training: K PonderNets as one population
# ---------------------------------------------------------------------------------------------

def initial_params(D, H, O, seed, *, cell="rnn", halting_bias=0.0):
    """Initial parameters of seed ``seed``: the course's ACT initialisation from the same random
    stream as ``act_experiments.config.init_parameters`` (default_rng([seed, 0])), so a
    PonderNet and an ACT run of one seed start from the same weights; only b_h is set here
    (``halting_bias``). Float64 NumPy arrays."""
    seed = check_int("seed", seed, low=0)
    rng = np.random.default_rng([seed, config.PARAM_STREAM])
    return init_params(cell, D, H, O, rng, halting_bias=halting_bias)


class Population:
    """K PonderNets on parity trained as one program: parameters stacked on a leading axis, one
    Adam (torch's defaults, ``act_engine.adam``) per member, each member with its own seed, beta,
    lambda_p and learning rate.

    members: a list of dicts with "seed" and optionally "beta" (0.01), "lambda_p" (0.2), "lr"
    (1e-3), "halting_bias" (0.0). The shared settings: bits and the training range of non-zero
    counts (``task_options``, as ``tasks.make_batch`` takes them), hidden, max_steps, batch_size,
    cell, dtype. Member k draws its batches from default_rng([seed, 1]), the stream an ACT run
    of that seed reads in ``act_experiments.training``, so the two see the same data.
    """

    def __init__(self, members, *, task_options, hidden=64, max_steps=20, batch_size=128, cell="rnn",
                 dtype="float32"):
        if not isinstance(members, (list, tuple)) or not members:
            raise ValueError("members must be a non-empty list of dicts with a 'seed'")
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
        if cell not in ("rnn", "lstm"):
            raise ValueError(f"cell must be 'rnn' or 'lstm', got {cell!r}")
        self.task_options = tasks.resolve_options("parity", **dict(task_options))   # checks them
        self.hidden = check_int("hidden", hidden)
        self.max_steps = check_int("max_steps", max_steps)
        self.batch_size = check_int("batch_size", batch_size)
        self.cell, self.dtype = cell, _DTYPES[dtype]
        self.members = []
        allowed = {"seed", "beta", "lambda_p", "lr", "halting_bias"}
        for m in members:
            if not isinstance(m, dict) or "seed" not in m or set(m) - allowed:
                raise ValueError(f"each member must be a dict with 'seed' and only {sorted(allowed)}, got {m!r}")
            self.members.append({"seed": check_int("seed", m["seed"], low=0),
                                 "beta": check_float("beta", m.get("beta", 0.01), 0.0),
                                 "lambda_p": check_float("lambda_p", m.get("lambda_p", 0.2), 0.0, 1.0, low_open=True, high_open=True),
                                 "lr": check_float("lr", m.get("lr", 1e-3), 0.0, 1.0, low_open=True, high_open=True),
                                 "halting_bias": float(m.get("halting_bias", 0.0))})
        self.K = len(self.members)
        D = tasks.input_size("parity", **self.task_options)
        inits = [initial_params(D, self.hidden, 1, m["seed"], cell=cell, halting_bias=m["halting_bias"])
                 for m in self.members]
        self.params = {k: torch.tensor(np.stack([p[k] for p in inits]), dtype=self.dtype).requires_grad_()
                       for k in PARAM_NAMES}
        self.beta = torch.tensor([m["beta"] for m in self.members], dtype=self.dtype)
        self.lambda_p = torch.tensor([m["lambda_p"] for m in self.members], dtype=torch.float64)
        self.lr = np.array([m["lr"] for m in self.members])
        self.data_rngs = [np.random.default_rng([m["seed"], config.DATA_STREAM]) for m in self.members]
        self.adam_t = np.zeros(self.K, dtype=np.int64)
        self.adam_m = {k: torch.zeros_like(p) for k, p in self.params.items()}
        self.adam_v = {k: torch.zeros_like(p) for k, p in self.params.items()}
        self.iteration = 0

    def batch(self):
        """Each member's next training batch: x (K, B, 1, D), y (K, B) float."""
        batches = [tasks.make_batch("parity", rng, self.batch_size, **self.task_options) for rng in self.data_rngs]
        x = np.stack([b[0] for b in batches])
        y = np.stack([b[1][:, 0, 0] for b in batches])
        return x, y

    def train_step(self):
        """One Adam step of every member on its own batch; returns a dict of (K,) NumPy arrays:
        "loss", "reconstruction", "kl", "steps" (batch mean of E[n])."""
        x, y = self.batch()
        for p in self.params.values():
            p.grad = None
        x = torch.as_tensor(x, dtype=self.dtype)
        if self.K == 1:
            # one network takes the 2-D products of a single run (a batched product over one
            # member gains nothing, and with several threads on a busy machine it can cost a lot);
            # the member axis is put back for the loss
            alone = {k: p[0] for k, p in self.params.items()}
            out = PonderOutput(*(v[None] for v in ponder_forward(x[0], alone, max_steps=self.max_steps,
                                                                  cell=self.cell)))
        else:
            out = ponder_forward(x, self.params, max_steps=self.max_steps, cell=self.cell)
        loss, parts = pondernet_loss(out, torch.as_tensor(y, dtype=self.dtype), beta=self.beta,
                                     lambda_p=self.lambda_p)
        loss.sum().backward()                 # members share no parameter: each its own gradient
        self.adam_t += 1
        step_size, root = adam.factors(self.adam_t, self.lr)
        grads = {k: p.grad for k, p in self.params.items()}
        adam.update_(self.params, grads, self.adam_m, self.adam_v,
                     torch.tensor(step_size, dtype=self.dtype), torch.tensor(root, dtype=self.dtype))
        self.iteration += 1
        return {"loss": loss.detach().numpy().astype(np.float64),
                **{k: v.numpy().astype(np.float64) for k, v in parts.items()}}

    def member_params(self, k):
        """Member k's parameters as float64 NumPy arrays (one network's shapes)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < self.K:
            raise ValueError(f"k must be a member index in 0..{self.K - 1}, got {k!r}")
        return {name: p[k].detach().numpy().astype(np.float64) for name, p in self.params.items()}

    def evaluate(self, x, y, *, max_steps=None, mode="sample", seed=0, threshold=0.5):
        """Every member's ``evaluate_pondernet`` on one batch (x (B, 1, D), y (B, 1, 1)); the coin
        flips of mode "sample" come from torch.Generator().manual_seed(seed), one per member.
        max_steps None: the training limit. Returns a list of K dicts."""
        steps = self.max_steps if max_steps is None else max_steps
        return [evaluate_pondernet(self.member_params(k), x, y, max_steps=steps, cell=self.cell, mode=mode,
                                   generator=torch.Generator().manual_seed(seed), threshold=threshold,
                                   dtype=self.dtype)
                for k in range(self.K)]


# ---------------------------------------------------------------------------------------------
# The comparison: ACT (the course's population engine) and PonderNet on one parity, several
# seeds and time penalties, in-range and extrapolation held-out sets (scripts/pondernet.py)
# ---------------------------------------------------------------------------------------------

COMPARISON_DEFAULTS = {
    "bits": 8, "train_max": 4, "hidden": 64, "batch_size": 128, "lr": 1e-2, "iterations": 3000, "chunk": 500,
    "seeds": (0, 1, 2, 3), "taus": (1e-3, 1e-2, 1e-1), "betas": (1e-3, 1e-2, 1e-1), "lambda_p": 0.2,
    "max_steps": 20, "eval_size": 1000, "eval_seed": 1000, "sample_seed": 0,
}


def held_out_sets(bits, train_max, eval_size, eval_seed):
    """The held-out batches of a comparison: {"in": counts 1..train_max, "out": counts
    train_max+1..bits} (no "out" when train_max = bits). Each is (x, y) from tasks.make_batch."""
    rng = np.random.default_rng([eval_seed, config.EVAL_STREAM])
    sets = {"in": tasks.make_batch("parity", rng, eval_size, bits=bits, max_nonzero=train_max)[:2]}
    if train_max < bits:
        sets["out"] = tasks.make_batch("parity", rng, eval_size, bits=bits, min_nonzero=train_max + 1)[:2]
    return sets


@torch.no_grad()
def act_halting_weights(params, x, *, max_ponder, epsilon=0.01, dtype=torch.float32):
    """ACT's p over the ponder steps of one input per row (T = 1): (B, max_ponder) NumPy, zero
    after each row's N (``act_torch.act.act_forward`` with record)."""
    from act_torch.act import act_forward
    record = {}
    P = {k: torch.as_tensor(np.asarray(v), dtype=dtype) for k, v in params.items()}
    act_forward(torch.as_tensor(np.asarray(x), dtype=dtype), P, epsilon=epsilon, max_ponder=max_ponder, record=record)
    p = record["p"][0].double().numpy()
    return np.pad(p, ((0, 0), (0, max_ponder - p.shape[1])))


def _measure(model, params, sets, s):
    """Final and curve numbers of one trained network on the held-out sets (a dict per set)."""
    result = {}
    for name, (x, y) in sets.items():
        if model == "act":
            r = evaluate_act(params, x, y, max_ponder=s["max_steps"])
            r["p"] = act_halting_weights(params, x, max_ponder=s["max_steps"])
        else:
            r = evaluate_pondernet(params, x, y, max_steps=s["max_steps"], mode="sample",
                                   generator=torch.Generator().manual_seed(s["sample_seed"]))
            c = evaluate_pondernet(params, x, y, max_steps=s["max_steps"], mode="cumulative")
            r["error_cumulative"] = c["error"]
            xt = torch.as_tensor(np.asarray(x), dtype=torch.float32)
            r["p"] = ponder_forward(xt, params, max_steps=s["max_steps"]).p.double().numpy()
        result[name] = r
    return result


def run_comparison(settings=None, *, work, progress=print):
    """Train ACT and PonderNet networks on one parity and measure them; returns the tables.

    settings: COMPARISON_DEFAULTS overridden by the given keys. ACT: one network per (tau, seed),
    trained by ``act_experiments.training.train_population`` (the course's population engine)
    in chunks of ``chunk`` iterations, its run folders under ``work``. PonderNet: one network per
    (beta, seed), trained by ``Population``. Both train on counts 1..train_max of ``bits``
    (``tasks`` option max_nonzero), with the same seeds (so the same initial weights, except b_h,
    and the same batches), learning rate, batch and step limit (ACT's cap M = max_steps). After
    every chunk each network is measured on the held-out sets (``held_out_sets``); PonderNet
    halts by sampling (seeded), and its error with the cumulative-p rule (0.5) is kept too.

    Returns {"runs": [...], "curves": [...], "counts": [...], "attention": [...], "meta": {...}}:
    rows of dicts, ready for CSV (``write_comparison``).
    """
    from pathlib import Path

    from act_torch.population import Population as ActPopulation
    from act_experiments.backends import TorchBackend

    s = {**COMPARISON_DEFAULTS, **(settings or {})}
    unknown = sorted(set(s) - set(COMPARISON_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown}")
    for name in ("bits", "train_max", "hidden", "batch_size", "iterations", "chunk", "max_steps", "eval_size"):
        check_int(name, s[name])
    if s["train_max"] > s["bits"]:
        raise ValueError(f"train_max must be at most bits = {s['bits']}, got {s['train_max']}")
    if not s["seeds"] or not s["taus"] or not s["betas"]:
        raise ValueError("seeds, taus and betas must each hold at least one value")
    options = {"bits": s["bits"]}
    if s["train_max"] < s["bits"]:
        options["max_nonzero"] = s["train_max"]
    sets = held_out_sets(s["bits"], s["train_max"], s["eval_size"], s["eval_seed"])
    work = Path(work)
    stops = list(range(s["chunk"], s["iterations"], s["chunk"])) + [s["iterations"]]

    act_keys = [(tau, seed) for tau in s["taus"] for seed in s["seeds"]]
    common = dict(task="parity", hidden=s["hidden"], batch_size=s["batch_size"], lr=s["lr"],
                  max_ponder=s["max_steps"], eval_every=0, eval_size=200, checkpoint_every=3600.0, **options)
    outs = [str(work / f"act-tau{tau:g}-seed{seed}") for tau, seed in act_keys]
    pn_members = [{"seed": seed, "beta": beta, "lambda_p": s["lambda_p"], "lr": s["lr"]}
                  for beta in s["betas"] for seed in s["seeds"]]
    pn_pop = Population(pn_members, task_options=options, hidden=s["hidden"], max_steps=s["max_steps"],
                        batch_size=s["batch_size"])
    curves, finals = [], {}
    clock = {"act": 0.0, "pondernet": 0.0}
    for stop in stops:
        tick = time.perf_counter()
        # the first chunk starts the runs, each later one resumes them from their checkpoints
        pairs = [training.prepare({**common, "tau": tau, "seed": seed, "iterations": stop, "out": out},
                                  TorchBackend, resume=stop != stops[0])
                 for (tau, seed), out in zip(act_keys, outs)]
        training.train_population([c for c, _ in pairs], TorchBackend, ActPopulation,
                                  checkpoints=[ck for _, ck in pairs], progress=False)
        clock["act"] += time.perf_counter() - tick
        tick = time.perf_counter()
        while pn_pop.iteration < stop:
            pn_pop.train_step()
        clock["pondernet"] += time.perf_counter() - tick
        for (tau, seed), out in zip(act_keys, outs):
            state, _ = checkpoints.load_checkpoint(Path(out) / "checkpoint.npz")
            params = {k: state[f"param/{k}"] for k in PARAM_NAMES}
            finals[("act", tau, seed)] = _measure("act", params, sets, s)
        for k, m in enumerate(pn_members):
            finals[("pondernet", m["beta"], m["seed"])] = _measure("pondernet", pn_pop.member_params(k), sets, s)
        for (model, knob, seed), result in finals.items():
            row = {"model": model, "knob": knob, "seed": seed, "iteration": stop}
            for name, r in result.items():
                row[f"error_{name}"] = r["error"]
                row[f"steps_{name}"] = r["steps"]
            curves.append(row)
        if progress:
            progress(f"iteration {stop}: " + ", ".join(
                f"{model} {knob:g}/{seed} {r['in']['error']:.3f}" + (f"|{r['out']['error']:.3f}" if "out" in r else "")
                for (model, knob, seed), r in finals.items()))

    runs, counts, attention = [], [], []
    for (model, knob, seed), result in finals.items():
        row = {"model": model, "knob": knob, "seed": seed}
        for name, r in result.items():
            row[f"error_{name}"] = r["error"]
            row[f"steps_{name}"] = r["steps"]
            row[f"ponder_{name}"] = r["ponder"] if model == "act" else r["expected_steps"]
            row[f"error_cumulative_{name}"] = r.get("error_cumulative", "")
            n_name = "N" if model == "act" else "n"
            for c in np.unique(r["counts"]):
                sel = r["counts"] == c
                counts.append({"model": model, "knob": knob, "seed": seed, "count": int(c), "rows": int(sel.sum()),
                               "error": float(r["wrong"][sel].mean()), "steps": float(r[n_name][sel].mean())})
                mean_p = r["p"][sel].mean(axis=0)
                for n, value in enumerate(mean_p, start=1):
                    attention.append({"model": model, "knob": knob, "seed": seed, "count": int(c), "step": n,
                                      "p": float(value)})
        runs.append(row)
    meta = {"settings": {k: list(v) if isinstance(v, tuple) else v for k, v in s.items()},
            "train_wall_s": {k: round(v, 1) for k, v in clock.items()},
            "knob": {"act": "tau (time penalty)", "pondernet": "beta (KL weight)"}}
    return {"runs": runs, "curves": curves, "counts": counts, "attention": attention, "meta": meta}


TABLES = ("runs", "curves", "counts", "attention")


def write_comparison(tables, folder):
    """Write the tables of ``run_comparison`` as <table>.csv and meta as comparison.json."""
    import csv
    import json
    from pathlib import Path
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        rows = tables[name]
        fields = list(dict.fromkeys(k for row in rows for k in row))
        with open(folder / f"{name}.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    with open(folder / "comparison.json", "w") as f:
        json.dump(tables["meta"], f, indent=2)
        f.write("\n")


def read_comparison(folder):
    """The tables written by ``write_comparison``: rows as dicts with numbers where numbers are
    (``act_experiments.results.number``), and "meta"."""
    import json
    from pathlib import Path

    from act_experiments.results import number, read_csv
    folder = Path(folder)
    if not (folder / "runs.csv").is_file():
        raise FileNotFoundError(f"no comparison in {folder} (expected the runs.csv scripts/pondernet.py writes)")
    tables = {name: [{k: (v if k == "model" else number(v)) for k, v in row.items()}
                     for row in read_csv(folder / f"{name}.csv")] for name in TABLES}
    tables["meta"] = json.loads((folder / "comparison.json").read_text())
    return tables


def by_knob(rows, model, field):
    """{knob: [values over seeds, in seed order]} of one model's ``field`` in the runs table."""
    out = {}
    for row in sorted((r for r in rows if r["model"] == model), key=lambda r: (r["knob"], r["seed"])):
        out.setdefault(row["knob"], []).append(row[field])
    return out



def comparison_picks(tables):
    """(ACT's tau, PonderNet's beta) with the lowest mean in-range error over seeds (the smaller
    knob on a tie): the settings the per-count and curve figures show."""
    picks = []
    for model in ("act", "pondernet"):
        errors = by_knob(tables["runs"], model, "error_in")
        picks.append(min(errors, key=lambda knob: (float(np.mean(errors[knob])), knob)))
    return tuple(picks)


def attention_picks(tables, act_knob, pn_knob):
    """[(model, knob, seed)] for ACT at act_knob and PonderNet at pn_knob: each the seed with the
    lowest in-range error (the smaller seed on a tie)."""
    picks = []
    for model, knob in (("act", act_knob), ("pondernet", pn_knob)):
        rows = [r for r in tables["runs"] if r["model"] == model and r["knob"] == knob]
        best = min(rows, key=lambda r: (r["error_in"], r["seed"]))
        picks.append((model, knob, best["seed"]))
    return picks

# ---------------------------------------------------------------------------------------------
# Figures (matplotlib is imported when a figure is drawn)
# ---------------------------------------------------------------------------------------------

MODEL_NAMES = {"act": "ACT", "pondernet": "PonderNet"}
MODEL_COLOURS = {"act": "tab:blue", "pondernet": "tab:orange"}
KNOB_SYMBOLS = {"act": "τ", "pondernet": "β"}


def attention_matrix(p, counts, bits):
    """Mean p per number of non-zero bits: p (B, N) over the steps, counts (B,) -> (bits, N),
    row c - 1 for count c (NaN where no row has that count)."""
    p, counts = np.asarray(p, dtype=np.float64), np.asarray(counts)
    out = np.full((bits, p.shape[1]), np.nan)
    for c in range(1, bits + 1):
        if np.any(counts == c):
            out[c - 1] = p[counts == c].mean(axis=0)
    return out


def draw_attention(ax, matrix, title, train_max=None, vmax=1.0):
    """A heat map of p over steps (x) for each number of non-zero bits (y); a dashed line marks
    the end of the training range when ``train_max`` is below the largest count. Returns the image."""
    bits, steps = matrix.shape
    image = ax.imshow(matrix, origin="lower", aspect="auto", cmap="viridis", vmin=0.0, vmax=vmax,
                      extent=(0.5, steps + 0.5, 0.5, bits + 0.5))
    if train_max is not None and train_max < bits:
        ax.axhline(train_max + 0.5, color="white", ls="--", lw=1.2)
        ax.text(steps + 0.3, train_max + 0.6, "unseen in training ↑", color="white", ha="right", va="bottom",
                fontsize=8)
    ax.set_xlabel("ponder step n")
    ax.set_ylabel("non-zero bits")
    ax.set_title(title, fontsize=10)
    return image


def _knob_label(model, knob):
    return f"{KNOB_SYMBOLS[model]} = {knob:g}"


def figure_errors(tables):
    """Final error per seed for every tau (ACT) and beta (PonderNet): in range and beyond it."""
    import matplotlib.pyplot as plt
    runs, meta = tables["runs"], tables["meta"]["settings"]
    sets = [("in", f"held out, 1..{meta['train_max']} non-zero bits (the training range)")]
    if meta["train_max"] < meta["bits"]:
        sets.append(("out", f"extrapolation, {meta['train_max'] + 1}..{meta['bits']} non-zero bits"))
    fig, axes = plt.subplots(1, len(sets), figsize=(5.2 * len(sets), 3.6), squeeze=False)
    for ax, (name, title) in zip(axes[0], sets):
        ticks, labels, x = [], [], 0
        for model in ("act", "pondernet"):
            for knob, values in by_knob(runs, model, f"error_{name}").items():
                ax.scatter(np.full(len(values), x) + np.linspace(-0.12, 0.12, len(values)), values, s=22,
                           color=MODEL_COLOURS[model], alpha=0.8, zorder=3)
                ax.hlines(np.mean(values), x - 0.3, x + 0.3, color="black", lw=1.5, zorder=4)
                ticks.append(x)
                labels.append(f"{MODEL_NAMES[model]}\n{_knob_label(model, knob)}")
                x += 1
            x += 0.6
        ax.axhline(0.5, color="crimson", ls=":", lw=1, label="chance")
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylim(-0.02, 0.75)
        ax.set_ylabel("error (dots: seeds, bar: mean)")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(frameon=False, fontsize=8, loc="upper left")
    fig.suptitle(f"{meta['bits']}-bit parity, tanh RNN H={meta['hidden']}, {meta['iterations']} iterations, "
                 f"{len(meta['seeds'])} seeds", fontsize=10)
    fig.tight_layout()
    return fig


def figure_counts(tables, act_knob, pn_knob):
    """Error and steps per number of non-zero bits, ACT at one tau beside PonderNet at one beta
    (thin lines: seeds; thick: their mean); the training range shaded."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    fig, (ax_e, ax_s) = plt.subplots(1, 2, figsize=(10.5, 3.6))
    for model, knob in (("act", act_knob), ("pondernet", pn_knob)):
        rows = [r for r in tables["counts"] if r["model"] == model and r["knob"] == knob]
        seeds = sorted({r["seed"] for r in rows})
        counts = sorted({r["count"] for r in rows})
        for field, ax in (("error", ax_e), ("steps", ax_s)):
            table = np.array([[next(r[field] for r in rows if r["seed"] == s and r["count"] == c) for c in counts]
                              for s in seeds])
            for line in table:
                ax.plot(counts, line, color=MODEL_COLOURS[model], alpha=0.25, lw=1)
            ax.plot(counts, table.mean(axis=0), color=MODEL_COLOURS[model], lw=2.2, marker="o",
                    label=f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}")
    for ax in (ax_e, ax_s):
        ax.axvspan(0.5, meta["train_max"] + 0.5, color="grey", alpha=0.12, lw=0, label="training range")
        ax.set_xlabel("non-zero bits")
        ax.set_xticks(range(1, meta["bits"] + 1))
        ax.grid(alpha=0.3)
    ax_e.axhline(0.5, color="crimson", ls=":", lw=1)
    ax_e.set_ylim(-0.02, 1.02)
    ax_e.set_ylabel("error")
    ax_s.set_ylabel("updates used (ACT: N; PonderNet: sampled n)")
    ax_e.legend(frameon=False, fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def figure_attention(tables, picks):
    """Heat maps of the mean p over steps per number of non-zero bits, one per trained network:
    picks, a list of (model, knob, seed)."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    matrices = []
    for model, knob, seed in picks:
        matrix = np.full((meta["bits"], meta["max_steps"]), np.nan)
        for r in tables["attention"]:
            if (r["model"], r["knob"], r["seed"]) == (model, knob, seed):
                matrix[r["count"] - 1, r["step"] - 1] = r["p"]
        matrices.append(matrix)
    # show the steps that get attention (mean p above 0.005 somewhere), and at least five
    used = max(int(np.flatnonzero(np.nanmax(m, axis=0) > 0.005).max(initial=0)) + 2 for m in matrices)
    steps = min(meta["max_steps"], max(5, used))
    fig, axes = plt.subplots(1, len(picks), figsize=(4.6 * len(picks), 3.4), squeeze=False)
    for ax, (model, knob, seed), matrix in zip(axes[0], picks, matrices):
        image = draw_attention(ax, matrix[:, :steps], f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}, seed {seed}",
                               train_max=meta["train_max"])
    if steps < meta["max_steps"]:
        fig.text(0.01, 0.0, f"steps {steps + 1}..{meta['max_steps']} get less than 0.005 of the attention and are "
                 "not drawn", fontsize=8)
    fig.colorbar(image, ax=axes[0].tolist(), label="mean p (attention on step n)", shrink=0.9)
    return fig


def figure_curves(tables):
    """Held-out error against iterations, one panel per penalty: the i-th tau of ACT beside the
    i-th beta of PonderNet, one line per seed, in range (solid) and beyond it (dashed)."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    beyond = meta["train_max"] < meta["bits"]
    pairs = list(zip(sorted(set(meta["taus"])), sorted(set(meta["betas"]))))
    fig, axes = plt.subplots(1, len(pairs), figsize=(3.6 * len(pairs), 3.3), sharey=True, squeeze=False)
    for ax, knobs in zip(axes[0], pairs):
        for model, knob in zip(("act", "pondernet"), knobs):
            rows = [r for r in tables["curves"] if r["model"] == model and r["knob"] == knob]
            for i, seed in enumerate(sorted({r["seed"] for r in rows})):
                mine = sorted((r for r in rows if r["seed"] == seed), key=lambda r: r["iteration"])
                its = [r["iteration"] for r in mine]
                label = f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}" if i == 0 else None
                ax.plot(its, [r["error_in"] for r in mine], color=MODEL_COLOURS[model], lw=1.2, label=label)
                if beyond:
                    ax.plot(its, [r["error_out"] for r in mine], color=MODEL_COLOURS[model], lw=1.2, ls="--")
        ax.axhline(0.5, color="crimson", ls=":", lw=1)
        ax.set_xlabel("iteration")
        ax.set_ylim(-0.02, 0.8)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8, loc="upper right")
    axes[0][0].set_ylabel("error (solid: in range, dashed: beyond)" if beyond else "held-out error")
    fig.suptitle(f"{meta['bits']}-bit parity, trained on 1..{meta['train_max']} non-zero bits: one line per seed",
                 fontsize=10)
    fig.tight_layout()
    return fig
