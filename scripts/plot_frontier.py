"""When does adapting pay? Every committed control's error against measured updates, on one page.

    python scripts/plot_frontier.py

Reads the measured controls (parity, addition, logic: ACT, the fixed ladder and, where committed,
the random schedule of ACT's own N), skewed parity once its sweeps are committed, and the pointer
chains of the Universal Transformer (fixed depths against ACT). Prints each ACT network's error
beside the frontier of the fixed networks at its measured N, and saves figures/frontier.png.
"""

import sys

from act_experiments.experiments.frontier import main

if __name__ == "__main__":
    sys.exit(main())
