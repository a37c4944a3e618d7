"""The judge's checks for notebook 15 (when adapting pays): three functions, called on inputs drawn
at grading time and compared with the course's ``frontier`` and with SciPy, worked out here.

``lower_hull`` (exercise 1) gets point sets with collinear points, duplicates, shared x and
unsorted input, ``shows_adaptation`` (exercise 2) points above, below and exactly on a frontier
and outside its range, ``paired_sign_p`` (exercise 3) paired samples with ties, against
``scipy.stats.binomtest``. The course's code (``frontier``, ``measured``) is out of reach of the
answers; any other installed package, SciPy included, may be imported. Where a verdict could hang
on rounding (three collinear points, a point exactly on a frontier or exactly a margin below it),
every coordinate is a multiple of 1/64, and a point on a segment sits half-way along one whose
width is a power of two, so that every sum, product and quotient a correct answer may form is
exact and gives the reference's verdict; points drawn anywhere else keep 1e-6 from the boundary.
"""

import numpy as np
from scipy import stats

from act_experiments.experiments import frontier

from .exchange import returned
from .judge import Judged, Wrong, truth

GRID = 64                                     # coordinates drawn on multiples of 1/64: exact in floats
EXAMPLE = [(1, 0.5), (2, 0.35), (3, 0.013), (5, 0.036), (10, 0.499)]
HULL_CASES = [EXAMPLE, [(0, 1), (1, 0.5), (2, 0.0)], [(0, 0), (1, 1), (2, 0)], [(2, 0.3), (2, 0.1), (4, 0.2)],
              [(5, 0.2)], [(3, 0.25), (1, 0.5), (3, 0.25), (1, 0.5), (2, 0.375)]]


def _grid(rng, n, high=GRID):
    return rng.integers(0, high, size=n) / GRID


def _on_a_line(rng):
    """Points of which several lie on one straight line and the others above it, shuffled, some repeated."""
    xs = rng.choice(np.arange(1, 17), size=int(rng.integers(3, 8)), replace=False)
    start, slope = float(_grid(rng, 1, 32)[0]) + 0.5, -float(rng.integers(1, 4)) / GRID
    points = [(float(x), start + slope * float(x)) for x in xs]
    points += [(float(x), float(y)) for x, y in zip(rng.integers(1, 17, size=4), start + _grid(rng, 4, 32))]
    points += [points[int(k)] for k in rng.integers(0, len(points), size=2)]
    return [points[int(k)] for k in rng.permutation(len(points))]


def point_sets(rng):
    """The notebook's cases and point sets drawn now: (points, how they are handed in)."""
    sets = [(p, "list") for p in HULL_CASES]
    for n in (3, 5, 8, 12, 20, 30):                       # ladders on the grid: shared x, collinear and repeated points
        x = rng.integers(1, 12, size=n)
        sets.append((list(zip(x.tolist(), _grid(rng, n).tolist())), "list" if n % 2 else "array"))
    sets += [(_on_a_line(rng), "list") for _ in range(6)]
    sets += [(list(zip(rng.uniform(0, 20, n).tolist(), rng.random(n).tolist())), "array") for n in (4, 15, 40)]
    return sets


def ex1(rng):
    """lower_hull against frontier.lower_hull, on the notebook's example and point sets drawn now."""
    cases = point_sets(rng)
    refs = [np.array(frontier.lower_hull(points), dtype=float).reshape(-1, 2) for points, _ in cases]
    calls = [("lower_hull", [np.array(points, dtype=float) if form == "array" else [list(p) for p in points]])
             for points, form in cases]

    def verify(entries):
        for entry, (points, _), want in zip(entries, cases, refs, strict=True):
            where = f"of the points {_shown(points)}"
            mine = _pairs(returned(entry), where)
            if mine.shape != want.shape or not np.allclose(mine, want, rtol=0, atol=1e-12):
                raise Wrong(f"the lower hull is {_shown(want)}, you gave {_shown(mine)} (from the smallest x to the "
                            f"largest; collinear, repeated and higher points of a shared x are not vertices) {where}")
        return (f"lower_hull agrees with frontier.lower_hull on {len(cases)} point sets, "
                f"{len(cases) - len(HULL_CASES)} of them drawn at grading time (unsorted, repeated and collinear "
                "points, points that share an x)")
    return calls, verify


def _shown(points):
    """Points as a short text: [(x, y), ...] with 6 significant digits."""
    return "[" + ", ".join(f"({float(x):.6g}, {float(y):.6g})" for x, y in np.asarray(points, dtype=float)) + "]"


def _pairs(value, where):
    """``value`` as a list of (x, y) pairs of floats, or Wrong."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"lower_hull should return a list of (x, y) pairs, not {value!r}"[:200] + f" {where}") from None
    if array.size == 0:
        return np.zeros((0, 2))
    if array.ndim != 2 or array.shape[1] != 2:
        raise Wrong(f"lower_hull should return a list of (x, y) pairs, not an array of shape {array.shape} {where}")
    return array


def frontiers(rng):
    """Frontiers of at least two vertices on the grid, drawn with frontier.lower_hull."""
    found = []
    while len(found) < 8:
        n = int(rng.integers(3, 7))
        x = rng.choice(np.arange(1, 13), size=n, replace=False)
        hull = frontier.lower_hull(list(zip(x.tolist(), _grid(rng, n).tolist())))
        if len(hull) >= 2:
            found.append(hull)
    return found


LADDER = [(1.0, 0.5), (2.0, 0.3), (3.0, 0.1)]
NOTEBOOK_POINTS = [((2.5, 0.1), LADDER, 0.05), ((2.5, 0.16), LADDER, 0.05), ((0.9, 0.0), LADDER, 0.0),
                   ((3.5, 0.0), LADDER, 0.0), ((1.0, 0.5), LADDER, 0.0), ((1.0, 0.5), LADDER, 0.01)]


def adaptation_cases(rng):
    """(point, hull, margin): the notebook's cases (those whose verdict no rounding can turn), points
    exactly on a frontier or exactly a margin below it (at a vertex, or half-way along a segment whose
    width is a power of two), just above that, just out of its range, and points drawn at least 1e-6
    away from where the verdict changes."""
    cases = list(NOTEBOOK_POINTS)
    for hull in frontiers(rng):
        xs, ys = [p[0] for p in hull], [p[1] for p in hull]
        for (xa, ya), (xb, yb) in zip(hull, hull[1:]):
            spots = [(xa, ya)] + ([(xa + (xb - xa) / 2, ya + (yb - ya) / 2)] if xb - xa in (1, 2, 4, 8) else [])
            for x, y in spots:
                m = float(rng.integers(0, 5)) / GRID
                cases += [((x, y - m), hull, m), ((x, y - m + 1 / GRID), hull, m)]
        cases += [((xs[0] - 1 / GRID, 0.0), hull, 0.0), ((xs[-1] + 1 / GRID, 0.0), hull, 0.0),
                  ((xs[-1], ys[-1]), hull, 0.0)]
        drawn = 0
        while drawn < 6:
            x, y = float(rng.uniform(xs[0] - 1, xs[-1] + 1)), float(rng.uniform(-0.2, 1))
            m = float(rng.choice([0, 0.01, 0.05]))
            at = frontier.hull_at(hull, x)
            if at is None or abs(y - (at - m)) > 1e-6:
                cases.append(((x, y), hull, m))
                drawn += 1
    return cases


def ex2(rng):
    """shows_adaptation against frontier.below, on points above, on and below frontiers drawn now."""
    cases = adaptation_cases(rng)
    refs = [frontier.below(point, hull, margin) for point, hull, margin in cases]
    calls = [("shows_adaptation", [list(point), [list(p) for p in hull], margin]) for point, hull, margin in cases]

    def verify(entries):
        for entry, (point, hull, margin), want in zip(entries, cases, refs, strict=True):
            got = returned(entry)
            mine = truth(got)
            where = f"point {_shown([point])[1:-1]}, margin {margin:g}, frontier {_shown(hull)}"
            if mine is None:
                raise Wrong(f"shows_adaptation should return True or False, not {got!r}"[:200] + f" ({where})")
            if mine != want:
                at = frontier.hull_at(hull, point[0])
                reads = "N is outside the frontier's range" if at is None else f"the frontier reads {at:.6g} at N"
                raise Wrong(f"{where}: the answer is {want}, you gave {got} ({reads}; a point exactly margin below "
                            "counts)")
        return (f"shows_adaptation agrees with frontier.below on {len(cases)} cases, "
                f"{len(cases) - len(NOTEBOOK_POINTS)} of them drawn at grading time (points exactly on a frontier or "
                "a margin below it, above it, out of its range)")
    return calls, verify


def sign_p(a, b):
    """The one-sided sign test's p-value of 'a lower', ties dropped: scipy.stats.binomtest."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    wins, differ = int(np.sum(d < 0)), int(np.sum(d != 0))
    return (float(stats.binomtest(wins, differ, 0.5, alternative="greater").pvalue) if differ else 1.0), wins, differ


def paired_samples(rng):
    """The notebook's cases and pairs drawn now, rounded to 0.1 so that ties happen."""
    pairs = [([0.1, 0.2, 0.3], [0.2, 0.3, 0.4]), ([0.1, 0.2], [0.1, 0.2]), ([0.1] * 8, [0.2] * 7 + [0.0]),
             ([0.3, 0.2, 0.5], [0.1, 0.2, 0.4])]
    for k in range(40):
        n = int(rng.integers(1, 17))
        a = np.round(rng.random(n), 1)
        b = np.round(np.clip(a + rng.normal(-0.05, 0.1, n), 0, 1), 1)
        pairs.append((a, b) if k % 2 else (a.tolist(), b.tolist()))
    return pairs


def ex3(rng):
    """paired_sign_p against scipy.stats.binomtest on pairs with ties."""
    pairs = paired_samples(rng)
    refs = [sign_p(a, b) for a, b in pairs]

    def verify(entries):
        for entry, (a, b), (want, wins, differ) in zip(entries, pairs, refs, strict=True):
            got = returned(entry)
            mine = np.asarray(got) if isinstance(got, (int, float, np.ndarray, np.generic)) else None
            where = f"a = {np.asarray(a).tolist()}, b = {np.asarray(b).tolist()}"
            if mine is None or mine.shape != () or mine.dtype.kind not in "iuf":
                raise Wrong(f"paired_sign_p should return one probability, not {got!r}"[:200] + f" ({where})")
            if not abs(float(mine) - want) < 1e-12:
                raise Wrong(f"ACT lower on {wins} of the {differ} seeds that differ: p = {want:.6f} "
                            f"(scipy.stats.binomtest), you gave {float(mine):.6f} ({where})")
        return (f"paired_sign_p agrees with scipy.stats.binomtest on {len(pairs)} pairs of samples, {len(pairs) - 4} "
                "drawn at grading time, ties included: |difference| < 1e-12")
    return [("paired_sign_p", [a, b]) for a, b in pairs], verify


JUDGED = Judged(
    allowed={1: ()},
    checks={"ex1-check": ex1, "ex2-check": ex2, "ex3-check": ex3},
    why="this exercise asks you to write it yourself: the course's code (frontier, measured) is out of reach",
)
