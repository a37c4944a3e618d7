"""The ACT architecture figure: one input step t unrolled into its ponder steps (Graves 2016, §2).

    python scripts/plot_architecture.py                      # writes figures/act_architecture.png
    python scripts/plot_architecture.py --figures /tmp/figs  # somewhere other than figures/

The drawing, and how to read it: act_experiments.plots.architecture. Nothing in it is random,
and save_figure writes the same bytes every time.
"""

import sys

from act_experiments.plots.architecture import main

if __name__ == "__main__":
    sys.exit(main())
