"""The pitfall gallery (notebook 11): each piece of ACT beside the wrong versions found in public code.

Every bug is a small function with the same signature as the correct piece it replaces, so that
one forward pass, ``act_variant_forward``, can run ACT with any one piece swapped:

    y, N, R = act_variant_forward(x, params, mix=plain_average)        # one bug
    y, N, R = act_variant_forward(x, params)                           # = act_torch.act.act_forward

With every piece at its default the result is ``act_torch.act.act_forward``'s, y, N, R and their
gradients (tests/test_pitfalls.py checks it to rounding, tanh RNN and LSTM); the correct halting
distribution is ``act_torch.act.halting_distribution`` itself and the correct loss
``act_torch.losses.act_loss``. Shapes are those of act_torch: x (B, T, D), the seven parameters
``W_x (D+1, G), W_s (H, G), b_s (G,), W_h (H, 1), b_h (1,), W_y (H, O), b_y (O,)``, y (B, T, O),
N (B, T) int64 and R (B, T).

The pieces, correct one first (paper equation in brackets):

    flag(x_t, n) -> (B, D+1) cell input of ponder step n (3):
        flag_appended | flag_inverted, flag_missing, flag_added_to_values
    halting_state(entering, produced) -> the state h^n is read from (5):
        produced_state | entering_state
    halts(total, h, threshold) -> bool, the halting test after step n, total = sum_{k<=n} h^k (7):
        halts_at_threshold | halts_strictly_above, halts_above_one, halts_counting_h_twice
    weights(h, N, capped) -> (p, R), the halting distribution (6), (8), (13):
        remainder_weights | overshoot_weights, remainder_through_N_weights,
        cap_without_remainder_weights, cap_zero_remainder_weights
    mix(p, S_n, N, entering) -> the state passed on (9):
        weighted_mean | plain_average, running_average
    ponder(N, R, in_sequence) -> rho (B, T), the ponder cost per step (10)-(12):
        ponder_cost | ponder_cost_with_padding, ponder_cost_detached, ponder_cost_sum_h (which also
        takes h_last, the halting unit of each step's last ponder step: needs_h_last = True)

and outside the model: the error rate (``wrong_at_logit_zero`` | ``wrong_at_logit_half``), the
parity data (the course's tasks | ``parity_prefix_batch``), PonderNet's
regulariser (``kl_halting_to_prior`` | ``kl_prior_to_halting``, the one ``KLDivLoss(p.log(), p_G)``
computes) and the cost of a batched ponder loop (``batch_loop_steps``).

``PITFALLS`` names each bug with what it does and the equation it breaks;
``act_experiments.experiments.pitfalls.train_variant`` trains one of them on a small task and records error,
the mean number of updates N, the ponder cost rho and the gradient reaching the halting bias.
"""

from dataclasses import dataclass, field

import numpy as np
import torch

from act_numpy.checks import check_float, check_int
from act_torch.act import halting_after_step, halting_distribution, ponder_step, prepare
from act_torch.losses import act_loss

from . import pondernet


def check_piece(name, value):
    """ValueError naming ``name`` unless ``value`` is a function (a piece to swap in)."""
    if not callable(value):
        raise ValueError(f"{name} must be a function (one of the pieces of act_beyond.pitfalls), got {value!r}")


def _n_range(h):
    """The ponder steps [1, 2, ..., n] for h (..., n)."""
    return torch.arange(1, h.shape[-1] + 1, device=h.device)


def _at(v, N):
    """v (..., n) read at step N (...), 1-based."""
    return v.gather(-1, (N - 1)[..., None])[..., 0]


# ---------------------------------------------------------------------------------------------
# Eq. (3): the first-step flag, x^n_t = (x_t, delta_{n,1})
# ---------------------------------------------------------------------------------------------

def _append(x_t, value):
    return torch.cat([x_t, x_t.new_full((x_t.shape[0], 1), float(value))], dim=-1)


def flag_appended(x_t, n):
    """Correct (eq. 3): one unit appended to x_t (B, D), 1 on ponder step n = 1 and 0 after."""
    return _append(x_t, n == 1)


def flag_inverted(x_t, n):
    """Bug: the appended unit is 0 on the first step and 1 after it."""
    return _append(x_t, n != 1)


def flag_missing(x_t, n):
    """Bug: no flag (the unit is always 0), so a new input and one more ponder step look alike."""
    return _append(x_t, 0.0)


def flag_added_to_values(x_t, n):
    """Bug: "x + delta" read as arithmetic: 1 added to every input value on step 1, no extra unit."""
    return _append(x_t + float(n == 1), 0.0)


# ---------------------------------------------------------------------------------------------
# Eq. (5): which state the halting unit reads
# ---------------------------------------------------------------------------------------------

def produced_state(entering, produced):
    """Correct (eq. 5): h^n = sigma(W_h s^n + b_h) from the state s^n that step n produced."""
    return produced


def entering_state(entering, produced):
    """Bug: h^n from the state entering step n (s^{n-1}, or s_{t-1} at n = 1), one step late."""
    return entering


# ---------------------------------------------------------------------------------------------
# Eq. (7): the halting test after ponder step n; total = sum_{k<=n} h^k (B,), h = h^n (B,)
# ---------------------------------------------------------------------------------------------

def halts_at_threshold(total, h, threshold):
    """Correct (eq. 7): halt at the first n with sum_{k<=n} h^k >= 1 - epsilon."""
    return total >= threshold


def halts_strictly_above(total, h, threshold):
    """Bug: ``>`` instead of ``>=``; differs only where the sum lands exactly on 1 - epsilon."""
    return total > threshold


def halts_above_one(total, h, threshold):
    """Bug: the epsilon dropped (``sum > 1``): a single update can never halt, N >= 2 always."""
    return total > 1.0


def halts_counting_h_twice(total, h, threshold):
    """Bug: the current h added again to a sum that already holds it; halts up to a step early."""
    return total + h >= threshold


# ---------------------------------------------------------------------------------------------
# Eqs. (6), (8), (13): the halting distribution. h (B, n) every step the batch took, N (B,) int64,
# capped (B,) bool: True where the cap M stopped the row before its sum reached 1 - epsilon.
# Returns p (B, n), zero after N, and R (B,), the quantity the ponder cost N + R uses.
# ---------------------------------------------------------------------------------------------

def remainder_weights(h, N, capped):
    """Correct: p^n = h^n for n < N, p^N = R = 1 - sum_{n<N} h^n (eqs 6, 8), at the cap too.

    This is ``act_torch.act.halting_distribution``; autograd gives dR/dh^n = -1 for n < N and
    0 for n = N (eqs 14, 20)."""
    return halting_distribution(h, N)


def _with_last(h, N, last):
    n_range = _n_range(h)
    p = torch.where(n_range < N[..., None], h, 0.0)
    return torch.where(n_range == N[..., None], last[..., None], p), last


def overshoot_weights(h, N, capped):
    """Bug: p^N = h^N - max(sum_{n<=N} h^n - 1, 0). Equals R only when the sum reaches 1; loses up
    to epsilon of the mass when it stops in [1 - epsilon, 1), and gives h^M at the cap (eq. 8)."""
    total = torch.where(_n_range(h) <= N[..., None], h, 0.0).sum(dim=-1)
    return _with_last(h, N, _at(h, N) - torch.relu(total - 1.0))


def remainder_through_N_weights(h, N, capped):
    """Bug: R from the wrong steps, R = 1 - sum_{n<=N} h^n (h^N included): p^N is about 0 or
    negative, the weights sum to 1 - h^N, and the ponder cost reaches h^N (eqs 8, 20)."""
    total = torch.where(_n_range(h) <= N[..., None], h, 0.0).sum(dim=-1)
    return _with_last(h, N, 1.0 - total)


def cap_without_remainder_weights(h, N, capped):
    """Bug: at the cap the last weight is h^M, not R; the weights no longer sum to 1 (eqs 8, 13)."""
    p, R = halting_distribution(h, N)
    return _with_last(h, N, torch.where(capped, _at(h, N), R))


def cap_zero_remainder_weights(h, N, capped):
    """Bug: at the cap R = 0 (and p^M = 0): the weights sum to less than 1 and the ponder cost
    N + R has no gradient exactly where the network ponders longest (eqs 8, 13, 14)."""
    p, R = halting_distribution(h, N)
    return _with_last(h, N, torch.where(capped, torch.zeros_like(R), R))


# ---------------------------------------------------------------------------------------------
# Eq. (9): the state passed on. p (B, n), S_n (B, n, H) the ponder states s^1..s^n, N (B,),
# entering (B, H) the state the input step started from.
# ---------------------------------------------------------------------------------------------

def weighted_mean(p, S_n, N, entering):
    """Correct (eq. 9): s_t = sum_n p^n s^n (the same for the LSTM's cell state)."""
    return (p[..., None] * S_n).sum(dim=-2)


def plain_average(p, S_n, N, entering):
    """Bug: s_t = (1/N) sum_{n<=N} s^n. p is not used, so the data loss sends the halting unit
    no gradient at all: only the ponder cost trains it."""
    taken = (_n_range(p) <= N[..., None]).to(S_n.dtype)
    return (taken[..., None] * S_n).sum(dim=-2) / N[..., None].to(S_n.dtype)


def running_average(p, S_n, N, entering):
    """Bug: a moving average m^n = (1 - p^n) m^{n-1} + p^n s^n from m^0 = the entering state, so
    s^n weighs p^n prod_{k>n} (1 - p^k), not p^n, and the old state keeps prod_n (1 - p^n)."""
    m = entering
    for n in range(S_n.shape[-2]):
        w = p[..., n, None]                     # zero after N: the average stops there
        m = (1.0 - w) * m + w * S_n[..., n, :]
    return m


# ---------------------------------------------------------------------------------------------
# Eqs. (10)-(12): the ponder cost. N, R (B, T); in_sequence (B, T) 1 on each sequence's steps (up to
# its last target, act_numpy.model.sequence_steps) and 0 on the padding after them.
# ---------------------------------------------------------------------------------------------

def ponder_cost(N, R, in_sequence):
    """Correct (eqs 10, 11): rho_t = N(t) + R(t) on the sequence's own steps, 0 on padding."""
    return (N.to(R.dtype) + R) * in_sequence


def ponder_cost_with_padding(N, R, in_sequence):
    """Bug: rho_t counted on every step, padding included: the network pays for pondering over
    inputs that are not there, which raises the effective tau by T / (sequence length)."""
    return N.to(R.dtype) + R


def ponder_cost_sum_h(N, R, in_sequence, h_last):
    """Bug: the simplified ponder cost -sum_{n=1}^{N} h^n that public write-ups give. Its value is
    R - 1 - h^N, and it counts the last halting unit: the ponder gradient reaches h^N with -1, where
    eqs (14) and (20) give 0. h_last (B, T): h^{N(t)} of every step."""
    return (R - 1.0 - h_last) * in_sequence


ponder_cost_sum_h.needs_h_last = True


def last_halting(record, N):
    """h^{N(t)} (B, T) from act_variant_forward's record["h"] (a list over t of (B, n_t)) and N (B, T)."""
    return torch.stack([h_t.gather(1, (N[:, t:t + 1] - 1).clamp(min=0))[:, 0] for t, h_t in enumerate(record["h"])],
                       dim=1)


def ponder_cost_detached(N, R, in_sequence):
    """Bug: R detached from the graph, so tau P has no gradient and tau does nothing (eq. 12)."""
    return (N.to(R.dtype) + R.detach()) * in_sequence


# ---------------------------------------------------------------------------------------------
# The forward pass with swappable pieces
# ---------------------------------------------------------------------------------------------

def act_variant_forward(x, params, *, cell="rnn", epsilon=0.01, max_ponder=100, flag=flag_appended,
                        halting_state=produced_state, halts=halts_at_threshold, weights=remainder_weights,
                        mix=weighted_mean, record=None):
    """ACT over a batch (eqs 3-13) with each piece replaceable by one of the functions above.

    x (B, T, D); params: the seven parameters (act_torch's contract, validated the same way).
    Returns y (B, T, O), N (B, T) int64 (no gradient) and R (B, T) as the ``weights`` piece gives it.
    record: optional dict, filled with lists over t of "h" (B, n_t), "p" (B, n_t) and "capped" (B,).

    Written for reading, not speed: each ponder step computes its halting unit with gradient, and
    the loop runs until every row has halted or met the cap M (eq. 13). A row that halted keeps
    taking the batch's steps with weight 0 (its N is fixed), as in act_torch.
    """
    x, P, (B, T, D, H, O) = prepare(x, params, cell, epsilon, max_ponder)
    for name, piece in (("flag", flag), ("halting_state", halting_state), ("halts", halts),
                        ("weights", weights), ("mix", mix)):
        check_piece(name, piece)
    if record is not None and not isinstance(record, dict):
        raise ValueError(f"record must be a dict or None, got {type(record).__name__}")
    lstm = cell == "lstm"
    threshold = 1.0 - epsilon
    zeros = x.new_zeros(B, H)
    state = (zeros, zeros) if lstm else zeros
    means, Ns, Rs = [], [], []
    for t in range(T):
        entering = state
        prev = state
        states, cells, hs = [], [], []
        total = x.new_zeros(B)
        running = torch.ones(B, dtype=torch.bool, device=x.device)
        N = torch.zeros(B, dtype=torch.int64, device=x.device)
        capped = torch.zeros(B, dtype=torch.bool, device=x.device)
        for n in range(1, max_ponder + 1):
            s_prev = prev[0] if lstm else prev
            x_part = flag(x[:, t], n) @ P["W_x"] + P["b_s"]                       # eq. (3)'s input part
            s, prev = ponder_step(x_part, prev, P["W_s"], cell)                    # act_torch's step
            h = torch.sigmoid(halting_state(s_prev, s) @ P["W_h"] + P["b_h"])[:, 0]   # eq. (5)
            states.append(s)
            hs.append(h)
            if lstm:
                cells.append(prev[1])
            total, running, N, capped, _ = halting_after_step(total, h, n, running, N, capped, threshold,
                                                                 max_ponder, halts)
            if not bool(running.any()):
                break
        h_n = torch.stack(hs, dim=-1)                                           # (B, n)
        p, R = weights(h_n, N, capped)                                          # eqs (6), (8)
        S_n = torch.stack(states, dim=-2)                                       # (B, n, H)
        mean_s = mix(p, S_n, N, entering[0] if lstm else entering)              # eq. (9)
        state = (mean_s, mix(p, torch.stack(cells, dim=-2), N, entering[1])) if lstm else mean_s
        if record is not None:
            for key, value in (("h", h_n), ("p", p), ("capped", capped)):
                record.setdefault(key, []).append(value)
        means.append(mean_s)
        Ns.append(N)
        Rs.append(R)
    y = torch.stack(means, dim=1) @ P["W_y"] + P["b_y"]                        # eq. (4) of the mean field
    return y, torch.stack(Ns, dim=1), torch.stack(Rs, dim=1)


def halting_from_values(h, *, epsilon=0.01, max_ponder=100, halts=halts_at_threshold, weights=remainder_weights):
    """N, p and R for halting values given in advance, with the pieces of act_variant_forward.

    h: (n,) or (B, n) tensor (or list) of halting values h^1, h^2, ..., at least as many as the
    rows need. Returns N (B,) int64, p (B, n) and R (B,) (with gradient when h has one).
    """
    check_piece("halts", halts)
    check_piece("weights", weights)
    check_float("epsilon", epsilon, 0.0, 1.0, low_open=True, high_open=True)
    max_ponder = check_int("max_ponder", max_ponder, 1)
    h = torch.as_tensor(h, dtype=torch.float64) if not isinstance(h, torch.Tensor) else h
    if h.dim() == 1:
        h = h[None]
    if h.dim() != 2 or h.shape[-1] < 1:
        raise ValueError(f"h must have shape (n,) or (B, n), got {tuple(h.shape)}")
    B, n_given = h.shape
    h = h[:, :max_ponder]
    total = torch.zeros(B, dtype=h.dtype)
    N = torch.zeros(B, dtype=torch.int64)
    capped = torch.zeros(B, dtype=torch.bool)
    running = torch.ones(B, dtype=torch.bool)
    for n in range(1, h.shape[-1] + 1):
        total, running, N, capped, _ = halting_after_step(total, h[:, n - 1], n, running, N, capped, 1.0 - epsilon,
                                                          max_ponder, halts)
    if bool(running.any()):
        raise ValueError(f"h has {n_given} steps but some rows have not halted; give more (or a smaller max_ponder)")
    p, R = weights(h, N, capped)
    return N, p, R


# ---------------------------------------------------------------------------------------------
# Outside the model: the error rate, the parity data, PonderNet's KL, the batch loop's cost
# ---------------------------------------------------------------------------------------------

def wrong_at_logit_zero(z, target, live):
    """Correct: a sigmoid output is wrong where (z > 0) disagrees with the target (P = 0.5 at z = 0).
    z, target, live (B, T); returns bool (B, T), False off the targets."""
    return ((z > 0) != (target > 0.5)) & (live > 0)


def wrong_at_logit_half(z, target, live):
    """Bug: the logit z thresholded at 0.5 as if it were a probability (P = 0.62 at z = 0.5)."""
    return ((z > 0.5) != (target > 0.5)) & (live > 0)


def parity_prefix_batch(rng, batch_size, bits):
    """Bug (data): parity with the non-zero entries packed first, 1..bits-1 of them.

    The course's convention (``tasks.make_batch("parity", ...)``, and the paper's): 1..bits
    non-zero entries at random positions. Here row b has its c_b non-zero entries (c_b uniform on
    1..bits-1) in positions 0..c_b-1, each +1 or -1 with probability 1/2. Returns x (B, 1, bits),
    y (B, 1, 1) float 0/1 (1 when the count of +1 is odd) and mask (B, 1), as make_batch does.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a np.random.Generator, e.g. np.random.default_rng(0)")
    batch_size = check_int("batch_size", batch_size, 1)
    bits = check_int("bits", bits, 2)                 # 1..bits-1 non-zero entries
    count = rng.integers(1, bits, size=batch_size)                 # 1..bits-1, never all of them
    chosen = np.arange(bits)[None, :] < count[:, None]             # a prefix, not random positions
    signs = 2.0 * rng.integers(0, 2, size=(batch_size, bits)) - 1.0
    bits_in = np.where(chosen, signs, 0.0)
    y = (np.count_nonzero(bits_in > 0, axis=1) % 2).astype(np.float64)[:, None, None]
    return bits_in[:, None, :], y, np.ones((batch_size, 1))


def geometric_prior(lambda_p, steps, normalise=True):
    """PonderNet's prior p_G(n) = lambda_p (1 - lambda_p)^(n-1), n = 1..steps, as a (steps,) float64
    tensor: ``act_beyond.pondernet.geometric_prior`` (truncated and normalised). normalise=False
    gives the bug of leaving the truncated prior unnormalised: it sums to 1 - (1 - lambda_p)^steps."""
    prior = pondernet.geometric_prior(lambda_p, steps)
    return prior if normalise else prior * (1.0 - (1.0 - lambda_p) ** steps)


# PonderNet's halting distribution and its regulariser, as the gallery names them: the correct ones
# are act_beyond.pondernet's own
halting_from_lambdas = pondernet.generalised_geometric
kl_halting_to_prior = pondernet.kl_divergence


def kl_prior_to_halting(p, prior):
    """Bug: KL(p_G || p) = sum_n p_G(n) log(p_G(n) / p_n), the reverse. This is what
    ``torch.nn.KLDivLoss()(p.log(), p_G)`` computes (its first argument is the log of the
    *second* distribution of the KL), summed here over n. Infinite where p_n = 0 < p_G(n)."""
    return (prior * (torch.log(prior) - torch.log(p))).sum(dim=-1)


def batch_loop_steps(N):
    """Ponder steps a batched loop runs, against those the rows need. N (B, T) from a forward pass.

    A loop that steps the whole batch until its slowest row halts runs sum_t max_b N(b, t) steps;
    the rows need mean_b sum_t N(b, t). Returns (loop steps, mean steps per row) as floats."""
    N = torch.as_tensor(N)
    if N.dim() != 2:
        raise ValueError(f"N must have shape (B, T), got {tuple(N.shape)}")
    return float(N.max(dim=0).values.sum()), float(N.to(torch.float64).sum(dim=1).mean())


# ---------------------------------------------------------------------------------------------
# The gallery: every bug with what it does and the equation it breaks
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pitfall:
    """One entry of the gallery. forward: keyword arguments of act_variant_forward; ponder: the
    ponder-cost piece; data: "random" (the course's parity) or "prefix" (parity_prefix_batch)."""
    name: str
    what: str
    breaks: str
    forward: dict = field(default_factory=dict)
    ponder: object = ponder_cost
    data: str = "random"


PITFALLS = {p.name: p for p in (
    Pitfall("correct", "ACT as the paper defines it (act_torch.act.act_forward)", "-"),
    Pitfall("plain average", "the state passed on is the plain mean of the ponder states",
            "(9) s_t = sum_n p^n s^n", {"mix": plain_average}),
    Pitfall("running average", "a moving average (1 - p^n) m + p^n s^n instead of sum_n p^n s^n",
            "(9) s_t = sum_n p^n s^n", {"mix": running_average}),
    Pitfall("flag inverted", "the first-step flag is 0 on step 1 and 1 after",
            "(3) x^n_t = (x_t, delta_{n,1})", {"flag": flag_inverted}),
    Pitfall("flag missing", "no first-step flag", "(3) x^n_t = (x_t, delta_{n,1})", {"flag": flag_missing}),
    Pitfall("flag added", "1 added to every input value on step 1 instead of an appended unit",
            "(3) x^n_t = (x_t, delta_{n,1})", {"flag": flag_added_to_values}),
    Pitfall("R through N", "R = 1 - sum_{n<=N} h^n: the remainder counts the halting step's own h",
            "(8) R = 1 - sum_{n<N} h^n, (20) dL/dh^N = 0", {"weights": remainder_through_N_weights}),
    Pitfall("overshoot remainder", "p^N = h^N - max(sum_{n<=N} h^n - 1, 0)",
            "(8) R = 1 - sum_{n<N} h^n when the sum stops in [1 - eps, 1) or at the cap",
            {"weights": overshoot_weights}),
    Pitfall("cap drops R", "at the cap M the last weight is h^M instead of R",
            "(8), (13): p sums to 1 at the cap too", {"weights": cap_without_remainder_weights}),
    Pitfall("cap zero R", "at the cap M, R = 0: weight and ponder gradient vanish there",
            "(8), (13), (14): dP/dh^n = -1 for n < N", {"weights": cap_zero_remainder_weights}),
    Pitfall("halts on >", "halting test sum > 1 - eps instead of >=", "(7) sum >= 1 - eps",
            {"halts": halts_strictly_above}),
    Pitfall("halts above 1", "halting test sum > 1: epsilon dropped, N >= 2 always", "(7) sum >= 1 - eps",
            {"halts": halts_above_one}),
    Pitfall("h counted twice", "the current h added twice in the halting test", "(7) sum_{n<=N} h^n >= 1 - eps",
            {"halts": halts_counting_h_twice}),
    Pitfall("halting from entering state", "h^n read from the state entering step n",
            "(5) h^n = sigma(W_h s^n + b_h)", {"halting_state": entering_state}),
    Pitfall("ponder counts padding", "rho summed over every step of the batch, padding included",
            "(11) P = sum over the sequence's steps", ponder=ponder_cost_with_padding),
    Pitfall("ponder detached", "the ponder cost has no gradient: tau does nothing",
            "(12), (15): -tau on every dL/dh^n, n < N", ponder=ponder_cost_detached),
    Pitfall("ponder sums h", "the ponder cost -sum_{n<=N} h^n: h^N counted",
            "(14), (20): dP/dh^N = 0", ponder=ponder_cost_sum_h),
    Pitfall("parity prefix", "parity data with 1..bits-1 non-zero entries packed first",
            "the task (section 3.1): 1..bits entries at random positions", data="prefix"),
)}


def objective(y_hat, N, R, target, live, in_sequence, *, kind, heads, tau, ponder=ponder_cost, h_last=None):
    """The loss of eq. (12) in two parts, with the ponder piece replaceable.

    Arguments as act_torch.losses.act_loss (whose data term and error mask are used); h_last (B, T)
    goes to a ponder piece with needs_h_last (ponder_cost_sum_h). Returns
    data_loss (0-d), ponder_loss = tau * sum_t rho_t / B (0-d) and wrong (B, T) bool."""
    check_piece("ponder", ponder)
    data_loss, wrong, _ = act_loss(y_hat, N, R, target, live, in_sequence, kind=kind, heads=heads, tau=0.0)
    B = live.shape[-2]
    rho = ponder(N, R, in_sequence, h_last) if getattr(ponder, "needs_h_last", False) else ponder(N, R, in_sequence)
    return data_loss, tau * rho.sum(dim=(-2, -1)) / B, wrong
