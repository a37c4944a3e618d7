"""The ACT architecture figure: one input step t unrolled into its ponder steps (Graves 2016, §2).

    python scripts/plot_architecture.py                      # writes figures/act_architecture.png
    python scripts/plot_architecture.py --figures /tmp/figs  # somewhere other than figures/

The drawing, and how to read it: act_experiments.plots.architecture. Nothing in it is random,
and save_figure writes the same bytes every time.
"""


import matplotlib

from act_experiments.plots import architecture
from act_experiments.training.cli import OneLineParser


def main(argv=None):
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(description=__doc__.splitlines()[0])     # errors in one line
    ap.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    print(f"wrote {architecture.save(args.figures)}")


if __name__ == "__main__":
    main()
