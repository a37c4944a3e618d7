"""Figures of the logic and addition experiments (Graves 2016, sections 3.2 and 3.3) from a tau sweep.

    python scripts/plot_task.py logic                 # the largest committed logic sweep
    python scripts/plot_task.py addition              # the same for addition
    python scripts/plot_task.py logic --sweep logic_small --figures /tmp/figs
    python scripts/plot_task.py addition --sweep addition_3digit --prefix addition_3digit

Reads what scripts/sweep.py wrote into results/<sweep>/ (runs.csv, difficulty.csv, curves.csv,
sweep.json) and saves four figures through act_experiments.figures.save_figure, so the PNGs have no
timestamp and the same CSV files always give the same bytes:

    <task>_error_per_tau.png     final held-out sequence error per tau: the mean over seeds as a
                                 bar, the standard error as a whisker, every seed as a dot, and
                                 the no-ACT baseline as the last bar
    <task>_error_vs_ponder.png   one point per run (final mean ponder, final error) and the
                                 mean of each tau as a large marker
    <task>_difficulty.png        mean ponder and step error against the difficulty of an input
                                 step: logic, the number of gates in the vector; addition, the
                                 number of digits of the number
    <task>_learning_curves.png   held-out sequence error and mean ponder during training

Which sweep is drawn: SWEEPS below lists, per task, the folders to try in order. The first
that holds a runs.csv wins, so the full sweep (results/logic/, results/addition/) is shown
once it is committed and the reduced CPU sweep (results/<task>_small/) until then.

Reading the sweep, grouping its runs by tau and the figure types every task shares live in
scripts/sweep_figures.py; this file adds the task's titles, reference lines and its own figure.
"""

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_figures as sf  # noqa: E402
from sweep_figures import (  # noqa: E402,F401  (re-exported: this module's names before the refactor)
    RESULTS, ROOT, keys, label, load, mean_se, grouped, taus)

# The sweeps to show, best first: the full-size sweep, then the reduced CPU sweeps, longest first.
SWEEPS = {
    "logic": ("logic", "logic_long", "logic_small"),
    "addition": ("addition", "addition_long", "addition_small"),
}

# What the x axis of the difficulty figure counts, per task (act_experiments.tasks.difficulty).
DIFFICULTY_LABEL = {
    "logic": "number of gates in the input vector",
    "addition": "number of digits of the input number",
}
TASK_TITLE = {"logic": "Logic", "addition": "Addition"}
BASELINE = sf.NO_ACT
BASELINE_COLOR = "0.4"


# ---------------------------------------------------------------------------------------------
# Reading a sweep
# ---------------------------------------------------------------------------------------------


def find_sweep(task, results=RESULTS):
    """The folder of the sweep to show for `task`: the first name in SWEEPS[task] with a runs.csv."""
    return sf.find_sweep(SWEEPS[task], results,
                         missing=f"none of results/{{{','.join(SWEEPS[task])}}}/runs.csv exists: "
                                 f"run scripts/sweep.py --task {task} first")


def task_of(sweep):
    return sweep["meta"].get("task") or sweep["name"].split("_")[0]


def describe(sweep):
    """One line with the size of the runs, for figure titles."""
    meta, task = sweep["meta"], task_of(sweep)
    o = meta.get("shared_options", {})
    if task == "logic":
        size = f"≤{o.get('max_vectors', 10)} vectors of ≤{o.get('max_gates', 10)} gates"
    else:
        size = f"≤{o.get('max_numbers', 5)} numbers of ≤{o.get('max_digits', 5)} digits"
    default_h, default_b = {"logic": (128, 16), "addition": (512, 32)}[task]
    iterations = int(max(r["iterations"] for r in sweep["runs"]))
    return (f"{size}, LSTM H={o.get('hidden', default_h)}, batch {o.get('batch_size', default_b)}, "
            f"lr {o.get('lr', 1e-4):g}, {iterations} iterations, {meta.get('seeds', '?')} seeds "
            f"[results/{sweep['name']}]")


# ---------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------


def table(sweep):
    """Per tau and the baseline: (label, runs, error mean, error s.e., best error, ponder mean, ponder s.e.)."""
    return [(r["label"], r["runs"], r["error"], r["error_se"], r["best_error"], r["ponder"], r["ponder_se"])
            for r in sf.stats_table(sweep)]


def reference_error(sweep):
    """(value, label) of the sequence error a network with no skill gets.

    Logic: guessing each bit, a sequence of L vectors (L uniform on 1..max_vectors) is right
    with probability 2^-L. Addition: guessing a six-digit sum is as good as always wrong, but a
    sequence of one number has no target and can never be wrong, so the ceiling is 1 - 1/max_numbers.
    """
    o = sweep["meta"].get("shared_options", {})
    if task_of(sweep) == "logic":
        V = o.get("max_vectors", 10)
        value = 1.0 - float(np.mean(0.5 ** np.arange(1, V + 1)))
        return value, f"chance ({value:.2f})"
    value = 1.0 - 1.0 / o.get("max_numbers", 5)
    return value, f"every sum wrong ({value:.2f})"


def by_difficulty(sweep, key, field):
    """(difficulties, pooled mean, lowest seed, highest seed) of `field` for the runs of `key`.

    The pooled mean weights every seed's value by the number of held-out steps it stands for.
    """
    return sf.by_difficulty(sweep["difficulty"], key, field)


def colors(sweep):
    """A colour per key: tau from light (small) to dark (large) on a log scale; grey for no ACT."""
    return sf.tau_colours(sweep, "plasma", 0.78, 0.68, BASELINE_COLOR)


# ---------------------------------------------------------------------------------------------
# The four figures
# ---------------------------------------------------------------------------------------------


def plot_error_per_tau(sweep):
    return sf.plot_error_per_tau(
        sweep, colors(sweep), reference=reference_error(sweep),
        title=f"{TASK_TITLE[task_of(sweep)]}: sequence error per τ (bar: mean, whisker: standard error, "
              f"dot: one seed)\n{describe(sweep)}")


def plot_error_vs_ponder(sweep):
    return sf.plot_error_vs_ponder(
        sweep, colors(sweep), reference=reference_error(sweep),
        title=f"{TASK_TITLE[task_of(sweep)]}: error vs ponder (small: one run, large: mean per τ)\n"
              f"{describe(sweep)}")


def plot_difficulty(sweep):
    task = task_of(sweep)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    sf.plot_difficulty_lines(sweep, sweep["difficulty"], colors(sweep), top, bottom)
    top.set_ylabel("mean ponder ρ")
    bottom.set_ylabel("error rate per input step")
    if task == "logic":
        bottom.axhline(0.5, color="crimson", ls="--", lw=1, label="chance (0.5)")
    bottom.set_xlabel(f"difficulty: {DIFFICULTY_LABEL[task]}")
    bottom.set_ylim(bottom=-0.02)
    bottom.set_xticks(sorted({int(r["difficulty"]) for r in sweep["difficulty"]}))
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        sf.legend_right(ax)
    top.set_title(f"{TASK_TITLE[task]}: ponder and error vs difficulty (line: seeds pooled, "
                  f"band: lowest to highest seed)\n{describe(sweep)}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_learning_curves(sweep):
    return sf.plot_learning_curves(
        sweep, colors(sweep), reference=reference_error(sweep),
        title=f"{TASK_TITLE[task_of(sweep)]}: learning curves (thick: mean over seeds, thin: one seed)\n"
              f"{describe(sweep)}")


FIGURES = {
    "error_per_tau": plot_error_per_tau,
    "error_vs_ponder": plot_error_vs_ponder,
    "difficulty": plot_difficulty,
    "learning_curves": plot_learning_curves,
}


def save_all(sweep, directory=None, prefix=None):
    """Draw the four figures of the sweep's task and save them as <prefix>_<figure>.png
    (prefix: the task's name unless given)."""
    return sf.save_figures(FIGURES, sweep, prefix or task_of(sweep), directory)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("task", choices=sorted(SWEEPS), help="logic or addition")
    ap.add_argument("--sweep", help="results/<sweep>/ to draw (default: the first of SWEEPS[task] present)")
    ap.add_argument("--figures", help="output folder (default figures/)")
    ap.add_argument("--prefix", help="figure file names <prefix>_*.png (default: the task's name)")
    args = ap.parse_args(argv)
    folder = RESULTS / args.sweep if args.sweep else find_sweep(args.task)
    sweep = load(folder)
    if task_of(sweep) != args.task:
        ap.error(f"{folder} holds a {task_of(sweep)} sweep, not {args.task}")
    print(describe(sweep))
    sf.print_stats_table(sf.stats_table(sweep))
    sf.print_written(save_all(sweep, args.figures, args.prefix))


if __name__ == "__main__":
    main()
