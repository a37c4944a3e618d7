"""Adaptive Computation Time in PyTorch: the forward pass only, autograd does the rest.

    y, N, R = act_forward(x, params, cell="rnn", epsilon=0.01, max_ponder=100)

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
"""

from collections.abc import Mapping

import torch

from act_numpy.params import PARAM_NAMES, check_inputs

_COMPUTE_DTYPES = (torch.float32, torch.float64)


def _prepare(x, params, cell, epsilon, max_ponder):
    """Validate the inputs; return x and the parameters in x's dtype and on x's device."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype == torch.bool or x.is_complex():
        raise ValueError(f"x must be a real numeric tensor, got dtype {x.dtype}")
    if not isinstance(params, Mapping):
        raise ValueError("params must be a dict of the seven ACT parameters")
    params = {k: v if isinstance(v, torch.Tensor) else torch.as_tensor(v) for k, v in params.items()}
    shapes = {k: tuple(v.shape) for k, v in params.items()}
    # the shape rules live in one place, shared with the NumPy reference
    B, T, D, H, O = check_inputs(tuple(x.shape), shapes, cell, epsilon, max_ponder)
    dtype = x.dtype if x.dtype in _COMPUTE_DTYPES else torch.float64
    x = x.to(dtype)
    # .to() is differentiable: gradients still reach the caller's tensors, whatever their dtype
    P = {k: params[k].to(device=x.device, dtype=dtype) for k in PARAM_NAMES}
    # one host sync for all finiteness checks; find the culprit only when something is wrong
    with torch.no_grad():
        finite = torch.stack([torch.isfinite(x).all()] + [torch.isfinite(P[k]).all() for k in PARAM_NAMES])
        if not bool(finite.all()):
            if not bool(finite[0]):
                raise ValueError("x contains NaN or inf")
            bad = [k for k, ok in zip(PARAM_NAMES, finite[1:].tolist()) if not ok]
            raise ValueError(f"params[{bad[0]!r}] contains NaN or inf")
    return x, P, (B, T, D, H, O)


def _rnn_cell(z, state):
    """tanh RNN: s' = tanh(z). The state is one (B, H) tensor."""
    s = torch.tanh(z)
    return s, s


def _lstm_cell(z, state):
    """LSTM with gate blocks i, f, o, g in z (B, 4H); state = (h, c).

    c' = sigma(f) c + sigma(i) tanh(g),  h' = sigma(o) tanh(c'). Returns (h', (h', c')).
    """
    _, c_prev = state
    H = c_prev.shape[1]
    ifo = torch.sigmoid(z[:, :3 * H])             # one kernel for the three sigmoid gates
    i, f, o = ifo[:, :H], ifo[:, H:2 * H], ifo[:, 2 * H:]
    g = torch.tanh(z[:, 3 * H:])
    c = torch.addcmul(f * c_prev, i, g)
    h = o * torch.tanh(c)
    return h, (h, c)


def act_forward(x, params, *, cell="rnn", epsilon=0.01, max_ponder=100):
    """Run ACT over a batch of sequences (the same computation as act_numpy.act.act_forward).

    x (B, T, D); params: mapping of the seven parameters. Returns y (B, T, O), N (B, T) int64
    (no gradient), R (B, T). The ponder cost of step t is rho_t = N + R (eq. 10).
    """
    x, P, (B, T, D, H, O) = _prepare(x, params, cell, epsilon, max_ponder)
    G = P["W_s"].shape[1]
    lstm = cell == "lstm"
    cell_fn = _lstm_cell if lstm else _rnn_cell
    threshold = 1.0 - epsilon

    # x~ W_x = x W_x[:D] + flag * W_x[D]: the input part is the same for every ponder step, so it is
    # computed once for all t; the flag row (delta_{n,1}) is added for the first ponder step only.
    xW = x @ P["W_x"][:D]                                    # (B, T, G)
    xW_first = xW + P["W_x"][D]                              # n = 1: flag = 1
    # One matrix product per ponder step: the new state s^n feeds both the next step's cell
    # (s^n W_s + b_s) and its own halting unit (s^n W_h + b_h, eq. 5), so both are read from
    # s^n [W_s | W_h] + [b_s | b_h].
    W_sh = torch.cat([P["W_s"], P["W_h"]], dim=1)            # (H, G + 1)
    b_sh = torch.cat([P["b_s"], P["b_h"]])                   # (G + 1,)

    zeros = x.new_zeros(B, H)
    state = (zeros, zeros) if lstm else zeros                # initial state: zeros
    rec = P["b_s"].expand(B, G)                              # s_0 W_s + b_s with s_0 = 0
    means, Ns, Rs = [], [], []
    for t in range(T):
        cum = x.new_zeros(B)                                  # sum_{k<n} h^k of the running rows
        running = torch.ones(B, dtype=torch.bool, device=x.device)
        N = torch.zeros(B, dtype=torch.int64, device=x.device)
        mean_s = zeros                                        # eq. (9): s_t = sum_n p^n s^n
        mean_c = zeros
        prev = state                                          # step 1 starts from s_{t-1} (eq. 3)
        for n in range(1, max_ponder + 1):
            z = (xW_first if n == 1 else xW)[:, t] + rec     # eq. (3): S(s^{n-1}, x^n)
            s, prev = cell_fn(z, prev)
            out = torch.addmm(b_sh, s, W_sh)
            rec = out[:, :G]                                  # for step n + 1
            h = torch.sigmoid(out[:, G])                      # eq. (5): from the state just made
            new_cum = cum + h
            # eq. (7) with the cap of eq. (13): halt at the first n with sum_{k<=n} h^k >= 1 - eps
            # (comparisons and masks are booleans: they carry no gradient, so N is a constant)
            halt = running if n == max_ponder else running & (new_cum >= threshold)
            still = running & ~halt
            # eq. (6): p^n = h^n before the halting step, p^N = R = 1 - sum_{k<N} h^k (eq. 8);
            # rows that halted earlier get 0. h^N never enters p or R, hence eq. (20).
            p = torch.where(halt, 1.0 - cum, torch.where(running, h, 0.0))
            cum = torch.where(still, new_cum, cum)
            mean_s = torch.addcmul(mean_s, p[:, None], s)
            if lstm:
                mean_c = torch.addcmul(mean_c, p[:, None], prev[1])
            N += running
            running = still
            if not running.any():                             # the one host sync per step
                break
        state = (mean_s, mean_c) if lstm else mean_s          # the mean field goes on to t + 1
        if t + 1 < T:
            rec = torch.addmm(P["b_s"], mean_s, P["W_s"])
        means.append(mean_s)
        Ns.append(N)
        Rs.append(1.0 - cum)                                  # eq. (8); cum stopped at n = N - 1

    S = torch.stack(means, dim=1)                             # (B, T, H) mean-field states
    y = S @ P["W_y"] + P["b_y"]                               # eq. (4) of the mean field
    return y, torch.stack(Ns, dim=1), torch.stack(Rs, dim=1)
