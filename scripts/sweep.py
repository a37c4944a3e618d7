"""Run a tau sweep of ACT training runs (plus the no-ACT baseline) and save its results as data.

    python scripts/sweep.py --name parity16 --task parity --bits 16 --hidden 128 --lr 1e-3 \\
        --iterations 3000 --taus 1e-4,1e-3,1e-2,1e-1 --seeds 3

The runs train as populations by default (``--engine population``); ``--engine pool`` trains one
process per run. Options, files and guarantees: ``act_experiments/sweeps/launch.py`` or ``python scripts/sweep.py --help``.
"""

from act_experiments.sweeps.launch import main

if __name__ == "__main__":
    main()
