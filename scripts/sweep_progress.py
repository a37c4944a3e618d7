"""What unfinished sweeps have learned so far, read from their runs' logs, as files to commit.

    python scripts/sweep_progress.py parity_paper_lr3e-4 parity_paper_lr1e-3 parity_paper_lr3e-3 \
        --out results/parity_paper_calibration [--window 1000]

A sweep writes results/<name>/ only when every run has finished (scripts/sweep.py). A sweep
stopped long before that, such as a first stretch of a long GPU sweep, still has each run's
log in runs/sweeps/<name>/<run>/log.jsonl. This script turns those logs into

    <out>/progress.csv   per sweep, run and window of --window iterations: the mean training
                         sequence error and ponder of the batches logged in it (kind "train"),
                         and the held-out evaluations (kind "eval") at their own iteration
    <out>/progress.json  per sweep: the learning rate, the iterations asked for and reached

and prints, per sweep and τ, the latest window's mean training error. Nothing is trained.
"""

import sys

from act_experiments.sweeps.progress import main

if __name__ == "__main__":
    sys.exit(main())
