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


def _prepare(x, params, cell, epsilon, max_ponder, check_finite=True):
    """Validate the inputs; return x and the parameters in x's dtype and on x's device.

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


def halting_distribution(h, N, steps=None):
    """The halting distribution p and the remainder R from halting units and halting steps.

    h (B, n) halting units h^1..h^n (eq. 5); N (B,) int64 halting steps, 1 <= N <= n;
    steps: optional tensor [1, 2, ..., n] (made here when not given).
    Returns p (B, n) with p^k = h^k for k < N, p^N = R and 0 after (eq. 6), and
    R (B,) = 1 - sum_{k<N} h^k (eq. 8). Only h^k with k < N enter p and R, so autograd gives
    dR/dh^k = -1 for k < N and 0 for k >= N (eqs 14, 18, 20).
    """
    if steps is None:
        steps = torch.arange(1, h.shape[1] + 1, device=h.device)
    h_before = torch.where(steps < N[:, None], h, 0.0)            # h^k for k < N(t)
    R = 1.0 - h_before.sum(dim=1)                                  # eq. (8)
    p = torch.where(steps == N[:, None], R[:, None], h_before)    # eq. (6)
    return p, R


def act_forward(x, params, *, cell="rnn", epsilon=0.01, max_ponder=100, record=None):
    """Run ACT over a batch of sequences (the same computation as act_numpy.act.act_forward).

    x (B, T, D); params: mapping of the seven parameters. Returns y (B, T, O), N (B, T) int64
    (no gradient), R (B, T). The ponder cost of step t is rho_t = N + R (eq. 10).

    record: optional dict, filled with the intermediates for inspection: "h" and "p", lists over
    t of (B, n_t) halting units and halting weights (n_t = ponder steps the batch ran at t);
    "S" (B, T, H) mean-field states; for the LSTM also "C" (B, T, H) mean-field cell states.

    Each ponder step records only what autograd needs (the cell update). The halting test runs
    beside it without gradient, because it only decides N(t); once N(t) is known, the halting
    units of all ponder steps of t are recomputed with gradient in one product (the same values
    up to rounding) and turned into p and R, and the mean field sum_n p^n s^n (eq. 9) is one
    multiply-and-sum over the stacked states.
    """
    x, P, _ = _prepare(x, params, cell, epsilon, max_ponder)
    y, N, R, _ = _ponder(x, P, cell, epsilon, max_ponder, record)
    return y, N, R


def act_forward_fixed_steps(x, params, ponder_steps, *, cell="rnn", epsilon=0.01, max_ponder=100):
    """act_forward that runs exactly ``ponder_steps`` ponder steps at every input step, with no
    host synchronisation at all, so that it can be captured in a CUDA graph or compiled whole
    by torch.compile(fullgraph=True).

    Returns y, N, R as act_forward, and ``complete``: a 0-d bool tensor, True when every row
    halted within ``ponder_steps`` steps (always when ponder_steps >= max_ponder). When it is
    True, y, N, R and all gradients equal act_forward's: the steps a row takes after it halted
    get weight p = 0. When it is False some row needed more steps and the results of that row
    are wrong: run act_forward instead (or more steps). x is not checked for NaN/inf here.
    """
    if isinstance(ponder_steps, bool) or not isinstance(ponder_steps, int) or ponder_steps < 1:
        raise ValueError(f"ponder_steps must be an integer >= 1, got {ponder_steps!r}")
    x, P, _ = _prepare(x, params, cell, epsilon, max_ponder, check_finite=False)
    return _ponder(x, P, cell, epsilon, max_ponder, None, min(ponder_steps, max_ponder))


def _ponder(x, P, cell, epsilon, max_ponder, record, fixed_steps=None):
    """The computation of act_forward on validated inputs. fixed_steps: None to stop when every
    row has halted (one host sync per step), or a number of steps to run without any sync.
    Returns y, N, R and complete (see act_forward_fixed_steps; None when fixed_steps is None).
    """
    B, T, D = x.shape
    H = P["W_s"].shape[0]
    lstm = cell == "lstm"
    cell_fn = _lstm_cell if lstm else _rnn_cell
    threshold = 1.0 - epsilon
    W_s = P["W_s"]
    if W_s.shape[1] > W_s.shape[0] and x.device.type == "cpu":
        # LSTM on the CPU: W_s (H, 4H) with the memory layout of W_s^T (same values). Autograd's
        # backward multiplies every ponder step's dz by W_s^T, and MKL runs that product
        # several times faster on a contiguous matrix than on a transposed view
        # (dz (16, 512) W_s^T: ~20 us against ~130 us); the forward product loses less.
        W_s = W_s.t().contiguous().t()
    # the halting test only decides N(t), so it runs on detached copies, outside autograd
    W_h_test, b_h_test = P["W_h"].detach(), P["b_h"].detach()

    # x~ W_x = x W_x[:D] + flag * W_x[D]: the input part is the same for every ponder step, so it
    # is computed once for all t (with b_s folded in); the flag row (delta_{n,1}) is added for the
    # first ponder step only.
    G = P["W_s"].shape[1]
    xW = torch.addmm(P["b_s"], x.reshape(B * T, D), P["W_x"][:D]).view(B, T, G)
    xW_first = xW + P["W_x"][D]                                # n = 1: flag = 1
    # unbind, not xW[:, t]: the backward of one unbind is one stack, whereas the backward of
    # every slice would build a zero tensor the size of all of xW
    xW, xW_first = xW.unbind(1), xW_first.unbind(1)
    zeros = x.new_zeros(B, H)
    state = (zeros, zeros) if lstm else zeros                  # initial state: zeros
    means, Ns, Rs, unfinished = [], [], [], []
    last_step = max_ponder if fixed_steps is None else fixed_steps
    # ponder step numbers n = 1, 2, ...: made for the steps taken and grown when more are taken,
    # never for all M at once (M may be huge: an arange of 10^9 steps is 8 GB)
    steps = torch.arange(1, min(last_step, 32) + 1, device=x.device)
    for t in range(T):
        cum = x.new_zeros(B, 1)                                 # sum_{k<=n} h^k, no gradient
        sums = []                                               # cum after each ponder step
        states, cells = [], []
        prev = state                                            # step 1 starts from s_{t-1}
        for n in range(1, last_step + 1):
            x_part = xW_first[t] if n == 1 else xW[t]
            s_prev = prev[0] if lstm else prev
            # eq. (3): S(s^{n-1}, x^n); at t = 0, n = 1 the state is zero and s W_s vanishes
            z = x_part if (t == 0 and n == 1) else torch.addmm(x_part, s_prev, W_s)
            s, prev = cell_fn(z, prev)
            states.append(s)
            if lstm:
                cells.append(prev[1])
            # eq. (5) from the state just made, then eq. (7): a row halts at the first n with
            # sum_{k<=n} h^k >= 1 - eps. Every h > 0, so the sums only grow: a row that halted
            # stays above the threshold (its p is masked below), and some row is still running
            # exactly when the smallest sum is below it.
            cum = cum + torch.sigmoid_(torch.addmm(b_h_test, s.detach(), W_h_test))
            sums.append(cum)
            if fixed_steps is None and cum.min().item() >= threshold:   # the one host sync per step
                break
        n_steps = len(states)
        # a row took step n + 1 iff its sum after step n was below 1 - eps, so N(t) counts those
        # steps plus the first; at the cap M every row stops (eq. 13). N has no gradient.
        before = torch.cat(sums, dim=1) < threshold             # (B, n): step n comes before N
        if n_steps == max_ponder:
            before[:, -1] = False
        elif fixed_steps is not None:
            unfinished.append(before[:, -1].any())              # a row would need more steps
        N = before.sum(dim=1).add_(1)
        S_n = torch.stack(states, dim=1)                        # (B, n, H): s^1..s^n
        # eq. (5) again, now with gradient: all halting units of step t in one product
        h = torch.sigmoid(torch.addmm(P["b_h"], S_n.view(B * n_steps, H), P["W_h"]).view(B, n_steps))
        if n_steps > len(steps):
            steps = torch.arange(1, min(2 * n_steps, last_step) + 1, device=x.device)
        p, R = halting_distribution(h, N, steps[:n_steps])      # eqs (6), (8)
        # eq. (9): s_t = sum_n p^n s^n, as multiply-and-sum: a batched matrix product of
        # B tiny (1, n) x (n, H) blocks is several times slower on the CPU
        mean_s = (p[:, :, None] * S_n).sum(dim=1)
        if lstm:                                                # the LSTM's c is averaged too
            mean_c = (p[:, :, None] * torch.stack(cells, dim=1)).sum(dim=1)
        state = (mean_s, mean_c) if lstm else mean_s            # the mean field goes on to t + 1
        means.append(mean_s)
        if record is not None:
            for key, value in (("h", h), ("p", p)) + ((("c", mean_c),) if lstm else ()):
                record.setdefault(key, []).append(value)
        Ns.append(N)
        Rs.append(R)

    S = torch.stack(means, dim=1)                               # (B, T, H) mean-field states
    if record is not None:
        record["S"] = S
        if lstm:
            record["C"] = torch.stack(record.pop("c"), dim=1)
    y = S @ P["W_y"] + P["b_y"]                                 # eq. (9): eq. (4) of the mean field
    complete = None
    if fixed_steps is not None:
        complete = ~torch.stack(unfinished).any() if unfinished else torch.ones((), dtype=torch.bool, device=x.device)
    return y, torch.stack(Ns, dim=1), torch.stack(Rs, dim=1), complete
