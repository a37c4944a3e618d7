"""ACT's forward and hand-written backward for K networks of one shape, stacked: the engine's NumPy path.

    y, N, R, cache = forward_pass(x, P, cell, epsilon, max_ponder)     # x (K, B, T, D), W_s (K, H, G)
    grads = backward_pass(dy, dponder, cache)                          # dy (K, B, T, O), dponder (K, B, T)

The same equations as ``act_numpy.act`` (the one-network reference a learner reads), written so
that every array may carry leading axes in front of the single network's shapes: K networks
stacked, each with its own epsilon and cap M given as arrays that broadcast against the rows,
(K, 1). ``a.mT`` is the transpose of the last two axes (``.T`` of every matrix in a stack), and
``_rows`` merges two axes of rows so that one product serves a whole (B, T) or (B, n_t) block:
NumPy's ``@`` then multiplies the K members' matrices in one call. The ponder steps are batch
first as in the core, PonderSteps s (K, B, n_t, H) and h, p (K, B, n_t). With no leading axis the
results equal ``act_numpy.act``'s to rounding (tests/test_engine_numpy.py holds it there).

What broadcasts over the member axis as the core writes it is the core's own code: the cells,
the halting update and PonderSteps, and the backward through one input step's ponder steps
(``act_numpy.act.halting_gradient`` and ``ponder_backward``), and the rows of every ponder step
for the weights' products (``act_numpy.act.all_rows``). What stays here is what the one
network's functions cannot take: the loops over t, whose products sum over the rows of each
member (``_rows``), and the ponder loop, which keeps no cache in an evaluation and gates the
halting units of ACT and fixed-computation members of one population.
"""

import numpy as np

from act_numpy.act import PonderSteps, all_rows, halting_gradient, ponder_backward
from act_numpy.cells import lstm_forward, rnn_forward, sigmoid
from act_numpy.halting import halting_update


def _rows(a):
    """(..., A, B, F) -> (..., A * B, F): two axes of rows as one, for a single matrix product."""
    return a.reshape(a.shape[:-3] + (-1, a.shape[-1]))


# ---------------------------------------------------------------------------------------------
# Forward
# ---------------------------------------------------------------------------------------------


def forward_pass(x, P, cell, epsilon, max_ponder, keep=True, halting=None, caps=None):
    """act_forward on checked arrays, which may carry leading axes (K networks stacked).

    x (..., B, T, D); P: the seven parameters, each (..., *its shape in params.py); epsilon and
    max_ponder: numbers, or arrays that broadcast against the rows (..., B), e.g. (K, 1).
    keep=False keeps nothing for a backward pass (an evaluation), and the cache is None.
    halting: None, or an array of 1.0 (ACT) and 0.0 (the fixed-computation control of
    act_numpy.act.fixed_forward: h = 0, so the row runs to its cap) that multiplies every h^n
    and broadcasts against the rows, e.g. (K, 1).
    caps: None, or (..., B, T) integers, each row's cap at each input step in place of
    max_ponder: a member with h = 0 (``halting``) and its drawn N as the cap takes exactly N
    updates, the random-schedule control (act_numpy.act.scheduled_forward with halting=False).
    Returns y (..., B, T, O), N (..., B, T), R (..., B, T) and the cache, as act_forward.

    act_numpy.act.forward_pass with a member axis: its products over the (B, T) rows keep the
    members apart (``_rows``), and its ponder loop is this file's ``ponder``.
    """
    *lead, B, T, D = x.shape
    H = P["W_s"].shape[-2]
    W_in, w_flag = P["W_x"][..., :D, :], P["W_x"][..., D, :]   # x~ W_x = x W_in + flag * w_flag
    # the input's part of eq. (3) and the bias, for every t at once: the same for every n
    xW = (_rows(x) @ W_in + P["b_s"][..., None, :]).reshape(*lead, B, T, -1)

    s = np.zeros((*lead, B, H), dtype=x.dtype)           # initial state: zeros
    state = s if cell == "rnn" else (s, s)               # the LSTM's state is the pair (s, c)
    S = np.empty((*lead, B, T, H), dtype=x.dtype)        # mean-field state per input step, eq. (9)
    N = np.zeros((*lead, B, T), dtype=np.int64)
    R = np.zeros((*lead, B, T), dtype=x.dtype)
    steps = []
    for t in range(T):
        cap = max_ponder if caps is None else caps[..., t]
        s, state, st, N[..., t], R[..., t] = ponder(xW[..., t, :], w_flag, s, state, P, cell, epsilon,
                                                    cap, keep, halting)
        S[..., t, :] = s
        steps.append(st)

    # eq. (9): y_t = sum_n p^n y^n, which is W_y s_t + b_y by linearity
    y = (_rows(S) @ P["W_y"] + P["b_y"][..., None, :]).reshape(*lead, B, T, -1)
    cache = {"x": x, "P": P, "cell": cell, "S": S, "N": N, "steps": steps} if keep else None
    return y, N, R, cache


def ponder(xW_t, w_flag, s, state, P, cell, epsilon, max_ponder, keep=True, halting=None):
    """The ponder steps of one input step t: from the state s_{t-1} to the mean field s_t.

    xW_t (..., B, G): x_t W_in + b_s; w_flag (..., G): the flag's row of W_x; s: s_{t-1}
    (..., B, H); state: the cell's state at t - 1 (s, or the LSTM's pair (s, c)). Steps run
    while any row is still running. halting: forward_pass's. Returns s_t (eq. 9), the cell's
    state at t, the PonderSteps (None unless ``keep``), N (..., B) and R (..., B).

    act_numpy.act.ponder with a member axis; a loop of its own because it keeps no cache in an
    evaluation (``keep``) and multiplies the halting units by a per-member gate (``halting``).
    """
    lstm = cell == "lstm"
    cell_forward = lstm_forward if lstm else rnn_forward
    rows = xW_t.shape[:-1]
    cum = np.zeros(rows, dtype=xW_t.dtype)
    running = np.ones(rows, dtype=bool)
    N = np.zeros(rows, dtype=np.int64)
    R = np.zeros(rows, dtype=xW_t.dtype)
    mean_s = np.zeros_like(s)                                    # s_t, eq. (9)
    mean_c = np.zeros_like(s)                                    # c_t of the LSTM (the RNN has no c)
    taken = []          # per ponder step: (s_in, s, c, h, p, cell cache)
    n = 0
    while running.any():
        n += 1
        z = xW_t + s @ P["W_s"]                                  # eq. (3): S(s^{n-1}, x^n)
        if n == 1:
            z = z + w_flag[..., None, :]                         # the flag delta_{n,1} = 1
        s_in = s
        s, state, cell_cache = cell_forward(z, state)
        c = state[1] if lstm else None                           # the LSTM's memory c^n
        h = sigmoid(s @ P["W_h"] + P["b_h"][..., None, :])[..., 0]   # eq. (5), from the new state
        if halting is not None:
            h = h * halting                                      # 0 for a fixed-computation member
        p, halt, cum, running = halting_update(h, cum, running, n, epsilon, max_ponder)
        mean_s += p[..., None] * s                               # eq. (9): s_t = sum_n p^n s^n
        if lstm:
            mean_c += p[..., None] * c
        N[halt] = n
        R[halt] = p[halt]                                        # eq. (8): R(t) = p^N
        if keep:
            taken.append((s_in, s, c, h, p, cell_cache))
    mean_state = (mean_s, mean_c) if lstm else mean_s
    if not keep:
        return mean_s, mean_state, None, N, R
    s_in, s, c, h, p, caches = zip(*taken)
    # as act_numpy.act.ponder: the states stored step by step, (..., n_t, B, H), seen batch first
    st = PonderSteps(s_in=np.stack(s_in, axis=-3).swapaxes(-3, -2), s=np.stack(s, axis=-3).swapaxes(-3, -2),
                     c=np.stack(c, axis=-3).swapaxes(-3, -2) if lstm else None, h=np.stack(h, axis=-1),
                     p=np.stack(p, axis=-1), cell=list(caches))
    return mean_s, mean_state, st, N, R


# ---------------------------------------------------------------------------------------------
# Backward
# ---------------------------------------------------------------------------------------------


def backward_pass(dy, dponder, cache):
    """act_backward on checked arrays, which may carry the leading axes of forward_pass.

    dy (..., B, T, O); dponder (..., B, T). Returns the gradients of every parameter and of x,
    each with the shape of what it is the gradient of.

    act_numpy.act.backward_pass with a member axis. Each input step goes back through the core's
    halting_gradient and ponder_backward; the products over all rows stay here, since they must
    keep the members apart (``_rows``, ``.mT``) where the one network multiplies flat matrices.
    """
    x, P, cell, S, N, steps = (cache[k] for k in ("x", "P", "cell", "S", "N", "steps"))
    *lead, B, T, D = x.shape
    H, G = P["W_s"].shape[-2:]
    g = {}

    # the output, y_t = W_y s_t + b_y (eq. 9)
    g["W_y"] = _rows(S).mT @ _rows(dy)
    g["b_y"] = dy.sum(axis=(-3, -2))
    dS = (_rows(dy) @ P["W_y"].mT).reshape(S.shape)            # dL/ds_t through the output

    dxW = np.empty((*lead, B, T, G), dtype=x.dtype)  # dL/d(x_t W_in + b_s): the sum over n of dL/dz^n
    dflag = np.zeros((*lead, G), dtype=x.dtype)
    ds_next = np.zeros((*lead, B, H), dtype=x.dtype)   # dL/ds_t arriving from step t + 1
    dc_next = np.zeros((*lead, B, H), dtype=x.dtype)   # the same for the LSTM's c_t
    dz_of, dzh_of = [None] * T, [None] * T      # per input step: dL/dz^n and dL/dz_h^n
    for t in reversed(range(T)):
        st = steps[t]
        ds_mean = dS[..., t, :] + ds_next                       # the whole gradient on s_t
        dzh_of[t] = halting_gradient(ds_mean, dc_next, dponder[..., t], N[..., t], st)
        dz_of[t], ds_next, dc_next = ponder_backward(ds_mean, dc_next, dzh_of[t], st, P, cell)
        dxW[..., t, :] = dz_of[t].sum(axis=-2)
        dflag += dz_of[t][..., 0, :].sum(axis=-2)               # the flag is 1 only at n = 1

    # every ponder step of every input step used the same W_s, W_h and b_h: one product over
    # all their rows adds up their gradients
    g["W_s"] = all_rows([st.s_in for st in steps]).mT @ all_rows(dz_of)
    dzh = all_rows([d[..., None] for d in dzh_of])
    g["W_h"] = all_rows([st.s for st in steps]).mT @ dzh
    g["b_h"] = dzh.sum(axis=-2)

    # eq. (3)'s input part: z^n = x_t W_in + flag * w_flag + ... + b_s
    g["b_s"] = dxW.sum(axis=(-3, -2))
    g["W_x"] = np.concatenate([_rows(x).mT @ _rows(dxW), dflag[..., None, :]], axis=-2)
    g["x"] = (_rows(dxW) @ P["W_x"][..., :D, :].mT).reshape(x.shape)
    return g
