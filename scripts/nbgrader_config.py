# nbgrader's settings for this course. `make course` copies this file into the course folder it
# builds (build/course/), and `make exercises` grades with it, so CI checks the settings a teacher
# uses. docs/teaching.md, section 4, gives the commands.
c = get_config()  # noqa: F821 (nbgrader provides it)

c.CourseDirectory.course_id = "act-course"

# Seconds per cell when nbgrader runs a notebook (autograde, or validate). nbgrader's default of
# 30 s is shorter than the live-training cells of notebooks 05-14: the longest (07's live run)
# took 48 s when `make exercises` graded 04-10 on two cores shared with other work, and takes a
# few times that when several learners' notebooks are graded on the same cores. 300 s is nbval's
# limit in `make test` and the book's.
c.Execute.timeout = 300

# A check cell that fails, or writes anything to stderr, scores 0: nbgrader's own rule. The check
# cells print what they checked on stdout only.

# The checks that the judge's registry names (act_course/grading/registry.py; `python
# scripts/student.py --checks` lists them) are judged outside the learner's kernel
# (act_course/grading/judge.py): JudgeAnswers runs the answer cells in a process of their own (after
# the lesson's cells they need, where the answers may use the course's packages) before nbgrader's
# Execute runs the notebook, and decides each check in nbgrader's process (a check of values by its
# own cell's tests, run on the values sent back, in a process that runs no code of the learner's:
# replay.py); WriteVerdicts puts the verdicts into those check cells' outputs after Execute, before
# SaveAutoGrades scores them. The rest is nbgrader's default list.
from nbgrader.converters.autograde import Autograde  # noqa: E402

# SealedExecute is nbgrader's Execute with the learner's kernel sealed before its first cell
# (act_course/grading/seal.py): no file of this folder but the submission's own working folder,
# no notebook anywhere, no subprocess (docs/teaching.md, "Solutions, and where grading runs").
import os  # noqa: E402

from act_course.grading.preprocessors import ErrorsScoreZero, JudgeAnswers, SealedExecute, WriteVerdicts  # noqa: E402

# ErrorsScoreZero: a check cell with an error anywhere in its outputs scores 0, even when the
# answer has the kernel publish a result before it (nbgrader reads the first output it meets).
_default = list(Autograde.class_traits()["autograde_preprocessors"].default())
_at = [p.__name__ for p in _default].index("Execute")
c.Autograde.autograde_preprocessors = _default[:_at] + [JudgeAnswers, SealedExecute, WriteVerdicts,
                                                         ErrorsScoreZero] + _default[_at + 1:]
c.SealedExecute.denied = [os.path.dirname(os.path.abspath(__file__))]     # the course folder

# Feedback that reads offline once `nbgrader release_feedback` hands a learner the HTML file alone:
# the figures embedded, and MathJax inlined from the venv instead of nbgrader's CDN; and no hidden
# test in it: their source taken out, and an error of theirs cut to its last line, which says
# which check failed and why (act_course/grading/feedback.py).
from nbgrader.converters.generate_feedback import GenerateFeedback  # noqa: E402

from act_course.grading.feedback import OfflineFeedback, WithoutHiddenTests  # noqa: E402

c.GenerateFeedback.exporter_class = OfflineFeedback
c.GenerateFeedback.preprocessors = ([WithoutHiddenTests]
                                    + list(GenerateFeedback.class_traits()["preprocessors"].default()))
