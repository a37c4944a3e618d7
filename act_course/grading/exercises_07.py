"""The judge's checks for notebook 07 (addition): three functions, called on batches of the addition
task drawn at grading time and compared with what ``tasks.make_batch`` writes, here. The answers are
written by hand (``by_hand``): the lesson and the course's code are out of reach but the constant
``tasks.END_CLASS``.

Exercise 4 is values read from the committed sweep ``addition_3digit`` (the rise of the ponder per
digit at each tau, and the steepest tau; ``BY_ITS_TESTS``): the answer's process runs the lesson's
cells the answer needs (the setup cell, and section 6's ``sweep_table`` and its table of
``addition_3digit``) with read-only copies of ``act_experiments``, ``act_engine`` and ``act_numpy``
beside it and of that sweep inside the copy of ``act_experiments`` (``Judged.committed``), and sends
back the values; the check cell's own tests decide in the judge's process (replay.py), on the
repository's sweep.
"""

import numpy as np

from act_experiments.data import tasks

from .exchange import returned
from .judge import BY_ITS_TESTS, Judged, Wrong, by_hand, shaped, unpack


def number_of(row):
    """The integer of one input row (blocks of ten, units first)."""
    return sum(int(np.argmax(b)) * 10 ** k for k, b in enumerate(row.reshape(-1, 10)) if b.any())


@by_hand
def ex1(rng):
    """encode_number against make_batch's rows, max_digits 2 and 5."""
    calls, refs = [], []
    for max_digits in (2, 5):
        x, _, _ = tasks.make_batch("addition", rng, 40, max_numbers=3, max_digits=max_digits)
        for row in x.reshape(-1, x.shape[-1]):
            if row.any():
                calls.append(("encode_number", [number_of(row), max_digits]))
                refs.append((number_of(row), max_digits, row))

    def verify(entries):
        for entry, (n, max_digits, row) in zip(entries, refs, strict=True):
            mine = shaped(f"encode_number({n}, {max_digits})", returned(entry), row.shape)
            if not np.array_equal(mine, row):
                raise Wrong(f"encode_number({n}, {max_digits}) sets the units {np.flatnonzero(mine).tolist()}, but "
                            f"make_batch sets {np.flatnonzero(row).tolist()}: one block of ten per digit, units first")
        return f"encode_number writes the same rows as make_batch for {len(refs)} numbers drawn at grading time"
    return calls, verify


@by_hand
def ex2(rng):
    """sum_targets against make_batch's targets and masks."""
    x, y, mask = tasks.make_batch("addition", rng, 40, max_numbers=5, max_digits=3)
    calls, refs = [], []
    for i in range(len(x)):
        L = int((x[i].sum(axis=1) > 0).sum())
        numbers = [number_of(x[i, t]) for t in range(L)]
        calls.append(("sum_targets", [numbers, 3]))
        refs.append((numbers, y[i, :L], mask[i, :L]))

    def verify(entries):
        for entry, (numbers, y_ref, mask_ref) in zip(entries, refs, strict=True):
            y_mine, mask_mine = unpack(returned(entry), 2, "sum_targets")
            y_mine = shaped(f"numbers {numbers}: y", y_mine, y_ref.shape)
            if not np.array_equal(shaped(f"numbers {numbers}: mask", mask_mine, mask_ref.shape), mask_ref):
                raise Wrong(f"numbers {numbers}: the mask is 0 at the first step (no target there), 1 at every later "
                            f"step, not {np.asarray(mask_mine).tolist()}")
            bad = np.flatnonzero((y_mine != y_ref).any(axis=1))
            if bad.size:
                raise Wrong(f"numbers {numbers}: at step {bad[0]} (from 0) y is {y_mine[bad[0]].tolist()}, but the "
                            f"target there is {y_ref[bad[0]].tolist()} (units first, 10 past the last digit)")
        return f"sum_targets gives make_batch's targets and masks for {len(refs)} sequences drawn at grading time"
    return calls, verify


@by_hand
def ex3(rng):
    """reverse_digits on batches drawn now: every number and sum written most significant digit first."""
    calls, refs = [], []
    for max_digits in (2, 3):
        x, y, _ = tasks.make_batch("addition", rng, 20, max_numbers=4, max_digits=max_digits)
        B, T, width = x.shape
        calls.append(("reverse_digits", [x, y]))
        refs.append((max_digits, x.reshape(B, T, width // 10, 10)[:, :, ::-1, :].reshape(B, T, width), y[:, :, ::-1]))

    def verify(entries):
        for entry, (max_digits, x_ref, y_ref) in zip(entries, refs, strict=True):
            x_mine, y_mine = unpack(returned(entry), 2, "reverse_digits")
            for what, mine, want in (("x", x_mine, x_ref), ("y", y_mine, y_ref)):
                mine = shaped(f"reverse_digits' {what} (max_digits = {max_digits})", mine, want.shape)
                if not np.array_equal(mine, want):
                    b, t = (int(k) for k in np.argwhere((mine != want).reshape(want.shape[0], want.shape[1], -1)
                                                        .any(axis=2))[0])
                    raise Wrong(f"reverse_digits' {what} (max_digits = {max_digits}) differs at sequence {b}, step {t}: "
                                "each number and sum is to be written most significant digit first, in as many "
                                "blocks (classes) as before")
        return "reverse_digits writes every number and sum of two batches drawn at grading time most significant first"
    return calls, verify


JUDGED = Judged(
    allowed={1: ()},
    checks={"ex1-check": ex1, "ex2-check": ex2, "ex3-check": ex3, "ex4-check": BY_ITS_TESTS},
    constants={"act_experiments.data.tasks.END_CLASS": tasks.END_CLASS},
    library=("act_experiments", "act_numpy", "act_engine"),
    committed=("addition_3digit",),
    why="exercises 1 to 3 ask you to write the layout yourself, with NumPy: the course's code is out of reach "
        "there but tasks.END_CLASS; exercise 4 may use act_experiments, act_engine, act_numpy and the committed "
        "sweep addition_3digit, not the rest of the course or PyTorch",
)
