"""Adaptive Computation Time over a tanh RNN or an LSTM: forward and hand-written backward.

    y, N, R, cache = act_forward(x, params, cell="rnn", epsilon=0.01, max_ponder=100)
    grads = act_backward(dy, dponder, cache)

Shapes: x (B, T, D); y (B, T, O); N (B, T) int; R (B, T). Parameters: see ``params.py``.

At every input step t the network takes ponder steps n = 1, 2, ... (eq. 3), each fed the input
x_t with one extra unit appended: the flag, 1 on the first ponder step and 0 after (x_t + delta_{n,1}).
Each step produces a state s^n and a halting unit h^n (eq. 5); the halting bookkeeping in
``halting.py`` turns the h^n into weights p^n (eqs 6-8, 13), and the state carried on to t + 1 and
read by the output is the mean field s_t = sum_n p^n s^n (eq. 9). For the LSTM both h and c are
mean-fielded; the halting unit and the output read h.

The whole batch is processed together: rows halt at different ponder steps, so every step runs
for all rows and rows that have already halted get weight p = 0 (a mask, not a Python loop over
rows). The loop over n stops as soon as every row has halted.
"""

import numpy as np

from .cells import lstm_backward, lstm_forward, rnn_backward, rnn_forward, sigmoid
from .halting import halting_backward, halting_step
from .params import PARAM_NAMES, check_inputs


def _real_array(name, value, dtype=None):
    """``value`` as a finite real array of ``dtype``; ValueError naming ``name`` otherwise.

    The one value check for every array argument (x, the parameters, dy, dponder): complex,
    boolean and non-numeric values are refused rather than cast (a cast would silently drop an
    imaginary part), and so are NaN and inf. dtype None keeps float32/float64 and computes
    anything else (integers) in float64.
    """
    a = np.asarray(value)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if dtype is None:
        dtype = a.dtype if a.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    a = a.astype(dtype, copy=False)
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or inf")
    return a


def _prepare(x, params, cell, epsilon, max_ponder):
    """Validate and convert inputs; the computation dtype follows x (float32 or float64)."""
    x = _real_array("x", x)
    if not isinstance(params, dict):
        raise ValueError("params must be a dict of the seven ACT parameters")
    shapes = {k: np.shape(v) for k, v in params.items()}
    B, T, D, H, O = check_inputs(x.shape, shapes, cell, epsilon, max_ponder)
    P = {k: _real_array(f"params[{k!r}]", params[k], x.dtype) for k in PARAM_NAMES}
    return x, P, (B, T, D, H, O)


def act_forward(x, params, *, cell="rnn", epsilon=0.01, max_ponder=100):
    """Run ACT over a batch of sequences.

    x (B, T, D) float; params: dict of the seven parameters (params.py).
    Returns y (B, T, O), N (B, T) int64 ponder steps taken, R (B, T) remainders, and a cache for
    act_backward. The ponder cost of step t is rho_t = N + R (eq. 10).
    """
    x, P, (B, T, D, H, O) = _prepare(x, params, cell, epsilon, max_ponder)
    dtype = x.dtype
    W_in, w_flag = P["W_x"][:D], P["W_x"][D]   # x~ W_x = x W_in + flag * w_flag
    xW = x @ W_in                                # (B, T, G): the input part, same for every n
    cell_forward = rnn_forward if cell == "rnn" else lstm_forward

    zeros = np.zeros((B, H), dtype=dtype)
    state = zeros if cell == "rnn" else (zeros, zeros)   # initial state: zeros
    S = np.empty((B, T, H), dtype=dtype)          # mean-field hidden state per step, eq. (9)
    N = np.zeros((B, T), dtype=np.int64)
    R = np.zeros((B, T), dtype=dtype)
    steps_per_t = []
    for t in range(T):
        cum = np.zeros(B, dtype=dtype)
        running = np.ones(B, dtype=bool)
        mean_h = np.zeros((B, H), dtype=dtype)
        mean_c = np.zeros((B, H), dtype=dtype) if cell == "lstm" else None
        steps = {"s_in": [], "s": [], "c": [], "cell": [], "h": [], "p": []}
        prev, n = state, 0
        while running.any():
            n += 1
            s_prev = prev if cell == "rnn" else prev[0]
            z = xW[:, t] + s_prev @ P["W_s"] + P["b_s"]          # eq. (3): S(s^{n-1}, x^n)
            if n == 1:
                z = z + w_flag                                   # the flag delta_{n,1} = 1
            new, cell_cache = cell_forward(z, prev)
            s_new = new if cell == "rnn" else new[0]
            h = sigmoid(s_new @ P["W_h"] + P["b_h"])[:, 0]     # eq. (5), from the new state
            p, halt, cum, running = halting_step(h, cum, running, n, epsilon, max_ponder)
            mean_h += p[:, None] * s_new                         # eq. (9): s_t = sum_n p^n s^n
            if cell == "lstm":
                mean_c += p[:, None] * new[1]
                steps["c"].append(new[1])
            N[halt, t] = n
            R[halt, t] = p[halt]                                 # eq. (8): R(t) = p^N
            for key, value in (("s_in", s_prev), ("s", s_new), ("cell", cell_cache), ("h", h), ("p", p)):
                steps[key].append(value)
            prev = new
        state = mean_h if cell == "rnn" else (mean_h, mean_c)
        S[:, t] = mean_h
        steps_per_t.append(steps)

    y = S @ P["W_y"] + P["b_y"]                                  # eq. (9): eq. (4) of the mean field
    cache = {"x": x, "P": P, "cell": cell, "S": S, "N": N, "steps": steps_per_t}
    return y, N, R, cache


def act_backward(dy, dponder, cache):
    """Backpropagate through ACT by hand (paper section 2.2, eqs 14-20), N(t) held constant.

    dy (B, T, O) = dL/dy; dponder (B, T) or scalar = dL/drho_t (for L + tau sum_t rho_t, pass tau);
    both real and finite (a ValueError names the one that is not).
    Returns grads: dict with one entry per parameter (same shape) and "x" (B, T, D).
    """
    x, P, cell, S, N = cache["x"], cache["P"], cache["cell"], cache["S"], cache["N"]
    B, T, D = x.shape
    H, G = P["W_s"].shape
    dtype = x.dtype
    if np.shape(dy) != S.shape[:2] + (P["W_y"].shape[1],):
        raise ValueError(f"dy must have shape {S.shape[:2] + (P['W_y'].shape[1],)}, got {np.shape(dy)}")
    dy = _real_array("dy", dy, dtype)
    dponder = _real_array("dponder", dponder, dtype)
    try:
        dponder = np.broadcast_to(dponder, (B, T))
    except ValueError:
        raise ValueError(f"dponder must be a scalar or broadcast to {(B, T)}, got shape {dponder.shape}") from None
    cell_backward = rnn_backward if cell == "rnn" else lstm_backward
    w_h = P["W_h"][:, 0]

    g = {k: np.zeros_like(v) for k, v in P.items()}
    g["W_y"] = S.reshape(-1, H).T @ dy.reshape(-1, dy.shape[2])
    g["b_y"] = dy.sum(axis=(0, 1))
    dS = dy @ P["W_y"].T                       # dL/ds_t through the output, (B, T, H)
    dZ = np.zeros((B, T, G), dtype=dtype)      # sum over ponder steps of dL/dz, per input step
    dflag = np.zeros(G, dtype=dtype)
    d_next = np.zeros((B, H), dtype=dtype)     # dL/ds_t arriving from step t + 1
    dc_next = np.zeros((B, H), dtype=dtype)
    for t in reversed(range(T)):
        st = cache["steps"][t]
        ds_mean = dS[:, t] + d_next            # total gradient on the mean-field state s_t
        s_n = np.stack(st["s"], axis=1)        # (B, n_steps, H)
        p = np.stack(st["p"], axis=1)          # (B, n_steps)
        h = np.stack(st["h"], axis=1)
        # eq. (17): with p free, dL/dp^n = dL/ds_t . s^n (the output is read from s_t)
        dp = (s_n @ ds_mean[:, :, None])[..., 0]
        if cell == "lstm":
            dp += (np.stack(st["c"], axis=1) @ dc_next[:, :, None])[..., 0]
        dh = halting_backward(dp, dponder[:, t], N[:, t])        # eqs (19), (20)
        dzh = dh * h * (1.0 - h)                                 # through the sigmoid of eq. (5)
        g["W_h"][:, 0] += s_n.reshape(-1, H).T @ dzh.reshape(-1)
        g["b_h"][0] += dzh.sum()

        # back through the ponder steps, last to first; rows that halted before step n have
        # p^n = 0 and dh^n = 0 there, so their gradient is exactly zero without any special case
        d_chain = np.zeros((B, H), dtype=dtype)   # dL/ds^n arriving from step n + 1
        dc_chain = np.zeros((B, H), dtype=dtype)
        dz_steps = []
        for n in reversed(range(len(st["p"]))):
            ds = p[:, n, None] * ds_mean + dzh[:, n, None] * w_h + d_chain
            if cell == "rnn":
                dz = cell_backward(ds, st["cell"][n])
            else:
                dz, dc_chain = cell_backward((ds, p[:, n, None] * dc_next + dc_chain), st["cell"][n])
            d_chain = dz @ P["W_s"].T
            dz_steps.append(dz)
        dz_steps.reverse()
        dz_all = np.stack(dz_steps, axis=1)                      # (B, n_steps, G)
        g["W_s"] += np.stack(st["s_in"], axis=1).reshape(-1, H).T @ dz_all.reshape(-1, G)
        dZ[:, t] = dz_all.sum(axis=1)
        dflag += dz_steps[0].sum(axis=0)                         # the flag is 1 only at n = 1
        d_next, dc_next = d_chain, dc_chain    # step 1 read the mean-field state of t - 1

    g["b_s"] = dZ.sum(axis=(0, 1))
    g["W_x"][:D] = x.reshape(-1, D).T @ dZ.reshape(-1, G)
    g["W_x"][D] = dflag
    g["x"] = dZ @ P["W_x"][:D].T
    return g
