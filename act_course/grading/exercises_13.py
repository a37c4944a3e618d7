"""The judge's checks for notebook 13 (the Universal Transformer): two functions, called on inputs
drawn at grading time and compared with a count, position by position and batch by batch, written
here.

``referent_order`` (exercise 1) gets pointer chains from ``ut.make_chains`` of drawn sizes (rows,
positions, values and depths), with halting steps drawn three ways: at random, from the depth (so
that whole chains halt together) and all equal; some inputs mix in rows of literals alone, whose
positions refer to nothing. Every input holds at least one reference, since the shares of none
are not defined. ``loop_cost`` (exercise 3) gets halting steps of drawn sizes in batches of one
row, of every row, of a size that leaves an incomplete last batch (dropped, as the task says) and
of one that divides the rows; never larger than the rows, which would leave no batch. The
course's code is out of reach of the answers; NumPy is there, and any other installed package.
The visible part of each check also measures the encoder trained live in the learner's kernel: it
is for the learner, and the judge's verdict decides the points.

Exercise 2 is values worked out from a fixed array of halting steps that its answer cell hands in
(``N_ex3``; ``BY_ITS_TESTS``): the answer's process runs the answer cells alone (they need no
lesson cell, and the course's code is out of reach there too) and sends back ``per_position``,
``batched`` and ``per_row``; the check cell's own tests decide in the judge's process (replay.py).
"""

import numpy as np

from act_beyond import universal_transformer as ut

from .exchange import returned
from .judge import BY_ITS_TESTS, Judged, Wrong, unpack

EXAMPLE = (np.array([[2, 4, 5]]), np.array([[1, 2, 2]]), 4)       # a = 2, b = a, c = b: (0.5, 0.5, 0.0)


def order_by_count(tokens, N, values):
    """(later, same, earlier): the shares of the reference positions whose N is larger than, equal
    to and smaller than their referent's, counted position by position; and how many there are."""
    counts = [0, 0, 0]
    for b in range(tokens.shape[0]):
        for i in range(tokens.shape[1]):
            if tokens[b, i] >= values:
                j = tokens[b, i] - values
                counts[0 if N[b, i] > N[b, j] else 1 if N[b, i] == N[b, j] else 2] += 1
    total = sum(counts)
    return tuple(c / total for c in counts), total


def chains(rng):
    """[(tokens, N, values)]: the notebook's worked row and chains drawn now, with at least one reference."""
    found = [EXAMPLE]
    while len(found) < 25:
        rows, length = int(rng.integers(1, 120)), int(rng.integers(2, 17))
        values, depth = int(rng.integers(2, 7)), int(rng.integers(1, 8))
        tokens, _, d = ut.make_chains(rng, rows, length=length, values=values, max_depth=depth)
        if len(found) % 4 == 0:                        # rows of literals alone mixed in: they refer to nothing
            flat, _, d0 = ut.make_chains(rng, int(rng.integers(1, 6)), length=length, values=values, max_depth=0)
            order = rng.permutation(rows + len(flat))
            tokens, d = np.concatenate([tokens, flat])[order], np.concatenate([d, d0])[order]
        style = len(found) % 3
        if style == 0:
            N = rng.integers(1, int(rng.integers(2, 9)), size=tokens.shape)
        elif style == 1:                               # as pointer doubling would halt, give or take a step
            N = np.maximum(1, np.ceil(np.log2(d + 1)).astype(int) + rng.integers(-1, 2, size=d.shape))
        else:
            N = np.full(tokens.shape, int(rng.integers(1, 6)))
        if (tokens >= values).any():
            found.append((tokens, N, values))
    return found


def _rows(array):
    return f"{array.shape[0]} row{'s' if array.shape[0] != 1 else ''}"


def _numbers(value, count, what, where):
    """``value`` as ``count`` floats, or Wrong."""
    items = unpack(value, count, what)
    try:
        return [float(np.asarray(v, dtype=float)) for v in items]
    except (TypeError, ValueError):
        raise Wrong(f"{what} should return a tuple of {count} floats, not {value!r}"[:200] + f" ({where})") from None


def ex1(rng):
    """referent_order against a count position by position, on chains drawn now."""
    cases = chains(rng)
    refs = [order_by_count(*case) for case in cases]

    def verify(entries):
        for entry, (tokens, N, values), (want, total) in zip(entries, cases, refs, strict=True):
            where = f"{_rows(tokens)} of {tokens.shape[1]} positions, {values} values, {total} reference(s)"
            mine = _numbers(returned(entry), 3, "referent_order", where)
            if not np.allclose(mine, want, rtol=0, atol=1e-12):
                raise Wrong(f"on {where}: (later, same, earlier) = {np.round(mine, 4).tolist()}, counting position "
                            f"by position gives {np.round(want, 4).tolist()} (a literal has no referent; token "
                            f"values + j refers to position j of its own row)")
        return (f"referent_order agrees with a count position by position on {len(cases)} sets of rows, "
                f"{len(cases) - 1} drawn at grading time (chains of drawn sizes, some rows of literals alone)")
    return [("referent_order", [tokens, N, values]) for tokens, N, values in cases], verify


def cost_by_batches(N, batch_size):
    """(mean steps per batch, share of the computed position-updates that count), batch by batch."""
    steps, counted, computed = [], 0, 0
    for start in range(0, N.shape[0] - batch_size + 1, batch_size):
        batch = N[start:start + batch_size]
        steps.append(int(batch.max()))
        counted += int(batch.sum())
        computed += int(batch.max()) * batch.size
    return (float(np.mean(steps)), counted / computed)


def batchings(rng):
    """[(N, batch_size)]: the notebook's example and halting steps drawn now, in batches of one row,
    of every row, of a size that leaves an incomplete last batch and of one that divides the rows."""
    found = [(np.array([[1, 2], [3, 1]]), 1)]
    for _ in range(6):
        rows, length = int(rng.integers(2, 200)), int(rng.integers(1, 13))
        N = rng.integers(1, int(rng.integers(2, 10)), size=(rows, length))
        uneven = [s for s in range(2, rows) if rows % s]
        even = [s for s in range(2, rows) if rows % s == 0]
        sizes = [1, rows] + ([int(rng.choice(uneven)), rows // 2 + 1] if uneven else []) \
            + ([int(rng.choice(even))] if even else [])
        found += [(N, size) for size in sizes]
    return found


def ex3(rng):
    """loop_cost against a count batch by batch, incomplete last batches included."""
    cases = batchings(rng)
    refs = [cost_by_batches(N, size) for N, size in cases]

    def verify(entries):
        for entry, (N, size), want in zip(entries, cases, refs, strict=True):
            where = f"{_rows(N)} of {N.shape[1]} positions in batches of {size}"
            mine = _numbers(returned(entry), 2, "loop_cost", where)
            if not np.allclose(mine, want, rtol=0, atol=1e-12):
                raise Wrong(f"{where}: yours {np.round(mine, 4).tolist()}, batch by batch {np.round(want, 4).tolist()}"
                            + (" (drop the incomplete last batch)" if N.shape[0] % size else ""))
        uneven = sum(N.shape[0] % size != 0 for N, size in cases)
        return (f"loop_cost agrees with a count batch by batch in {len(cases)} cases, {len(cases) - 1} drawn at "
                f"grading time ({uneven} with an incomplete last batch, batches of one row and of all rows)")
    return [("loop_cost", [N, size]) for N, size in cases], verify


JUDGED = Judged(
    allowed={1: ()},
    checks={"ex1-check": ex1, "ex2-check": BY_ITS_TESTS, "ex3-check": ex3},
    why="these exercises ask you to count it yourself, with NumPy: the course's code is out of reach",
)
