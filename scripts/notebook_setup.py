"""Write every notebook's install cell: the opened-alone lines (act_course.course.OPENED_ALONE) in a
code cell of their own, collapsed in JupyterLab, before the setup cell; or bring it up to date.

    python scripts/notebook_setup.py            # every notebook
    python scripts/notebook_setup.py --check    # only say which notebooks differ (exit 1 if any)
    python scripts/notebook_setup.py notebooks/05_parity.ipynb     # only these

The setup cell is the first code cell after it. The lines must be copied into each notebook, not
imported: they run before the course is installed (act_course/upkeep/setup_cells.py).
"""

import sys

from act_course.upkeep.setup_cells import main

if __name__ == "__main__":
    sys.exit(main())
