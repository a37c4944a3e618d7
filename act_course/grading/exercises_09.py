"""The judge's checks for notebook 09 (characters).

Exercise 4's ``position_in_word`` is called on the notebook's cases and on byte strings drawn at
grading time, and compared with the positions worked out here; it runs ``apart``, with NumPy
alone: the lesson and the course's code out of reach. Exercise 1 is values worked out from the
notebook's fixed inputs (the cost of a uniform guess over the bytes of the training text, and of
"cab" under an add-one unigram; ``BY_ITS_TESTS``): the answer's process runs the lesson's cells it
needs (the setup cell, section 1's for ``train_text``, the text coming with Python) with read-only
copies of ``act_experiments`` and ``act_numpy`` beside it, and sends back the values; the check
cell's own tests decide in the judge's process (replay.py). Exercise 3 is values read from the
committed characters sweep (the classes of least ponder and of the hardest next byte): its lesson
cells (section 3's ``res`` and ``tau``) run the same way, with ``act_engine`` beside the answer too
(``characters`` imports the sweeps' machinery) and a read-only copy of the sweep that
``characters.default_results`` reads inside the copy of ``act_experiments`` (``Judged.committed``).
The other checks read the network trained live: they stay self-checks of no points
(act_course.grading.checks_table)."""

import string

import numpy as np

from act_experiments.experiments import characters

from .exchange import returned
from .judge import BY_ITS_TESTS, Judged, Wrong, apart

CASES = [b"the cat", b"the cat, sat", b"  Ab\n9xy.z", b"a", b""]
LETTERS = frozenset(string.ascii_letters.encode())


def positions(codes):
    found, run = [], 0
    for code in codes:
        run = run + 1 if code in LETTERS else 0
        found.append(run)
    return found


@apart
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


JUDGED = Judged(
    allowed={},
    checks={"ex1-check": BY_ITS_TESTS, "ex3-check": BY_ITS_TESTS, "ex4-check": ex4},
    library=("act_experiments", "act_numpy", "act_engine"),
    committed=(characters.default_results().name,),      # the sweep section 3 reads
    why="the judge runs your answers outside your notebook: position_in_word with NumPy alone, exercises 1 and 3 "
        "with act_experiments, act_engine, act_numpy and the committed sweep; the rest of the course, PyTorch and "
        "the network trained there are out of reach (the statements that use them cost nothing)",
)
