"""The judge's checks for notebook 10 (the time penalty).

``start_ponder`` (exercise 1) asks for what ``halting_weights`` does, so it runs written by hand
(``by_hand``: the course's code out of reach); ``dead_bias`` (exercise 2) is a formula. Both are
called on halting biases and thresholds drawn at grading time and compared with ``act_numpy``,
here. Exercise 3's answer is values: its check cell's own tests decide on them in the judge's
process (replay.py).
"""

import math

import numpy as np

from act_numpy.halting import halting_weights

from .exchange import returned
from .judge import BY_ITS_TESTS, Judged, Wrong, as_int, by_hand, unpack

FIXED = ((-2.0, 0.01), (-1.0, 0.01), (0.0, 0.01), (1.0, 0.01), (4.0, 0.01), (5.0, 0.01), (2.0, 0.2))


@by_hand
def ex1(rng):
    """start_ponder against halting_weights on halting units all sigmoid(b_h)."""
    cases = list(FIXED) + [(float(rng.uniform(-3.0, 5.0)), float(rng.choice([0.01, 0.05, 0.1, 0.2, 0.3])))
                           for _ in range(20)]
    refs = []
    for b_h, epsilon in cases:
        N, _, R = halting_weights(np.full((1, 200), 1 / (1 + math.exp(-b_h))), epsilon=epsilon)
        refs.append((b_h, epsilon, int(N[0]), float(N[0] + R[0])))

    def verify(entries):
        for entry, (b_h, epsilon, N_ref, rho_ref) in zip(entries, refs, strict=True):
            N, rho = unpack(returned(entry), 2, "start_ponder")
            where = f"b_h = {b_h:.4f}, epsilon = {epsilon}"
            if as_int(N, f"{where}: N") != N_ref:
                raise Wrong(f"{where}: the running sum of h = sigma(b_h) first reaches 1 - epsilon at n = {N_ref}, "
                            f"not {N}")
            if not abs(float(rho) - rho_ref) < 1e-9:
                raise Wrong(f"{where}: N = {N_ref} is right, but rho = {rho} is not N + R = {rho_ref:.9f}")
        return (f"start_ponder agrees with halting_weights in {len(refs)} cases, {len(refs) - len(FIXED)} of them "
                "drawn at grading time")
    return [("start_ponder", [b_h, epsilon]) for b_h, epsilon in cases], verify


def ex2(rng):
    """dead_bias: sigma(dead_bias(epsilon)) = 1 - epsilon."""
    cases = [0.01, 0.05, 0.1, 0.3] + [float(v) for v in rng.uniform(0.001, 0.6, size=16)]

    def verify(entries):
        for entry, epsilon in zip(entries, cases, strict=True):
            b = returned(entry)
            try:
                halting = 1 / (1 + math.exp(-float(b)))
            except (TypeError, ValueError, OverflowError):
                raise Wrong(f"dead_bias({epsilon}) should be one number, not {b!r}") from None
            if not abs(halting - (1 - epsilon)) < 1e-9:
                raise Wrong(f"epsilon = {epsilon}: sigma({float(b):.4f}) = {halting:.6f}, not 1 - epsilon = {1 - epsilon}")
        return f"sigma(dead_bias(epsilon)) = 1 - epsilon for {len(cases)} values of epsilon, {len(cases) - 4} drawn at grading time"
    return [("dead_bias", [epsilon]) for epsilon in cases], verify


JUDGED = Judged(
    allowed={1: ()},
    checks={"ex1-check": ex1, "ex2-check": ex2, "ex3-check": BY_ITS_TESTS},
    library=("act_numpy",),
)
