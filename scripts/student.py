"""Write the student edition of the course, and grade both editions with nbgrader itself.

    python scripts/student.py                    # build/student/: the solutions taken out
    python scripts/student.py --check            # nbgrader grades the untouched release
    python scripts/student.py --check --source   # ... and the source
    python scripts/student.py --check notebooks/03b_write_your_own_act.ipynb
    python scripts/student.py --table            # the exercises and their points, for docs/teaching.md
    python scripts/student.py --checks           # every check, judged or self-check, and why, for docs/teaching.md

What the student edition is, and what ``--check`` holds: act_course.grading.student.
"""

import sys

from act_course.grading.student import main

if __name__ == "__main__":
    sys.exit(main())
