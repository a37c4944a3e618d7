"""Figure and registered claims of skewed parity: when adapting should pay.

    python scripts/plot_skewed.py                    # results/skewed_parity16 and skewed_parity16_random
    python scripts/plot_skewed.py ACT RANDOM         # two other sweeps (names under results/ or folders)

Reads the sweep of ACT at four τ, no ACT and the fixed ladder, and the sweep of each ACT
network's random schedule, prints the three claims docs/parity.md fixed before the runs (ACT
against the ladder read at its measured N and against its random schedule, paired by seed with
Holm's correction over the τ; N rising with the number of non-zero bits), every seed shown, and
saves figures/skewed_parity.png.
"""

import sys

from act_experiments.experiments.skewed import main

if __name__ == "__main__":
    sys.exit(main())
