"""The judge's checks for notebook 03 (backpropagating through the remainder).

The functions are called on inputs drawn at grading time and compared with ``act_numpy``, here:
``leaky_halting_backward`` (exercise 1, which may use the library), ``eq19_gradient`` (exercise 4)
and ``fixed_act_forward`` (exercise 5), which are pieces the course provides and so run as in
03b (``by_hand``): without the lesson, the course's packages out of reach but ``sigmoid``. The
other checks are of values worked out from the notebook's fixed inputs (``BY_ITS_TESTS``): the
check cells' own tests decide in the judge's process (replay.py), on the values the answer's
process sends back; those answers may use ``act_numpy`` and PyTorch (exercise 3's autograd).
"""

import numpy as np

from act_numpy.act import act_forward
from act_numpy.gradcheck import rel_error
from act_numpy.halting import halting_backward, halting_weights
from act_numpy.params import init_params

from .exchange import returned
from .judge import BY_ITS_TESTS, Judged, Wrong, as_int, by_hand, same, shaped, unpack

TOL = 1e-6                  # the notebook's tolerance against finite differences


def ex1(rng):
    """leaky_halting_backward: halting_backward but -dR at n = N, on 20 batches drawn now."""
    calls, refs = [], []
    for _ in range(20):
        B, steps = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        dp, dR, N = rng.normal(size=(B, steps)), rng.uniform(0.0, 0.1, size=B), rng.integers(1, steps + 1, size=B)
        want = halting_backward(dp, dR, N)
        want[np.arange(B), N - 1] = -dR
        calls.append(("leaky_halting_backward", [dp, dR, N]))
        refs.append((f"N = {N.tolist()}, dR = {np.round(dR, 3).tolist()}", want))

    def verify(entries):
        worst = 0.0
        for entry, (where, want) in zip(entries, refs, strict=True):
            mine = shaped(f"{where}: leaky_halting_backward", returned(entry), want.shape)
            worst = max(worst, same(f"{where}: dh", mine, want, tol=1e-12, source="halting_backward with -dR at n = N",
                                    hint="Before N it is halting_backward; at N it is -dR; after N, 0."))
        return (f"leaky_halting_backward is halting_backward but -dR at n = N on {len(refs)} batches drawn at grading "
                f"time: max |difference| {worst:.1e} <= 1e-12")
    return calls, verify


def _ponder_case(rng):
    """Halting units that reach 1 - 0.01 within their steps, ponder states, dL/ds_t, tau and N."""
    B, steps, H = int(rng.integers(1, 5)), int(rng.integers(5, 8)), 4
    h = rng.uniform(0.2, 0.7, size=(B, steps))
    S, ds = np.tanh(rng.normal(size=(B, steps, H))), rng.normal(size=(B, H))
    return h, S, ds, float(rng.uniform(0.0, 0.05)), halting_weights(h, epsilon=0.01)[0]


@by_hand
def ex4(rng):
    """eq19_gradient against halting_backward on 20 batches drawn now; 0 exactly from n = N on."""
    calls, refs = [], []
    for _ in range(20):
        _, S, ds, tau, N = _ponder_case(rng)
        calls.append(("eq19_gradient", [ds, S, N, tau]))
        refs.append((f"N = {N.tolist()}, tau = {tau:.4f}", N,
                     halting_backward(np.einsum("bh,bnh->bn", ds, S), np.full(len(N), tau), N)))

    def verify(entries):
        worst = 0.0
        for entry, (where, N, want) in zip(entries, refs, strict=True):
            mine = shaped(f"{where}: eq19_gradient", returned(entry), want.shape)
            late = np.arange(1, want.shape[1] + 1)[None, :] >= N[:, None]
            if np.any(mine[late] != 0):
                raise Wrong(f"{where}: eq. (20): the entries from n = N on must be exactly 0, got {mine[late]}")
            worst = max(worst, same(f"{where}: dL/dh", mine, want, tol=1e-12, source="halting_backward"))
        return (f"eq19_gradient = halting_backward on {len(refs)} batches drawn at grading time (max |difference| "
                f"{worst:.1e}), exactly 0 at n = N and after")
    return calls, verify


def _numeric(h, S, ds, tau, N, step=1e-6):
    """Centred differences of ds . s_t + tau sum(N + R) in h, N held: nan where a nudge changes N."""
    def f(v):
        N_v, p, R = halting_weights(v, epsilon=0.01)
        return float(np.sum(ds * np.einsum("bn,bnh->bh", p, S)) + tau * np.sum(N_v + R)), N_v

    grad = np.full(h.shape, np.nan)
    for i in np.ndindex(h.shape):
        up, down = h.copy(), h.copy()
        up[i] += step
        down[i] -= step
        (f_up, N_up), (f_down, N_down) = f(up), f(down)
        if np.array_equal(N_up, N) and np.array_equal(N_down, N):
            grad[i] = (f_up - f_down) / (2 * step)
    return grad


@by_hand
def ex4b(rng):
    """eq19_gradient against centred differences of L^(h), nudges that change N skipped."""
    calls, refs = [], []
    for _ in range(10):
        h, S, ds, tau, N = _ponder_case(rng)
        calls.append(("eq19_gradient", [ds, S, N, tau]))
        refs.append((f"N = {N.tolist()}, tau = {tau:.4f}", _numeric(h, S, ds, tau, N)))

    def verify(entries):
        worst, checked = 0.0, 0
        for entry, (where, numeric) in zip(entries, refs, strict=True):
            mine = shaped(f"{where}: eq19_gradient", returned(entry), numeric.shape)
            keep = ~np.isnan(numeric)
            err = rel_error(mine[keep], numeric[keep])
            if not err < TOL:
                raise Wrong(f"{where}: eq19_gradient differs from the finite differences by rel error {err:.1e} "
                            f"(> {TOL:g})")
            worst, checked = max(worst, err), checked + int(keep.sum())
        return (f"eq19_gradient agrees with finite differences of L^(h) on {checked} halting units drawn at grading "
                f"time (max rel error {worst:.1e} < {TOL:g})")
    return calls, verify


@by_hand
def ex5(rng):
    """fixed_act_forward against act_forward on a network drawn now, under three settings."""
    P = init_params("rnn", 2, 5, 2, rng, halting_bias=float(rng.uniform(-1.0, 0.0)))
    x = rng.normal(size=(4, 3, 2))
    settings = [(0.01, 100), (0.1, 3), (0.3, 100)]
    calls = [("fixed_act_forward", [x, P, eps, M]) for eps, M in settings]
    refs = [(f"epsilon = {eps}, M = {M}", act_forward(x, P, epsilon=eps, max_ponder=M)) for eps, M in settings]

    def verify(entries):
        worst = 0.0
        for entry, (setting, (y_ref, N_ref, R_ref, _)) in zip(entries, refs, strict=True):
            y, N, R = unpack(returned(entry), 3, "fixed_act_forward")
            N = shaped(f"N ({setting})", N, N_ref.shape)
            if not np.array_equal(N, N_ref):
                first = tuple(int(k) for k in np.argwhere(N != N_ref)[0])
                raise Wrong(f"N ({setting}) differs from act_forward's at {first}: yours {as_int(N[first], 'N')}, "
                            f"act_forward {N_ref[first]}; the halting test was right")
            worst = max(worst, same(f"R ({setting})", R, R_ref, tol=1e-12, source="act_forward", hint="See eq. (8)."),
                        same(f"y ({setting})", y, y_ref, tol=1e-12, source="act_forward"))
        return (f"fixed_act_forward = act_forward on a network drawn at grading time, under three settings: N equal, "
                f"max |difference| in R and y {worst:.1e} <= 1e-12")
    return calls, verify


JUDGED = Judged(
    allowed={4: (), 5: ("sigmoid",)},
    checks={"ex1-check": ex1, "ex1-check-b": BY_ITS_TESTS, "ex2-check": BY_ITS_TESTS, "ex3-check": BY_ITS_TESTS,
            "ex4-check": ex4, "ex4-check-b": ex4b, "ex5-check": ex5},
    library=("act_numpy",),
    torch=True,
)
