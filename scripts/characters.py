"""Character prediction with and without ACT (Graves 2016, section 3.5): a tau sweep and its analysis.

    python scripts/characters.py --name characters_small --taus 6e-3,3e-2,1e-1 --seeds 1 \\
        --seq-len 32 --hidden 128 --batch-size 128 --lr 1e-2 --max-ponder 20 \\
        --iterations 300 --eval-every 50 --eval-size 100

The same as ``python scripts/sweep.py --task characters ...``: the sweep of
``act_experiments/sweeps/launch.py``, then the per-byte analysis of ``act_experiments/sweeps/per_byte.py``
(classes.csv, passage.csv). Draw the figures with scripts/plot_characters.py.
"""

import sys

from act_experiments.experiments.characters import sweep_main

if __name__ == "__main__":
    sys.exit(sweep_main())
