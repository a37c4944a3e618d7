"""ConvNet-AIG on the 8 x 8 digits: a sweep over target rates and seeds, and its figures.

    python scripts/convnet_aig.py                          # the committed sweep, into results/convnet_aig/
    python scripts/convnet_aig.py --plot-only              # redraw figures/convnet_aig_*.png from the CSVs
    python scripts/convnet_aig.py --seeds 0 --rates 0.5 --depths 6 --out /tmp/aig   # a small one

Trains, for every seed, a ConvNet-AIG with hard gates and one with soft gates at each target
rate, and a plain ResNet of each depth, all with act_experiments.experiments.convnet_aig.SETTINGS (the settings
of notebook 14's live runs), and writes into --out:

    runs.csv    one row per network (act_experiments.experiments.convnet_aig.run_one)
    usage.csv   per gated network, the fraction of each digit's test images executing each block
    sweep.json  the settings, the command, the machine and the wall time

Each network's rows are appended when it is trained, and one already in runs.csv is not trained
again, so a stopped sweep continues where it stopped (act_experiments.experiments.runner);
different settings from those in sweep.json are refused, unless --force starts over. Then it draws
figures/convnet_aig_tradeoff.png (accuracy against computation) and figures/convnet_aig_usage.png
(digit x block heat maps, mean over the seeds) through act_experiments.figures.save_figure.
"""

import sys

from act_experiments.experiments.convnet_aig import main

if __name__ == "__main__":
    sys.exit(main())
