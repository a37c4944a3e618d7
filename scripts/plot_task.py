"""Figures of the logic and addition experiments (Graves 2016, sections 3.2 and 3.3) from a tau sweep.

    python scripts/plot_task.py logic                 # the largest committed logic sweep
    python scripts/plot_task.py addition              # the same for addition
    python scripts/plot_task.py logic_small --figures /tmp/figs
    python scripts/plot_task.py addition_3digit --prefix addition_3digit

Reads what scripts/sweep.py wrote into results/<sweep>/ (runs.csv, difficulty.csv, curves.csv,
sweep.json), prints the error and ponder per tau and saves four figures, <task>_*.png, through
act_experiments.figures.save_figure, so the same CSV files always give the same bytes. What each
figure shows, and which sweep is the default: act_experiments.experiments.logic_addition.
"""

import sys

from act_experiments.experiments.logic_addition import main

if __name__ == "__main__":
    sys.exit(main())
