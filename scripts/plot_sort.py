"""Figures of the sort experiment (Graves 2016, section 3.4) from a committed tau sweep.

    python scripts/plot_sort.py                        # the largest committed sort sweep
    python scripts/plot_sort.py --sweep sort_small     # results/sort_small/ explicitly
    python scripts/plot_sort.py --figures /tmp/figs    # somewhere other than figures/

The input is what scripts/sweep.py leaves in results/<sweep>/ (runs.csv, difficulty.csv,
curves.csv, sweep.json). Four PNGs come out, through act_experiments.figures.save_figure, so the same
CSV files always give the same bytes:

    sort_error_per_tau.png     held-out sequence error for each tau and for no ACT: bar = mean
                               over seeds, whisker = standard error of that mean, dot = one seed
    sort_error_vs_ponder.png   every run as a small point (mean ponder, error), the mean of each
                               tau as a large one: the paper's error/computation scatter
    sort_length.png            mean ponder and sequence error against the number of values to
                               sort (the task's difficulty)
    sort_learning_curves.png   held-out error and mean ponder during training

Which sweep: SWEEPS lists the folders to try, the full GPU sweep first and then the reduced CPU
sweeps, longest first; the first with a runs.csv is drawn. Notebook 08 imports this file for the
same numbers.

A note on the ponder numbers: the sweep records rho = N + R (eq. 10). A step that halts after
one update has N = 1 and R = 1, so rho = 2, which is what the no-ACT baseline shows. For ACT,
the number of updates N of a step lies between rho - 1 and rho.

Reading the sweep, grouping its runs by tau and the figure types every task shares live in
scripts/sweep_figures.py; this file adds the task's titles, reference lines and its own figure.
"""

import argparse
import math
import sys
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_figures as sf  # noqa: E402
from sweep_figures import NO_ACT, RESULTS, ROOT, keys, label, mean_se, taus  # noqa: E402,F401  (re-exported)

# Folders under results/ to draw, best first: the full sweep, then the reduced CPU fallbacks.
SWEEPS = ("sort", "sort_long", "sort_small")

NO_ACT_COLOR = "0.45"
CHANCE_COLOR = "crimson"

# What Graves (2016) reports for sort (LSTM 512, lengths 2..15, 1M iterations per thread).
PAPER = {"no_act_error": 0.12, "best_act_error": 0.06, "computation_ratio": 9}


# ---------------------------------------------------------------------------------------------
# Reading a sweep
# ---------------------------------------------------------------------------------------------


def find_sweep(results=RESULTS, names=SWEEPS):
    """Path of the first folder in `names` (under `results`) that holds a runs.csv."""
    return sf.find_sweep(names, results,
                         missing=f"no sort sweep found: none of {', '.join(names)} under {results} has "
                                 "a runs.csv; run scripts/sweep.py --task sort first")


def load(folder):
    """Read one sweep folder (sweep_figures.load); the rows of difficulty.csv are under "length"."""
    return sf.load(folder, difficulty_key="length")


def options(sweep):
    """The options every run of the sweep shared, with the paper's sort defaults filled in."""
    o = {"max_length": 15, "hidden": 512, "batch_size": 16, "lr": 1e-4}
    o.update(sweep["meta"].get("shared_options", {}))
    return o


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


values = sf.grouped     # {key: [field of each run with that key]}
table = sf.stats_table  # one dict per tau (and no ACT): label, runs, error mean/se/best, ponder mean/se


def chance_error(max_length):
    """Sequence error of a guesser that emits a random permutation of the K inputs.

    It is right with probability 1/K!, and K is uniform on 2..max_length.
    """
    Ks = np.arange(2, max_length + 1)
    return 1.0 - float(np.mean([1.0 / math.factorial(int(k)) for k in Ks]))


def best_tau(sweep):
    """The row of table() with the lowest mean error among the ACT taus."""
    return min((r for r in table(sweep) if r["key"] != NO_ACT), key=lambda r: r["error"])


def by_length(sweep, key, field):
    """(lengths, pooled value, lowest seed, highest seed) of `field` ("error" or "ponder").

    The pooled value weights each seed's number by how many held-out sequences it covers.
    """
    return sf.by_difficulty(sweep["length"], key, field)


# ---------------------------------------------------------------------------------------------
# Drawing
# ---------------------------------------------------------------------------------------------


def palette(sweep):
    """Colour per key: small tau light, large tau dark (log scale); the baseline grey."""
    return sf.tau_colours(sweep, "viridis", 0.9, 0.8, NO_ACT_COLOR)


def plot_error_per_tau(sweep):
    chance = chance_error(int(options(sweep)["max_length"]))
    return sf.plot_error_per_tau(
        sweep, palette(sweep), reference=(chance, f"random permutation ({chance:.2f})"), ylim=(0, 1.02),
        legend={"loc": "upper left", "frameon": False, "fontsize": 9},
        title="Sort: sequence error per τ (bar: mean, whisker: standard error, dot: one seed)\n"
              + describe(sweep))


def plot_error_vs_ponder(sweep):
    return sf.plot_error_vs_ponder(
        sweep, palette(sweep), point_size=24,
        xlabel="mean ponder ρ = N + R per step (held-out; one update gives ρ = 2)",
        title="Sort: error against ponder (small: one run, large: mean of a τ)\n" + describe(sweep))


def plot_length(sweep):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    sf.plot_difficulty_lines(sweep, sweep["length"], palette(sweep), top, bottom)
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
        sf.legend_right(ax)
    top.set_title("Sort: ponder and error against length (line: seeds pooled, band: lowest to highest "
                  "seed)\n" + describe(sweep), fontsize=9)
    fig.tight_layout()
    return fig


def plot_learning_curves(sweep):
    return sf.plot_learning_curves(
        sweep, palette(sweep), error_ylim=(-0.02, 1.02),
        title="Sort: learning curves (thick: mean over seeds, thin: one seed)\n" + describe(sweep))


FIGURES = {
    "error_per_tau": plot_error_per_tau,
    "error_vs_ponder": plot_error_vs_ponder,
    "length": plot_length,
    "learning_curves": plot_learning_curves,
}


def save_all(sweep, directory=None):
    """Draw the four figures and save them as sort_<name>.png; returns the paths."""
    return sf.save_figures(FIGURES, sweep, "sort", directory)


def print_table(sweep):
    print(describe(sweep))
    sf.print_stats_table(table(sweep))
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
    sf.print_written(save_all(sweep, args.figures))


if __name__ == "__main__":
    main()
