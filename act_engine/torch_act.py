"""ACT's forward in PyTorch for the engine: one network or K stacked ones, until halted or on a fixed budget.

    y, N, R = ponder_until_halted(x, P, cell, threshold, cap, longest)
    y, N, R, complete = ponder_fixed_steps(x, P, cell, threshold, cap, ponder_steps)

The same equations as ``act_torch.act.act_forward`` (the one-network version a learner reads),
arranged for speed and for K networks at once:
- K networks: their parameters stacked on a leading member axis (W_s (K, H, G)), each member with
  its own threshold 1 - eps and cap M; one network is the case without that axis.
- The halting test runs on detached values, beside autograd, because it only decides N(t); once
  N(t) is known the halting units of all the ponder steps of t are recomputed with gradient in one
  product (the same values up to rounding).
- ``ponder_fixed_steps`` runs a fixed number of ponder steps with no host synchronisation at all,
  so that a training step can be captured as a CUDA graph (``act_engine.graphed``).
- For one LSTM on the CPU, W_s is kept in the memory layout of its transpose (see PonderLoop).
Checked against ``act_torch.act.act_forward`` in tests/test_engine_torch.py.
"""

import torch

from act_numpy.checks import check_int
from act_torch.act import halting_distribution, halting_test, lstm_cell, prepare, rnn_cell


def act_forward(x, params, *, cell="rnn", epsilon=0.01, max_ponder=100, record=None):
    """``act_torch.act.act_forward`` on the engine's loop: the same arguments and results (to
    rounding), faster; what a single PyTorch training run calls."""
    x, P, _ = prepare(x, params, cell, epsilon, max_ponder)
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
    ponder_steps = check_int("ponder_steps", ponder_steps, 1)
    x, P, _ = prepare(x, params, cell, epsilon, max_ponder, check_finite=False)
    return ponder_fixed_steps(x, P, cell, 1.0 - epsilon, max_ponder, min(ponder_steps, max_ponder))


def fixed_forward(x, params, *, cell="rnn", fixed_ponder=1, record=None):
    """``act_torch.act.fixed_forward`` on the engine's loop: exactly ``fixed_ponder`` updates per
    input step, no halting unit; what a single PyTorch run of the fixed-computation control calls."""
    fixed_ponder = check_int("fixed_ponder", fixed_ponder, 1)
    x, P, _ = prepare(x, params, cell, 0.01, fixed_ponder)
    return ponder_until_halted(x, P, cell, 0.99, fixed_ponder, fixed_ponder, record, halting=0.0)


def ponder_until_halted(x, P, cell, threshold, cap, longest, record=None, halting=None):
    """ACT's forward on validated inputs, pondering until every row has halted or met its cap.

    One network: x (B, T, D), P the seven parameters (checked: act_torch.act.prepare), threshold
    1 - eps (a number), cap M (an int). K networks: x (K, B, T, D), P with every parameter stacked on a leading member axis
    (W_s (K, H, G), b_s (K, G), ...), threshold (K, 1, 1) and cap (K, 1, 1) int64 tensors, one
    value per member. longest: the largest cap (an int). record: see act_torch.act.act_forward.
    halting: None, or what multiplies every h^n: 0.0 for one fixed-computation network, or for K
    members a (K, 1, 1) tensor of 1.0 (ACT) and 0.0 (fixed: h = 0, so the member runs to its cap).
    Returns y (..., B, T, O), N (..., B, T) int64 and R (..., B, T), where ... is () or (K,).
    """
    loop = PonderLoop(x, P, cell, threshold, cap, longest, halting)
    state = loop.initial_state()
    for t in range(loop.T):
        cum, prev = None, state
        for n in range(1, longest + 1):
            prev, cum = loop.step(t, n, prev, cum)
            if not loop.anyone_running(cum, n):              # the one host sync per ponder step
                break
        state, _ = loop.halt(record)
    return loop.read_out(record)


def ponder_fixed_steps(x, P, cell, threshold, cap, ponder_steps, halting=None):
    """ponder_until_halted with exactly ``ponder_steps`` ponder steps at every input step and no
    host synchronisation, for CUDA graphs. The arguments and the first three results are those
    of ponder_until_halted; the fourth, complete, is a 0-d bool tensor: True when every row of
    every network halted (or met its cap) within the budget, and only then are the results
    those of ponder_until_halted.
    """
    loop = PonderLoop(x, P, cell, threshold, cap, ponder_steps, halting)
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


class PonderLoop:
    """The pieces of ACT's forward pass (eqs 3-13), shared by the two modes of the ponder loop.

    step() takes one ponder step and remembers its state; halt() turns the steps of the input
    step just finished into N, R, p and the mean field; read_out() gives y, N and R at the end.
    Arguments as ponder_until_halted's; limit: the most ponder steps any input step may take.
    """

    def __init__(self, x, P, cell, threshold, cap, limit, halting=None):
        self.lead = x.shape[:-3]                       # () for one network, (K,) for K of them
        self.B, self.T, D = x.shape[-3:]
        self.P, self.threshold, self.cap, self.limit = P, threshold, cap, limit
        self.halting = halting
        self.lstm = cell == "lstm"
        self.cell_fn = lstm_cell if self.lstm else rnn_cell
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
        self.n_range = torch.arange(1, min(limit, 32) + 1, device=x.device)
        self.states, self.cells, self.sums = [], [], []      # of the input step being pondered
        self.means, self.Ns, self.Rs, self.mean_cells = [], [], [], []

    def rows(self, v):
        """A bias-like tensor made to broadcast over the rows of a batch: one network's (G,) or
        (1, G) as it is; K members' (K, G) as (K, 1, G), (K, 1, G) as (K, 1, 1, G), so that member
        k's values reach member k's rows only."""
        return v.unsqueeze(-2) if self.lead else v

    def initial_state(self):
        """The state before the first input: zeros ((s, c) for the LSTM)."""
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
        if self.halting is not None:
            h = h * self.halting                 # 0 for a fixed-computation network: no halting unit
        cum = h if cum is None else cum + h
        self.sums.append(cum)
        return state, cum

    def anyone_running(self, cum, n):
        """Does some row take ponder step n + 1 (act_torch.act.halting_test)? Reads the answer on
        the host."""
        return bool(halting_test(cum, n, self.threshold, self.cap).any())

    def halt(self, record=None):
        """Close the input step just pondered: N(t), p, R(t) and the mean field.

        Returns the state for the next input step and before (..., B, n): True where ponder
        step n came before the row's N(t), i.e. where the row took (or would take) step n + 1.
        """
        n_steps = len(self.states)
        if n_steps > len(self.n_range):
            self.n_range = torch.arange(1, min(2 * n_steps, self.limit) + 1, device=self.n_range.device)
        n_range = self.n_range[:n_steps]
        # N(t) counts the steps a row went on after (eqs 7, 13), plus the first. N has no gradient.
        before = halting_test(torch.cat(self.sums, dim=-1), n_range, self.threshold, self.cap)
        N = before.sum(dim=-1).add_(1)
        S_n = torch.stack(self.states, dim=-2)                   # (..., B, n, H): s^1..s^n
        # eq. (5) again, now with gradient: all halting units of step t in one product
        h = torch.sigmoid(_affine(self.rows(self.P["b_h"]), S_n.flatten(-3, -2), self.P["W_h"]))
        h = h.view(*self.lead, self.B, n_steps)
        if self.halting is not None:
            h = h * self.halting
        p, R = halting_distribution(h, N, n_range)               # eqs (6), (8)
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
