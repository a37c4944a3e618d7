"""Build a ready nbgrader course: one assignment per session of docs/teaching.md's plan.

    python scripts/course.py                 # build/course/
    python scripts/course.py --out DIR
    python scripts/course.py --fresh         # start again: gradebook, submissions and grades deleted

Run again on an existing course, it rewrites nbgrader_config.py, source/ and release/ and keeps
everything else: gradebook.db (students, submissions, grades), submitted/, autograded/,
feedback/. ``--fresh`` deletes the whole folder first.

What the folder holds, and how links are rewritten in it: act_course.grading.assignments.
"""

import sys

from act_course.grading.assignments import main

if __name__ == "__main__":
    sys.exit(main())
