"""Figures of the sort experiment (Graves 2016, section 3.4) from a committed tau sweep.

    python scripts/plot_sort.py                        # the largest committed sort sweep
    python scripts/plot_sort.py --sweep sort_small     # results/sort_small/ explicitly
    python scripts/plot_sort.py --figures /tmp/figs    # somewhere other than figures/
    python scripts/plot_sort.py --sweep sort_len8 --prefix sort_len8    # figures/sort_len8_*.png

The input is what scripts/sweep.py leaves in results/<sweep>/ (runs.csv, difficulty.csv,
curves.csv, sweep.json). It prints the error and ponder per tau and saves four PNGs,
sort_*.png (or <prefix>_*.png), through act_experiments.figures.save_figure, so the same CSV
files always give the same bytes. What each figure shows, and which sweep is the default:
act_experiments.experiments.sort.
"""

import sys

import matplotlib

from act_experiments.sweeps import reading
from act_experiments.figures import print_written, save_figures
from act_experiments.plots import sort
from act_experiments.training.cli import OneLineParser


def main(argv=None):
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(description=__doc__.splitlines()[0])     # errors in one line
    ap.add_argument("--sweep", help="results/<sweep>/ to draw (default: the first of SWEEPS that exists)")
    ap.add_argument("--figures", help="output folder (default figures/)")
    ap.add_argument("--prefix", help="figure file names <prefix>_*.png (default: sort)")
    args = ap.parse_args(argv)
    try:
        sweep = reading.load_sweep(args.sweep or sort.find_sweep())
    except (OSError, KeyError, ValueError) as err:
        sys.exit(f"plot_sort.py: {err}")
    task = sweep["meta"].get("task", "sort")
    if task != "sort":
        sys.exit(f"plot_sort.py: results/{sweep['name']} holds a {task} sweep, not sort")
    sort.print_summary(sweep)
    print_written(save_figures(sort.FIGURES, sweep, args.prefix or "sort", args.figures))


if __name__ == "__main__":
    main()
