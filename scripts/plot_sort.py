"""Figures of the sort experiment (Graves 2016, section 3.4) from a committed tau sweep.

    python scripts/plot_sort.py                        # the largest committed sort sweep
    python scripts/plot_sort.py --sweep sort_small     # results/sort_small/ explicitly
    python scripts/plot_sort.py --figures /tmp/figs    # somewhere other than figures/

The input is what scripts/sweep.py leaves in results/<sweep>/ (runs.csv, difficulty.csv,
curves.csv, sweep.json). Four PNGs come out, through act_numpy.figures.save_figure, so the same
CSV files always give the same bytes:

    sort_error_per_tau.png     held-out sequence error for each tau and for no ACT: bar = mean
                               over seeds, whisker = standard error of that mean, dot = one seed
    sort_error_vs_ponder.png   every run as a small point (mean ponder, error), the mean of each
                               tau as a large one: the paper's error/computation scatter
    sort_length.png            mean ponder and sequence error against the number of values to
                               sort (the task's difficulty)
    sort_learning_curves.png   held-out error and mean ponder during training

Which sweep: SWEEPS lists the folders to try, the full GPU sweep first and the reduced CPU sweep
second; the first with a runs.csv is drawn. Notebook 08 imports this file for the same numbers.

A note on the ponder numbers: the sweep records rho = N + R (eq. 10). A step that halts after
one update has N = 1 and R = 1, so rho = 2, which is what the no-ACT baseline shows. For ACT,
the number of updates N of a step lies between rho - 1 and rho.
"""

import argparse
import csv
import json
import math
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from act_numpy.figures import save_figure

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"

# Folders under results/ to draw, best first: the full sweep, then the reduced CPU fallback.
SWEEPS = ("sort", "sort_small")

NO_ACT = "no ACT"
NO_ACT_COLOR = "0.45"
CHANCE_COLOR = "crimson"

# What Graves (2016) reports for sort (LSTM 512, lengths 2..15, 1M iterations per thread).
PAPER = {"no_act_error": 0.12, "best_act_error": 0.06, "computation_ratio": 9}


# ---------------------------------------------------------------------------------------------
# Reading a sweep
# ---------------------------------------------------------------------------------------------


def find_sweep(results=RESULTS, names=SWEEPS):
    """Path of the first folder in `names` (under `results`) that holds a runs.csv."""
    for name in names:
        folder = Path(results) / name
        if (folder / "runs.csv").exists():
            return folder
    raise FileNotFoundError(f"no sort sweep found: none of {', '.join(names)} under {results} has "
                            "a runs.csv; run scripts/sweep.py --task sort first")


def _csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _num(text):
    return None if text in ("", None) else float(text)


def load(folder):
    """Read one sweep folder into plain Python data.

    Returns a dict with "name" (the folder's name), "meta" (sweep.json, {} if absent), and the
    lists "runs", "length" and "curves". Every row carries "key": the run's tau as a float, or
    NO_ACT for the baseline, and "seed"; the other fields are the CSV's numbers as floats.
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
            "length": tag(_csv_rows(folder / "difficulty.csv")),
            "curves": tag(_csv_rows(folder / "curves.csv"))}


def options(sweep):
    """The options every run of the sweep shared, with the paper's sort defaults filled in."""
    o = {"max_length": 15, "hidden": 512, "batch_size": 16, "lr": 1e-4}
    o.update(sweep["meta"].get("shared_options", {}))
    return o


def taus(sweep):
    """The tau values of the sweep, ascending."""
    return sorted({r["key"] for r in sweep["runs"] if r["key"] != NO_ACT})


def keys(sweep):
    """The taus, ascending, then NO_ACT when the sweep has baseline runs."""
    baseline = any(r["key"] == NO_ACT for r in sweep["runs"])
    return taus(sweep) + ([NO_ACT] if baseline else [])


def describe(sweep):
    """One line saying how big the runs were, for titles and tables."""
    o = options(sweep)
    its = int(max(r["iterations"] for r in sweep["runs"]))
    seeds = sweep["meta"].get("seeds", len({r["seed"] for r in sweep["runs"]}))
    return (f"lengths 2..{o['max_length']}, LSTM H={o['hidden']}, batch {o['batch_size']}, lr {o['lr']:g}, "
            f"{its} iterations, {seeds} seeds [results/{sweep['name']}]")


# ---------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------


def mean_se(values):
    """(mean, standard error of the mean); the standard error of one value is 0."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2:
        return float(v.mean()), 0.0
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(v.size))


def values(sweep, field):
    """{key: [field of each run with that key]} for every tau and the baseline."""
    return {k: [r[field] for r in sweep["runs"] if r["key"] == k] for k in keys(sweep)}


def chance_error(max_length):
    """Sequence error of a guesser that emits a random permutation of the K inputs.

    It is right with probability 1/K!, and K is uniform on 2..max_length.
    """
    Ks = np.arange(2, max_length + 1)
    return 1.0 - float(np.mean([1.0 / math.factorial(int(k)) for k in Ks]))


def table(sweep):
    """One dict per tau (and no ACT): label, runs, error mean/se/best, ponder mean/se."""
    err, pon = values(sweep, "sequence_error"), values(sweep, "mean_ponder")
    rows = []
    for k in keys(sweep):
        e, e_se = mean_se(err[k])
        p, p_se = mean_se(pon[k])
        rows.append({"key": k, "label": label(k), "runs": len(err[k]), "error": e, "error_se": e_se,
                     "best_error": min(err[k]), "ponder": p, "ponder_se": p_se})
    return rows


def best_tau(sweep):
    """The row of table() with the lowest mean error among the ACT taus."""
    return min((r for r in table(sweep) if r["key"] != NO_ACT), key=lambda r: r["error"])


def by_length(sweep, key, field):
    """(lengths, pooled value, lowest seed, highest seed) of `field` ("error" or "ponder").

    The pooled value weights each seed's number by how many held-out sequences it covers.
    """
    rows = [r for r in sweep["length"] if r["key"] == key and r[field] is not None]
    Ks = sorted({int(r["difficulty"]) for r in rows})
    pooled, low, high = [], [], []
    for K in Ks:
        at = [r for r in rows if int(r["difficulty"]) == K]
        w = np.array([r["count"] for r in at], dtype=np.float64)
        v = np.array([r[field] for r in at], dtype=np.float64)
        pooled.append(float((w * v).sum() / w.sum()))
        low.append(float(v.min()))
        high.append(float(v.max()))
    return np.array(Ks), np.array(pooled), np.array(low), np.array(high)


# ---------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------


def label(key):
    """NO_ACT as it is; a tau as a short power of ten: 0.001 -> '1e-3', 0.0003 -> '3e-4'."""
    if key == NO_ACT:
        return NO_ACT
    mantissa, exponent = f"{key:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def palette(sweep):
    """Colour per key: small tau light, large tau dark (log scale); the baseline grey."""
    ts = taus(sweep)
    cmap = plt.get_cmap("viridis")
    logs = np.log10(ts)
    span = float(logs.max() - logs.min()) if len(ts) > 1 else 1.0
    colours = {t: cmap(0.9 - 0.8 * (lt - logs.min()) / span) for t, lt in zip(ts, logs)}
    colours[NO_ACT] = NO_ACT_COLOR
    return colours


def _legend_right(ax):
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)


def plot_error_per_tau(sweep):
    err, col, ks = values(sweep, "sequence_error"), palette(sweep), keys(sweep)
    chance = chance_error(int(options(sweep)["max_length"]))
    fig, ax = plt.subplots(figsize=(8, 4.3))
    for i, k in enumerate(ks):
        m, se = mean_se(err[k])
        ax.bar(i, m, width=0.65, color=col[k], alpha=0.85, yerr=se, capsize=4, ecolor="black")
        jitter = np.linspace(-0.15, 0.15, len(err[k])) if len(err[k]) > 1 else np.zeros(1)
        ax.scatter(i + jitter, err[k], s=16, color="black", linewidths=0, zorder=3)
    ax.axhline(chance, color=CHANCE_COLOR, ls="--", lw=1, label=f"random permutation ({chance:.2f})")
    ax.set_xticks(range(len(ks)), [label(k) for k in ks])
    ax.set_xlabel("time penalty τ")
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(0, 1.02)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", frameon=False, fontsize=9)
    ax.set_title("Sort: sequence error per τ (bar: mean, whisker: standard error, dot: one seed)\n"
                 + describe(sweep), fontsize=9)
    fig.tight_layout()
    return fig


def plot_error_vs_ponder(sweep):
    col = palette(sweep)
    fig, ax = plt.subplots(figsize=(7.8, 4.8))
    for k in keys(sweep):
        runs = [r for r in sweep["runs"] if r["key"] == k]
        x = np.array([r["mean_ponder"] for r in runs])
        y = np.array([r["sequence_error"] for r in runs])
        marker = "X" if k == NO_ACT else "o"
        ax.scatter(x, y, s=24, marker=marker, color=col[k], alpha=0.6, linewidths=0, zorder=2)
        ax.scatter(x.mean(), y.mean(), s=170, marker=marker, color=col[k], edgecolors="black", zorder=3,
                   label=NO_ACT if k == NO_ACT else f"τ = {label(k)}")
    ax.set_xlabel("mean ponder ρ = N + R per step (held-out; one update gives ρ = 2)")
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(bottom=-0.02)
    ax.grid(alpha=0.3)
    _legend_right(ax)
    ax.set_title("Sort: error against ponder (small: one run, large: mean of a τ)\n" + describe(sweep),
                 fontsize=9)
    fig.tight_layout()
    return fig


def plot_length(sweep):
    col = palette(sweep)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    for k in keys(sweep):
        name = NO_ACT if k == NO_ACT else f"τ = {label(k)}"
        style = "--" if k == NO_ACT else "-"
        for ax, field in ((top, "ponder"), (bottom, "error")):
            Ks, m, lo, hi = by_length(sweep, k, field)
            if Ks.size:
                ax.plot(Ks, m, style, marker="o", ms=4, color=col[k], label=name)
                ax.fill_between(Ks, lo, hi, color=col[k], alpha=0.12, linewidth=0)
    Ks = np.arange(2, int(options(sweep)["max_length"]) + 1)
    bottom.plot(Ks, [1 - 1 / math.factorial(int(k)) for k in Ks], ":", color=CHANCE_COLOR, lw=1,
                label="random permutation")
    top.set_ylabel("mean ponder ρ per step")
    bottom.set_ylabel("sequence error rate")
    bottom.set_xlabel("sequence length K (numbers to sort)")
    bottom.set_xticks(Ks)
    bottom.set_ylim(-0.02, 1.02)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        _legend_right(ax)
    top.set_title("Sort: ponder and error against length (line: seeds pooled, band: lowest to highest "
                  "seed)\n" + describe(sweep), fontsize=9)
    fig.tight_layout()
    return fig


def plot_learning_curves(sweep):
    col = palette(sweep)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    for k in keys(sweep):
        rows = [r for r in sweep["curves"] if r["key"] == k]
        seeds = sorted({r["seed"] for r in rows})
        its = sorted({int(r["iteration"]) for r in rows})
        style = "--" if k == NO_ACT else "-"
        for ax, field in ((top, "sequence_error"), (bottom, "mean_ponder")):
            grid = np.full((len(seeds), len(its)), np.nan)
            for r in rows:
                grid[seeds.index(r["seed"]), its.index(int(r["iteration"]))] = r[field]
            for line in grid:
                ax.plot(its, line, style, color=col[k], lw=0.7, alpha=0.35)
            ax.plot(its, np.nanmean(grid, axis=0), style, color=col[k], lw=2,
                    label=NO_ACT if k == NO_ACT else f"τ = {label(k)}")
    top.set_ylabel("sequence error rate (held-out)")
    top.set_ylim(-0.02, 1.02)
    bottom.set_ylabel("mean ponder ρ (held-out)")
    bottom.set_xlabel("training iteration")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    _legend_right(top)
    top.set_title("Sort: learning curves (thick: mean over seeds, thin: one seed)\n" + describe(sweep),
                  fontsize=9)
    fig.tight_layout()
    return fig


FIGURES = {
    "error_per_tau": plot_error_per_tau,
    "error_vs_ponder": plot_error_vs_ponder,
    "length": plot_length,
    "learning_curves": plot_learning_curves,
}


def save_all(sweep, directory=None):
    """Draw the four figures and save them as sort_<name>.png; returns the paths."""
    paths = []
    for name, draw in FIGURES.items():
        fig = draw(sweep)
        paths.append(save_figure(fig, f"sort_{name}", directory=directory))
        plt.close(fig)
    return paths


def print_table(sweep):
    print(describe(sweep))
    print(f"{'tau':>7} {'runs':>4} {'error':>7} {'s.e.':>6} {'best':>6} {'ponder':>7} {'s.e.':>5}")
    for r in table(sweep):
        print(f"{r['label']:>7} {r['runs']:4d} {r['error']:7.3f} {r['error_se']:6.3f} {r['best_error']:6.3f} "
              f"{r['ponder']:7.2f} {r['ponder_se']:5.2f}")
    print(f"random-permutation error at this size: {chance_error(int(options(sweep)['max_length'])):.3f}")


def main(argv=None):
    matplotlib.use("Agg")      # files only; set here, not at import, so a notebook keeps its inline backend
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", help="results/<sweep>/ to draw (default: the first of SWEEPS that exists)")
    ap.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    sweep = load(RESULTS / args.sweep if args.sweep else find_sweep())
    task = sweep["meta"].get("task", "sort")
    if task != "sort":
        ap.error(f"results/{sweep['name']} holds a {task} sweep, not sort")
    print_table(sweep)
    for path in save_all(sweep, args.figures):
        print("wrote", path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
