"""Figures of a character-prediction sweep written by scripts/characters.py (Graves 2016, section 3.5).

    python scripts/plot_characters.py                         # the largest committed results
    python scripts/plot_characters.py characters_small --figures /tmp

By default the results are results/characters (the large run) when it exists, else
results/characters_small (the reduced CPU run). The script prints bits per character and ponder
per tau and saves four figures, characters_*.png, through act_experiments.figures.save_figure;
act_experiments.experiments.characters says what they show.
"""

import sys

from act_experiments.experiments.characters import main

if __name__ == "__main__":
    sys.exit(main())
