"""Figures of a character-prediction sweep written by scripts/characters.py (Graves 2016, section 3.5).

    python scripts/plot_characters.py                         # the largest committed results
    python scripts/plot_characters.py --results results/characters_small --figures /tmp

By default the results are results/characters (the large run) when it exists, else
results/characters_small (the reduced CPU run). The script prints bits per character and ponder
per tau and saves four figures, characters_*.png, through act_experiments.figures.save_figure;
act_experiments.experiments.characters says what they show.
"""

import sys

import matplotlib

from act_experiments.figures import save_figures
from act_experiments.plots import characters
from act_experiments.training.cli import OneLineParser


def main(argv=None):
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(description=__doc__.splitlines()[0])     # errors in one line
    ap.add_argument("--results", default=None, help="sweep folder (default: results/characters, else _small)")
    ap.add_argument("--figures", default=None, help="output folder (default figures/)")
    args = ap.parse_args(argv)
    try:
        res = characters.load(args.results)
    except (OSError, KeyError, ValueError) as err:
        sys.exit(f"plot_characters.py: {err}")
    characters.print_summary(res)
    for path in save_figures(characters.FIGURES, res, "characters", args.figures):
        print("wrote", path)


if __name__ == "__main__":
    main()
