"""The whole course as nbgrader grades it, with the course's nbgrader_config.py (``make exercises``).

Minutes of work, so marked ``graded_course``: ``make unit`` leaves it out, ``make exercises`` runs it
alone, and ``make test`` runs it with everything else, on every core (each test below is one
nbgrader course of its own, so they run side by side).

- The untouched release of every notebook, in two halves of ``make course``'s assignments
  (act_course.grading.assignments' plan; one nbgrader course per half, since each costs nbgrader's start-up
  twice, and two halves keep two cores busy): nbgrader gives it no point, each check failing with a message that
  says what is missing, and every lesson cell runs in the sealed kernel. The source's side, every
  point of every check, is held by nbval's run of the notebooks (act_course/grading/nbval_rule.py).
- The attack suite (act_course.grading.attacks), one notebook at a time: every attack scores nothing,
  every honest answer full marks.
"""

from pathlib import Path

import pytest

from act_course.grading import assignments, attacks, student

ROOT = Path(__file__).resolve().parent.parent
EVERYONE = attacks.ATTACKS + attacks.IN_KERNEL + attacks.HONEST

pytestmark = pytest.mark.graded_course


ASSIGNMENTS = list(assignments.ASSIGNMENTS)
# the paper's first five sessions, then the sixth and the two beyond it: about as long as each other
HALVES = {"sessions 1-5": ASSIGNMENTS[:5], "session 6 and beyond": ASSIGNMENTS[5:]}


@pytest.mark.parametrize("half", HALVES)
def test_the_untouched_release_scores_nothing_and_every_lesson_cell_runs(half, tmp_path):
    notebooks = [ROOT / "notebooks" / f"{name}.ipynb" for assignment in HALVES[half]
                 for name in assignments.ASSIGNMENTS[assignment]]
    problems = student.check(notebooks, out=tmp_path / "student")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("stem", sorted({s.notebook for s in EVERYONE}))
def test_every_attack_scores_nothing_and_every_honest_answer_full_marks(stem, tmp_path):
    submissions = [s for s in EVERYONE if s.notebook == stem]
    problems = attacks.run(submissions, tmp_path)
    assert not problems, "\n".join(problems)
