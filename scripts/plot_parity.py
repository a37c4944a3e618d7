"""Draw the paper's parity figures (Graves 2016, section 3.1) from a saved tau sweep.

    python scripts/plot_parity.py                  # the largest committed parity sweep
    python scripts/plot_parity.py parity16         # results/parity16/
    python scripts/plot_parity.py parity8 --figures /tmp/figs --prefix pilot

Reads the files scripts/sweep.py writes into results/<name>/ (runs.csv, difficulty.csv,
curves.csv, sweep.json), prints the error and ponder per tau beside the paper's claims, and
saves four figures, <prefix>_*.png, with act_experiments.figures.save_figure. The prefix
defaults to "parity", so the figures land in figures/parity_*.png. Nothing here is random and
the PNGs carry no timestamp: the same results give the same bytes. What each figure shows:
act_experiments.experiments.parity.
"""

import sys

import matplotlib

from act_experiments.sweeps import reading
from act_experiments.figures import save_figures
from act_experiments.plots import parity
from act_experiments.training.cli import OneLineParser


def main(argv=None):
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(description=__doc__.splitlines()[0])     # errors in one line
    ap.add_argument("sweep", nargs="?", default=None,
                    help="results/<name>/ to plot, or a folder (default: the largest parity sweep in results/)")
    ap.add_argument("--prefix", default="parity", help="figure file names <prefix>_*.png (default parity)")
    ap.add_argument("--figures", default=None, help="output folder (default figures/)")
    args = ap.parse_args(argv)
    try:
        sweep = reading.load_sweep(args.sweep or parity.largest_sweep())
    except (OSError, KeyError, ValueError) as err:
        sys.exit(f"plot_parity.py: {err}")
    if reading.task_of(sweep) != "parity":
        sys.exit(f"plot_parity.py: results/{sweep['name']} holds a {reading.task_of(sweep)} sweep, not parity")
    parity.print_summary(sweep)
    for path in save_figures(parity.FIGURES, sweep, args.prefix, args.figures):
        print("wrote", path)


if __name__ == "__main__":
    main()
