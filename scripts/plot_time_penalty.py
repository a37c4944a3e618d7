"""What the time penalty tau does, across every committed sweep (Graves 2016, eq. 12 and section 3).

    python scripts/plot_time_penalty.py                  # every results/<sweep>/ with a runs.csv
    python scripts/plot_time_penalty.py --figures /tmp   # somewhere other than figures/
    python scripts/plot_time_penalty.py /tmp/all         # the sweeps of another folder

Each sweep written by scripts/sweep.py (parity*, logic*, addition*, sort*, whichever exist) adds
one line to each of three figures, time_penalty_*.png, saved through
act_experiments.figures.save_figure; act_experiments.experiments.time_penalty says what they show.
Sweeps that are missing, empty (still running) or unreadable are skipped with a message, so the
script works with whatever results exist.
"""

import sys

from act_experiments.experiments.time_penalty import main

if __name__ == "__main__":
    sys.exit(main())
