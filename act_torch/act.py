"""Adaptive Computation Time in PyTorch: the forward pass only, autograd does the rest.

    y, N, R = act_forward(x, params, cell="rnn", epsilon=0.01, max_ponder=100)
    y, N, R = fixed_forward(x, params, cell="rnn", fixed_ponder=3)     # the control: 3 updates
    y, N, R = scheduled_forward(x, params, cell="rnn", N=N_given)      # N_given[b, t] updates

Same contract as ``act_numpy.act.act_forward`` (shapes, parameter names, flag, cells, halting),
on torch tensors:

- x (B, T, D) float tensor; the computation dtype and device follow x (float32 or float64,
  CPU or CUDA). Integer x is computed in float64, as in NumPy.
- params: mapping with the seven tensors of ``act_numpy.params`` (W_x (D+1, G), W_s (H, G),
  b_s (G,), W_h (H, 1), b_h (1,), W_y (H, O), b_y (O,)), used as ``x @ W``.
- Returns y (B, T, O) and R (B, T), both differentiable, and N (B, T) int64 without gradient.

N(t) is a constant for autograd (paper section 2.2): it only decides *which* terms make up R and
p, so ``(N + R).backward()`` gives exactly the paper's eqs 14-20 with no hand-written backward:
every h^n with n < N reaches R = 1 - sum_{n<N} h^n with slope -1, and h^N appears in nothing.

The whole batch runs every ponder step; a row that has halted gets weight p = 0 from a mask
(``torch.where``), never a gather of the rows still running. The only host synchronisation in
the ponder loop is one "is any row still running?" test per step.

The pieces are public, for the models built on ACT (``act_beyond``): ``prepare`` (the checks),
``ponder_step`` (eq. 3 and the cell), ``halting_distribution`` (eqs 6, 8), ``halting_test``
(eqs 7, 13), ``halting_after_step`` (that test for a loop run step by step) and the cells. The
engine (``act_engine.torch_act``) runs the same equations for K stacked networks, faster, and
arranged for speed (memory layouts, no host sync); this file is the version to read.
"""

from collections.abc import Mapping

import numpy as np
import torch

from act_numpy.checks import check_int
from act_numpy.params import PARAM_NAMES, check_inputs

_COMPUTE_DTYPES = (torch.float32, torch.float64)


def prepare(x, params, cell, epsilon, max_ponder, check_finite=True):
    """Validate the inputs; return x, the parameters in x's dtype and on x's device, and the
    sizes (B, T, D, H, O).

    check_finite=False skips the NaN/inf test, the only check that needs a host sync.
    """
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype == torch.bool or x.is_complex():
        raise ValueError(f"x must be a real numeric tensor, got dtype {x.dtype}")
    if not isinstance(params, Mapping):
        raise ValueError("params must be a dict of the seven ACT parameters")
    params = {k: v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for k, v in params.items()}
    for k, v in params.items():
        # .to() below would drop an imaginary part (with only a warning) or turn booleans into 0/1
        if v.dtype == torch.bool or v.is_complex():
            raise ValueError(f"params[{k!r}] must be a real numeric tensor, got dtype {v.dtype}")
    shapes = {k: tuple(v.shape) for k, v in params.items()}
    # the shape rules live in one place, shared with the NumPy reference
    B, T, D, H, O = check_inputs(tuple(x.shape), shapes, cell, epsilon, max_ponder)
    dtype = x.dtype if x.dtype in _COMPUTE_DTYPES else torch.float64
    x = x.to(dtype)
    # .to() is differentiable: gradients still reach the caller's tensors, whatever their dtype
    P = {k: params[k].to(device=x.device, dtype=dtype) for k in PARAM_NAMES}
    if check_finite:
        # 0 * v is 0 where v is finite and NaN where v is NaN or inf, so one sum over all eight
        # tensors tells whether anything is wrong (a few operations and one host sync); only
        # then are the tensors looked at one by one, to name the culprit
        tensors = [("x", x)] + [(k, P[k]) for k in PARAM_NAMES]
        with torch.no_grad():
            if not bool(torch.isfinite(torch.cat([v.reshape(-1) for _, v in tensors]).mul_(0.0).sum())):
                for name, v in tensors:
                    if not bool(torch.isfinite(v).all()):
                        raise ValueError("x contains NaN or inf" if name == "x" else f"params[{name!r}] contains NaN or inf")
    return x, P, (B, T, D, H, O)


def rnn_cell(z, state):
    """tanh RNN: s' = tanh(z). The state is one (..., B, H) tensor."""
    s = torch.tanh(z)
    return s, s


def lstm_cell(z, state):
    """LSTM with gate blocks i, f, o, g in z (..., B, 4H); state = (s, c) (act_numpy.cells).

    c' = sigma(f) c + sigma(i) tanh(g),  s' = sigma(o) tanh(c'). Returns (s', (s', c')).
    """
    _, c_prev = state
    H = c_prev.shape[-1]
    z_ifo, z_g = z.split([3 * H, H], dim=-1)
    i, f, o = torch.sigmoid(z_ifo).chunk(3, dim=-1)  # one kernel for the three sigmoid gates
    g = torch.tanh(z_g)
    c = torch.addcmul(f * c_prev, i, g)
    s = o * torch.tanh(c)
    return s, (s, c)


def halting_distribution(h, N, n_range=None):
    """The halting distribution p and the remainder R from halting units and halting steps.

    h (..., n) halting units h^1..h^n (eq. 5); N (...) int64 halting steps, 1 <= N <= n;
    n_range: optional tensor [1, 2, ..., n] of the ponder steps n (made here when not given).
    Returns p (..., n) with p^k = h^k for k < N, p^N = R and 0 after (eq. 6), and
    R (...) = 1 - sum_{k<N} h^k (eq. 8). Only h^k with k < N enter p and R, so autograd gives
    dR/dh^k = -1 for k < N and 0 for k >= N (eqs 14, 18, 20).
    """
    if n_range is None:
        n_range = torch.arange(1, h.shape[-1] + 1, device=h.device)
    h_before = torch.where(n_range < N[..., None], h, 0.0)          # h^k for k < N(t)
    R = 1.0 - h_before.sum(dim=-1)                                 # eq. (8)
    p = torch.where(n_range == N[..., None], R[..., None], h_before)    # eq. (6)
    return p, R


def halting_test(sums, n, threshold, cap, halted=None):
    """Does a row take ponder step n + 1? Eq. (7) with the cap of eq. (13): it does while its sum
    of halting units after step n is below 1 - eps and its cap M allows another step.

    sums (..., B) after step n, with n an int; or (..., B, n_steps) after each step, with n the
    tensor [1, 2, ..., n_steps]. threshold 1 - eps and cap M: numbers, or tensors that broadcast
    (one per member of the engine's stack). Returns a bool tensor of the shape of sums.
    N(t) is the first step where it is False: 1 + the number of steps where it is True. It only
    decides N(t), a constant for autograd, so the sums carry no gradient.

    halted: optional bool tensor of the shape of sums, True where eq. (7)'s condition holds, for a
    halting condition other than the paper's (act_beyond.pitfalls swaps in wrong ones); by
    default sums >= threshold.
    """
    below = sums < threshold if halted is None else ~halted
    return below & (n < cap)


@torch.no_grad()
def halting_after_step(sums, h, n, running, N, capped, threshold, cap, halts=None):
    """The halting bookkeeping of one ponder step n (1-based), for a loop that runs step by step
    (act_beyond's pitfalls and Universal Transformer; ``act_forward`` tests its stacked sums at once).

    sums (...,) the sum of h over the steps a row has taken, h (...,) = h^n, running (...,) bool
    (the rows that take step n), N (...,) int64 (0 until a row halts), capped (...,) bool (the cap
    M stopped the row before eq. (7) did). threshold 1 - eps, cap M. halts: optional function
    (sums, h, threshold) -> bool, eq. (7)'s condition, passed to ``halting_test``.
    Returns sums, running, N, capped updated, and newly (...,) bool: the rows whose N(t) is n.
    No gradient: N(t) is a constant for autograd (section 2.2).
    """
    sums = sums + torch.where(running, h, 0.0)
    halted = None if halts is None else halts(sums, h, threshold)            # eq. (7)'s condition, swapped
    newly = running & ~halting_test(sums, n, threshold, cap, halted)          # eq. (7), or the cap M (13)
    below = sums < threshold if halted is None else ~halted
    at_cap = newly & below                                                    # only the cap stopped it
    return sums, running & ~newly, torch.where(newly, n, N), capped | at_cap, newly


def ponder_step(x_part, state, W_s, cell):
    """One ponder step, eq. (3): s^n = S(s^{n-1}, x^n), from the input's part of z.

    x_part (..., B, G): x^n W_x + b_s for this step (the flag's row included at n = 1);
    state: s^{n-1}, (..., B, H) or for the LSTM the pair (s, c); W_s (..., H, G).
    Returns s^n (..., B, H) and the new state. Leading axes (K stacked networks)
    pass through the batched product.
    """
    s_prev = state[0] if cell == "lstm" else state
    z = x_part + s_prev @ W_s
    return (lstm_cell if cell == "lstm" else rnn_cell)(z, state)


def act_forward(x, params, *, cell="rnn", epsilon=0.01, max_ponder=100, record=None):
    """Run ACT over a batch of sequences (the same computation as act_numpy.act.act_forward).

    x (B, T, D); params: mapping of the seven parameters. Returns y (B, T, O), N (B, T) int64
    (no gradient), R (B, T). The ponder cost of step t is rho_t = N + R (eq. 10).

    record: optional dict, filled with the intermediates for inspection: "h" and "p", lists over
    t of (B, n_t) halting units and halting weights (n_t = ponder steps the batch ran at t);
    "S" (B, T, H) mean-field states; for the LSTM also "C" (B, T, H) mean-field cell states.
    """
    return _forward(x, params, cell, epsilon, max_ponder, record, halting=True)


def fixed_forward(x, params, *, cell="rnn", fixed_ponder=1, record=None):
    """The fixed-computation control: exactly ``fixed_ponder`` updates F at every input step
    (act_numpy.act.fixed_forward). ACT with its halting unit removed, h^n = 0: every row runs to
    the cap M = F, where p^F = R = 1, so N = F, rho = F + 1 and the output reads the last state.
    Returns y, N, R as act_forward; W_h and b_h are read by nothing and get no gradient.
    """
    fixed_ponder = check_int("fixed_ponder", fixed_ponder, 1)
    return _forward(x, params, cell, 0.01, fixed_ponder, record, halting=False)


def scheduled_forward(x, params, *, cell="rnn", N, record=None):
    """The random-schedule control (act_numpy.act.scheduled_forward with halting=False): exactly
    N[b, t] updates at input step t of row b, no halting unit, p^N = 1, so the output and the next
    state read the N-th update alone. N (B, T) integers >= 1 (a tensor or an array; no gradient).
    Returns y, N, R as act_forward; W_h and b_h are read by nothing and get no gradient.
    """
    N = torch.as_tensor(np.asarray(N) if not torch.is_tensor(N) else N)
    if N.dim() != 2 or N.dtype.is_floating_point or N.dtype == torch.bool or (N.numel() and int(N.min()) < 1):
        raise ValueError(f"N must be a (B, T) array of integers >= 1, got {N.dtype} {tuple(N.shape)}")
    if tuple(N.shape) != tuple(x.shape[:2]):
        raise ValueError(f"N must have the shape (B, T) = {tuple(x.shape[:2])} of x, got {tuple(N.shape)}")
    return _forward(x, params, cell, 0.01, int(N.max()), record, halting=False, schedule=N)


def _forward(x, params, cell, epsilon, max_ponder, record, halting, schedule=None):
    """act_forward's work; halting=False removes the halting unit (h = 0), for fixed_forward;
    schedule (B, T): each row's cap at each input step, for scheduled_forward."""
    x, P, (B, T, D, H, O) = prepare(x, params, cell, epsilon, max_ponder)
    if schedule is not None:
        schedule = schedule.to(device=x.device, dtype=torch.int64)
    lstm = cell == "lstm"
    # x~ W_x = x W_x[:D] + flag * W_x[D]: the input's part of eq. (3) is the same for every ponder
    # step, so it is computed once for all t (with b_s); the flag row is added at n = 1 only
    xW = (x @ P["W_x"][:D] + P["b_s"]).unbind(1)                  # T x (B, G): one per input step
    flag = P["W_x"][D]
    zeros = x.new_zeros(B, H)
    state = (zeros, zeros) if lstm else zeros                     # initial state: zeros
    means, mean_cells, Ns, Rs = [], [], [], []
    for t in range(T):
        cap = max_ponder if schedule is None else schedule[:, t]      # the cap M, or each row's N
        states, cells, sums = [], [], []
        cum = x.new_zeros(B)                                      # sum of the halting units so far
        prev = state                                              # s_{t-1} enters step n = 1
        for n in range(1, max_ponder + 1):
            x_part = xW[t] + flag if n == 1 else xW[t]
            if t == 0 and n == 1:       # s_0 = 0, so eq. (3)'s s W_s vanishes: the cell alone
                s, prev = (lstm_cell if lstm else rnn_cell)(x_part, prev)
            else:
                s, prev = ponder_step(x_part, prev, P["W_s"], cell)
            states.append(s)
            cells.append(prev[1] if lstm else None)
            # eq. (7): a row halts once its sum of h^n (eq. 5) reaches 1 - eps. The test only
            # decides N(t), a constant for autograd, so it runs without gradient
            if halting:
                with torch.no_grad():
                    cum = cum + torch.sigmoid(s @ P["W_h"] + P["b_h"])[:, 0]
            sums.append(cum)
            if not halting_test(cum, n, 1.0 - epsilon, cap).any():   # one host sync per step
                break                                                        # every row has halted
        S_n = torch.stack(states, dim=1)                          # (B, n_t, H): s^1 .. s^n_t
        n_range = torch.arange(1, S_n.shape[1] + 1, device=x.device)
        # N(t): the first n whose sum reaches 1 - eps, or the cap M (eqs 7, 13)
        N = halting_test(torch.stack(sums, dim=-1), n_range, 1.0 - epsilon,
                         cap if schedule is None else cap[:, None]).sum(dim=-1) + 1
        # eq. (5) with gradient, for all the steps of t in one product (the same values as above)
        if halting:
            h = torch.sigmoid(S_n @ P["W_h"][:, 0] + P["b_h"])    # (B, n_t)
        else:
            h = S_n.new_zeros(S_n.shape[:2])                      # fixed_forward: no halting unit
        p, R = halting_distribution(h, N, n_range)                # eqs (6), (8)
        # eq. (9): the mean field s_t = sum_n p^n s^n carries on to t + 1 (for the LSTM, c too)
        s_t = (p[..., None] * S_n).sum(dim=1)
        if lstm:
            c_t = (p[..., None] * torch.stack(cells, dim=1)).sum(dim=1)
            mean_cells.append(c_t)
            state = (s_t, c_t)
        else:
            state = s_t
        means.append(s_t)
        Ns.append(N)
        Rs.append(R)
        if record is not None:
            record.setdefault("h", []).append(h)
            record.setdefault("p", []).append(p)
    S = torch.stack(means, dim=1)                                 # (B, T, H)
    if record is not None:
        record["S"] = S
        if lstm:
            record["C"] = torch.stack(mean_cells, dim=1)
    y = S @ P["W_y"] + P["b_y"]                                   # eq. (9): y_t = W_y s_t + b_y
    return y, torch.stack(Ns, dim=1), torch.stack(Rs, dim=1)
