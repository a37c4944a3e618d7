"""Draw the paper's parity figures (Graves 2016, section 3.1) from a saved tau sweep.

    python scripts/plot_parity.py                  # the largest committed parity sweep
    python scripts/plot_parity.py parity16         # results/parity16/
    python scripts/plot_parity.py parity_pilot --figures /tmp/figs --prefix pilot

Reads the files scripts/sweep.py writes into results/<name>/ (runs.csv, difficulty.csv,
curves.csv, sweep.json) and saves four figures with act_experiments.figures.save_figure:

    <prefix>_error_per_tau.png     sequence error per tau: mean over seeds as bars, standard
                                   error as whiskers, each seed as a dot, the no-ACT bar beside
    <prefix>_error_vs_ponder.png   every run as a point (final mean ponder, final error), the
                                   mean of each tau marked
    <prefix>_difficulty.png        ponder and error against the number of non-zero bits, for
                                   a few tau values and no ACT
    <prefix>_learning_curves.png   held-out error and ponder during training

The prefix defaults to "parity", so the figures land in figures/parity_*.png. Nothing here is
random and the PNGs carry no timestamp: the same results give the same bytes.
"""

import argparse
import csv
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as ticker  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_figures as sf  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
NO_ACT = "no ACT"
NO_ACT_COLOR = "0.35"
CHANCE = 0.5


# ---------------------------------------------------------------------------------------------
# Reading a sweep
# ---------------------------------------------------------------------------------------------


def _read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _number(text):
    return None if text in ("", None) else float(text)


def load_sweep(name_or_path):
    """The sweep in results/<name>/ (or a folder path) as a dict of plain Python lists.

    Returns {"name", "meta" (sweep.json), "runs", "difficulty", "curves"}; every run row has
    "tau" (None for no ACT), "act" (bool), "seed" (int) and its numbers as floats; difficulty
    and curve rows carry the "tau" and "act" of their run.
    """
    folder = Path(name_or_path)
    if not folder.is_dir():
        folder = RESULTS / str(name_or_path)
    if not (folder / "runs.csv").exists():
        raise FileNotFoundError(f"no sweep results in {folder} (expected runs.csv from scripts/sweep.py)")
    meta = json.loads((folder / "sweep.json").read_text()) if (folder / "sweep.json").exists() else {}
    runs = []
    for r in _read_csv(folder / "runs.csv"):
        runs.append({"run": r["run"], "tau": _number(r["tau"]), "act": r["act"] == "1", "seed": int(r["seed"]),
                     **{k: float(r[k]) for k in ("sequence_error", "mean_ponder", "max_ponder", "loss",
                                                  "iterations", "train_time_s")}})
    by_run = {r["run"]: r for r in runs}

    def tagged(rows, numeric):
        out = []
        for r in rows:
            run = by_run[r["run"]]
            out.append({"run": r["run"], "tau": run["tau"], "act": run["act"], "seed": run["seed"],
                        **{k: _number(r[k]) for k in numeric}})
        return out

    difficulty = tagged(_read_csv(folder / "difficulty.csv"), ("difficulty", "count", "error", "ponder"))
    curves = tagged(_read_csv(folder / "curves.csv"), ("iteration", "sequence_error", "mean_ponder"))
    return {"name": folder.name, "meta": meta, "runs": runs, "difficulty": difficulty, "curves": curves}


def sweep_size(folder):
    """(bits, runs x iterations) of a sweep folder, for choosing the largest; None if unreadable."""
    try:
        meta = json.loads((folder / "sweep.json").read_text())
        bits = meta["shared_options"].get("bits", 64)
        iterations = meta["shared_options"].get("iterations", 10_000)
        return bits, meta["runs"] * iterations
    except (OSError, KeyError, ValueError):
        return None


def largest_sweep(results=RESULTS):
    """Name of the parity sweep in results/ with the most bits (then the most training)."""
    found = []
    for folder in sorted(Path(results).glob("parity*")):
        size = sweep_size(folder) if (folder / "runs.csv").exists() else None
        if size is not None:
            found.append((size, folder.name))
    if not found:
        raise FileNotFoundError(f"no parity sweep in {results}: run scripts/sweep.py first")
    return max(found)[1]


def describe(sweep):
    """One line naming the sweep's size, used in every figure's title."""
    meta = sweep["meta"]
    opts = meta.get("shared_options", {})
    taus = sorted({r["tau"] for r in sweep["runs"] if r["act"]})
    iterations = int(max(r["iterations"] for r in sweep["runs"]))
    return (f"{opts.get('bits', '?')}-bit parity, tanh RNN H={opts.get('hidden', '?')}, "
            f"batch {opts.get('batch_size', 128)}, lr {opts.get('lr', '?'):g}, {iterations} iterations, "
            f"{meta.get('seeds', '?')} seeds x {len(taus)} tau + no ACT")


# ---------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------


def taus_of(sweep):
    """The sweep's tau values, ascending."""
    return sorted({r["tau"] for r in sweep["runs"] if r["act"]})


def group_of(row):
    """The key a run belongs to: its tau, or NO_ACT."""
    return row["tau"] if row["act"] else NO_ACT


mean_and_se = sf.mean_se  # mean and standard error of the mean (0 for a single value)


def per_group(sweep, field):
    """{tau or NO_ACT: (mean, standard error, values)} of a runs.csv column."""
    out = {}
    for key in taus_of(sweep) + [NO_ACT]:
        values = [r[field] for r in sweep["runs"] if group_of(r) == key]
        if values:
            out[key] = (*mean_and_se(values), values)
    return out


def tau_colors(taus):
    """A colour per tau, from light (small tau) to dark (large tau) along log(tau)."""
    cmap = plt.get_cmap("viridis")
    if len(taus) == 1:
        return {taus[0]: cmap(0.4)}
    logs = np.log10(taus)
    span = logs.max() - logs.min()
    return {t: cmap(0.9 - 0.85 * (lt - logs.min()) / span) for t, lt in zip(taus, logs)}


def pick_taus(taus, wanted=4):
    """Up to `wanted` tau values spread evenly over the sweep's range on a log scale."""
    if len(taus) <= wanted:
        return list(taus)
    idx = np.unique(np.rint(np.linspace(0, len(taus) - 1, wanted)).astype(int))
    return [taus[i] for i in idx]


def difficulty_bins(values, max_bins=16):
    """Bin edges over difficulty values: one bin per value, or max_bins equal-width bins."""
    lo, hi = int(min(values)), int(max(values))
    if hi - lo + 1 <= max_bins:
        return np.arange(lo, hi + 2) - 0.5
    return np.linspace(lo - 0.5, hi + 0.5, max_bins + 1)


def by_difficulty(sweep, key, field, edges):
    """Per difficulty bin: bin centres, the count-weighted mean of `field` over the runs of `key`
    (all seeds pooled), and the spread between seeds (min and max of the per-seed means)."""
    rows = [r for r in sweep["difficulty"] if group_of(r) == key and r[field] is not None]
    seeds = sorted({r["seed"] for r in rows})
    centres, means, lows, highs = [], [], [], []
    for a, b in zip(edges[:-1], edges[1:]):
        inside = [r for r in rows if a < r["difficulty"] < b]
        if not inside:
            continue
        w = np.array([r["count"] for r in inside])
        v = np.array([r[field] for r in inside])
        per_seed = []
        for s in seeds:
            sel = [r for r in inside if r["seed"] == s]
            if sel:
                ws = np.array([r["count"] for r in sel])
                per_seed.append(float((ws * np.array([r[field] for r in sel])).sum() / ws.sum()))
        centres.append(float((w * np.array([r["difficulty"] for r in inside])).sum() / w.sum()))
        means.append(float((w * v).sum() / w.sum()))
        lows.append(min(per_seed))
        highs.append(max(per_seed))
    return np.array(centres), np.array(means), np.array(lows), np.array(highs)


def summary_table(sweep):
    """Rows of (label, runs, mean error, s.e., runs below 5% error, mean ponder, s.e.) per tau and no ACT."""
    err, ponder = per_group(sweep, "sequence_error"), per_group(sweep, "mean_ponder")
    rows = []
    for key in err:
        label = NO_ACT if key == NO_ACT else f"{key:g}"
        values = err[key][2]
        rows.append((label, len(values), err[key][0], err[key][1], sum(v < 0.05 for v in values),
                     ponder[key][0], ponder[key][1]))
    return rows


def ponder_fit(sweep, key):
    """Least-squares line through the mean ponder per difficulty of the runs of `key` (the curve
    of the difficulty figure: seeds pooled, weighted by count): (slope per bit, intercept, R^2)."""
    d = np.array(sorted({r["difficulty"] for r in sweep["difficulty"] if group_of(r) == key}))
    edges = np.append(d - 0.5, d[-1] + 0.5)
    x, v, _, _ = by_difficulty(sweep, key, "ponder", edges)
    slope, intercept = np.polyfit(x, v, 1)
    total = ((v - v.mean()) ** 2).sum()
    r2 = 1.0 - ((v - (slope * x + intercept)) ** 2).sum() / total if total > 0 else 0.0
    return float(slope), float(intercept), float(r2)


def run_rises(sweep, key, span):
    """For each run of `key`: does a line through its own ponder per difficulty rise by at
    least half an update over `span` bits? A list of booleans, one per run (seed order)."""
    out = []
    for run in sorted({r["run"] for r in sweep["difficulty"] if group_of(r) == key}):
        rows = [r for r in sweep["difficulty"] if r["run"] == run]
        slope = np.polyfit([r["difficulty"] for r in rows], [r["ponder"] for r in rows], 1)[0]
        out.append(bool(slope * span >= 0.5))
    return out


# The paper's parity results (section 3.1), as listed in the course's reference notes.
PAPER = {"no_act_error": 0.40, "act_tau_max": 0.03, "act_error_below": 0.05}


def paper_comparison(sweep):
    """The paper's parity claims beside this sweep's numbers.

    Returns a list of dicts {"claim", "paper", "here", "agrees"}, one per claim:
    - no-ACT error near 0.40 (taken as 0.3..0.5);
    - mean error of the ACT runs with tau <= 0.03 below 0.05;
    - those ACT runs clearly below the baseline (mean error lower by more than 0.1);
    - ponder rising about linearly with the number of bits at an intermediate tau: every tau
      but the smallest and the largest is checked, and the claim holds if, for one of them,
      the seed-averaged curve rises by at least half an update over the range of bits with
      R^2 >= 0.8 and at least half of its runs rise that much on their own (a mean carried by
      one seed does not count).
    """
    out = []
    base = [r["sequence_error"] for r in sweep["runs"] if not r["act"]]
    if base:
        m, se = mean_and_se(base)
        out.append({"claim": "no ACT: sequence error", "paper": "about 0.40 (chance 0.5)",
                    "here": f"{m:.3f} ± {se:.3f} ({len(base)} runs)", "agrees": 0.3 <= m <= 0.5})
    low = [r["sequence_error"] for r in sweep["runs"] if r["act"] and r["tau"] <= PAPER["act_tau_max"] + 1e-12]
    if low:
        m, se = mean_and_se(low)
        good = sum(v < PAPER["act_error_below"] for v in low)
        out.append({"claim": "ACT, tau <= 0.03: mean sequence error", "paper": "below 0.05",
                    "here": f"{m:.3f} ± {se:.3f} ({good} of {len(low)} runs below 0.05)",
                    "agrees": m < PAPER["act_error_below"]})
    if base and low:
        gap = mean_and_se(base)[0] - mean_and_se(low)[0]
        out.append({"claim": "ACT (tau <= 0.03) vs no ACT", "paper": "far lower error with ACT",
                    "here": f"no ACT minus ACT: {gap:+.3f}", "agrees": gap > 0.1})
    taus = taus_of(sweep)
    middle = taus[1:-1] if len(taus) >= 3 else taus
    if middle:
        parts, agrees = [], False
        for t in middle:
            slope, _, r2 = ponder_fit(sweep, t)
            d = [r["difficulty"] for r in sweep["difficulty"] if group_of(r) == t]
            span = max(d) - min(d)
            rising = run_rises(sweep, t, span)
            parts.append(f"tau {_tau_label(t)}: seed mean {slope * span:+.2f} from the fewest to the most bits "
                         f"(R² {r2:.2f}), {sum(rising)} of {len(rising)} runs rise by 0.5 or more on their own")
            agrees |= slope * span >= 0.5 and r2 >= 0.8 and 2 * sum(rising) >= len(rising)
        out.append({"claim": "ponder vs bits at intermediate tau", "paper": "grows about linearly",
                    "here": "; ".join(parts), "agrees": agrees})
    return out


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def _ponder_axis(ax, which, values, name):
    """Put ponder on axis `which` ("x" or "y") of ax: a log scale with plain tick labels
    (1, 2, 5, 10, ...) when the values span more than a factor of 4, else linear. Returns the label."""
    values = [v for v in values if v is not None and v > 0]
    if not values or max(values) / min(values) <= 4:
        return name
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())
    return f"{name} (log scale)"


def _tau_label(t):
    mantissa, exponent = f"{t:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}" if mantissa != "1" else f"1e{int(exponent)}"


def plot_error_per_tau(sweep):
    """(a) Bars of the mean sequence error per tau with standard-error whiskers and the seeds as dots."""
    stats = per_group(sweep, "sequence_error")
    keys = list(stats)
    colors = tau_colors(taus_of(sweep))
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, key in enumerate(keys):
        mean, se, values = stats[key]
        color = NO_ACT_COLOR if key == NO_ACT else colors[key]
        ax.bar(i, mean, width=0.7, color=color, alpha=0.85, yerr=se, capsize=4,
               error_kw={"elinewidth": 1.2, "ecolor": "black"})
        offsets = np.linspace(-0.18, 0.18, len(values)) if len(values) > 1 else [0.0]
        ax.scatter(i + np.asarray(offsets), values, s=14, color="black", zorder=3, linewidths=0)
    ax.axhline(CHANCE, color="crimson", lw=1, ls="--", label="chance (0.5)")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([NO_ACT if k == NO_ACT else _tau_label(k) for k in keys])
    ax.set_xlabel("time penalty τ")
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(0, max(0.6, max(max(s[2]) for s in stats.values()) + 0.05))
    ax.set_title(f"Parity: final error per τ (bars: mean, whiskers: standard error, dots: seeds)\n"
                 f"{describe(sweep)}", fontsize=10)
    ax.legend(loc="upper left", frameon=False)
    ax.grid(axis="y", alpha=0.3)
    return fig


def plot_error_vs_ponder(sweep):
    """(b) Every run's final error against its final mean ponder; per-tau means as large markers."""
    taus = taus_of(sweep)
    colors = tau_colors(taus)
    err, ponder = per_group(sweep, "sequence_error"), per_group(sweep, "mean_ponder")
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for key in err:
        runs = [r for r in sweep["runs"] if group_of(r) == key]
        x = [r["mean_ponder"] for r in runs]
        y = [r["sequence_error"] for r in runs]
        if key == NO_ACT:
            ax.scatter(x, y, marker="x", s=30, color=NO_ACT_COLOR, zorder=2)
            ax.scatter(ponder[key][0], err[key][0], marker="X", s=160, color=NO_ACT_COLOR,
                       edgecolors="black", zorder=4, label=f"{NO_ACT} (ρ = N + R = 1 + 1)")
        else:
            ax.scatter(x, y, s=22, color=colors[key], alpha=0.75, linewidths=0, zorder=2)
            ax.scatter(ponder[key][0], err[key][0], marker="o", s=150, color=colors[key],
                       edgecolors="black", zorder=4, label=f"τ = {_tau_label(key)}")
    ax.axhline(CHANCE, color="crimson", lw=1, ls="--")
    ax.set_xlabel(_ponder_axis(ax, "x", [r["mean_ponder"] for r in sweep["runs"]],
                               "mean ponder ρ per input, held-out"))
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(-0.02, 0.6)
    ax.set_title(f"Parity: error vs ponder (small dots: runs, large markers: means per τ)\n{describe(sweep)}",
                 fontsize=10)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)
    ax.grid(alpha=0.3, which="both")
    return fig


def plot_difficulty(sweep, wanted=4):
    """(c) Ponder (top) and error (bottom) against the number of non-zero bits, seeds pooled,
    with the range between seeds shaded, for a few tau values and no ACT."""
    taus = taus_of(sweep)
    colors = tau_colors(taus)
    shown = pick_taus(taus, wanted) + [NO_ACT]
    edges = difficulty_bins([r["difficulty"] for r in sweep["difficulty"]])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 7), sharex=True)
    highest_error = 0.0
    for key in shown:
        color = NO_ACT_COLOR if key == NO_ACT else colors[key]
        label = NO_ACT if key == NO_ACT else f"τ = {_tau_label(key)}"
        style = "--" if key == NO_ACT else "-"
        for ax, field in ((top, "ponder"), (bottom, "error")):
            x, m, lo, hi = by_difficulty(sweep, key, field, edges)
            ax.plot(x, m, style, marker="o", ms=3, color=color, label=label)
            ax.fill_between(x, lo, hi, color=color, alpha=0.15, linewidth=0)
            if field == "error":
                highest_error = max(highest_error, max(hi))
    top.set_ylabel("mean ponder ρ (no ACT: 2 by definition)")
    top.set_title(f"Parity: ponder and error vs difficulty (shaded: range over seeds)\n{describe(sweep)}",
                  fontsize=10)
    top.legend(frameon=False, fontsize=9, ncol=3, loc="upper left")
    bottom.axhline(CHANCE, color="crimson", lw=1, ls="--", label="chance (0.5)")
    bottom.set_ylabel("sequence error rate")
    bottom.set_xlabel("difficulty: number of non-zero input bits")
    # room for every curve: a baseline can be far worse than chance on some difficulties
    bottom.set_ylim(-0.02, min(1.02, max(0.7, highest_error + 0.05)))
    bottom.legend(handles=bottom.get_lines()[-1:], frameon=False, fontsize=9, loc="upper right")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def plot_learning_curves(sweep):
    """(d) Held-out error (top) and mean ponder (bottom) during training: per-tau means over
    seeds as thick lines, single seeds as thin ones."""
    taus = taus_of(sweep)
    colors = tau_colors(taus)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 7), sharex=True)
    for key in taus + [NO_ACT]:
        color = NO_ACT_COLOR if key == NO_ACT else colors[key]
        label = NO_ACT if key == NO_ACT else f"τ = {_tau_label(key)}"
        style = "--" if key == NO_ACT else "-"
        rows = [r for r in sweep["curves"] if group_of(r) == key]
        if not rows:
            continue
        seeds = sorted({r["seed"] for r in rows})
        its = sorted({r["iteration"] for r in rows})
        for ax, field in ((top, "sequence_error"), (bottom, "mean_ponder")):
            table = np.full((len(seeds), len(its)), np.nan)
            for r in rows:
                table[seeds.index(r["seed"]), its.index(r["iteration"])] = r[field]
            for line in table:
                ax.plot(its, line, style, color=color, lw=0.6, alpha=0.35)
            ax.plot(its, np.nanmean(table, axis=0), style, color=color, lw=2, label=label)
    top.axhline(CHANCE, color="crimson", lw=1, ls=":")
    top.set_ylabel("sequence error rate (held-out)")
    top.set_ylim(-0.02, 0.6)
    top.set_title(f"Parity: learning curves (thick: mean over seeds, thin: each seed)\n{describe(sweep)}",
                  fontsize=10)
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9)
    bottom.set_ylabel(_ponder_axis(bottom, "y", [r["mean_ponder"] for r in sweep["curves"]],
                                   "mean ponder ρ, held-out"))
    bottom.set_xlabel("training iteration")
    for ax in (top, bottom):
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


FIGURES = {
    "error_per_tau": plot_error_per_tau,
    "error_vs_ponder": plot_error_vs_ponder,
    "difficulty": plot_difficulty,
    "learning_curves": plot_learning_curves,
}


def plot_all(sweep, prefix="parity", directory=None):
    """Draw and save the four figures; returns their paths."""
    return sf.save_figures(FIGURES, sweep, prefix, directory)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep", nargs="?", default=None,
                    help="results/<name>/ to plot, or a folder (default: the largest parity sweep in results/)")
    ap.add_argument("--prefix", default="parity", help="figure file names <prefix>_*.png (default parity)")
    ap.add_argument("--figures", default=None, help="output folder (default figures/)")
    args = ap.parse_args(argv)
    sweep = load_sweep(args.sweep or largest_sweep())
    print(f"{sweep['name']}: {describe(sweep)}")
    print(f"{'tau':>8} {'runs':>4} {'error':>7} {'s.e.':>6} {'<5%':>4} {'ponder':>7} {'s.e.':>6}")
    for label, n, e, se, good, p, pse in summary_table(sweep):
        print(f"{label:>8} {n:4d} {e:7.3f} {se:6.3f} {good:4d} {p:7.2f} {pse:6.2f}")
    print()
    for c in paper_comparison(sweep):
        print(f"{c['claim']}: paper {c['paper']}; here {c['here']} -> {'agrees' if c['agrees'] else 'differs'}")
    for path in plot_all(sweep, args.prefix, args.figures):
        print("wrote", path)


if __name__ == "__main__":
    main()
