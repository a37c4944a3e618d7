"""PonderNet (Banino, Balaguer and Blundell 2021) in PyTorch, on the same ponder step as ACT.

    out = ponder_forward(x, params, max_steps=20)            # every step's output and halting
    loss, parts = pondernet_loss(out, target, beta=0.01, lambda_p=0.2)
    n = choose_halting_step(out, mode="sample", generator=g)   # inference: where each row stops
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
result gains a leading K. ``act_experiments.training.pondernet_population.PonderNetPopulation`` trains K PonderNets
(seeds, beta, lambda_p, lr per member) that way, with the engine's per-member Adam.

For the comparison with ACT on parity, ``evaluate_pondernet`` and ``evaluate_act`` measure one
network of each on a batch, and ``act_halting_weights`` gives ACT's p over the steps beside
PonderNet's.
"""

from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from act_numpy.checks import check_float, check_int
from act_numpy.params import PARAM_NAMES
from act_torch.act import act_forward, ponder_step, prepare

MODES = ("sample", "cumulative")
DTYPES = {"float32": torch.float32, "float64": torch.float64}


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# The halting distribution, the prior and the KL term
# ---------------------------------------------------------------------------------------------

def generalised_geometric(lam):
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
    p     (..., B, N)     the halting distribution (``generalised_geometric``)
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
    return PonderOutput(y, lam, generalised_geometric(lam), S)


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

def choose_halting_step(out, *, mode="sample", generator=None, threshold=0.5):
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
        threshold = check_float("threshold", threshold, 0.0, 1.0, low_open=True)
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
    """Error and steps of one PonderNet on a parity batch, halting as ``choose_halting_step`` says.

    params: the seven parameters (NumPy or tensors); x (B, 1, D), y (B, 1, 1) from
    ``tasks.make_batch``. Returns a dict: "error" (fraction wrong), "steps" (mean halting
    step), "expected_steps" (mean E[n]), and per row "wrong" (B,) bool, "n" (B,) halting steps,
    "counts" (B,) non-zero bits.
    """
    xt = torch.as_tensor(np.asarray(x), dtype=dtype)
    out = ponder_forward(xt, params, max_steps=max_steps, cell=cell)
    n = choose_halting_step(out, mode=mode, generator=generator, threshold=threshold)
    z = output_at(out, n)[:, 0]
    target = torch.as_tensor(np.asarray(y).reshape(-1) > 0.5)
    wrong = ((z > 0) != target).numpy()
    return {"error": float(wrong.mean()), "steps": float(n.double().mean()),
            "expected_steps": float(expected_steps(out.p).mean()),
            "wrong": wrong, "n": n.numpy(), "counts": _counts(x)}


@torch.no_grad()
def act_halting_weights(params, x, *, max_ponder, epsilon=0.01, dtype=torch.float32):
    """ACT's p over the ponder steps of one input per row (T = 1): (B, max_ponder) NumPy, zero
    after each row's N (``act_torch.act.act_forward`` with record)."""
    record = {}       # act_forward brings the parameters to x's dtype
    act_forward(torch.as_tensor(np.asarray(x), dtype=dtype), params, epsilon=epsilon, max_ponder=max_ponder,
                record=record)
    p = record["p"][0].double().numpy()
    return np.pad(p, ((0, 0), (0, max_ponder - p.shape[1])))


@torch.no_grad()
def evaluate_act(params, x, y, *, cell="rnn", epsilon=0.01, max_ponder=100, dtype=torch.float32):
    """Error and ponder of one ACT network on a parity batch (``act_torch.act.act_forward``).

    Returns a dict: "error", "ponder" (mean rho = N + R), "steps" (mean N), and per row "wrong",
    "N", "counts" (B,).
    """
    xt = torch.as_tensor(np.asarray(x), dtype=dtype)
    P = {k: torch.as_tensor(np.asarray(v), dtype=dtype) for k, v in params.items()}
    y_hat, N, R = act_forward(xt, P, cell=cell, epsilon=epsilon, max_ponder=max_ponder)
    wrong = ((y_hat[:, 0, 0] > 0) != torch.as_tensor(np.asarray(y).reshape(-1) > 0.5)).numpy()
    return {"error": float(wrong.mean()), "ponder": float((N + R).double().mean()),
            "steps": float(N.double().mean()), "wrong": wrong, "N": N[:, 0].numpy(), "counts": _counts(x)}
