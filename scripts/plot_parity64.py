"""Parity at the paper's size beside Fojo et al.: iterations to 98%, measured N, and the claims.

    python scripts/plot_parity64.py

Reads results/parity64_main, parity64_random and parity64_rest (those committed), prints the
table of docs/parity.md (Fojo et al.'s steps to 98% beside each setting's seeds solved, their
iterations to 98%, measured mean N and final error) and claims (a)-(d) as fixed before the runs,
and saves figures/parity64_curves.png (act_experiments.experiments.parity64).
"""

import sys

from act_experiments.experiments.parity64 import main

if __name__ == "__main__":
    sys.exit(main())
