"""The sort sweep (Graves 2016, section 3.4): what scripts/plot_sort.py prints and draws, and the
numbers notebook 08 sets beside the paper's.

Four figures, sort_*.png:

    error_per_tau     held-out sequence error for each τ and for no ACT: bar = mean over seeds,
                      whisker = standard error of that mean, dot = one seed
    error_vs_ponder   every run as a small point (mean ponder, error), the mean of each τ as a
                      large one: the paper's error/computation scatter
    length            mean ponder and sequence error against the number of values to sort (the
                      task's difficulty)
    learning_curves   held-out error and mean ponder during training

Which sweep: SWEEPS lists the folders to try, the full GPU sweep first and then the reduced CPU
sweeps, longest first; the first with a runs.csv is drawn.

A note on the ponder numbers: the sweep records rho = N + R (eq. 10). A step that halts after
one update has N = 1 and R = 1, so rho = 2, which is what the no-ACT baseline shows. For ACT,
the number of updates N of a step lies between rho - 1 and rho.

``run(settings, out)`` trains a sort sweep into ``out`` (scripts/sweep.py's options as a dict),
``read(out)`` reads one, ``plot(data, figures)`` draws FIGURES and ``main`` is scripts/plot_sort.py.
"""

import math
import sys

import numpy as np

from act_experiments import tables
from act_experiments.plots import tau_sweep
from act_experiments.plots.style import tau_colours
from act_experiments.sweeps import reading
from act_experiments.sweeps.experiment import sweep_experiment
from act_experiments.sweeps.stats import print_table, table, taus


# Folders under results/ to draw, best first: the full sweep, then the reduced CPU fallbacks.
SWEEPS = ("sort", "sort_long", "sort_small")

BASELINE_COLOUR = "0.45"
CHANCE_COLOUR = "crimson"

# What Graves (2016) reports for sort (LSTM 512, lengths 2..15, 1M iterations per thread).
PAPER = {"no_act_error": 0.12, "best_act_error": 0.06, "computation_ratio": 9}


def find_sweep(results_dir=tables.RESULTS, names=SWEEPS):
    """The folder of the first of `names` (under `results_dir`) that holds a runs.csv."""
    return reading.find_sweep(names, results_dir,
                              missing=f"no sort sweep found: none of {', '.join(names)} under {results_dir} "
                                      "has a runs.csv; run scripts/sweep.py --task sort first")


def options(sweep):
    """The options every run of the sweep shared, with the defaults filled in (reading.shared_options)."""
    return reading.shared_options("sort", sweep["meta"])


def describe(sweep):
    """One line saying how big the runs were, for titles and tables."""
    o = options(sweep)
    its = int(max(r["iterations"] for r in sweep["runs"]))
    seeds = sweep["meta"].get("seeds", len({r["seed"] for r in sweep["runs"]}))
    return (f"lengths 2..{o['max_length']}, LSTM H={o['hidden']}, batch {o['batch_size']}, lr {o['lr']:g}, "
            f"{its} iterations, {seeds} seeds [results/{sweep['name']}]")


def chance_error(max_length):
    """Sequence error of a guesser that emits a random permutation of the n inputs.

    It is right with probability 1/n!, and the length n is uniform on 2..max_length.
    """
    lengths = np.arange(2, max_length + 1)
    return 1.0 - float(np.mean([1.0 / math.factorial(int(n)) for n in lengths]))


def best_tau(sweep):
    """The row of stats.table with the lowest mean error among the ACT taus."""
    return min((r for r in table(sweep) if r["key"] != reading.NO_ACT), key=lambda r: r["error"])


def print_summary(sweep):
    """The sweep's size, its error and ponder per τ, and the random-permutation error."""
    print(describe(sweep))
    print_table(table(sweep))
    print(f"random-permutation error at this size: {chance_error(int(options(sweep)['max_length'])):.3f}")


def colours(sweep):
    """Colour per key: small τ light, large τ dark (log scale); the baseline grey."""
    return tau_colours(taus(sweep), "viridis", 0.9, -0.8, BASELINE_COLOUR)


def plot_error_per_tau(sweep):
    chance = chance_error(int(options(sweep)["max_length"]))
    return tau_sweep.plot_error_per_tau(
        sweep, colours(sweep), reference=(chance, f"random permutation ({chance:.2f})"), ylim=(0, 1.02),
        legend={"loc": "upper left", "frameon": False, "fontsize": 9},
        title="Sort: sequence error per τ (bar: mean, whisker: standard error, dot: one seed)\n"
              + describe(sweep))


def plot_error_vs_ponder(sweep):
    return tau_sweep.plot_error_vs_ponder(
        sweep, colours(sweep), point_size=24,
        xlabel="mean ponder ρ = N + R per step (held-out; one update gives ρ = 2)",
        title="Sort: error against ponder (small: one run, large: mean of a τ)\n" + describe(sweep))


def plot_length(sweep):
    lengths = np.arange(2, int(options(sweep)["max_length"]) + 1)

    def chance(ax):
        ax.plot(lengths, [1 - 1 / math.factorial(int(n)) for n in lengths], ":", color=CHANCE_COLOUR, lw=1,
                label="random permutation")

    return tau_sweep.plot_difficulty(
        sweep, colours(sweep), xlabel="sequence length n (numbers to sort)", xticks=lengths,
        ponder_label="mean ponder ρ per step", error_label="sequence error rate", error_ylim=(-0.02, 1.02),
        reference=chance, title="Sort: ponder and error against length (line: seeds pooled; top, band: lowest "
                                "to highest seed)\n" + describe(sweep))


def plot_learning_curves(sweep):
    return tau_sweep.plot_learning_curves(
        sweep, colours(sweep), error_ylim=(-0.02, 1.02),
        title="Sort: learning curves (thick: mean over seeds, thin: one seed)\n" + describe(sweep))


FIGURES = {
    "error_per_tau": plot_error_per_tau,
    "error_vs_ponder": plot_error_vs_ponder,
    "length": plot_length,
    "learning_curves": plot_learning_curves,
}


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/plot_sort.py"
DESCRIPTION = 'Figures of the sort experiment (Graves 2016, section 3.4) from a committed tau sweep.'

# run(settings, out) trains a sort sweep into out/, read(out=None) reads one (default: the first of
# SWEEPS that exists), plot(data, figures=None, prefix=None) draws FIGURES as <prefix or sort>_*.png,
# main(argv=None) is scripts/plot_sort.py (act_experiments.sweeps.experiment.sweep_experiment)
run, read, plot, main = sweep_experiment(lambda out: reading.load_task_sweep("sort", out), FIGURES,
                                         prefix="sort", default=find_sweep, summary=print_summary,
                                         script=SCRIPT, description=DESCRIPTION)


if __name__ == "__main__":
    sys.exit(main())
