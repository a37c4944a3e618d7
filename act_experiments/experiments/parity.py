"""The parity sweep (Graves 2016, section 3.1): what scripts/plot_parity.py prints and draws, and
the numbers notebook 05 sets beside the paper's.

Four figures, <prefix>_*.png (prefix "parity" by default):

    error_per_tau     sequence error per τ: mean over seeds as bars, standard error as whiskers,
                      each seed as a dot, the no-ACT bar beside
    error_vs_ponder   every run as a point (final mean ponder, final error), the mean of each τ
                      marked
    difficulty        ponder and error against the number of non-zero bits, for a few τ values
                      and no ACT
    learning_curves   held-out error and ponder during training

The sweep shown by default is the largest parity sweep under results/ (``largest_sweep``).
The difficulty figure is act_experiments.plots.tau_sweep's, with the chance line and only a few
τ; the others are drawn here, older than tau_sweep and differing from its figures in details
(sizes, the chance line, a log ponder axis) that the committed PNGs keep.

``run`` trains a parity sweep (scripts/sweep.py --task parity), ``read`` reads one, ``plot`` draws
FIGURES and ``main`` is scripts/plot_parity.py.
"""

import json
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np

from act_experiments import tables
from act_experiments.figures import draw_main, save_figures
from act_experiments.plots import tau_sweep
from act_experiments.plots.style import line_style, series_label, tau_colours
from act_experiments.sweeps import launch, reading
from act_experiments.sweeps.reading import NO_ACT, tau_label
from act_experiments.sweeps.stats import (baseline_errors, by_difficulty, difficulty_bins, keys, mean_se, per_group,
                                          table, taus)


BASELINE_COLOUR = "0.35"
CHANCE = 0.5

# The paper's parity results (section 3.1), as docs/parity.md quotes them.
PAPER = {"no_act_error": 0.40, "act_tau_max": 0.03, "act_error_below": 0.05}


# ---------------------------------------------------------------------------------------------
# Which sweep, and its size
# ---------------------------------------------------------------------------------------------


def sweep_size(folder):
    """(bits, runs x iterations) of a sweep folder, for choosing the largest; None if unreadable."""
    try:
        meta = json.loads((Path(folder) / "sweep.json").read_text())
        o = reading.shared_options("parity", meta)
        return o["bits"], meta["runs"] * o["iterations"]
    except (OSError, KeyError, ValueError):
        return None


def largest_sweep(results_dir=tables.RESULTS):
    """Name of the parity sweep under `results_dir` with the most bits (then the most training)."""
    found = []
    for folder in sorted(Path(results_dir).glob("parity*")):
        size = sweep_size(folder) if (folder / "runs.csv").exists() else None
        if size is not None:
            found.append((size, folder.name))
    if not found:
        raise FileNotFoundError(f"no parity sweep in {results_dir}: run scripts/sweep.py first")
    return max(found)[1]


def describe(sweep):
    """One line naming the sweep's size, used in every figure's title."""
    meta = sweep["meta"]
    o = reading.shared_options("parity", meta)
    iterations = int(max(r["iterations"] for r in sweep["runs"]))
    return (f"{o['bits']}-bit parity, tanh RNN H={o['hidden']}, batch {o['batch_size']}, lr {o['lr']:g}, "
            f"{iterations} iterations, {meta.get('seeds', '?')} seeds x {len(taus(sweep))} tau + no ACT")


# ---------------------------------------------------------------------------------------------
# The sweep beside the paper
# ---------------------------------------------------------------------------------------------


def summary_table(sweep):
    """Rows of (tau, runs, mean error, s.e., runs below 5% error, mean ponder, s.e.) per τ and no ACT."""
    return [(NO_ACT if r["key"] == NO_ACT else f"{r['key']:g}", r["seeds"], r["error"], r["error_se"],
             sum(v < 0.05 for v in r["errors"]), r["ponder"], r["ponder_se"]) for r in table(sweep)]


def print_summary(sweep):
    """The sweep's name and size, summary_table() and paper_comparison(), as the script prints them."""
    print(f"{sweep['name']}: {describe(sweep)}")
    print(f"{'tau':>8} {'runs':>4} {'error':>7} {'s.e.':>6} {'<5%':>4} {'ponder':>7} {'s.e.':>6}")
    for label, n, e, se, good, p, pse in summary_table(sweep):
        print(f"{label:>8} {n:4d} {e:7.3f} {se:6.3f} {good:4d} {p:7.2f} {pse:6.2f}")
    print()
    for c in paper_comparison(sweep):
        print(f"{c['claim']}: paper {c['paper']}; here {c['here']} -> {'agrees' if c['agrees'] else 'differs'}")


def ponder_fit(sweep, key):
    """Least-squares line through the mean ponder per difficulty of the runs of `key` (the curve
    of the difficulty figure: seeds pooled, weighted by count): (slope per bit, intercept, R^2)."""
    d = np.array(sorted({r["difficulty"] for r in sweep["difficulty"] if r["key"] == key}))
    edges = np.append(d - 0.5, d[-1] + 0.5)
    x, v, _, _ = by_difficulty(sweep["difficulty"], key, "ponder", edges)
    slope, intercept = np.polyfit(x, v, 1)
    total = ((v - v.mean()) ** 2).sum()
    r2 = 1.0 - ((v - (slope * x + intercept)) ** 2).sum() / total if total > 0 else 0.0
    return float(slope), float(intercept), float(r2)


def run_rises(sweep, key, span):
    """For each run of `key`: does a line through its own ponder per difficulty rise by at
    least half an update over `span` bits? A list of booleans, one per run (seed order)."""
    out = []
    for run in sorted({r["run"] for r in sweep["difficulty"] if r["key"] == key}):
        rows = [r for r in sweep["difficulty"] if r["run"] == run]
        slope = np.polyfit([r["difficulty"] for r in rows], [r["ponder"] for r in rows], 1)[0]
        out.append(bool(slope * span >= 0.5))
    return out


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
    base = baseline_errors(sweep)
    if base:
        m, se = mean_se(base)
        out.append({"claim": "no ACT: sequence error", "paper": "about 0.40 (chance 0.5)",
                    "here": f"{m:.3f} ± {se:.3f} ({len(base)} runs)", "agrees": 0.3 <= m <= 0.5})
    low = [r["sequence_error"] for r in sweep["runs"] if r["act"] and r["tau"] <= PAPER["act_tau_max"] + 1e-12]
    if low:
        m, se = mean_se(low)
        good = sum(v < PAPER["act_error_below"] for v in low)
        out.append({"claim": "ACT, tau <= 0.03: mean sequence error", "paper": "below 0.05",
                    "here": f"{m:.3f} ± {se:.3f} ({good} of {len(low)} runs below 0.05)",
                    "agrees": m < PAPER["act_error_below"]})
    if base and low:
        gap = mean_se(base)[0] - mean_se(low)[0]
        out.append({"claim": "ACT (tau <= 0.03) vs no ACT", "paper": "far lower error with ACT",
                    "here": f"no ACT minus ACT: {gap:+.3f}", "agrees": gap > 0.1})
    ts = taus(sweep)
    middle = ts[1:-1] if len(ts) >= 3 else ts
    if middle:
        parts, agrees = [], False
        for t in middle:
            slope, _, r2 = ponder_fit(sweep, t)
            d = [r["difficulty"] for r in sweep["difficulty"] if r["key"] == t]
            span = max(d) - min(d)
            rising = run_rises(sweep, t, span)
            parts.append(f"tau {tau_label(t)}: seed mean {slope * span:+.2f} from the fewest to the most bits "
                         f"(R² {r2:.2f}), {sum(rising)} of {len(rising)} runs rise by 0.5 or more on their own")
            agrees |= slope * span >= 0.5 and r2 >= 0.8 and 2 * sum(rising) >= len(rising)
        out.append({"claim": "ponder vs bits at intermediate tau", "paper": "grows about linearly",
                    "here": "; ".join(parts), "agrees": agrees})
    return out


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def colours(sweep):
    """A colour per key: τ from light (small) to dark (large) along log τ; grey for no ACT."""
    return tau_colours(taus(sweep), "viridis", 0.9, -0.85, BASELINE_COLOUR)


def pick_taus(ts, wanted=4):
    """Up to `wanted` of the τ values `ts`, spread evenly over the sweep's range on a log scale."""
    if len(ts) <= wanted:
        return list(ts)
    idx = np.unique(np.rint(np.linspace(0, len(ts) - 1, wanted)).astype(int))
    return [ts[i] for i in idx]


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


def plot_error_per_tau(sweep):
    """(a) Bars of the mean sequence error per tau with standard-error whiskers and the seeds as dots."""
    stats = per_group(sweep, "sequence_error")
    colour = colours(sweep)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, (key, (mean, se, values)) in enumerate(stats.items()):
        ax.bar(i, mean, width=0.7, color=colour[key], alpha=0.85, yerr=se, capsize=4,
               error_kw={"elinewidth": 1.2, "ecolor": "black"})
        offsets = np.linspace(-0.18, 0.18, len(values)) if len(values) > 1 else [0.0]
        ax.scatter(i + np.asarray(offsets), values, s=14, color="black", zorder=3, linewidths=0)
    ax.axhline(CHANCE, color="crimson", lw=1, ls="--", label="chance (0.5)")
    ax.set_xticks(range(len(stats)))
    ax.set_xticklabels([tau_label(k) for k in stats])
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
    colour = colours(sweep)
    err, ponder = per_group(sweep, "sequence_error"), per_group(sweep, "mean_ponder")
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for key in err:
        runs = [r for r in sweep["runs"] if r["key"] == key]
        x = [r["mean_ponder"] for r in runs]
        y = [r["sequence_error"] for r in runs]
        if key == NO_ACT:
            ax.scatter(x, y, marker="x", s=30, color=colour[key], zorder=2)
            ax.scatter(ponder[key][0], err[key][0], marker="X", s=160, color=colour[key],
                       edgecolors="black", zorder=4, label=f"{NO_ACT} (ρ = N + R = 1 + 1)")
        else:
            ax.scatter(x, y, s=22, color=colour[key], alpha=0.75, linewidths=0, zorder=2)
            ax.scatter(ponder[key][0], err[key][0], marker="o", s=150, color=colour[key],
                       edgecolors="black", zorder=4, label=series_label(key))
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
    """(c) Ponder (top) and error (bottom) against the number of non-zero bits, seeds pooled
    (ponder: the range over seeds shaded), for a few tau values and no ACT."""
    edges = difficulty_bins([r["difficulty"] for r in sweep["difficulty"]], max_bins=16)

    def chance(ax):
        ax.axhline(CHANCE, color="crimson", lw=1, ls="--", label="chance (0.5)")

    return tau_sweep.plot_difficulty(
        sweep, colours(sweep), f"Parity: ponder and error vs difficulty (top, shaded: range over seeds)\n"
        f"{describe(sweep)}", "difficulty: number of non-zero input bits", None,
        "mean ponder ρ per input step\n(no ACT: 2 by definition)", "sequence error rate (held-out)",
        error_ylim="fit", reference=chance, shown=pick_taus(taus(sweep), wanted) + [NO_ACT], edges=edges)


def plot_learning_curves(sweep):
    """(d) Held-out error (top) and mean ponder (bottom) during training: per-tau means over
    seeds as thick lines, single seeds as thin ones."""
    colour = colours(sweep)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 7), sharex=True)
    for key in keys(sweep):
        rows = [r for r in sweep["curves"] if r["key"] == key]
        if not rows:
            continue
        seeds = sorted({r["seed"] for r in rows})
        its = sorted({r["iteration"] for r in rows})
        for ax, field in ((top, "sequence_error"), (bottom, "mean_ponder")):
            grid = np.full((len(seeds), len(its)), np.nan)
            for r in rows:
                grid[seeds.index(r["seed"]), its.index(r["iteration"])] = r[field]
            for line in grid:
                ax.plot(its, line, line_style(key), color=colour[key], lw=0.6, alpha=0.35)
            ax.plot(its, np.nanmean(grid, axis=0), line_style(key), color=colour[key], lw=2,
                    label=series_label(key))
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


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/plot_parity.py"
DESCRIPTION = "Draw the paper's parity figures (Graves 2016, section 3.1) from a saved tau sweep."


def run(argv):
    """Train a τ sweep of parity: ``argv`` as scripts/sweep.py takes it, less --task (act_experiments.sweeps.launch)."""
    return launch.main(["--task", "parity", *argv])


def read(sweep=None):
    """The sweep results/<sweep>/ (a name or a folder; default: the largest parity sweep), as
    reading.load_sweep gives it. ValueError when it holds another task, FileNotFoundError when none."""
    return reading.load_task_sweep("parity", sweep or largest_sweep())


def plot(sweep, figures=None, prefix="parity"):
    """Draw FIGURES of a sweep from ``read`` as <figures or figures/>/<prefix>_*.png; returns the paths."""
    return save_figures(FIGURES, sweep, prefix, figures)


def main(argv=None):
    """scripts/plot_parity.py: read a sweep, print its summary, draw its figures."""
    def arguments(ap):
        ap.add_argument("sweep", nargs="?", default=None,
                        help="results/<name>/ to plot, or a folder (default: the largest parity sweep in results/)")
        ap.add_argument("--prefix", default="parity", help="figure file names <prefix>_*.png (default parity)")

    return draw_main(argv, script=SCRIPT, description=DESCRIPTION, arguments=arguments,
                     read=lambda args: read(args.sweep), summary=print_summary,
                     plot=lambda sweep, args: plot(sweep, args.figures, args.prefix))


if __name__ == "__main__":
    sys.exit(main())
