"""Run the notebooks under other math kernels, or measure how far their checks are from failing.

    python scripts/notebook_variants.py --variant compatible         # every notebook, under nbval
    python scripts/notebook_variants.py --variant avx2 notebooks/05_parity.ipynb
    python scripts/notebook_variants.py --measure notebooks/05_parity.ipynb    # seeds x variants
    python scripts/notebook_variants.py --table results/notebook_checks/checks.csv

What a variant is, what ``--measure`` runs and what ``--table`` prints: act_course.upkeep.variants.
"""

import sys

from act_course.upkeep.variants import main

if __name__ == "__main__":
    sys.exit(main())
