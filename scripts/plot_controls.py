"""Figures and paired numbers of the fixed-computation controls: adaptivity or computation?

    python scripts/plot_controls.py                  # every task whose control is committed
    python scripts/plot_controls.py logic parity     # only these

For each task, reads the ACT sweep and its control (act_experiments.experiments.controls.CONTROLS) from
results/, prints the claim's paired numbers (ACT at τ* against the control at equal compute, seed
by seed) and the ladder of error against updates, and saves figures/control_<task>.png. Where a
task's measured control is committed (act_experiments.experiments.measured), also its registered
tests against the random schedule and the ladder at measured N, its shuffle probe, and
figures/control_<task>_measured.png.
"""

import sys

from act_experiments.experiments.controls import main

if __name__ == "__main__":
    sys.exit(main())
