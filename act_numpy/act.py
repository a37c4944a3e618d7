"""Adaptive Computation Time over a tanh RNN or an LSTM: forward and hand-written backward.

    y, N, R, cache = act_forward(x, params, cell="rnn", epsilon=0.01, max_ponder=100)
    grads = act_backward(dy, dponder, cache)
    y, N, R, cache = fixed_forward(x, params, cell="rnn", fixed_ponder=3)   # the control: 3 updates
    y, N, R, cache = scheduled_forward(x, params, cell="rnn", N=N_given)     # N_given[b, t] updates

Shapes: x (B, T, D); y (B, T, O); N (B, T) int; R (B, T). Parameters: see ``params.py``. Batch
first everywhere, the ponder steps too: the cache keeps per input step a PonderSteps with
s (B, n_t, H) and h, p (B, n_t), the layout of ``halting.py``.

At every input step t the network takes ponder steps n = 1, 2, ... (eq. 3), each fed the input
x_t with one extra unit appended: the flag, 1 on the first ponder step and 0 after (x_t + delta_{n,1}).
Each step produces a state s^n and a halting unit h^n (eq. 5); the halting bookkeeping in
``halting.py`` turns the h^n into weights p^n (eqs 6-8, 13), and the state carried on to t + 1 and
read by the output is the mean field s_t = sum_n p^n s^n (eq. 9). For the LSTM both s and c are
mean-fielded; the halting unit and the output read s.

The whole batch is processed together: rows halt at different ponder steps, so every step runs
for all rows and rows that have already halted get weight p = 0 (a mask, not a Python loop over
rows). The loop over n stops as soon as every row has halted.

act_forward and act_backward check their arguments (``params.py``) and call forward_pass and
backward_pass, which do the work for one network. (The engine, ``act_engine.numpy_act``, runs
the same equations for K networks stacked on a leading axis, with this file's halting_gradient
and ponder_backward, which broadcast over it; this file is the reference it is checked against.)
"""

from typing import NamedTuple

import numpy as np

from .cells import lstm_backward, lstm_forward, rnn_backward, rnn_forward, sigmoid
from .checks import check_int
from .halting import forced_update, halting_backward, halting_update
from .params import check_arrays, check_upstream


class PonderSteps(NamedTuple):
    """What the ponder steps of one input step t leave for the backward pass.

    Batch first, ponder step second, as in ``halting.py``: the arrays stack the steps
    n = 1 .. n_t on the axis after the rows (n_t: the most steps any row took; rows that halted
    earlier have p = 0 there). Read a field by name: ``st.h``, ``st.p``; ``st.s[:, n - 1]`` is s^n.
    (The engine's K stacked networks put their member axis in front: s (K, B, n_t, H).)
    """

    s_in: np.ndarray    # (B, n_t, H) state entering step n (the LSTM's s); s_{t-1} at n = 1, eq. (3)
    s: np.ndarray       # (B, n_t, H) state s^n the step produced (the LSTM's s)
    c: np.ndarray       # (B, n_t, H) the LSTM's cell state c^n; None for the tanh RNN
    h: np.ndarray       # (B, n_t) halting units h^n, eq. (5)
    p: np.ndarray       # (B, n_t) halting weights p^n, eqs (6) and (8)
    cell: list          # n_t caches of the cell's forward, for its backward (cells.py)


# ---------------------------------------------------------------------------------------------
# Forward
# ---------------------------------------------------------------------------------------------


def act_forward(x, params, *, cell="rnn", epsilon=0.01, max_ponder=100):
    """Run ACT over a batch of sequences.

    x (B, T, D) float; params: dict of the seven parameters (params.py).
    Returns y (B, T, O), N (B, T) int64 ponder steps taken, R (B, T) remainders, and a cache for
    act_backward. The ponder cost of step t is rho_t = N + R (eq. 10).
    """
    x, P = check_arrays(x, params, cell, epsilon, max_ponder)
    return forward_pass(x, P, cell, epsilon, max_ponder)


def fixed_forward(x, params, *, cell="rnn", fixed_ponder=1):
    """The fixed-computation control: exactly ``fixed_ponder`` updates F at every input step.

    ACT with its halting unit removed: h^n = 0 for every n, so no row's sum reaches 1 - epsilon
    and every row runs to the cap M = F (eq. 13), where p^F = R = 1 - 0 = 1 (eq. 8). The output
    reads the last state alone, N = F and rho = F + 1 (eq. 10). It spends the same computation on
    every input, which is what ACT must beat to show that *adapting* helps, not only pondering
    more. F = 1 is the paper's baseline (--no-act). Returns what act_forward returns, and
    act_backward takes its cache: W_h and b_h get zero gradients, since nothing reads them.
    """
    fixed_ponder = check_int("fixed_ponder", fixed_ponder, 1)
    x, P = check_arrays(x, params, cell, 0.01, fixed_ponder)
    return forward_pass(x, P, cell, 0.01, fixed_ponder, halting=False)


def scheduled_forward(x, params, *, cell="rnn", N, halting=False):
    """Exactly N[b, t] updates at input step t of row b, the numbers of updates given, not found.

    N (B, T) integers >= 1. halting=False, the random-schedule control: the halting unit is
    removed (h = 0) and p^N = 1, so the output and the next state read the N-th update alone, as
    fixed_forward's do; N drawn at random from ACT's own distribution of N gives a network the
    computation ACT used, spread without regard to the input. A constant N = F is fixed_forward
    with F, bit for bit. halting=True, the shuffle probe (evaluation only): a trained ACT
    network's halting units kept, but stopped at N (halting.forced_update): p^n = h^n before N
    and the remainder 1 - sum_{n<N} h^n, clipped at 0, at N. With N = ACT's own N(t) this is
    act_forward exactly. Returns what act_forward returns; act_backward takes the cache (with
    halting=False, W_h and b_h get zero gradients, as in fixed_forward).
    """
    N = np.asarray(N)
    if N.ndim != 2 or not np.issubdtype(N.dtype, np.integer) or (N.size and N.min() < 1):
        raise ValueError(f"N must be a (B, T) array of integers >= 1, got {N.dtype} {N.shape}")
    x, P = check_arrays(x, params, cell, 0.01, int(N.max(initial=1)))
    if N.shape != x.shape[:2]:
        raise ValueError(f"N must have the shape (B, T) = {x.shape[:2]} of x, got {N.shape}")
    return forward_pass(x, P, cell, 0.01, None, halting=halting, schedule=N)


def forward_pass(x, P, cell, epsilon, max_ponder, halting=True, schedule=None):
    """act_forward on checked arrays: x (B, T, D), P the seven parameters (params.py).

    halting=False: the halting unit is removed (h = 0), as fixed_forward needs. schedule: None,
    or (B, T) integers, each row's N at each input step (scheduled_forward; max_ponder unused)."""
    B, T, D = x.shape
    H = P["W_s"].shape[0]
    W_in, w_flag = P["W_x"][:D], P["W_x"][D]          # x~ W_x = x W_in + flag * w_flag
    # the input's part of eq. (3) and the bias, for every t at once: the same for every n
    xW = (x.reshape(B * T, D) @ W_in + P["b_s"]).reshape(B, T, -1)

    s = np.zeros((B, H), dtype=x.dtype)                  # initial state: zeros
    state = s if cell == "rnn" else (s, s)               # the LSTM's state is the pair (s, c)
    S = np.empty((B, T, H), dtype=x.dtype)               # mean-field state per input step, eq. (9)
    N = np.zeros((B, T), dtype=np.int64)
    R = np.zeros((B, T), dtype=x.dtype)
    steps = []
    for t in range(T):
        forced = None if schedule is None else schedule[:, t]
        s, state, st, N[:, t], R[:, t] = ponder(xW[:, t], w_flag, s, state, P, cell, epsilon, max_ponder,
                                                halting, forced)
        S[:, t] = s
        steps.append(st)

    # eq. (9): y_t = sum_n p^n y^n, which is W_y s_t + b_y by linearity
    y = (S.reshape(B * T, H) @ P["W_y"] + P["b_y"]).reshape(B, T, -1)
    cache = {"x": x, "P": P, "cell": cell, "S": S, "N": N, "steps": steps}
    return y, N, R, cache


def ponder(xW_t, w_flag, s, state, P, cell, epsilon, max_ponder, halting=True, forced=None):
    """The ponder steps of one input step t: from the state s_{t-1} to the mean field s_t.

    xW_t (B, G): x_t W_in + b_s; w_flag (G,): the flag's row of W_x; s: s_{t-1} (B, H); state:
    the cell's state at t - 1 (s itself, or the LSTM's pair (s, c)). Steps run while any row is
    still running. halting=False sets every h^n to 0, so every row runs to the cap M. forced:
    None, or (B,) the step each row halts at (halting.forced_update, for scheduled_forward).
    Returns s_t (eq. 9), the cell's state at t (for the LSTM (s_t, c_t), both mean fields), the
    PonderSteps, N (B,) and R (B,).
    """
    lstm = cell == "lstm"
    cell_forward = lstm_forward if lstm else rnn_forward
    B = xW_t.shape[0]
    cum = np.zeros(B, dtype=xW_t.dtype)
    running = np.ones(B, dtype=bool)
    N = np.zeros(B, dtype=np.int64)
    R = np.zeros(B, dtype=xW_t.dtype)
    mean_s = np.zeros_like(s)                                    # s_t, eq. (9)
    mean_c = np.zeros_like(s)                                    # c_t of the LSTM (the RNN has no c)
    taken = []          # per ponder step: (s_in, s, c, h, p, cell cache)
    n = 0
    while running.any():
        n += 1
        z = xW_t + s @ P["W_s"]                                  # eq. (3): S(s^{n-1}, x^n)
        if n == 1:
            z = z + w_flag                                       # the flag delta_{n,1} = 1
        s_in = s
        s, state, cell_cache = cell_forward(z, state)
        c = state[1] if lstm else None                           # the LSTM's memory c^n
        if halting:
            h = sigmoid(s @ P["W_h"] + P["b_h"])[:, 0]           # eq. (5), from the new state
        else:
            h = np.zeros(B, dtype=xW_t.dtype)                    # fixed_forward: no halting unit
        if forced is None:
            p, halt, cum, running = halting_update(h, cum, running, n, epsilon, max_ponder)
        else:
            p, halt, cum, running = forced_update(h, cum, running, n, forced)
        mean_s += p[:, None] * s                                 # eq. (9): s_t = sum_n p^n s^n
        if lstm:
            mean_c += p[:, None] * c
        N[halt] = n
        R[halt] = p[halt]                                        # eq. (8): R(t) = p^N
        taken.append((s_in, s, c, h, p, cell_cache))
    s_in, s, c, h, p, caches = zip(*taken)
    # the states are stacked in the order the loop made them, (n_t, B, H), and seen batch first
    # through swapaxes: backward_pass then reads their rows in (n, b) order without a copy
    st = PonderSteps(s_in=np.stack(s_in).swapaxes(0, 1), s=np.stack(s).swapaxes(0, 1),
                     c=np.stack(c).swapaxes(0, 1) if lstm else None,
                     h=np.stack(h, axis=1), p=np.stack(p, axis=1), cell=list(caches))
    return mean_s, ((mean_s, mean_c) if lstm else mean_s), st, N, R


# ---------------------------------------------------------------------------------------------
# Backward
# ---------------------------------------------------------------------------------------------


def act_backward(dy, dponder, cache):
    """Backpropagate through ACT by hand (paper section 2.2, eqs 14-20), N(t) held constant.

    dy (B, T, O) = dL/dy; dponder (B, T) or scalar = dL/drho_t (for L + tau sum_t rho_t, pass tau);
    both real and finite (a ValueError names the one that is not).
    Returns grads: dict with one entry per parameter (same shape) and "x" (B, T, D).
    """
    S, W_y = cache["S"], cache["P"]["W_y"]
    dy, dponder = check_upstream(dy, dponder, S.shape[:-1] + W_y.shape[-1:], S.dtype)
    return backward_pass(dy, dponder, cache)


def backward_pass(dy, dponder, cache):
    """act_backward on checked arrays: dy (B, T, O), dponder (B, T).

    Returns the gradients of every parameter and of x, each with the shape of what it is the
    gradient of.
    """
    x, P, cell, S, N, steps = (cache[k] for k in ("x", "P", "cell", "S", "N", "steps"))
    B, T, D = x.shape
    H, G = P["W_s"].shape
    O = dy.shape[-1]
    g = {}

    # the output, y_t = W_y s_t + b_y (eq. 9): the affine layer's backward, B * T rows at once
    S_rows, dy_rows = S.reshape(B * T, H), dy.reshape(B * T, O)
    g["W_y"] = S_rows.T @ dy_rows
    g["b_y"] = dy_rows.sum(axis=0)
    dS = (dy_rows @ P["W_y"].T).reshape(B, T, H)                # dL/ds_t through the output

    dxW = np.empty((B, T, G), dtype=x.dtype)  # dL/d(x_t W_in + b_s): per input step, the sum over n of dL/dz^n
    dflag = np.zeros(G, dtype=x.dtype)
    ds_next = np.zeros((B, H), dtype=x.dtype)   # dL/ds_t arriving from step t + 1
    dc_next = np.zeros((B, H), dtype=x.dtype)   # the same for the LSTM's c_t
    dz_of, dzh_of = [None] * T, [None] * T      # per input step: dL/dz^n (B, n_t, G), dL/dz_h^n (B, n_t)
    for t in reversed(range(T)):
        st = steps[t]
        ds_mean = dS[:, t] + ds_next                            # the whole gradient on s_t
        dzh_of[t] = halting_gradient(ds_mean, dc_next, dponder[:, t], N[:, t], st)
        dz_of[t], ds_next, dc_next = ponder_backward(ds_mean, dc_next, dzh_of[t], st, P, cell)
        dxW[:, t] = dz_of[t].sum(axis=1)
        dflag += dz_of[t][:, 0].sum(axis=0)                     # the flag is 1 only at n = 1

    # every ponder step of every input step used the same W_s, W_h and b_h, so their gradients
    # add up over all of them: one product over the rows (t, n, b) of every step, dW = a.T @ dz
    s_in = all_rows([st.s_in for st in steps])                         # (rows, H)
    s_out = all_rows([st.s for st in steps])                           # (rows, H)
    dz = all_rows(dz_of)                                               # (rows, G)
    dzh = all_rows([d[..., None] for d in dzh_of])                     # (rows, 1)
    g["W_s"] = s_in.T @ dz
    g["W_h"] = s_out.T @ dzh
    g["b_h"] = dzh.sum(axis=0)

    # eq. (3)'s input part: z^n = x_t W_in + flag * w_flag + ... + b_s
    x_rows, dxW_rows = x.reshape(B * T, D), dxW.reshape(B * T, G)
    g["b_s"] = dxW_rows.sum(axis=0)
    g["W_x"] = np.concatenate([x_rows.T @ dxW_rows, dflag[None, :]])
    g["x"] = (dxW_rows @ P["W_x"][:D].T).reshape(B, T, D)
    return g


def all_rows(arrays):
    """The rows of (B, n_t, F) arrays, one input step after another, as one (rows, F) matrix.

    Within a step the rows go step-major, (n, b): a float sum depends on the order of its terms,
    and this is the order the products above have always summed in, so the weights' gradients
    (and every training run built on them) keep their last bits. With one input step, and an
    array stored step-major as ponder and ponder_backward store theirs, a view, not a copy.
    Leading axes pass through, as in halting_gradient (the engine's K networks: (K, rows, F)).
    """
    rows = [np.swapaxes(a, -3, -2).reshape(a.shape[:-3] + (-1, a.shape[-1])) for a in arrays]
    return rows[0] if len(rows) == 1 else np.concatenate(rows, axis=-2)


def halting_gradient(ds_mean, dc_mean, dponder_t, N_t, st):
    """dL/d(W_h s^n + b_h) for every ponder step of one input step: eqs (16)-(20), then eq. (5).

    ds_mean (B, H) = dL/ds_t, dc_mean the same for the LSTM's c_t (unused for the RNN);
    dponder_t (B,) = dL/drho_t; N_t (B,); st: the step's PonderSteps.
    Returns dzh (B, n_t), zero from each row's halting step N on.
    Leading axes pass through (the engine's K networks: ds_mean (K, B, H), st.s (K, B, n_t, H)).
    """
    # eq. (17): with p free, dL/dp^n = dL/ds_t . s^n (the output is read from s_t)
    dp = np.einsum("...bnh,...bh->...bn", st.s, ds_mean)        # (B, n_t)
    if st.c is not None:
        dp += np.einsum("...bnh,...bh->...bn", st.c, dc_mean)
    # eqs (18)-(20); R = p^N takes dponder too
    dh = halting_backward(dp, dponder_t, N_t)
    return dh * st.h * (1.0 - st.h)                              # through the sigmoid of eq. (5)


def ponder_backward(ds_mean, dc_mean, dzh, st, P, cell):
    """Back through the cells of one input step's ponder steps, last to first (eq. 3).

    ds_mean, dc_mean (B, H): dL/ds_t and dL/dc_t; dzh (B, n_t) from halting_gradient.
    Returns dz (B, n_t, G) = dL/dz^n for every step, and dL/ds_{t-1}, dL/dc_{t-1} (B, H):
    step 1 read the mean-field state of t - 1.
    Leading axes pass through, as in halting_gradient (W_s (K, H, G): ``.mT`` transposes each).
    """
    w_h = P["W_h"].mT                                            # (1, H): the halting unit's weights
    ds_chain = np.zeros_like(ds_mean)    # dL/ds^n arriving from step n + 1
    dc_chain = np.zeros_like(ds_mean)
    dz = [None] * len(st.cell)
    # rows that halted before step n have p^n = 0 and dzh^n = 0 there, so their gradient is
    # exactly zero without any special case
    for n in reversed(range(len(dz))):
        p_n = st.p[..., n, None]                                 # (B, 1)
        # s^n feeds the mean field (eq. 9), its halting unit (eq. 5) and step n + 1 (eq. 3)
        ds = p_n * ds_mean + dzh[..., n, None] * w_h + ds_chain
        if cell == "rnn":
            dz[n] = rnn_backward(ds, st.cell[n])
        else:
            dz[n], dc_chain = lstm_backward((ds, p_n * dc_mean + dc_chain), st.cell[n])
        ds_chain = dz[n] @ P["W_s"].mT
    return np.stack(dz, axis=-3).swapaxes(-3, -2), ds_chain, dc_chain     # stored as st.s is
