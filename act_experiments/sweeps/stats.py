"""The numbers of a τ sweep, τ by τ: what its tables and figures are made of.

A sweep (act_experiments.sweeps.reading.load_sweep) trains several runs for each τ, one per seed, and
the no-ACT baseline. Here the runs are grouped by their key, the taus ascending and NO_ACT last:
mean and standard error over the seeds (``per_group``, ``table``), and error and ponder against
the difficulty of the input, seeds pooled (``by_difficulty``).
"""

import math

import numpy as np

from act_experiments.sweeps.reading import NO_ACT, fixed_key, tau_label


def taus(sweep):
    """The τ values of the sweep, ascending."""
    return sorted({r["key"] for r in sweep["runs"] if r["act"]})


def keys(sweep):
    """The taus, ascending, then NO_ACT when the sweep has baseline runs, then the keys of its
    fixed-computation runs (results.fixed_key), F ascending."""
    baseline = any(r["key"] == NO_ACT for r in sweep["runs"])
    fixed = sorted({r["fixed_ponder"] for r in sweep["runs"] if r["fixed_ponder"] is not None})
    return taus(sweep) + ([NO_ACT] if baseline else []) + [fixed_key(F) for F in fixed]


def mean_se(values):
    """(mean, standard error of the mean); the standard error of one value is 0."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float(v.mean()), 0.0
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def per_group(sweep, field):
    """{key: (mean, standard error, [field of each run])} of a runs.csv field, in keys() order."""
    out = {}
    for key in keys(sweep):
        values = [r[field] for r in sweep["runs"] if r["key"] == key]
        out[key] = (*mean_se(values), values)
    return out


def baseline_errors(sweep):
    """The sequence errors of the no-ACT runs (empty without a baseline)."""
    return [r["sequence_error"] for r in sweep["runs"] if r["key"] == NO_ACT]


def table(sweep):
    """One dict per key (keys() order) with the sequence error and mean ponder over its seeds.

    Fields: key, tau (None for the baseline), label (results.tau_label), seeds (how many runs),
    errors (each run's), error, error_se, error_min, error_max, error_sd (mean, standard error,
    lowest, highest, standard deviation), ponder, ponder_se.
    """
    errors, ponders = per_group(sweep, "sequence_error"), per_group(sweep, "mean_ponder")
    rows = []
    for key in errors:
        e, e_se, values = errors[key]
        p, p_se, _ = ponders[key]
        err = np.array(values, dtype=np.float64)
        rows.append({"key": key, "tau": None if key == NO_ACT else key, "label": tau_label(key),
                     "seeds": len(values), "errors": values, "error": e, "error_se": e_se,
                     "error_min": float(err.min()), "error_max": float(err.max()),
                     "error_sd": float(err.std(ddof=1)) if err.size > 1 else 0.0, "ponder": p, "ponder_se": p_se})
    return rows


def print_table(rows):
    """Print table() rows as fixed-width columns: runs, error mean, s.e., best, ponder mean, s.e."""
    print(f"{'tau':>7} {'runs':>4} {'error':>7} {'s.e.':>6} {'best':>6} {'ponder':>7} {'s.e.':>5}")
    for r in rows:
        print(f"{r['label']:>7} {r['seeds']:4d} {r['error']:7.3f} {r['error_se']:6.3f} {r['error_min']:6.3f} "
              f"{r['ponder']:7.2f} {r['ponder_se']:5.2f}")


def difficulty_bins(values, max_bins=None):
    """Bin edges over integer difficulty values: one bin per value from the lowest to the highest,
    or `max_bins` bins of equal width when there are more values than that."""
    lo, hi = int(min(values)), int(max(values))
    if max_bins is None or hi - lo + 1 <= max_bins:
        return np.arange(lo, hi + 2) - 0.5
    return np.linspace(lo - 0.5, hi + 0.5, max_bins + 1)


def by_difficulty(rows, key, field, edges=None):
    """`field` ("error" or "ponder") of the runs of `key` against difficulty, seeds pooled.

    `rows` are a sweep's difficulty.csv rows; `edges` the difficulty bins (default: one per
    difficulty). Returns four arrays, one entry per bin that holds any row: the bin's mean
    difficulty, the value pooled over every seed, and the lowest and highest value of a single
    seed. Pooling weights each row by its count of held-out steps or sequences.
    """
    rows = [r for r in rows if r["key"] == key and r[field] is not None]
    if not rows:
        return (np.array([]),) * 4
    if edges is None:
        edges = difficulty_bins([r["difficulty"] for r in rows])
    seeds = sorted({r["seed"] for r in rows})
    centres, means, lows, highs = [], [], [], []
    for a, b in zip(edges[:-1], edges[1:]):
        inside = [r for r in rows if a < r["difficulty"] < b]
        if not inside:
            continue
        centres.append(_pooled(inside, "difficulty"))
        means.append(_pooled(inside, field))
        per_seed = []
        for seed in seeds:
            own = [r for r in inside if r["seed"] == seed]
            if own:
                per_seed.append(_pooled(own, field))
        lows.append(min(per_seed))
        highs.append(max(per_seed))
    return np.array(centres), np.array(means), np.array(lows), np.array(highs)


def _pooled(rows, field):
    """The mean of `field` over `rows`, each weighted by its count."""
    w = np.array([r["count"] for r in rows], dtype=np.float64)
    v = np.array([r[field] for r in rows], dtype=np.float64)
    return float((w * v).sum() / w.sum())
