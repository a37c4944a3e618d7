"""Submissions that want the points without the algorithm, and honest ones that must keep them.

    python scripts/attacks.py            # nbgrader autograde on each, cut-down assignments; exit 1 if one scores wrong

The submissions, what each must score, and how they are graded: act_course.grading.attacks.
"""

import sys

from act_course.grading.attacks import main

if __name__ == "__main__":
    sys.exit(main())
