"""Figures of the sort experiment (Graves 2016, section 3.4) from a committed tau sweep.

    python scripts/plot_sort.py                        # the largest committed sort sweep
    python scripts/plot_sort.py sort_small             # results/sort_small/ explicitly
    python scripts/plot_sort.py --figures /tmp/figs    # somewhere other than figures/
    python scripts/plot_sort.py sort_len8 --prefix sort_len8    # figures/sort_len8_*.png

The input is what scripts/sweep.py leaves in results/<sweep>/ (runs.csv, difficulty.csv,
curves.csv, sweep.json). It prints the error and ponder per tau and saves four PNGs,
sort_*.png (or <prefix>_*.png), through act_experiments.figures.save_figure, so the same CSV
files always give the same bytes. What each figure shows, and which sweep is the default:
act_experiments.experiments.sort.
"""

import sys

from act_experiments.experiments.sort import main

if __name__ == "__main__":
    sys.exit(main())
