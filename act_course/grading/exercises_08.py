"""The judge's checks for notebook 08 (sort).

Exercise 3's ``make_sort_flag_after`` is called with generators seeded at grading time; what it
returns is checked here against the task's layout (the flag alone on step n, the values before it,
their sorting positions as targets after it). It runs ``apart``, with NumPy alone: the lesson and
the course's code out of reach. Exercises 1 and 2 are values worked out from the notebook's fixed
inputs (the rows of one list of four values; N, R and rho of an untrained step and the bias that
halts at once; ``BY_ITS_TESTS``): the answer's process runs the lesson's cells the answers need,
with read-only copies of ``act_experiments`` and ``act_numpy`` beside it, and sends back the values;
the check cells' own tests decide in the judge's process (replay.py). Exercise 4 reads the network
trained live in the learner's kernel: it stays a self-check of no points (act_course.grading.checks_table)."""

import numpy as np

from .exchange import Generator, returned
from .judge import BY_ITS_TESTS, Judged, Wrong, apart, shaped, unpack


def one_list(b, x, y, mask, max_length):
    """Wrong naming what list ``b`` of a batch gets wrong, if anything; its length n otherwise."""
    flags = np.flatnonzero(x[b, :, 1])
    if flags.size != 1:
        raise Wrong(f"list {b}: the flag should be 1 on exactly one step, not on steps {flags.tolist()}")
    n = int(flags[0])
    if x[b, n, 0] != 0:
        raise Wrong(f"list {b}: the flag is on step {n}, which also holds a value ({x[b, n, 0]:+.2f}); here the flag "
                    "comes on a step of its own, after the last value")
    if not 2 <= n <= max_length:
        raise Wrong(f"list {b}: the flag comes right after the n values, at step n in 2..{max_length}, not at {n}")
    if not (np.all(x[b, :n, 0] != 0) and np.all(x[b, n:, 0] == 0)):
        raise Wrong(f"list {b}: steps 0..{n - 1} hold the values and every later step has value 0")
    if np.flatnonzero(mask[b]).tolist() != list(range(n + 1, 2 * n + 1)):
        raise Wrong(f"list {b} (n = {n}): the mask should be 1 on the output steps {n + 1}..{2 * n}, not on "
                    f"{np.flatnonzero(mask[b]).tolist()}")
    order = y[b, n + 1:2 * n + 1].astype(int)
    if sorted(order.tolist()) != list(range(n)) or np.any(np.diff(x[b, order, 0]) < 0):
        raise Wrong(f"list {b}: the targets {order.tolist()} are not the positions of the values in ascending order")
    if np.any(y[b][mask[b] == 0] != 0):
        raise Wrong(f"list {b}: the targets should be 0 wherever the mask is 0")
    return n


@apart
def ex3(rng):
    """make_sort_flag_after: 400 lists with max_length 5, 200 with max_length 3, generators seeded now."""
    sizes = [(400, 5), (200, 3)]
    calls = [("make_sort_flag_after", [Generator(int(rng.integers(2 ** 62))), batch, L]) for batch, L in sizes]

    def verify(entries):
        for entry, (batch, L) in zip(entries, sizes, strict=True):
            x, y, mask = unpack(returned(entry), 3, "make_sort_flag_after")
            T = 2 * L + 1
            x, y, mask = (shaped(f"{name} (max_length = {L})", value, shape) for name, value, shape in
                          (("x", x, (batch, T, 2)), ("y", y, (batch, T)), ("mask", mask, (batch, T))))
            lengths = {one_list(b, x, y, mask, L) for b in range(batch)}
            if lengths != set(range(2, L + 1)):
                raise Wrong(f"n should take every length 2..{L}; these {batch} lists have {sorted(lengths)}")
        return ("make_sort_flag_after lays out 600 lists from generators seeded at grading time (max_length 5 and 3): "
                "the flag alone on step n, the answers on steps n+1..2n sort the values")
    return calls, verify


JUDGED = Judged(
    allowed={},
    checks={"ex1-check": BY_ITS_TESTS, "ex2-check": BY_ITS_TESTS, "ex3-check": ex3},
    library=("act_experiments", "act_numpy"),
    why="the judge runs your answers outside your notebook: make_sort_flag_after with NumPy alone, exercises 1 "
        "and 2 with act_experiments and act_numpy; the rest of the course, PyTorch and the networks trained there "
        "are out of reach (the statements that use them cost nothing)",
)
