"""ACT against PonderNet on parity, several seeds and penalties, with an extrapolation test.

    python scripts/pondernet.py --name pondernet8_extrapolation --bits 8 --train-max 4
    python scripts/pondernet.py --name pondernet8 --bits 8 --train-max 8
    python scripts/pondernet.py --plot pondernet8_extrapolation      # redraw its figures only

Both models train on parity with 1..train-max non-zero bits (the task option max_nonzero): ACT
with one network per (tau, seed) through the course's population engine, PonderNet with one
network per (beta, seed) as one stacked population (act_experiments.experiments.pondernet.run_comparison has
the details). Each is measured every --chunk iterations on a held-out set of the training range
and, when train-max < bits, on one of train-max+1..bits non-zero bits (the extrapolation test).
The tables go to results/<name>/ (runs.csv, curves.csv, counts.csv, attention.csv,
comparison.json), the figures to figures/pondernet_<name>_*.png, the ACT run folders and
PonderNet's checkpoint to runs/pondernet/<name>/. Nothing is lost when it stops: after each chunk
the curves rows are appended and both models checkpointed, and the same command run again
continues after the last finished chunk, with the same tables as a run that never stopped; other
settings are refused, and --force starts over (act_experiments.experiments.runner).
"""

import sys

from act_experiments.experiments.pondernet import main

if __name__ == "__main__":
    sys.exit(main())
