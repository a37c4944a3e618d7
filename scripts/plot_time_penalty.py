"""What the time penalty tau does, across every committed sweep (Graves 2016, eq. 12 and section 3).

    python scripts/plot_time_penalty.py                  # every results/<sweep>/ with a runs.csv
    python scripts/plot_time_penalty.py --figures /tmp   # somewhere other than figures/

Each sweep written by scripts/sweep.py (parity*, logic*, addition*, sort*, whichever exist) adds
one line to each of three figures, time_penalty_*.png, saved through
act_experiments.figures.save_figure; act_experiments.experiments.time_penalty says what they show.
Sweeps that are missing, empty (still running) or unreadable are skipped with a message, so the
script works with whatever results exist.
"""

from pathlib import Path

import matplotlib

from act_experiments import tables
from act_experiments.sweeps import reading
from act_experiments.figures import print_written, save_figures
from act_experiments.plots import time_penalty
from act_experiments.training.cli import OneLineParser


def main(argv=None):
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(description=__doc__.splitlines()[0])     # errors in one line
    ap.add_argument("--results", default=str(tables.RESULTS), help="folder holding the sweeps (default results/)")
    ap.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    if not Path(args.results).is_dir():
        # a mistyped folder must not redraw the committed figures as "no sweeps"
        ap.exit(1, f"plot_time_penalty.py: error: --results {args.results} is not a folder\n")
    sweeps = reading.find_sweeps(args.results)
    if sweeps:
        time_penalty.print_summary(sweeps)
    else:
        print("no committed sweeps found: the figures say so")
    print_written(save_figures(time_penalty.FIGURES, sweeps, "time_penalty", args.figures))


if __name__ == "__main__":
    main()
