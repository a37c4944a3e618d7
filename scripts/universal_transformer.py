"""The Universal Transformer's longer runs (notebook 13): ACT per position against fixed depths, and the cap.

    python scripts/universal_transformer.py run compute    # ACT at three tau beside fixed depths 1-4
    python scripts/universal_transformer.py run cap        # a tight cap M = 3: the remainder against two cap pitfalls
    python scripts/universal_transformer.py plot           # figures/universal_transformer_*.png

``run`` trains every entry of the experiment for every seed with
``act_experiments.experiments.universal_transformer.train_ut`` on the pointer-chain task and appends its evaluations
to ``results/universal_transformer/<experiment>.csv`` (one row per evaluation, with error and
mean number of updates N per chain depth, the columns mean_N_d<k>); ``<experiment>.json`` keeps the
settings and the command. A run that
stopped continues where it left off: (entry, seed) pairs already in the CSV are skipped, as long
as the settings are the same (entries added are trained; other settings are refused; ``--force``
starts over). ``--seeds`` and ``--iterations`` change the settings, so use them with ``--out`` for a
trial run; ``--entries`` trains only the entries named. Each (entry, seed) reaches the CSV in one
atomic step when it finishes (act_experiments.experiments.runner).
"""

import sys

from act_experiments.experiments.universal_transformer import main

if __name__ == "__main__":
    sys.exit(main())
