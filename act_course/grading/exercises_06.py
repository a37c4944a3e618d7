"""The judge's checks for notebook 06 (logic).

Exercise 3's ``show_b0`` is called on batches of the logic task drawn at grading time and compared
with the copy worked out here; it runs ``apart``, with NumPy alone: the lesson, the course's code
and PyTorch out of reach. Exercises 1 and 2 are values worked out from the notebook's fixed inputs
(the bits of eq. (21) for a given chain, the hidden b0 and the targets of one sequence of the
task; ``BY_ITS_TESTS``): the answer's process runs the lesson's cells the answers need (the setup
cell for ``tasks``, section 2's for ``chain`` and ``gates_of``) with read-only copies of
``act_experiments`` and ``act_numpy`` beside it, and sends back the values; the check cells' own
tests decide in the judge's process (replay.py), against ``tasks.make_batch`` and Table 1 run there.
"""

import numpy as np

from act_experiments.data import tasks

from .exchange import returned
from .judge import BY_ITS_TESTS, Judged, Wrong, apart, shaped


@apart
def ex3(rng):
    """show_b0: the previous vector's target in unit 0 of every vector after the first."""
    calls, refs = [], []
    for max_vectors in (2, 4, 6):
        x, y, mask = tasks.make_batch("logic", rng, 30, max_vectors=max_vectors, max_gates=3)
        want = x.copy()
        want[:, 1:, 0] = y[:, :-1, 0] * mask[:, 1:]
        calls.append(("show_b0", [x, y, mask]))
        refs.append((max_vectors, x, mask, want))

    def verify(entries):
        for entry, (max_vectors, x, mask, want) in zip(entries, refs, strict=True):
            shown = shaped(f"show_b0 (up to {max_vectors} vectors)", returned(entry), want.shape)
            if not np.array_equal(shown[:, :, 1:], x[:, :, 1:]):
                raise Wrong("only unit 0 (b0) may change: b1 and the gates stay as they are")
            if not np.array_equal(shown[:, 0], x[:, 0]):
                raise Wrong("the first vector of a sequence already shows its b0: leave it as it is")
            if shown[mask == 0].any():
                raise Wrong("a padding step (mask 0) is no longer all zero: write b0 only where a vector is")
            if not np.array_equal(shown, want):
                raise Wrong("unit 0 of a vector after the first should hold the previous vector's target")
        return (f"show_b0 writes the previous target into unit 0 of every vector after the first on {len(refs)} "
                "batches drawn at grading time, and keeps the first vectors and the padding")
    return calls, verify


JUDGED = Judged(
    allowed={},
    checks={"ex1-check": BY_ITS_TESTS, "ex2-check": BY_ITS_TESTS, "ex3-check": ex3},
    library=("act_experiments", "act_numpy"),
    why="the judge runs your answers outside your notebook: show_b0 with NumPy alone, exercises 1 and 2 with "
        "act_experiments and act_numpy; the rest of the course, PyTorch and the network trained there are out of "
        "reach (the statements that use them cost nothing)",
)
