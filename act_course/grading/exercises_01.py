"""The judge's checks for notebook 01 (the forward pass).

Exercise 2's ``shortcut_weights`` is a function: it is called on the notebook's cases and on
halting values drawn at grading time, and compared with the shortcut worked out here. Every other
check is of values worked out from the notebook's fixed inputs (``BY_ITS_TESTS``): the answer's
process sends back the values, and the check cell's own tests decide in the judge's process
(replay.py). The answers may use ``act_numpy`` (01's exercises find N with ``halting_weights``):
the answer's process gets a read-only copy of it, and the lesson's cells that the answer needs.
"""

import numpy as np

from act_numpy.halting import halting_weights

from .exchange import returned
from .judge import BY_ITS_TESTS, Judged, same, shaped

CASES = {"A": ([0.3] * 10, 100), "B": ([0.2485] * 10, 100), "C": ([0.2, 0.9, 0.5], 100),
         "D": ([0.1, 0.1, 0.5, 0.45, 0.5], 100), "E": ([0.02] * 6, 6)}


def shortcut(h, epsilon, max_ponder):
    """The shortcut the exercise asks for: p^n = h^n, the last one h^N - max(sum_{n<=N} h^n - 1, 0)."""
    N = int(halting_weights(h, epsilon=epsilon, max_ponder=max_ponder)[0][0])
    p = np.array(h[:N], dtype=float)
    p[-1] = h[N - 1] - max(float(np.sum(h[:N])) - 1.0, 0.0)
    return p


def ex2(rng):
    """shortcut_weights on the five cases of the notebook and on 20 drawn at grading time."""
    cases = [(f"case {name}", h, 0.01, M) for name, (h, M) in CASES.items()]
    for k in range(20):
        M = int(rng.integers(1, 12))
        h = [float(v) for v in rng.uniform(0.0, 0.7, size=M)]
        cases.append((f"random case {k + 1}", h, float(rng.choice([0.01, 0.1, 0.3])), M))
    calls = [("shortcut_weights", [h, eps, M]) for _, h, eps, M in cases]
    refs = [(f"{name} (h = {np.round(h, 4).tolist()}, epsilon = {eps}, M = {M})", shortcut(h, eps, M))
            for name, h, eps, M in cases]

    def verify(entries):
        worst = 0.0
        for entry, (where, want) in zip(entries, refs, strict=True):
            mine = shaped(f"{where}: shortcut_weights", returned(entry), want.shape)
            worst = max(worst, same(f"{where}: the shortcut's weights", mine, want, tol=1e-9, source="the shortcut",
                                    hint="The first N - 1 weights are h^n; the last is h^N - max(sum - 1, 0)."))
        return (f"shortcut_weights computes the shortcut on the notebook's five cases and {len(refs) - 5} drawn at "
                f"grading time: max |difference| {worst:.1e} <= 1e-9")
    return calls, verify


JUDGED = Judged(
    allowed={},
    checks={"ex1-check": BY_ITS_TESTS, "ex1-check-b": BY_ITS_TESTS, "ex2-check": ex2, "ex2-check-b": BY_ITS_TESTS,
            "ex3-check": BY_ITS_TESTS, "ex3-check-b": BY_ITS_TESTS, "ex4-check": BY_ITS_TESTS,
            "ex4-check-b": BY_ITS_TESTS},
    library=("act_numpy",),
)
