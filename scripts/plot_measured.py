"""Figures and registered tests of the measured controls: ACT against a random schedule of its own updates.

    python scripts/plot_measured.py                  # every task whose measured control is committed
    python scripts/plot_measured.py parity           # only this one

For each task (act_experiments.experiments.measured.MEASURED), reads the ACT sweep (ACT at τ* and
the fixed ladder, with measured N) and its random-schedule sweep from results/, prints the tests
fixed before the runs (ACT against the random schedule, and against the ladder read at its
measured mean N, paired by seed) and the shuffle probe, and saves
figures/control_<task>_measured.png.
"""

import sys

from act_experiments.experiments.measured import main

if __name__ == "__main__":
    sys.exit(main())
