"""The shuffle probe on the ACT networks a sweep committed: does the N a network picks carry information?

    python scripts/probe.py parity16_measured addition_3digit_measured

For each ACT network in results/<sweep>/weights.npz (scripts/sweep.py --save-weights), its
held-out sequence error as trained, with each input's N replaced by a fixed-seed permutation of
the N it chose, and with every N the rounded mean (act_experiments.sweeps.probe). Writes
results/<sweep>/probe.csv and prints a line per network.
"""

import sys

from act_experiments.sweeps.probe import main

if __name__ == "__main__":
    sys.exit(main())
