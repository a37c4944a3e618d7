"""The judge's check for notebook 09 (characters): ``position_in_word`` (exercise 4), called on the
notebook's cases and on byte strings drawn at grading time, compared with the positions worked
out here. The other checks read the network trained live or the committed sweeps: they stay
self-checks (act_course.grading.checks_table)."""

import string

import numpy as np

from .exchange import returned
from .judge import Judged, Wrong

CASES = [b"the cat", b"the cat, sat", b"  Ab\n9xy.z", b"a", b""]
LETTERS = frozenset(string.ascii_letters.encode())


def positions(codes):
    found, run = [], 0
    for code in codes:
        run = run + 1 if code in LETTERS else 0
        found.append(run)
    return found


def ex4(rng):
    """position_in_word on the notebook's cases and on 20 byte strings drawn now."""
    alphabet = np.frombuffer((string.ascii_letters + "  .,;'\n0123456789-").encode() + bytes([200, 7]), dtype=np.uint8)
    cases = CASES + [bytes(rng.choice(alphabet, size=int(rng.integers(1, 60))).tolist()) for _ in range(20)]
    calls = [("position_in_word", [np.frombuffer(case, dtype=np.uint8).astype(np.int64)]) for case in cases]

    def verify(entries):
        for entry, case in zip(entries, cases, strict=True):
            try:
                got = [int(v) for v in np.asarray(returned(entry)).ravel()]
            except (TypeError, ValueError):
                raise Wrong(f"position_in_word({case!r}) should return whole numbers") from None
            if got != positions(case):
                raise Wrong(f"position_in_word({case!r}) gives {got}, expected {positions(case)}")
        return (f"position_in_word is right on the notebook's {len(CASES)} cases and {len(cases) - len(CASES)} byte "
                "strings drawn at grading time")
    return calls, verify


JUDGED = Judged(allowed={}, checks={"ex4-check": ex4})
