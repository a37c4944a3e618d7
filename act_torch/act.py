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

The ponder loop itself (``ponder_until_halted``, and ``ponder_fixed_steps`` with no host
synchronisation at all, for CUDA graphs) also runs K networks of one shape at once, their
parameters stacked on a leading member axis, each member with its own threshold 1 - eps and
cap M (``act_torch.population``); one network is the case without that axis.
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
    """tanh RNN: s' = tanh(z). The state is one (..., B, H) tensor."""
    s = torch.tanh(z)
    return s, s


def _lstm_cell(z, state):
    """LSTM with gate blocks i, f, o, g in z (..., B, 4H); state = (h, c).

    c' = sigma(f) c + sigma(i) tanh(g),  h' = sigma(o) tanh(c'). Returns (h', (h', c')).
    """
    _, c_prev = state
    H = c_prev.shape[-1]
    z_ifo, z_g = z.split([3 * H, H], dim=-1)
    i, f, o = torch.sigmoid(z_ifo).chunk(3, dim=-1)  # one kernel for the three sigmoid gates
    g = torch.tanh(z_g)
    c = torch.addcmul(f * c_prev, i, g)
    h = o * torch.tanh(c)
    return h, (h, c)


def halting_distribution(h, N, steps=None):
    """The halting distribution p and the remainder R from halting units and halting steps.

    h (..., n) halting units h^1..h^n (eq. 5); N (...) int64 halting steps, 1 <= N <= n;
    steps: optional tensor [1, 2, ..., n] (made here when not given).
    Returns p (..., n) with p^k = h^k for k < N, p^N = R and 0 after (eq. 6), and
    R (...) = 1 - sum_{k<N} h^k (eq. 8). Only h^k with k < N enter p and R, so autograd gives
    dR/dh^k = -1 for k < N and 0 for k >= N (eqs 14, 18, 20).
    """
    if steps is None:
        steps = torch.arange(1, h.shape[-1] + 1, device=h.device)
    h_before = torch.where(steps < N[..., None], h, 0.0)          # h^k for k < N(t)
    R = 1.0 - h_before.sum(dim=-1)                                 # eq. (8)
    p = torch.where(steps == N[..., None], R[..., None], h_before)    # eq. (6)
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
    return ponder_until_halted(x, P, cell, 1.0 - epsilon, max_ponder, max_ponder, record)


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
    return ponder_fixed_steps(x, P, cell, 1.0 - epsilon, max_ponder, min(ponder_steps, max_ponder))


# ---------------------------------------------------------------------------------------------
# The ponder loop, for one network or K stacked ones. The two modes differ only in how long an
# input step ponders: until every row has halted (a host sync per ponder step), or a fixed number
# of steps (no sync; the steps a row takes after it halted get p = 0).
# ---------------------------------------------------------------------------------------------

def ponder_until_halted(x, P, cell, threshold, cap, longest, record=None):
    """ACT's forward on validated inputs, pondering until every row has halted or met its cap.

    One network: x (B, T, D), P the seven parameters, threshold 1 - eps (a number), cap M (an
    int). K networks: x (K, B, T, D), P with every parameter stacked on a leading member axis
    (W_s (K, H, G), b_s (K, G), ...), threshold (K, 1, 1) and cap (K, 1, 1) int64 tensors, one
    value per member. longest: the largest cap (an int). record: see act_forward.
    Returns y (..., B, T, O), N (..., B, T) int64 and R (..., B, T), where ... is () or (K,).
    """
    loop = _PonderLoop(x, P, cell, threshold, cap, longest)
    state = loop.initial_state()
    for t in range(loop.T):
        cum, prev = None, state
        for n in range(1, longest + 1):
            prev, cum = loop.step(t, n, prev, cum)
            if not loop.anyone_running(cum, n):              # the one host sync per ponder step
                break
        state, _ = loop.halt(record)
    return loop.read_out(record)


def ponder_fixed_steps(x, P, cell, threshold, cap, ponder_steps):
    """ponder_until_halted with exactly ``ponder_steps`` ponder steps at every input step and no
    host synchronisation, for CUDA graphs. The arguments and the first three results are those
    of ponder_until_halted; the fourth, complete, is a 0-d bool tensor: True when every row of
    every network halted (or met its cap) within the budget, and only then are the results
    those of ponder_until_halted.
    """
    loop = _PonderLoop(x, P, cell, threshold, cap, ponder_steps)
    state = loop.initial_state()
    unfinished = []
    for t in range(loop.T):
        cum, prev = None, state
        for n in range(1, ponder_steps + 1):
            prev, cum = loop.step(t, n, prev, cum)
        state, before = loop.halt()
        unfinished.append(before[..., -1])        # True where a row would have taken one more step
    y, N, R = loop.read_out()
    return y, N, R, ~torch.stack(unfinished).any()


def _affine(bias, a, W):
    """bias + a W: for one network a (rows, in), W (in, out); for K networks at once a
    (K, rows, in), W (K, in, out), one batched product. bias broadcasts to the result."""
    if a.dim() == 2:
        return torch.addmm(bias, a, W)
    return torch.baddbmm(bias, a, W)


class _PonderLoop:
    """The pieces of ACT's forward pass (eqs 3-13), shared by the two modes of the ponder loop.

    step() takes one ponder step and remembers its state; halt() turns the steps of the input
    step just finished into N, R, p and the mean field; read_out() gives y, N and R at the end.
    Arguments as ponder_until_halted's; limit: the most ponder steps any input step may take.
    """

    def __init__(self, x, P, cell, threshold, cap, limit):
        self.lead = x.shape[:-3]                       # () for one network, (K,) for K of them
        self.B, self.T, D = x.shape[-3:]
        self.P, self.threshold, self.cap, self.limit = P, threshold, cap, limit
        self.lstm = cell == "lstm"
        self.cell_fn = _lstm_cell if self.lstm else _rnn_cell
        W_s = P["W_s"]
        if not self.lead and W_s.shape[1] > W_s.shape[0] and x.device.type == "cpu":
            # LSTM on the CPU: W_s (H, 4H) with the memory layout of W_s^T (same values). Autograd's
            # backward multiplies every ponder step's dz by W_s^T, and MKL runs that product
            # several times faster on a contiguous matrix than on a transposed view
            # (dz (16, 512) W_s^T: ~20 us against ~130 us); the forward product loses less.
            # Not for K members: their batched product measured slower with this layout.
            W_s = W_s.t().contiguous().t()
        self.W_s = W_s
        # the halting test only decides N(t), so it runs on detached copies, outside autograd
        self.W_h_test, self.b_h_test = P["W_h"].detach(), self.rows(P["b_h"].detach())
        # x~ W_x = x W_x[:D] + flag * W_x[D]: the input part is the same for every ponder step, so
        # it is computed once for all t (with b_s folded in); the flag row (delta_{n,1}) is added
        # for the first ponder step only.
        G = W_s.shape[-1]
        xW = _affine(self.rows(P["b_s"]), x.flatten(-3, -2), P["W_x"].narrow(-2, 0, D))
        xW = xW.view(*self.lead, self.B, self.T, G)
        xW_first = xW + self.rows(P["W_x"].narrow(-2, D, 1))   # n = 1: flag = 1
        # unbind, not xW[..., t, :]: the backward of one unbind is one stack, whereas the backward
        # of every slice would build a zero tensor the size of all of xW
        self.xW, self.xW_first = xW.unbind(-2), xW_first.unbind(-2)
        self.zeros = x.new_zeros(*self.lead, self.B, P["W_s"].shape[-2])
        # ponder step numbers n = 1, 2, ...: made for the steps taken and grown when more are
        # taken, never for all M at once (M may be huge: an arange of 10^9 steps is 8 GB)
        self.steps = torch.arange(1, min(limit, 32) + 1, device=x.device)
        self.states, self.cells, self.sums = [], [], []      # of the input step being pondered
        self.means, self.Ns, self.Rs, self.mean_cells = [], [], [], []

    def rows(self, v):
        """A bias-like tensor made to broadcast over the rows of a batch: one network's (G,) or
        (1, G) as it is; K members' (K, G) as (K, 1, G), (K, 1, G) as (K, 1, 1, G), so that member
        k's values reach member k's rows only."""
        return v.unsqueeze(-2) if self.lead else v

    def initial_state(self):
        """The state before the first input: zeros ((h, c) for the LSTM)."""
        return (self.zeros, self.zeros) if self.lstm else self.zeros

    def step(self, t, n, prev, cum):
        """Ponder step n of input step t from the state prev. Returns the new state and cum, the
        sum of the halting units so far (..., B, 1), computed without gradient."""
        x_part = self.xW_first[t] if n == 1 else self.xW[t]
        s_prev = prev[0] if self.lstm else prev
        # eq. (3): S(s^{n-1}, x^n); at t = 0, n = 1 the state is zero and s W_s vanishes
        z = x_part if (t == 0 and n == 1) else _affine(x_part, s_prev, self.W_s)
        s, state = self.cell_fn(z, prev)
        self.states.append(s)
        if self.lstm:
            self.cells.append(state[1])
        # eq. (5) from the state just made, and its running sum for the halting test of eq. (7)
        h = torch.sigmoid_(_affine(self.b_h_test, s.detach(), self.W_h_test))
        cum = h if cum is None else cum + h
        self.sums.append(cum)
        return state, cum

    def anyone_running(self, cum, n):
        """Does some row take ponder step n + 1? It does while its sum is below 1 - eps (eq. 7)
        and its cap M allows another step (eq. 13). Reads the answer on the host."""
        if self.lead:                          # K networks, each with its own threshold and cap
            return bool(((cum < self.threshold) & (n < self.cap)).any())
        # one network: every h > 0, so the sums only grow and a row that halted stays above the
        # threshold (its p is masked in halt); some row is running iff the smallest sum is below
        return cum.min().item() < self.threshold

    def halt(self, record=None):
        """Close the input step just pondered: N(t), p, R(t) and the mean field.

        Returns the state for the next input step and before (..., B, n): True where ponder
        step n came before the row's N(t), i.e. where the row took (or would take) step n + 1.
        """
        n_steps = len(self.states)
        if n_steps > len(self.steps):
            self.steps = torch.arange(1, min(2 * n_steps, self.limit) + 1, device=self.steps.device)
        steps = self.steps[:n_steps]
        # a row takes step n + 1 iff its sum after step n is below 1 - eps and its cap M allows
        # another step (eqs 7, 13), so N(t) counts those steps plus the first. N has no gradient.
        before = (torch.cat(self.sums, dim=-1) < self.threshold) & (steps < self.cap)
        N = before.sum(dim=-1).add_(1)
        S_n = torch.stack(self.states, dim=-2)                   # (..., B, n, H): s^1..s^n
        # eq. (5) again, now with gradient: all halting units of step t in one product
        h = torch.sigmoid(_affine(self.rows(self.P["b_h"]), S_n.flatten(-3, -2), self.P["W_h"]))
        h = h.view(*self.lead, self.B, n_steps)
        p, R = halting_distribution(h, N, steps)                 # eqs (6), (8)
        # eq. (9): s_t = sum_n p^n s^n, as multiply-and-sum: a batched matrix product of
        # B tiny (1, n) x (n, H) blocks is several times slower on the CPU
        mean_s = (p[..., None] * S_n).sum(dim=-2)
        state = mean_s
        if self.lstm:                                            # the LSTM's c is averaged too
            mean_c = (p[..., None] * torch.stack(self.cells, dim=-2)).sum(dim=-2)
            state = (mean_s, mean_c)
            self.mean_cells.append(mean_c)
        if record is not None:
            record.setdefault("h", []).append(h)
            record.setdefault("p", []).append(p)
        self.means.append(mean_s)
        self.Ns.append(N)
        self.Rs.append(R)
        self.states, self.cells, self.sums = [], [], []
        return state, before

    def read_out(self, record=None):
        """y (..., B, T, O) from the mean-field states (eq. 9: eq. 4 of the mean field), N and R."""
        S = torch.stack(self.means, dim=-2)                      # (..., B, T, H) mean-field states
        if record is not None:
            record["S"] = S
            if self.lstm:
                record["C"] = torch.stack(self.mean_cells, dim=-2)
        y = _affine(self.rows(self.P["b_y"]), S.flatten(-3, -2), self.P["W_y"])
        y = y.view(*self.lead, self.B, self.T, -1)
        return y, torch.stack(self.Ns, dim=-1), torch.stack(self.Rs, dim=-1)
