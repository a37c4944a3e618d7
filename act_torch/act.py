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
    z_ifo, z_g = z.split([3 * H, H], dim=1)
    i, f, o = torch.sigmoid(z_ifo).chunk(3, dim=1)   # one kernel for the three sigmoid gates
    g = torch.tanh(z_g)
    c = torch.addcmul(f * c_prev, i, g)
    h = o * torch.tanh(c)
    return h, (h, c)


def halting_distribution(h, N):
    """The halting distribution p and the remainder R from halting units and halting steps.

    h (B, n) halting units h^1..h^n (eq. 5); N (B,) int64 halting steps, 1 <= N <= n.
    Returns p (B, n) with p^k = h^k for k < N, p^N = R and 0 after (eq. 6), and
    R (B,) = 1 - sum_{k<N} h^k (eq. 8). Only h^k with k < N enter p and R, so autograd gives
    dR/dh^k = -1 for k < N and 0 for k >= N (eqs 14, 17, 20).
    """
    steps = torch.arange(1, h.shape[1] + 1, device=h.device)
    h_before = torch.where(steps < N[:, None], h, 0.0)            # h^k for k < N(t)
    R = 1.0 - h_before.sum(dim=1)                                  # eq. (8)
    p = torch.where(steps == N[:, None], R[:, None], h_before)    # eq. (6)
    return p, R


def act_forward(x, params, *, cell="rnn", epsilon=0.01, max_ponder=100):
    """Run ACT over a batch of sequences (the same computation as act_numpy.act.act_forward).

    x (B, T, D); params: mapping of the seven parameters. Returns y (B, T, O), N (B, T) int64
    (no gradient), R (B, T). The ponder cost of step t is rho_t = N + R (eq. 10).

    Each ponder step records only what autograd needs (the cell update). The halting test runs
    beside it without gradient, because it only decides N(t); once N(t) is known, all halting
    units of step t are recomputed in one batched product and turned into p and R, and the
    mean field sum_n p^n s^n is one batched product too (eq. 9).
    """
    x, P, (B, T, D, H, O) = _prepare(x, params, cell, epsilon, max_ponder)
    lstm = cell == "lstm"
    cell_fn = _lstm_cell if lstm else _rnn_cell
    threshold = 1.0 - epsilon
    W_s, W_h, b_h = P["W_s"], P["W_h"], P["b_h"]

    # x~ W_x = x W_x[:D] + flag * W_x[D]: the input part is the same for every ponder step, so it
    # is computed once for all t (with b_s folded in); the flag row (delta_{n,1}) is added for the
    # first ponder step only.
    xW = x @ P["W_x"][:D] + P["b_s"]                           # (B, T, G)
    xW_first = xW + P["W_x"][D]                                # n = 1: flag = 1
    # unbind, not xW[:, t]: the backward of one unbind is one stack, whereas the backward of
    # every slice would build a zero tensor the size of all of xW
    xW, xW_first = xW.unbind(1), xW_first.unbind(1)

    zeros = x.new_zeros(B, H)
    state = (zeros, zeros) if lstm else zeros                  # initial state: zeros
    means, Ns, Rs = [], [], []
    for t in range(T):
        cum = x.new_zeros(B)                                    # sum_{k<=n} h^k, no gradient
        running = torch.ones(B, dtype=torch.bool, device=x.device)
        N = torch.zeros(B, dtype=torch.int64, device=x.device)
        states, cells = [], []
        prev = state                                            # step 1 starts from s_{t-1}
        for n in range(1, max_ponder + 1):
            x_part = xW_first[t] if n == 1 else xW[t]
            s_prev = prev[0] if lstm else prev
            # eq. (3): S(s^{n-1}, x^n); at t = 0, n = 1 the state is zero and s W_s vanishes
            z = x_part if (t == 0 and n == 1) else torch.addmm(x_part, s_prev, W_s)
            s, prev = cell_fn(z, prev)
            states.append(s)
            if lstm:
                cells.append(prev[1])
            with torch.no_grad():
                # eq. (5) from the state just made, then eq. (7) with the cap of eq. (13): a row
                # halts at the first n with sum_{k<=n} h^k >= 1 - epsilon, or at n = M
                cum += torch.sigmoid(torch.addmm(b_h, s, W_h)).squeeze(1)
                N += running
                if n == max_ponder:
                    running.zero_()
                else:
                    running &= cum < threshold
            if not running.any():                               # the one host sync per step
                break
        S_n = torch.stack(states, dim=1)                        # (B, n, H): s^1..s^n
        h = torch.sigmoid(S_n @ W_h + b_h).squeeze(2)           # eq. (5), with gradient
        p, R = halting_distribution(h, N)                       # eqs (6), (8)
        mean_s = (p[:, None, :] @ S_n).squeeze(1)               # eq. (9): s_t = sum_n p^n s^n
        if lstm:                                                # the LSTM's c is averaged too
            mean_c = (p[:, None, :] @ torch.stack(cells, dim=1)).squeeze(1)
        state = (mean_s, mean_c) if lstm else mean_s            # the mean field goes on to t + 1
        means.append(mean_s)
        Ns.append(N)
        Rs.append(R)

    S = torch.stack(means, dim=1)                               # (B, T, H) mean-field states
    y = S @ P["W_y"] + P["b_y"]                                 # eq. (4) of the mean field
    return y, torch.stack(Ns, dim=1), torch.stack(Rs, dim=1)
