"""A Universal Transformer encoder with ACT per position (notebook 13), in PyTorch.

A Universal Transformer (Dehghani et al. 2018) applies ONE transformer layer again and again,
with the same weights at every step, instead of a stack of different layers. With ACT each
position of the input has its own halting unit and decides for itself how many times the layer
is applied to it. The halting arithmetic is Graves's (2016), position by position:

    u^n      = z^{n-1} + e_pos + e_step(n)                coordinate embeddings (position, step)
    c^n      = Layer(u^n)                                  the shared layer: every position
    h_i^n    = sigmoid(c_i^n w_h + b_h)                    (5), from the state the step produced
    N_i      = min(M, min{n : sum_{k<=n} h_i^k >= 1 - eps})   (7), (13)
    R_i      = 1 - sum_{k<N_i} h_i^k                       (8), also when the cap M stops it
    p_i^k    = h_i^k (k < N_i), p_i^{N_i} = R_i            (6)
    o_i      = sum_{k<=N_i} p_i^k c_i^k                    (9), the position's output state
    z_i^n    = c_i^n while position i runs (n < N_i); o_i from step N_i on: a halted position's
               state is carried forward unchanged, and the positions still running keep
               attending to it
    rho_i    = N_i + R_i                                   (10), the ponder cost per position

The position axis plays the part of ACT's time axis in the loss: ``act_torch.losses.act_loss``
with T = L positions gives sum_i CE_i + tau sum_i rho_i, averaged over the batch (eq. 12).

Shapes: tokens (B, L) int64; states (B, L, d); N, R (B, L); h, p (B, L, n) with n the steps the
batch ran (the loop stops when every position of every row has halted, or at M).

The pieces:

- ``ponder_positions(z0, step, w_h, b_h, ...)``: the halting loop for any step function
  ``step(z, n) -> c`` (B, L, d). With one position and a tanh-RNN step (``rnn_step``) it is ACT's
  input step (tests/test_universal_transformer.py compares it with ``act_torch.act.act_forward``).
  Its halting distribution is ``act_torch.act.halting_distribution``, unless ``weights`` swaps in
  a piece with the signature of ``act_beyond.pitfalls``' (h, N, capped) -> (p, R), such as a cap
  that drops R. ``scripted_halting`` gives it halting values chosen in advance.
- ``init_params`` / ``layer_step``: the small encoder (embeddings, one pre-norm layer of
  multi-head self-attention and a feed-forward block, a halting unit, a linear read-out).
- ``ut_forward``: logits (B, L, O) with ACT, or with depths given in advance, no halting: a fixed
  depth D (the layer applied D times to every position) or one depth per position
  (``given_depths``; ``draw_depths`` draws them from a distribution of N, the random-depth control).
- ``make_chains``: the task, pointer chains whose depth varies from position to position.
- ``evaluate``: a network's measurements per chain depth.
- ``train_ut`` (a short training run), the other training runs and the committed comparison are act_experiments.experiments.universal_transformer's.
"""

import math
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from act_numpy.checks import check_float, check_int
from act_torch.act import halting_after_step
from act_torch.losses import act_loss

from .pitfalls import remainder_weights     # the paper's distribution, as a swappable piece

PARAM_KEYS = ("embed", "pos", "step", "ln1_g", "ln1_b", "W_q", "W_k", "W_v", "W_o", "ln2_g", "ln2_b",
              "W_1", "b_1", "W_2", "b_2", "w_h", "b_h", "lnf_g", "lnf_b", "W_y", "b_y")


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------





# ---------------------------------------------------------------------------------------------
# The task: pointer chains
# ---------------------------------------------------------------------------------------------

def vocab_size(length, values):
    """Tokens of ``make_chains``: values 0..values-1 are literals, values + j means "the value of
    position j" (j = 0..length-1)."""
    return check_int("values", values, 2) + check_int("length", length, 2)


def make_chains(rng, batch_size, *, length=8, values=4, max_depth=5):
    """Pointer chains: every position holds a literal or a reference to another position.

    Each row's ``length`` positions are split at random into chains (linked lists). A chain of m
    positions c_0, ..., c_{m-1} holds a literal value v at c_0 and "the value of c_{k-1}" at c_k,
    so position c_k is at depth k: k references must be followed to reach its value. The chain
    lengths are uniform on 1..min(max_depth + 1, positions left); the positions and the literal
    (uniform on 0..values-1) are drawn from ``rng``, a np.random.Generator.

    Returns tokens (B, L) int64 (literal v -> v, reference to j -> values + j), targets (B, L)
    int64 (the value at the end of each position's chain) and depth (B, L) int64 (0..max_depth).
    Depth 0 positions can be answered from their own token; depth k needs k hops through the
    sequence, which a layer of attention can do at most one of per application (two when it
    copies a state that has already hopped: pointer doubling).
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a np.random.Generator, e.g. np.random.default_rng(0)")
    batch_size = check_int("batch_size", batch_size)
    length = check_int("length", length, 2)
    values = check_int("values", values, 2)
    max_depth = check_int("max_depth", max_depth, 0)
    B, L = batch_size, length
    order = np.argsort(rng.random((B, L)), axis=1)          # a random order of each row's positions
    # the chain lengths and literals every row would take at each place in its order (only the
    # ones where a chain starts are used), drawn up front so the rows are filled side by side
    cap = np.minimum(max_depth + 1, L - np.arange(L))[None, :]          # (1, L): room left
    lengths = 1 + np.floor(rng.random((B, L)) * cap).astype(np.int64)    # uniform on 1..cap
    literals = rng.integers(values, size=(B, L))
    tokens = np.empty((B, L), dtype=np.int64)
    targets = np.empty((B, L), dtype=np.int64)
    depth = np.empty((B, L), dtype=np.int64)
    rows = np.arange(B)
    left = np.zeros(B, dtype=np.int64)          # positions still to come in the current chain
    value = np.zeros(B, dtype=np.int64)
    level = np.zeros(B, dtype=np.int64)
    for k in range(L):
        pos = order[:, k]
        new = left == 0                          # a chain starts here: its literal
        left = np.where(new, lengths[:, k], left) - 1
        value = np.where(new, literals[:, k], value)
        level = np.where(new, 0, level + 1)
        previous = order[:, k - 1] if k else pos
        tokens[rows, pos] = np.where(new, value, values + previous)     # else: "the value of" the last one
        targets[rows, pos] = value
        depth[rows, pos] = level
    return tokens, targets, depth


def resolve_chains(tokens, values):
    """The targets of ``make_chains`` recomputed from the tokens alone, by following references;
    also the depth of each position. tokens (B, L) int. Returns targets, depth (B, L) int64.
    Raises ValueError on a reference out of range or a cycle."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 2:
        raise ValueError(f"tokens must have shape (B, L), got {tokens.shape}")
    B, L = tokens.shape
    targets = np.empty((B, L), dtype=np.int64)
    depth = np.empty((B, L), dtype=np.int64)
    for b in range(B):
        for i in range(L):
            j, hops = i, 0
            while tokens[b, j] >= values:
                j = int(tokens[b, j]) - values
                hops += 1
                if not 0 <= j < L or hops > L:
                    raise ValueError(f"row {b}: position {i} has a reference out of range or a cycle")
            targets[b, i], depth[b, i] = tokens[b, j], hops
    return targets, depth


def describe_chains(tokens, values, names="abcdefghijklmnopqrstuvwxyz"):
    """One row of tokens as assignments, e.g. ['a = 3', 'b = d', ...] (position j named names[j])."""
    out = []
    for i, t in enumerate(np.asarray(tokens).tolist()):
        out.append(f"{names[i]} = {t if t < values else names[t - values]}")
    return out


# ---------------------------------------------------------------------------------------------
# The halting loop, position by position
# ---------------------------------------------------------------------------------------------

class Pondered(NamedTuple):
    """What ``ponder_positions`` returns. out (B, L, d): each position's output state
    o = sum_n p^n c^n; N (B, L) int64; R (B, L); h, p (B, L, n); capped (B, L) bool (the cap M
    stopped the position before its sum reached 1 - eps); loop_steps: ponder steps the loop ran
    (the largest N)."""
    out: torch.Tensor
    N: torch.Tensor
    R: torch.Tensor
    h: torch.Tensor
    p: torch.Tensor
    capped: torch.Tensor
    loop_steps: int


def ponder_positions(z0, step, w_h, b_h, *, epsilon=0.01, max_ponder=8, weights=remainder_weights):
    """ACT's halting loop run for every position at once, each position halting on its own.

    z0 (B, L, d): the states before the first step. step(z, n) -> c (B, L, d): ponder step n
    (1-based) applied to the states z (B, L, d) of every position; it may mix positions
    (attention). w_h (d, 1), b_h (1,): the halting unit h = sigmoid(c w_h + b_h) (eq. 5), read
    from the state the step produced. epsilon in (0, 1): halt once sum h >= 1 - epsilon (eq. 7);
    max_ponder M >= 1: the cap (eq. 13). weights(h, N, capped) -> (p, R): the halting
    distribution, by default the paper's (``remainder_weights``).

    Between steps a position that has halted presents its output state o (eq. 9) to the step
    function, unchanged; its own new states are computed with the rest and thrown away. N(t) is a
    constant for autograd (section 2.2 of the paper): the halting test runs without gradient, and
    p and R come from ``weights`` with gradient, so (N + R).sum().backward() gives eqs 14-20 per
    position. Returns a ``Pondered``.
    """
    if not isinstance(z0, torch.Tensor) or z0.dim() != 3:
        raise ValueError(f"z0 must be a (B, L, d) tensor, got {getattr(z0, 'shape', type(z0).__name__)}")
    if not callable(step):
        raise ValueError(f"step must be a function step(z, n) -> c, got {step!r}")
    if not callable(weights):
        raise ValueError(f"weights must be a function weights(h, N, capped) -> (p, R), got {weights!r}")
    epsilon = check_float("epsilon", epsilon, 0.0, 1.0, low_open=True, high_open=True)
    max_ponder = check_int("max_ponder", max_ponder)
    B, L, d = z0.shape
    if tuple(w_h.shape) != (d, 1) or tuple(b_h.shape) != (1,):
        raise ValueError(f"w_h must be ({d}, 1) and b_h (1,), got {tuple(w_h.shape)} and {tuple(b_h.shape)}")
    threshold = 1.0 - epsilon
    z = z0
    states, hs = [], []
    total = z0.new_zeros(B, L)                                  # sum of h so far, no gradient
    running = torch.ones(B, L, dtype=torch.bool, device=z0.device)
    N = torch.zeros(B, L, dtype=torch.int64, device=z0.device)
    capped = torch.zeros(B, L, dtype=torch.bool, device=z0.device)
    out = z0
    for n in range(1, max_ponder + 1):
        c = step(z, n)                                          # every position, halted or not
        if tuple(c.shape) != (B, L, d):
            raise ValueError(f"step must return a ({B}, {L}, {d}) tensor, got {tuple(c.shape)}")
        h = torch.sigmoid(c @ w_h + b_h)[..., 0]                # eq. (5)
        states.append(c)
        hs.append(h)
        # eqs (7) and (13), without gradient: N is a constant for autograd
        total, running, N, capped, newly = halting_after_step(total, h, n, running, N, capped, threshold, max_ponder)
        # the output state of the positions that halt at this step: eq. (9) with their N = n
        H, S = torch.stack(hs, dim=-1), torch.stack(states, dim=-2)        # (B, L, n), (B, L, n, d)
        p_now, _ = weights(H, torch.where(newly, N, n), capped)
        o_now = (p_now[..., None] * S).sum(dim=-2)
        out = torch.where(newly[..., None], o_now, out)
        # the next step sees the running positions' new states and the halted ones' outputs
        z = torch.where(running[..., None], c, out)
        if not bool(running.any()):
            break
    H = torch.stack(hs, dim=-1)
    p, R = weights(H, N, capped)                                # eqs (6), (8)
    return Pondered(out, N, R, H, p, capped, len(hs))


def scripted_halting(h):
    """Arguments for ``ponder_positions`` whose halting units take values given in advance.

    h (B, L, n) or (L, n): the halting value of each position at each step 1..n (in (0, 1), float64).
    The state is one number per position, the logit of its h at that step, read by a halting unit
    with w_h = 1 (a leaf with requires_grad, so that gradients reach h) and b_h = 0. Returns
    (z0, step, w_h, b_h): ``ponder_positions(*scripted_halting(h), epsilon=..., max_ponder=...)``.
    """
    h = torch.as_tensor(h, dtype=torch.float64)
    if h.dim() == 2:
        h = h[None]
    if h.dim() != 3 or h.shape[-1] < 1:
        raise ValueError(f"h must have shape (L, n) or (B, L, n), got {tuple(h.shape)}")
    if not bool(((h > 0) & (h < 1)).all()):
        raise ValueError("h must lie strictly between 0 and 1")
    logits = torch.log(h) - torch.log1p(-h)
    n_given = h.shape[-1]

    def step(z, n):
        if n > n_given:
            raise ValueError(f"h gives {n_given} steps but a position is still running at step {n}")
        return logits[:, :, n - 1, None] + 0.0 * z

    return (torch.zeros(*h.shape[:2], 1, dtype=torch.float64), step,
            torch.ones(1, 1, dtype=torch.float64, requires_grad=True), torch.zeros(1, dtype=torch.float64))


def rnn_step(x, params):
    """ACT's tanh-RNN ponder step as a step function for ``ponder_positions``: every position
    an independent copy of one input step of ACT (eq. 3).

    x (B, L, D): each position's input; params: ACT's seven parameters (act_torch's contract:
    W_x (D+1, H), W_s (H, H), b_s (H,), ...). Returns step(z, n) = tanh(x W_x[:D] + [n = 1] W_x[D]
    + z W_s + b_s), the last row of W_x being the first-step flag. From z0 = 0 and with w_h = W_h,
    b_h = b_h, ponder_positions then gives what act_torch.act.act_forward gives for x (B*L, 1, D).
    """
    D = x.shape[-1]
    if tuple(params["W_x"].shape[:1]) != (D + 1,):
        raise ValueError(f"params['W_x'] must have {D + 1} rows (D inputs and the flag), got {tuple(params['W_x'].shape)}")
    x_part = x @ params["W_x"][:D] + params["b_s"]
    flag = params["W_x"][D]

    def step(z, n):
        return torch.tanh(x_part + (flag if n == 1 else 0.0) + z @ params["W_s"])

    return step


# ---------------------------------------------------------------------------------------------
# The encoder: one shared pre-norm layer
# ---------------------------------------------------------------------------------------------

def init_params(*, vocab, length, out, d_model=32, heads=2, ff=64, max_ponder=8, halting_bias=1.0,
                generator=None, dtype=torch.float32):
    """The encoder's parameters as a dict of leaf tensors with requires_grad, drawn from
    ``generator`` (a torch.Generator; a fresh one seeded 0 when None).

    max_ponder: the cap M on ACT's steps, and the number of step embeddings (a fixed depth uses at
    most that many). embed (vocab, d), pos (length, d), step (max_ponder, d): token, position and
    step embeddings, N(0, 1/d) entries; ln1_g, ln1_b, ln2_g, ln2_b, lnf_g, lnf_b (d,): layer norms
    (1 and 0); W_q, W_k, W_v, W_o (d, d) and W_1 (d, ff), b_1 (ff,), W_2 (ff, d), b_2 (d,): attention and
    feed-forward, N(0, 1/fan_in) (W_o and W_2 scaled by 1/2 more, so the residual stream starts
    calm); w_h (d, 1) N(0, 1/d) / 4, b_h (1,) = halting_bias (1 in the paper and in
    tensor2tensor's UT); W_y (d, out), b_y (out,): the read-out. Used as ``x @ W``.
    """
    vocab, length, out = check_int("vocab", vocab), check_int("length", length), check_int("out", out)
    d_model, heads, ff = check_int("d_model", d_model), check_int("heads", heads), check_int("ff", ff)
    max_ponder = check_int("max_ponder", max_ponder)
    if d_model % heads:
        raise ValueError(f"d_model ({d_model}) must be a multiple of heads ({heads})")
    halting_bias = check_float("halting_bias", halting_bias)
    if generator is None:
        generator = torch.Generator().manual_seed(0)
    if not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
    d = d_model

    def normal(*shape, scale):
        return torch.randn(*shape, generator=generator, dtype=torch.float64).mul_(scale).to(dtype)

    P = {
        "embed": normal(vocab, d, scale=d ** -0.5), "pos": normal(length, d, scale=d ** -0.5),
        "step": normal(max_ponder, d, scale=d ** -0.5),
        "ln1_g": torch.ones(d, dtype=dtype), "ln1_b": torch.zeros(d, dtype=dtype),
        "W_q": normal(d, d, scale=d ** -0.5), "W_k": normal(d, d, scale=d ** -0.5),
        "W_v": normal(d, d, scale=d ** -0.5), "W_o": normal(d, d, scale=0.5 * d ** -0.5),
        "ln2_g": torch.ones(d, dtype=dtype), "ln2_b": torch.zeros(d, dtype=dtype),
        "W_1": normal(d, ff, scale=d ** -0.5), "b_1": torch.zeros(ff, dtype=dtype),
        "W_2": normal(ff, d, scale=0.5 * ff ** -0.5), "b_2": torch.zeros(d, dtype=dtype),
        "w_h": normal(d, 1, scale=0.25 * d ** -0.5), "b_h": torch.full((1,), halting_bias, dtype=dtype),
        "lnf_g": torch.ones(d, dtype=dtype), "lnf_b": torch.zeros(d, dtype=dtype),
        "W_y": normal(d, out, scale=d ** -0.5), "b_y": torch.zeros(out, dtype=dtype),
    }
    for v in P.values():
        v.requires_grad_(True)
    return P


def _shape(P):
    """(vocab, length, d, steps) of a parameter dict, steps the number of step embeddings, after
    checking its keys."""
    if not isinstance(P, dict) or set(P) != set(PARAM_KEYS):
        missing = sorted(set(PARAM_KEYS) - set(P)) if isinstance(P, dict) else PARAM_KEYS
        raise ValueError(f"params must be the dict of init_params, missing {missing}")
    vocab, d = P["embed"].shape
    return vocab, P["pos"].shape[0], d, P["step"].shape[0]


def attention(x, P, heads):
    """Multi-head self-attention over all positions: x (B, L, d) -> (B, L, d).
    q, k, v = x W_q, x W_k, x W_v split into ``heads`` blocks of d/heads; softmax(q k^T / sqrt(d_h)) v,
    the heads joined and multiplied by W_o."""
    B, L, d = x.shape
    dh = d // heads
    q, k, v = (torch.matmul(x, P[w]).view(B, L, heads, dh).transpose(1, 2) for w in ("W_q", "W_k", "W_v"))
    a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh), dim=-1)          # (B, heads, L, L)
    return (a @ v).transpose(1, 2).reshape(B, L, d) @ P["W_o"]


def layer_step(P, z, n, heads):
    """One application of the shared layer (ponder step n, 1-based) to the states z (B, L, d).

    u = z + pos + step[n-1] (the coordinate embeddings of the UT), then a pre-norm block:
    a = u + Attention(LN_1(u)), c = a + W_2 relu(LN_2(a) W_1 + b_1) + b_2. Returns c (B, L, d).
    """
    L = z.shape[1]
    u = z + P["pos"][:L] + P["step"][n - 1]
    a = u + attention(F.layer_norm(u, u.shape[-1:], P["ln1_g"], P["ln1_b"]), P, heads)
    hidden = torch.relu(F.layer_norm(a, a.shape[-1:], P["ln2_g"], P["ln2_b"]) @ P["W_1"] + P["b_1"])
    return a + hidden @ P["W_2"] + P["b_2"]


def read_out(P, o):
    """Logits (B, L, O) = LN_f(o) W_y + b_y from the output states o (B, L, d)."""
    return F.layer_norm(o, o.shape[-1:], P["lnf_g"], P["lnf_b"]) @ P["W_y"] + P["b_y"]


def ut_forward(P, tokens, *, heads=2, depth=None, epsilon=0.01, max_ponder=None, weights=remainder_weights):
    """The encoder on tokens (B, L) int64: logits (B, L, O) and the ``Pondered`` of its loop.

    depth=None: ACT per position (``ponder_positions``) with the cap M = max_ponder (default: the
    number of step embeddings). depth=D: a fixed-depth UT, the layer applied D times to every
    position (D <= the number of step embeddings) and the last state read out. depth (B, L) integer
    tensor: each position's own depth (``given_depths``). Without ACT the Pondered has N = the
    depths, R = 0, p one-hot on each position's last step and h = 0 (there is no halting unit).
    """
    vocab, length, d, steps = _shape(P)
    tokens = torch.as_tensor(tokens)
    if tokens.dim() != 2 or tokens.dtype not in (torch.int32, torch.int64):
        raise ValueError(f"tokens must be a (B, L) integer tensor, got {tuple(tokens.shape)} {tokens.dtype}")
    if tokens.shape[1] > length:
        raise ValueError(f"tokens has {tokens.shape[1]} positions, the parameters only {length}")
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= vocab):
        raise ValueError(f"tokens must lie in 0..{vocab - 1}")
    heads = check_int("heads", heads)
    if d % heads:
        raise ValueError(f"heads ({heads}) must divide d_model ({d})")
    z0 = P["embed"][tokens.long()]

    def step(z, n):
        return layer_step(P, z, n, heads)

    if depth is None:
        # the cap can be no more than the step embeddings the parameters hold
        M = steps if max_ponder is None else check_int("max_ponder", max_ponder, 1, steps)
        r = ponder_positions(z0, step, P["w_h"], P["b_h"], epsilon=epsilon, max_ponder=M, weights=weights)
        return read_out(P, r.out), r
    if not isinstance(depth, torch.Tensor):
        depth = torch.full(tokens.shape, check_int("depth", depth, 1, steps), dtype=torch.int64)
    r = given_depths(z0, step, depth, steps)
    return read_out(P, r.out), r


def given_depths(z0, step, depth, max_depth):
    """The layer applied depth[b, i] times at position i of row b, with no halting unit.

    z0 (B, L, d): the states before the first application; step(z, n) -> c (B, L, d) as for
    ``ponder_positions``; depth (B, L) integer tensor in 1..max_depth. The loop runs to the largest
    depth; a position past its own presents its last state unchanged to the later applications,
    as a halted position does under ACT, and that state is its output. Returns a ``Pondered``
    with N = depth, R = 0, h = 0 and p one-hot on each position's last application.
    """
    B, L, _ = z0.shape
    if (not isinstance(depth, torch.Tensor) or tuple(depth.shape) != (B, L)
            or depth.dtype not in (torch.int32, torch.int64)):
        raise ValueError(f"depth must be a ({B}, {L}) integer tensor, got {getattr(depth, 'shape', depth)!r}")
    if depth.numel() and not (1 <= int(depth.min()) and int(depth.max()) <= max_depth):
        raise ValueError(f"depth must lie in 1..{max_depth} (one step embedding per application)")
    depth = depth.long()
    loop_steps = int(depth.max()) if depth.numel() else 1
    z = z0
    for n in range(1, loop_steps + 1):
        z = torch.where((depth >= n)[..., None], step(z, n), z)
    p = F.one_hot(depth - 1, loop_steps).to(z.dtype)
    return Pondered(z, depth, z.new_zeros(B, L), torch.zeros_like(p), p, torch.zeros(B, L, dtype=torch.bool),
                    loop_steps)


def draw_depths(rng, shares, shape):
    """Depths drawn independently for every position: an int64 tensor of ``shape`` with values
    1..len(shares), depth n with probability shares[n - 1] (e.g. an ACT network's ``N_shares``).
    rng: a NumPy Generator."""
    shares = np.asarray(shares, dtype=np.float64)
    if shares.ndim != 1 or shares.size == 0 or np.any(shares < 0) or not np.isclose(shares.sum(), 1.0):
        raise ValueError(f"shares must be a list of probabilities of N = 1, 2, ... that sums to 1, got {shares!r}")
    return torch.as_tensor(rng.choice(np.arange(1, shares.size + 1), size=shape, p=shares / shares.sum()))


# ---------------------------------------------------------------------------------------------
# Training and measuring
# ---------------------------------------------------------------------------------------------

TASK_DEFAULTS = dict(length=8, values=4, max_depth=5)
MODEL_DEFAULTS = dict(d_model=32, heads=2, ff=64, max_ponder=8, halting_bias=1.0)


def loss_terms(logits, pondered, targets, tau):
    """The objective of eq. (12) with positions in place of time steps: ``act_torch.losses.act_loss``
    with T = L, kind softmax. logits (B, L, O); targets (B, L) int64 tensor. Returns (loss,
    wrong (B, L) bool, rho (B, L)): loss = (sum_i CE_i + tau sum_i rho_i) averaged over the batch."""
    ones = torch.ones(targets.shape, dtype=logits.dtype, device=logits.device)
    return act_loss(logits, pondered.N, pondered.R, targets[..., None], ones, ones,
                    kind="softmax", heads=1, tau=tau)


def evaluate(P, tokens, targets, depth, *, heads=2, model_depth=None, epsilon=0.01, max_ponder=None,
             weights=remainder_weights):
    """Measure the encoder on a held-out set, overall and per chain depth (no gradient).

    tokens, targets, depth: NumPy (B, L) from ``make_chains``; the other arguments as ``ut_forward``
    (model_depth is its depth: None for ACT). Returns a dict: error (share of positions wrong),
    sequence_error (share of rows with any position wrong), steps (mean N per position: the
    layer applications a position received), rho (mean ponder cost N + R, eq. 10), loop_steps
    (steps the batched loop ran: the largest N), capped (share of positions stopped by the cap),
    weight_sum (mean sum of p per position), N_shares (the share of positions with N = 1, 2, ...
    up to the largest N) and by_depth: a list of {depth, count, error, steps, rho}.
    """
    with torch.no_grad():
        logits, r = ut_forward(P, torch.as_tensor(tokens), heads=heads, depth=model_depth, epsilon=epsilon,
                               max_ponder=max_ponder, weights=weights)
    wrong = (logits.argmax(dim=-1) != torch.as_tensor(targets)).numpy()
    N = r.N.numpy().astype(np.float64)
    rho = N + r.R.double().numpy()
    depth = np.asarray(depth)
    rec = {"error": float(wrong.mean()), "sequence_error": float(wrong.any(axis=1).mean()),
           "steps": float(N.mean()), "rho": float(rho.mean()), "loop_steps": int(r.loop_steps),
           "capped": float(r.capped.double().mean()), "weight_sum": float(r.p.double().sum(dim=-1).mean()),
           "N_shares": (np.bincount(r.N.numpy().ravel(), minlength=2)[1:] / N.size).tolist()}
    rec["by_depth"] = [{"depth": int(k), "count": int((depth == k).sum()), "error": float(wrong[depth == k].mean()),
                        "steps": float(N[depth == k].mean()), "rho": float(rho[depth == k].mean())}
                       for k in np.unique(depth)]
    return rec
