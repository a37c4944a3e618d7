"""Grading the exercises: what the check cells use, and the judge that runs outside the learner's kernel.

``guard``: ``written_by_hand`` and ``by_hand``, with which a check cell keeps the course's own piece
out of an answer's reach inside the learner's kernel (``from act_course.grading import by_hand``).
``judge``: the judge of an answer in a process of its own (``runner``, the program it runs), on
inputs drawn at grading time (``exchange``: what crosses between the two processes, read strictly;
``replay``: the check cells of values rerun in the judge's process); ``exercises_<notebook>``:
what each judged check cell of a notebook draws and compares; ``registry``: which notebooks are judged, and the judge run on a whole
notebook; ``checks_table``: every check cell, judged or self-check, and why (docs/teaching.md);
``preprocessors``: the judge's two steps in ``nbgrader autograde``, and its Execute with the
learner's kernel sealed (``seal``: the audit hook that keeps the course folder, the repository's
notebooks and subprocesses out of a grading kernel's reach; the runner uses it too).
``feedback``: the feedback pages, figures and MathJax inside; ``nbgrader_run``: nbgrader run on a
course folder. With nbgrader itself: ``student`` (scripts/student.py) writes the student edition
and grades both editions, ``assignments`` (scripts/course.py) builds the course of one assignment
per session, ``attacks`` (scripts/attacks.py) autogrades submissions that want the points without
the algorithm, and honest ones. ``nbval_rule``: the pytest plugin with which nbval fails a graded
check cell that writes to stderr, as nbgrader would score it 0 (conftest.py loads it).
"""

from .guard import ACT_NUMPY, PACKAGES, by_hand, written_by_hand

__all__ = ["ACT_NUMPY", "PACKAGES", "by_hand", "written_by_hand"]
