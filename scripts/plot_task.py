"""Figures of the logic and addition experiments (Graves 2016, sections 3.2 and 3.3) from a tau sweep.

    python scripts/plot_task.py logic                 # the largest committed logic sweep
    python scripts/plot_task.py addition              # the same for addition
    python scripts/plot_task.py logic --sweep logic_small --figures /tmp/figs
    python scripts/plot_task.py addition --sweep addition_3digit --prefix addition_3digit

Reads what scripts/sweep.py wrote into results/<sweep>/ (runs.csv, difficulty.csv, curves.csv,
sweep.json), prints the error and ponder per tau and saves four figures, <task>_*.png, through
act_experiments.figures.save_figure, so the same CSV files always give the same bytes. What each
figure shows, and which sweep is the default: act_experiments.experiments.logic_addition.
"""

import sys

import matplotlib

from act_experiments.sweeps import stats
from act_experiments.sweeps import reading
from act_experiments.figures import print_written, save_figures
from act_experiments.plots import logic_addition
from act_experiments.training.cli import OneLineParser


def main(argv=None):
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(description=__doc__.splitlines()[0])     # errors in one line
    ap.add_argument("task", choices=sorted(logic_addition.SWEEPS), help="logic or addition")
    ap.add_argument("--sweep", help="results/<sweep>/ to draw (default: the first of SWEEPS[task] present)")
    ap.add_argument("--figures", help="output folder (default figures/)")
    ap.add_argument("--prefix", help="figure file names <prefix>_*.png (default: the task's name)")
    args = ap.parse_args(argv)
    try:
        sweep = reading.load_sweep(args.sweep or logic_addition.find_sweep(args.task))
    except (OSError, KeyError, ValueError) as err:
        sys.exit(f"plot_task.py: {err}")
    if reading.task_of(sweep) != args.task:
        sys.exit(f"plot_task.py: results/{sweep['name']} holds a {reading.task_of(sweep)} sweep, not {args.task}")
    print(logic_addition.describe(sweep))
    stats.print_table(stats.table(sweep))
    print_written(save_figures(logic_addition.FIGURES, sweep, args.prefix or args.task, args.figures))


if __name__ == "__main__":
    main()
