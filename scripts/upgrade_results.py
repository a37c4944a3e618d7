"""Rewrite sweeps' runs.csv written before the files took the code's names, once, when merging them.

    python scripts/upgrade_results.py results/skewed_parity16 [results/<sweep> ...]

A runs.csv from before called the largest N(t) max_ponder; the rewrite names it max_N, every cell
as it was (act_experiments.sweeps.writing.upgrade_runs_csv). The run folders under runs/ need no
rewrite: their logs and summaries are read through training.checkpoints.upgrade_record, so such a
sweep resumes as it is.
"""

import sys

from act_experiments.sweeps.writing import upgrade_main

if __name__ == "__main__":
    sys.exit(upgrade_main())
