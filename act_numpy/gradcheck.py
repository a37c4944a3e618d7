"""Finite-difference gradient checks for ACT, aware of its discontinuities.

ACT's loss is piecewise smooth: nudging a weight can change some N(t), and then the loss jumps.
A centred difference across such a jump means nothing, so a coordinate whose +/- nudge changes
any N is skipped and counted. Use float64: in float32 the differences drown in rounding.
"""

import numpy as np

from .act import act_backward, act_forward


def rel_error(a, b):
    """max |a - b| divided by the largest magnitude in either array: 0 when equal, ~1 when unrelated.

    Scaling by the whole array, not element by element, keeps a gradient entry that is almost
    zero (say 1e-9, where the centred difference has absolute rounding error ~1e-10) from
    dominating the verdict.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0:
        return 0.0
    scale = max(np.max(np.abs(a)), np.max(np.abs(b)), 1e-300)
    return float(np.max(np.abs(a - b)) / scale)


def act_objective(x, params, dy, dponder, forward=act_forward, **act_kwargs):
    """The scalar whose gradient act_backward(dy, dponder) returns: sum dy*y + sum dponder*(N+R).

    forward: act_forward, or act.fixed_forward (the fixed-computation control).
    Returns (value, N), N so that callers can tell when a nudge crossed a discontinuity.
    """
    y, N, R, _ = forward(x, params, **act_kwargs)
    return float(np.sum(dy * y) + np.sum(dponder * (N + R))), N


def check_act_gradients(x, params, dy, dponder, *, delta=1e-6, max_coords=None, rng=None, forward=act_forward,
                        **act_kwargs):
    """Compare act_backward with centred differences for every parameter and for x.

    delta: the nudge of each coordinate, f(v + delta) - f(v - delta) over 2 delta. forward: the
    forward whose cache act_backward takes (act_forward, or act.fixed_forward), given act_kwargs.
    max_coords: check at most this many coordinates per array (chosen by `rng`), or all if None.
    Returns {name: {"rel_error": float, "checked": int, "skipped": int}}.
    """
    _, N0, _, cache = forward(x, params, **act_kwargs)
    grads = act_backward(dy, dponder, cache)
    arrays = dict(params, x=x)
    report = {}
    for name, value in arrays.items():
        value = np.array(value, dtype=np.float64)
        idx = list(np.ndindex(value.shape))
        if max_coords is not None and len(idx) > max_coords:
            pick = (rng or np.random.default_rng(0)).choice(len(idx), max_coords, replace=False)
            idx = [idx[i] for i in pick]
        numeric, analytic, skipped = [], [], 0
        for i in idx:
            vals = []
            for sign in (+1, -1):
                nudged = value.copy()
                nudged[i] += sign * delta
                if name == "x":
                    f, N = act_objective(nudged, params, dy, dponder, forward, **act_kwargs)
                else:
                    f, N = act_objective(x, dict(params, **{name: nudged}), dy, dponder, forward, **act_kwargs)
                vals.append((f, N))
            if not (np.array_equal(vals[0][1], N0) and np.array_equal(vals[1][1], N0)):
                skipped += 1
                continue
            numeric.append((vals[0][0] - vals[1][0]) / (2 * delta))
            analytic.append(grads[name][i])
        report[name] = {"rel_error": rel_error(analytic, numeric), "checked": len(numeric), "skipped": skipped}
    return report
