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

from act_experiments.experiments.parity import main

if __name__ == "__main__":
    sys.exit(main())
