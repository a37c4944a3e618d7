"""Golden outputs: every committed experiment's command at its shortest settings, to hold a refactor to.

    python scripts/golden.py record /tmp/golden_before            # in a checkout before the change
    python scripts/golden.py record /tmp/golden_after             # in a checkout after it
    python scripts/golden.py compare /tmp/golden_before /tmp/golden_after

What ``record`` runs and what ``compare`` holds to: act_course.upkeep.golden.
"""

import sys

from act_course.upkeep.golden import main

if __name__ == "__main__":
    sys.exit(main())
