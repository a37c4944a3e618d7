"""What unfinished sweeps have learned so far, read from their runs' logs, as files to commit.

    python scripts/sweep_progress.py parity_paper_lr3e-4 parity_paper_lr1e-3 parity_paper_lr3e-3 \
        --out results/parity_paper_calibration [--window 1000]

Turns the logs of sweeps stopped before their end into progress.csv and progress.json under
--out; what each holds: act_experiments.sweeps.progress.
"""

import sys

from act_experiments.sweeps.progress import main

if __name__ == "__main__":
    sys.exit(main())
