"""What the plotting scripts share: reading a tau sweep and drawing its common figures.

scripts/sweep.py writes each sweep to results/<name>/ (runs.csv, difficulty.csv, curves.csv,
sweep.json). This module reads such a folder (load, find_sweep), groups its runs by tau with the
no-ACT baseline last (taus, keys, grouped, stats_table, mean_se), and draws the figure types that
every task has (plot_error_per_tau, plot_error_vs_ponder, plot_learning_curves, and the lines of
a ponder/error-vs-difficulty figure). The task scripts (plot_task.py, plot_sort.py,
plot_time_penalty.py) add their titles, reference lines and task-specific figures.

Nothing here selects a matplotlib backend: a script that only writes files does that itself, so
a notebook that imports it keeps its inline backend.
"""

import csv
import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from act_experiments.figures import save_figure

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"

NO_ACT = "no ACT"       # the key of the no-ACT baseline runs (a tau key is a float)


# ---------------------------------------------------------------------------------------------
# Reading a sweep
# ---------------------------------------------------------------------------------------------


def find_sweep(names, results=RESULTS, missing=None):
    """Path of the first folder in `names` (under `results`) that holds a runs.csv.

    Raises FileNotFoundError with the message `missing` (or a generic one) when none does.
    """
    for name in names:
        folder = Path(results) / name
        if (folder / "runs.csv").exists():
            return folder
    raise FileNotFoundError(missing or f"none of {', '.join(names)} under {results} has a runs.csv")


def _csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _num(text):
    return None if text in ("", None) else float(text)


def load(folder, difficulty_key="difficulty"):
    """Read one sweep folder into plain Python data.

    Returns a dict with "name" (the folder's name), "meta" (sweep.json, {} if absent), "runs"
    (runs.csv), "curves" (curves.csv) and the rows of difficulty.csv under `difficulty_key`.
    Every row carries "key": the run's tau as a float, or NO_ACT for the baseline, and "seed";
    the other fields are the CSV's numbers as floats (None where empty).
    """
    folder = Path(folder)
    meta_path = folder / "sweep.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    runs = {}
    for r in _csv_rows(folder / "runs.csv"):
        key = float(r["tau"]) if r["act"] == "1" else NO_ACT
        numbers = {k: _num(v) for k, v in r.items() if k not in ("run", "tau", "act", "seed")}
        runs[r["run"]] = {"run": r["run"], "key": key, "seed": int(r["seed"]), **numbers}

    def tag(rows):
        return [{"key": runs[r["run"]]["key"], "seed": runs[r["run"]]["seed"],
                 **{k: _num(v) for k, v in r.items() if k != "run"}} for r in rows]

    return {"name": folder.name, "meta": meta, "runs": list(runs.values()),
            difficulty_key: tag(_csv_rows(folder / "difficulty.csv")),
            "curves": tag(_csv_rows(folder / "curves.csv"))}


# ---------------------------------------------------------------------------------------------
# Grouping runs by tau
# ---------------------------------------------------------------------------------------------


def taus(sweep):
    """The tau values of the sweep, ascending."""
    return sorted({r["key"] for r in sweep["runs"] if r["key"] != NO_ACT})


def keys(sweep):
    """The taus, ascending, then NO_ACT when the sweep has baseline runs."""
    baseline = any(r["key"] == NO_ACT for r in sweep["runs"])
    return taus(sweep) + ([NO_ACT] if baseline else [])


def mean_se(values):
    """(mean, standard error of the mean); the standard error of one value is 0."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float(v.mean()), 0.0
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def grouped(sweep, field):
    """{key: [field of each run with that key]} for every tau and the baseline."""
    return {k: [r[field] for r in sweep["runs"] if r["key"] == k] for k in keys(sweep)}


def baseline_errors(sweep):
    """The sequence errors of the no-ACT runs (empty without a baseline)."""
    return [r["sequence_error"] for r in sweep["runs"] if r["key"] == NO_ACT]


def stats_table(sweep):
    """One dict per tau (and no ACT): key, label, runs, error mean/se/best, ponder mean/se."""
    err, pon = grouped(sweep, "sequence_error"), grouped(sweep, "mean_ponder")
    rows = []
    for k in keys(sweep):
        e, e_se = mean_se(err[k])
        p, p_se = mean_se(pon[k])
        rows.append({"key": k, "label": label(k), "runs": len(err[k]), "error": e, "error_se": e_se,
                     "best_error": min(err[k]), "ponder": p, "ponder_se": p_se})
    return rows


def print_stats_table(rows):
    """Print stats_table() rows as a fixed-width table."""
    print(f"{'tau':>7} {'runs':>4} {'error':>7} {'s.e.':>6} {'best':>6} {'ponder':>7} {'s.e.':>5}")
    for r in rows:
        print(f"{r['label']:>7} {r['runs']:4d} {r['error']:7.3f} {r['error_se']:6.3f} {r['best_error']:6.3f} "
              f"{r['ponder']:7.2f} {r['ponder_se']:5.2f}")


def by_difficulty(rows, key, field):
    """(difficulties, pooled value, lowest seed, highest seed) of `field` ("error" or "ponder").

    `rows` are a sweep's difficulty.csv rows; only those of `key` count. The pooled value
    weights each seed's number by how many held-out steps or sequences it covers.
    """
    rows = [r for r in rows if r["key"] == key and r[field] is not None]
    ds = sorted({int(r["difficulty"]) for r in rows})
    pooled, low, high = [], [], []
    for d in ds:
        at = [r for r in rows if int(r["difficulty"]) == d]
        w = np.array([r["count"] for r in at], dtype=np.float64)
        v = np.array([r[field] for r in at], dtype=np.float64)
        pooled.append(float((w * v).sum() / w.sum()))
        low.append(float(v.min()))
        high.append(float(v.max()))
    return np.array(ds), np.array(pooled), np.array(low), np.array(high)


# ---------------------------------------------------------------------------------------------
# Style
# ---------------------------------------------------------------------------------------------


def label(key):
    """NO_ACT as it is; a tau as a short power of ten: 0.001 -> '1e-3', 0.0003 -> '3e-4'."""
    if key == NO_ACT:
        return NO_ACT
    mantissa, exponent = f"{key:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def series_label(key):
    """Legend entry of a key: 'no ACT' or 'τ = 1e-3'."""
    return NO_ACT if key == NO_ACT else f"τ = {label(key)}"


def line_style(key):
    """Dashed for the baseline, solid for a tau."""
    return "--" if key == NO_ACT else "-"


def tau_colours(sweep, cmap, start, stretch, baseline_colour):
    """Colour per key: cmap(start) for the smallest tau down to cmap(start - stretch) for the
    largest, on a log scale; `baseline_colour` for NO_ACT."""
    ts = taus(sweep)
    cm = plt.get_cmap(cmap)
    logs = np.log10(ts) if ts else np.array([])
    span = float(logs.max() - logs.min()) if len(ts) > 1 else 1.0
    colours = {t: cm(start - stretch * (lt - logs.min()) / span) for t, lt in zip(ts, logs)}
    colours[NO_ACT] = baseline_colour
    return colours


def legend_right(ax, fontsize=9):
    """The legend outside the axes, on the right."""
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=fontsize)


def _reference(ax, reference):
    if reference is not None:
        value, text = reference
        ax.axhline(value, color="crimson", ls="--", lw=1, label=text)


# ---------------------------------------------------------------------------------------------
# The common figures
# ---------------------------------------------------------------------------------------------


def plot_error_per_tau(sweep, colours, title, reference=None, ylim=None, legend=None):
    """Held-out sequence error per key: bar = mean over seeds, whisker = standard error,
    dot = one seed, the no-ACT baseline as the last bar.

    `reference` is (value, label) of a dashed crimson line (e.g. chance); `ylim` the y limits
    (default: 0 to the highest of the dots and the reference, plus 0.08); `legend` the keyword
    arguments of ax.legend (default: upper center).
    """
    errors, ks = grouped(sweep, "sequence_error"), keys(sweep)
    fig, ax = plt.subplots(figsize=(8, 4.3))
    for i, k in enumerate(ks):
        m, se = mean_se(errors[k])
        ax.bar(i, m, width=0.65, color=colours[k], alpha=0.85, yerr=se, capsize=4, ecolor="black")
        jitter = np.linspace(-0.15, 0.15, len(errors[k])) if len(errors[k]) > 1 else np.zeros(1)
        ax.scatter(i + jitter, errors[k], s=16, color="black", linewidths=0, zorder=3)
    _reference(ax, reference)
    ax.set_xticks(range(len(ks)), [label(k) for k in ks])
    ax.set_xlabel("time penalty τ")
    ax.set_ylabel("sequence error rate (held-out)")
    if ylim is None:
        top = max(max(v) for v in errors.values())
        ylim = (0, max(top, reference[0] if reference else top) + 0.08)
    ax.set_ylim(*ylim)
    ax.legend(**(legend or {"loc": "upper center", "frameon": False}))
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def plot_error_vs_ponder(sweep, colours, title, xlabel="mean ponder ρ per input step (held-out)",
                         reference=None, point_size=22):
    """Every run as a small point (final mean ponder, final error), the mean of each key as a
    large one (an X for the baseline)."""
    fig, ax = plt.subplots(figsize=(7.8, 4.8))
    for k in keys(sweep):
        runs = [r for r in sweep["runs"] if r["key"] == k]
        x = np.array([r["mean_ponder"] for r in runs])
        y = np.array([r["sequence_error"] for r in runs])
        marker = "X" if k == NO_ACT else "o"
        ax.scatter(x, y, s=point_size, marker=marker, color=colours[k], alpha=0.6, linewidths=0, zorder=2)
        ax.scatter(x.mean(), y.mean(), s=170, marker=marker, color=colours[k], edgecolors="black", zorder=3,
                   label=series_label(k))
    _reference(ax, reference)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(bottom=-0.02)
    ax.grid(alpha=0.3)
    legend_right(ax)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def plot_difficulty_lines(sweep, rows, colours, top, bottom):
    """Mean ponder (on `top`) and error (on `bottom`) against difficulty, one line per key
    (seeds pooled) with a band from the lowest to the highest seed. `rows` are the sweep's
    difficulty.csv rows."""
    for k in keys(sweep):
        name, style = series_label(k), line_style(k)
        for ax, field in ((top, "ponder"), (bottom, "error")):
            d, m, lo, hi = by_difficulty(rows, k, field)
            if d.size:
                ax.plot(d, m, style, marker="o", ms=4, color=colours[k], label=name)
                ax.fill_between(d, lo, hi, color=colours[k], alpha=0.12, linewidth=0)


def plot_learning_curves(sweep, colours, title, reference=None, error_ylim=(-0.02, None)):
    """Held-out sequence error (top) and mean ponder (bottom) during training: a thin line per
    seed, a thick one for the mean over seeds."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    for k in keys(sweep):
        rows = [r for r in sweep["curves"] if r["key"] == k]
        seeds = sorted({r["seed"] for r in rows})
        its = sorted({int(r["iteration"]) for r in rows})
        style = line_style(k)
        for ax, field in ((top, "sequence_error"), (bottom, "mean_ponder")):
            grid = np.full((len(seeds), len(its)), np.nan)
            for r in rows:
                grid[seeds.index(r["seed"]), its.index(int(r["iteration"]))] = r[field]
            for line in grid:
                ax.plot(its, line, style, color=colours[k], lw=0.7, alpha=0.35)
            ax.plot(its, np.nanmean(grid, axis=0), style, color=colours[k], lw=2, label=series_label(k))
    _reference(top, reference)
    top.set_ylabel("sequence error rate (held-out)")
    top.set_ylim(*error_ylim)
    bottom.set_ylabel("mean ponder ρ (held-out)")
    bottom.set_xlabel("training iteration")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    legend_right(top)
    top.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------
# Saving
# ---------------------------------------------------------------------------------------------


def save_figures(figures, data, prefix, directory=None):
    """Draw each figure of `figures` ({name: draw(data)}) and save it as <prefix>_<name>.png
    through act_experiments.figures.save_figure; returns the paths."""
    paths = []
    for name, draw in figures.items():
        fig = draw(data)
        paths.append(save_figure(fig, f"{prefix}_{name}", directory=directory))
        plt.close(fig)
    return paths


def print_written(paths):
    """'wrote <path>' for each path, relative to the repository when it lies inside."""
    for path in paths:
        print("wrote", path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
