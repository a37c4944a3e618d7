"""Write the opened-alone lines (act_course.course.OPENED_ALONE) at the top of every
notebook's setup cell, or bring them up to date there.

    python scripts/notebook_setup.py            # every notebook
    python scripts/notebook_setup.py --check    # only say which notebooks differ (exit 1 if any)
    python scripts/notebook_setup.py notebooks/05_parity.ipynb     # only these

The setup cell is a notebook's first code cell. The lines must be copied into each notebook, not
imported: they run before the course is installed.
"""

import sys

from act_course.upkeep.setup_cells import main

if __name__ == "__main__":
    sys.exit(main())
