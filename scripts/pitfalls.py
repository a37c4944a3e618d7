"""The pitfall gallery's training runs (notebook 11): every bug of act_beyond.pitfalls, trained briefly.

    python scripts/pitfalls.py run gallery          # parity: every bug beside the correct ACT
    python scripts/pitfalls.py run sequence         # logic: the bugs that need a sequence or padding
    python scripts/pitfalls.py run prefix           # 16-bit parity: the prefix data convention
    python scripts/pitfalls.py run ponder_sum_h --out results/pitfalls_ponder_sum_h
                                                    # the simplified ponder cost -sum_{n<=N} h^n
    python scripts/pitfalls.py plot                 # figures/pitfalls_*.png from results/pitfalls/

``run`` trains each entry of the experiment for every seed with ``act_experiments.experiments.pitfalls.train_variant``
and appends its evaluations to ``results/pitfalls/<experiment>.csv`` (one row per evaluation);
``<experiment>.json`` keeps the settings and the command. A run that stopped continues where it
left off: entries already in the CSV are skipped, as long as the settings and seeds are the same
(entries added to the experiment are trained; other settings are refused; ``--force`` starts the
experiment over). ``--seeds`` and ``--iterations`` change the settings, so use them with ``--out``
for a trial run; ``--pitfalls`` trains only the entries named. Each (entry, seed) reaches the CSV in
one atomic step when it finishes (act_experiments.experiments.runner).
"""

import sys

from act_experiments.experiments.pitfalls import main

if __name__ == "__main__":
    sys.exit(main())
