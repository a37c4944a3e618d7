"""The judge's checks for notebook 03b (write your own ACT): one function per graded check cell.

Each draws a fresh network and fresh inputs of the notebook's shapes (B = 4, T = 3, D = 2, H = 4,
O = 2, the three settings of its SETTINGS), returns the calls to make of the learner's functions,
and a ``verify`` that compares what they returned with act_numpy's references, computed here.
The comparisons and their tolerances are those of the notebook's hidden tests. The calls carry
inputs only, never a reference: no call's input is another call's expected output (exercise 2's
s_{t-1} is drawn, not read off the reference's forward pass), since the answer's process can
read every call before it answers one.
"""

import numpy as np

from .exchange import Earlier, returned
from .judge import Judged, Wrong, as_int, same, shaped, unpack
from act_numpy.act import act_backward, act_forward, halting_gradient, ponder, ponder_backward
from act_numpy.gradcheck import act_objective, rel_error
from act_numpy.halting import halting_backward, halting_weights
from act_numpy.params import init_params

SHAPES = {"B": 4, "T": 3, "D": 2, "H": 4, "O": 2}
SETTINGS = [(0.01, 100), (0.3, 100), (0.01, 3)]
CASES = {                                        # the notebook's cases A-E and its worked example
    "A": ([0.3] * 10, 0.01, 100), "B": ([0.2485] * 10, 0.01, 100), "C": ([0.2, 0.9, 0.5], 0.01, 100),
    "D": ([0.1, 0.1, 0.5, 0.45, 0.5], 0.01, 100), "E": ([0.02] * 6, 0.01, 6), "worked": ([0.1, 0.3, 0.5, 0.5], 0.1, 100),
}


def network(rng):
    """A fresh tanh-RNN ACT network and data of the notebook's shapes: P, x, dy, dponder."""
    B, T, D, H, O = (SHAPES[k] for k in "BTDHO")
    P = init_params("rnn", D, H, O, rng, halting_bias=float(rng.uniform(-1.0, 0.0)))
    return P, rng.normal(size=(B, T, D)), rng.normal(size=(B, T, O)), rng.uniform(0.0, 0.1, size=(B, T))


def library_steps(x, cache):
    """act_forward's cache as the notebook's steps[b][t] dictionaries."""
    steps = [[None] * x.shape[1] for _ in range(x.shape[0])]
    for t, st in enumerate(cache["steps"]):
        for b in range(x.shape[0]):
            N = cache["N"][b, t]
            steps[b][t] = {"x": x[b, t], "s_prev": st.s_in[b, 0], "s": st.s[b, :N], "h": st.h[b, :N],
                           "p": st.p[b, :N]}
    return steps


def halting_cases(rng):
    """The notebook's cases and random ones: (name, h, epsilon, M)."""
    cases = [(name, np.array(h, dtype=float), eps, M) for name, (h, eps, M) in CASES.items()]
    for k in range(20):
        M = int(rng.integers(1, 12))
        eps = float(rng.choice([0.01, 0.1, 0.3]))
        cases.append((f"random {k + 1}", rng.uniform(0.0, 0.6, size=M), eps, M))
    return cases


def ex1(rng):
    """my_halting against halting_weights on the cases, and against act_forward's weights."""
    P, x, _, _ = network(rng)
    calls, refs = [], []
    for name, h, eps, M in halting_cases(rng):
        N, p, R = (v[0] for v in halting_weights(h, epsilon=eps, max_ponder=M))
        calls.append(("my_halting", [h, eps, M]))
        refs.append((f"case {name} (h = {np.round(h, 4).tolist()}, epsilon = {eps}, M = {M})", N, p[:N], R))
    for eps, M in SETTINGS:
        _, N_ref, R_ref, cache = act_forward(x, P, epsilon=eps, max_ponder=M)
        for t, st in enumerate(cache["steps"]):
            for b in range(x.shape[0]):
                calls.append(("my_halting", [st.h[b].copy(), eps, M]))
                refs.append((f"act_forward's halting units (sequence b = {b}, t = {t}, epsilon = {eps}, M = {M})",
                             N_ref[b, t], st.p[b, :N_ref[b, t]], R_ref[b, t]))

    def verify(entries):
        worst = 0.0
        for entry, (where, N_ref, p_ref, R_ref) in zip(entries, refs, strict=True):
            N, p, R = unpack(returned(entry), 3, "my_halting")
            N = as_int(N, f"{where}: N")
            if N != N_ref:
                raise Wrong(f"{where}: your N = {N}, the right N = {N_ref}; N is the first n whose running sum "
                            f"reaches 1 - epsilon (>=), or M")
            worst = max(worst, same(f"{where}: p", p, p_ref), same(f"{where}: R", R, R_ref))
        return (f"my_halting agrees with halting_weights on {len(refs)} cases drawn at grading time: "
                f"N equal, max |difference| in p and R {worst:.1e} <= 1e-10")
    return calls, verify


def one_step(x_t, s_prev, P, epsilon, max_ponder):
    """act_numpy's ponder steps of one input step, from the states ``s_prev`` (B, H) drawn at
    grading time: s_t, N, R and the notebook's step dictionaries, one per row."""
    D = x_t.shape[1]
    s_t, _, st, N, R = ponder(x_t @ P["W_x"][:D] + P["b_s"], P["W_x"][D], s_prev, s_prev, P, "rnn", epsilon,
                              max_ponder)
    steps = [{"x": x_t[b], "s_prev": s_prev[b], "s": st.s[b, :N[b]], "h": st.h[b, :N[b]], "p": st.p[b, :N[b]]}
             for b in range(x_t.shape[0])]
    return s_t, N, R, steps


def ex2(rng):
    """my_act_step at every sequence and input step of the three settings, from states s_{t-1} drawn now."""
    P, x, _, _ = network(rng)
    B, T, H = x.shape[0], x.shape[1], P["W_s"].shape[0]
    calls, refs = [], []
    for eps, M in SETTINGS:
        rows = x.reshape(B * T, -1)
        s_prev = np.tanh(rng.normal(size=(B * T, H)))
        s_prev[::T] = 0.0                                   # the first input step starts from zeros
        s_ref, N_ref, R_ref, steps = one_step(rows, s_prev, P, eps, M)
        for row in range(B * T):
            b, t = divmod(row, T)
            calls.append(("my_act_step", [rows[row], s_prev[row], P, eps, M]))
            refs.append((f"sequence b = {b}, input step t = {t}, epsilon = {eps}, M = {M}", N_ref[row],
                         R_ref[row], s_ref[row], steps[row], s_prev[row]))

    def verify(entries):
        worst = 0.0
        for entry, (where, N_ref, R_ref, s_ref, ref, s_prev) in zip(entries, refs, strict=True):
            s_t, N, R, step = unpack(returned(entry), 4, "my_act_step")
            if not isinstance(step, dict) or not {"x", "s_prev", "s", "h", "p"} <= set(step):
                raise Wrong(f"{where}: step needs the keys x, s_prev, s, h and p")
            N = as_int(N, f"{where}: N")
            n = min(N, N_ref)
            worst = max(worst, same(f"ponder states s^n ({where})", shaped_rows(step["s"], n, where),
                                    ref["s"][:n], hint="Check the flag (last row of W_x, n = 1 only)."),
                        same(f"halting units h^n ({where})", shaped_rows(step["h"], n, where), ref["h"][:n],
                             hint="h^n reads the state ponder step n produced, eq. (5)."))
            if N != N_ref:
                raise Wrong(f"{where}: your N = {N}, act_numpy's {N_ref}")
            worst = max(worst, same(f"p ({where})", step["p"], ref["p"]), same(f"R ({where})", R, R_ref),
                        same(f"the mean-field state s_t ({where})", s_t, s_ref, hint="s_t = sum_n p^n s^n, eq. (9)."),
                        same(f"step['x'] ({where})", step["x"], ref["x"], tol=0),
                        same(f"step['s_prev'] ({where})", step["s_prev"], s_prev, tol=0))
        return (f"my_act_step agrees with act_numpy on {len(refs)} input steps of a network and states drawn at "
                f"grading time: N equal, max |difference| in s^n, h^n, p, R and s_t {worst:.1e} <= 1e-10")
    return calls, verify


def shaped_rows(value, n, where):
    """The first ``n`` rows of ``value`` as a float array, or Wrong when it has fewer."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"{where}: your step's arrays are not arrays of numbers") from None
    if array.ndim == 0 or len(array) < n:
        raise Wrong(f"{where}: your step holds {0 if array.ndim == 0 else len(array)} ponder steps, "
                    f"fewer than N = {n}")
    return array[:n]


def ex3(rng):
    """my_act_forward under the three settings: y, rho, N, R and the steps' s and p."""
    P, x, _, _ = network(rng)
    calls, refs = [], []
    for eps, M in SETTINGS:
        y_ref, N_ref, R_ref, cache = act_forward(x, P, epsilon=eps, max_ponder=M)
        calls.append(("my_act_forward", [x, P, eps, M]))
        refs.append((f"epsilon = {eps}, M = {M}", y_ref, N_ref, R_ref, library_steps(x, cache)))

    def verify(entries):
        worst = 0.0
        B, T = SHAPES["B"], SHAPES["T"]
        for entry, (setting, y_ref, N_ref, R_ref, steps_ref) in zip(entries, refs, strict=True):
            y, rho, N, R, steps = unpack(returned(entry), 5, "my_act_forward")
            same(f"N ({setting})", N, N_ref, tol=0)
            worst = max(worst, same(f"y ({setting})", y, y_ref), same(f"R ({setting})", R, R_ref),
                        same(f"rho ({setting})", rho, N_ref + R_ref, hint="rho_t = N(t) + R(t), eq. (10)."))
            if not isinstance(steps, list) or len(steps) != B or any(len(row) != T for row in steps):
                raise Wrong(f"steps ({setting}) should hold B = {B} lists of T = {T} dictionaries")
            for b in range(B):
                for t in range(T):
                    for key in ("s", "p"):
                        if not isinstance(steps[b][t], dict) or key not in steps[b][t]:
                            raise Wrong(f"steps[{b}][{t}] ({setting}) needs the key {key!r}")
                        worst = max(worst, same(f"steps[{b}][{t}][{key!r}] ({setting})", steps[b][t][key],
                                                steps_ref[b][t][key]))
        return (f"my_act_forward agrees with act_forward under the three settings on a network drawn at grading "
                f"time: N equal, max |difference| in y, rho, R and the steps {worst:.1e} <= 1e-10")
    return calls, verify


def ex4(rng):
    """my_halting_backward against halting_backward on 300 random cases; dh^N exactly 0."""
    calls, refs = [], []
    for _ in range(300):
        n_steps = int(rng.integers(1, 8))
        N = int(rng.integers(1, n_steps + 1))
        dp, dR = rng.normal(size=n_steps), float(rng.uniform(0.0, 0.1))
        calls.append(("my_halting_backward", [dp, dR, N]))
        refs.append((N, dp, dR, halting_backward(dp[None, :], np.array([dR]), np.array([N]))[0]))

    def verify(entries):
        worst = 0.0
        for entry, (N, dp, dR, ref) in zip(entries, refs, strict=True):
            where = f"N = {N}, dp = {np.round(dp, 3).tolist()}, dR = {dR:.3f}"
            dh = np.asarray(returned(entry), dtype=float)
            if dh.shape != dp.shape:
                raise Wrong(f"{where}: dh has shape {dh.shape}, dp {dp.shape}: one entry per entry of dp")
            if dh[N - 1] != 0.0:
                raise Wrong(f"{where}: your dh at n = N is {dh[N - 1]:.4g}, but the last halting unit gets "
                            f"exactly zero gradient (eq. 20)")
            worst = max(worst, same(f"dh ({where})", dh, ref, tol=1e-12, source="halting_backward"))
        return (f"my_halting_backward agrees with halting_backward on {len(refs)} cases drawn at grading time "
                f"(max |difference| {worst:.1e}), and dh^N = 0 exactly in every one")
    return calls, verify


def ex4b(rng):
    """my_halting_backward against centred differences of sum dp p + dR R, nudges that change N skipped."""
    calls, refs = [], []
    step = 1e-6
    for name, h, eps, M in halting_cases(rng):
        N = int(halting_weights(h, epsilon=eps, max_ponder=M)[0][0])
        dp, dR = rng.normal(size=len(h)), float(rng.uniform(0.0, 0.1))

        def f(v):
            N_v, p_v, R_v = halting_weights(v, epsilon=eps, max_ponder=M)
            return float(dp @ p_v[0] + dR * R_v[0]), int(N_v[0])

        numeric = np.full(len(h), np.nan)
        for i in range(len(h)):
            up, down = h.copy(), h.copy()
            up[i] += step
            down[i] -= step
            (f_up, N_up), (f_down, N_down) = f(up), f(down)
            if N_up == N == N_down:
                numeric[i] = (f_up - f_down) / (2 * step)
        calls.append(("my_halting_backward", [dp, dR, N]))
        refs.append((f"case {name} (N = {N})", numeric))

    def verify(entries):
        worst, checked = 0.0, 0
        for entry, (where, numeric) in zip(entries, refs, strict=True):
            dh = np.asarray(returned(entry), dtype=float)
            if dh.shape != numeric.shape:
                raise Wrong(f"{where}: dh has shape {dh.shape}: one entry per halting unit, {numeric.shape}")
            keep = ~np.isnan(numeric)
            worst = max(worst, same(f"{where}: dh against centred differences", dh[keep], numeric[keep],
                                    tol=1e-6, source="the centred differences"))
            checked += int(keep.sum())
        return (f"my_halting_backward agrees with centred differences on {checked} halting units of cases drawn "
                f"at grading time (max |difference| {worst:.1e} < 1e-6)")
    return calls, verify


def ex5(rng):
    """my_act_step_backward on a one-step network: gradients added over the sequences, and g['x']."""
    P, x, dy, dponder = network(rng)
    x1, dy1, dponder1 = x[:, :1], dy[:, :1], dponder[:, :1]
    calls, refs = [], []
    for eps, M in SETTINGS:
        _, _, _, cache = act_forward(x1, P, epsilon=eps, max_ponder=M)
        steps = library_steps(x1, cache)
        first = len(calls)
        for b in range(x.shape[0]):
            calls.append(("my_act_step_backward", [P["W_y"] @ dy1[b, 0], dponder1[b, 0], steps[b][0], P]))
        refs.append((f"epsilon = {eps}, M = {M}", first, act_backward(dy1, dponder1, cache)))

    def verify(entries):
        worst = 0.0
        for setting, first, ref in refs:
            total = {k: np.zeros_like(P[k]) for k in ("W_h", "b_h", "W_s", "b_s", "W_x")}
            dx = np.zeros((x.shape[0], x.shape[2]))
            for b in range(x.shape[0]):
                g, _ = unpack(returned(entries[first + b]), 2, "my_act_step_backward")
                if not isinstance(g, dict) or not set(total) | {"x"} <= set(g):
                    raise Wrong("g should be a dictionary with the keys W_x, W_s, b_s, W_h, b_h and x")
                for k in total:
                    total[k] = total[k] + shaped(f"g[{k!r}]", g[k], P[k].shape)
                dx[b] = shaped("g['x']", g["x"], (x.shape[2],))
            for k, value in total.items():
                worst = max(worst, same(f"d{k}, added over the sequences ({setting})", value, ref[k],
                                        source="act_backward"))
            worst = max(worst, same(f"g['x'] ({setting})", dx, ref["x"][:, 0], source="act_backward"))
        return (f"my_act_step_backward agrees with act_backward on a one-step network drawn at grading time, "
                f"under the three settings: max |difference| {worst:.1e} <= 1e-10")
    return calls, verify


def ex5b(rng):
    """ds_prev of my_act_step_backward against ponder_backward, input steps 2 and 3, random ds_t."""
    P, x, _, _ = network(rng)
    calls, refs = [], []
    for eps, M in SETTINGS:
        _, _, _, cache = act_forward(x, P, epsilon=eps, max_ponder=M)
        steps = library_steps(x, cache)
        for t in (1, 2):
            st, N_t = cache["steps"][t], cache["N"][:, t]
            ds_mean, drho = rng.normal(size=(x.shape[0], P["W_s"].shape[0])), rng.uniform(0.0, 0.1, size=x.shape[0])
            dzh = halting_gradient(ds_mean, None, drho, N_t, st)
            _, ds_prev_ref, _ = ponder_backward(ds_mean, None, dzh, st, P, "rnn")
            for b in range(x.shape[0]):
                calls.append(("my_act_step_backward", [ds_mean[b], float(drho[b]), steps[b][t], P]))
                refs.append((f"sequence b = {b}, input step t = {t}, epsilon = {eps}, M = {M}", ds_prev_ref[b]))

    def verify(entries):
        worst = 0.0
        for entry, (where, ref) in zip(entries, refs, strict=True):
            _, ds_prev = unpack(returned(entry), 2, "my_act_step_backward")
            worst = max(worst, same(f"ds_prev ({where})", ds_prev, ref, source="ponder_backward",
                                    hint="ds_prev is what the first ponder step sends back through W_s."))
        return (f"ds_prev agrees with act_numpy's ponder_backward on {len(refs)} input steps drawn at grading time: "
                f"max |difference| {worst:.1e} <= 1e-10")
    return calls, verify


def _gradients(value, P, x, what):
    if not isinstance(value, dict) or set(value) != set(P) | {"x"}:
        raise Wrong(f"{what} should return a dictionary with the keys of P and 'x'")
    for k, v in value.items():
        shaped(f"d{k}", v, np.shape(x if k == "x" else P[k]))
    return value


def ex6(rng):
    """my_act_backward on the reference's steps against act_backward, three settings."""
    P, x, dy, dponder = network(rng)
    calls, refs = [], []
    for eps, M in SETTINGS:
        _, _, _, cache = act_forward(x, P, epsilon=eps, max_ponder=M)
        calls.append(("my_act_backward", [dy, dponder, x, P, library_steps(x, cache)]))
        refs.append((f"epsilon = {eps}, M = {M}", act_backward(dy, dponder, cache)))

    def verify(entries):
        worst = 0.0
        for entry, (setting, ref) in zip(entries, refs, strict=True):
            mine = _gradients(returned(entry), P, x, "my_act_backward")
            for k in ("W_y", "b_y", "W_h", "b_h", "W_s", "b_s", "W_x", "x"):
                worst = max(worst, same(f"d{k} ({setting})", mine[k], ref[k], source="act_backward"))
        return (f"my_act_backward agrees with act_backward under the three settings on a network drawn at grading "
                f"time: max |difference| {worst:.1e} <= 1e-10")
    return calls, verify


def numeric_gradients(x, P, dy, dponder, epsilon, max_ponder, step=1e-6):
    """Centred differences of act_objective for every parameter and x; nan where a nudge changes N."""
    settings = dict(epsilon=epsilon, max_ponder=max_ponder)
    _, N0 = act_objective(x, P, dy, dponder, **settings)
    numeric = {}
    for name in (*P, "x"):
        value = np.array(x if name == "x" else P[name], dtype=float)
        grad = np.full(value.shape, np.nan)
        for i in np.ndindex(value.shape):
            f = []
            for sign in (+1, -1):
                nudged = value.copy()
                nudged[i] += sign * step
                args = (nudged, P) if name == "x" else (x, dict(P, **{name: nudged}))
                f.append(act_objective(*args, dy, dponder, **settings))
            if all(np.array_equal(N, N0) for _, N in f):
                grad[i] = (f[0][0] - f[1][0]) / (2 * step)
        numeric[name] = grad
    return numeric


def ex6b(rng):
    """The learner's forward pass, then the learner's backward pass on its steps, against centred differences."""
    P, x, dy, dponder = network(rng)
    calls, refs = [], []
    for eps, M in SETTINGS[:2]:
        forward = len(calls)
        calls.append(("my_act_forward", [x, P, eps, M]))
        calls.append(("my_act_backward", [dy, dponder, x, P, Earlier(forward, 4)]))
        refs.append((f"epsilon = {eps}, M = {M}", forward, numeric_gradients(x, P, dy, dponder, eps, M)))
    tol = 1e-6

    def verify(entries):
        lines = []
        for setting, forward, numeric in refs:
            returned(entries[forward])
            mine = _gradients(returned(entries[forward + 1]), P, x, "my_act_backward")
            for k, num in numeric.items():
                keep = ~np.isnan(num)
                err = rel_error(np.asarray(mine[k], dtype=float)[keep], num[keep])
                if not err < tol:
                    raise Wrong(f"d{k} ({setting}): rel error {err:.1e} against centred differences (> {tol:g})")
            lines.append(setting)
        return (f"your forward and backward pass agree with centred differences on a network drawn at grading time "
                f"({'; '.join(lines)}): every rel error < {tol:g}")
    return calls, verify


SIGMOID = ("sigmoid",)
JUDGED = Judged(
    allowed={k: SIGMOID for k in range(1, 7)},
    checks={"ex1-check": ex1, "ex2-check": ex2, "ex3-check": ex3, "ex4-check": ex4, "ex4-check-b": ex4b,
            "ex5-check": ex5, "ex5-check-b": ex5b, "ex6-check": ex6, "ex6-check-b": ex6b},
    given=dict(SHAPES),
)
