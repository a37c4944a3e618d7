"""The attack suite (scripts/attacks.py, ``make exercises``): submissions graded by nbgrader itself.

Each submission (act_course.grading.submissions, re-exported here) is a notebook of the course
with some answer cells replaced (``cells``: solution grade_id -> the cell's new code; ``ex<k>-added``
a cell the learner adds before exercise k's answer); ``expect`` gives the points every judged check
cell of the exercises it answers must get: 0 for an attack, full marks for an honest variant. An
attack in the learner's kernel (``IN_KERNEL``) must also be stopped by the grading seal
(act_course/grading/seal.py) where it says so (``by_seal``).

``cut_down`` keeps of a notebook only the install and setup cells, the attacked exercises' cells and the cells a
submission adds, so that nbgrader's autograde runs in seconds: the course's source of a notebook keeps the
exercises of all its submissions, each submission its own alone (nbgrader scores the check cells a
submission has, and leaves those it lacks unscored); ``make exercises`` runs this after
scripts/student.py --check, and tests/test_judge.py runs the same submissions through the judge alone.
"""

import json
import re
import sys
import tempfile
from pathlib import Path

from act_course.grading.nbgrader_run import ASSIGNMENT, autograde, cell_error, nbgrader, setup_course
from act_course.upkeep.setup_cells import opening_cells

from .judged_alone import JUDGE_ONLY  # noqa: F401
from .submissions import (ATTACKS, HALTING_HEAD, HONEST, IN_KERNEL, KL_HEAD, NB_01, NB_02,  # noqa: F401
                          NB_03, NB_03B, NB_12, WRONG_HALTING, Submission, notebook_path, source_answer)

ADDED = "-added"         # a cell the learner adds, right before the answer cell of the same exercise


def submitted(submission):
    """The source notebook of ``submission`` with its answer cells replaced, and the cells it adds
    (``ex<k>-added``) put right before exercise k's answer cell (a dict, nbformat 4)."""
    nb = json.loads(notebook_path(submission.notebook).read_text(encoding="utf-8"))
    found, cells = set(), []
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        added = f"{grade_id[:-len('-solution')]}{ADDED}" if grade_id and grade_id.endswith("-solution") else None
        if added in submission.cells:
            cells.append({"cell_type": "code", "execution_count": None, "metadata": {"act_added": True}, "outputs": [],
                          "source": submission.cells[added].strip("\n").splitlines(keepends=True)})
            found.add(added)
        if grade_id in submission.cells:
            cell["source"] = submission.cells[grade_id].strip("\n").splitlines(keepends=True)
            found.add(grade_id)
        cells.append(cell)
    missing = set(submission.cells) - found
    if missing:
        raise ValueError(f"submission {submission.name!r}: {submission.notebook} has no cell {sorted(missing)}")
    return dict(nb, cells=cells)


def exercises_of(submission):
    return {re.match(r"ex(\d+)-", g).group(1) for g in submission.cells}


def judged_checks(nb, submission):
    """The grade_ids of the check cells of the exercises that ``submission`` answers."""
    numbers = exercises_of(submission)
    return [c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"]
            if c["metadata"].get("nbgrader", {}).get("grade") and not c["metadata"]["nbgrader"].get("solution")
            and c["cell_type"] == "code" and re.match(r"ex(\d+)-", c["metadata"]["nbgrader"]["grade_id"]).group(1) in numbers]


def cut_down(nb, numbers):
    """``nb`` with only its install and setup cells and the cells of exercises ``numbers``, up to the
    last of them (later exercises call earlier ones, so their solution cells stay too)."""
    last = max(int(k) for k in numbers)
    opening = [id(cell) for cell in opening_cells(nb)]
    kept = []
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        match = re.match(r"ex(\d+)-", grade_id)
        if id(cell) in opening:
            kept.append(cell)
        elif match and (match.group(1) in numbers or (grade_id.endswith("-solution") and int(match.group(1)) <= last)):
            kept.append(cell)
        elif cell["metadata"].get("act_added"):          # a cell of the learner's own
            kept.append(cell)
    return dict(nb, cells=kept)


def sealed(nb, submission):
    """'sealed: <the refusal>' when the attack's answer cell failed on the grading seal, else what happened."""
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") in submission.cells:
            error = cell_error(cell)
            if error and "while a submission is graded" in error[1]:
                return f"sealed: {error[0]}: {error[1][:90]}"
            return f"not stopped by the seal: {error[0] + ': ' + error[1][:200] if error else 'the answer cell ran'}"
    return "not stopped by the seal: no answer cell"


def run(submissions, folder):
    """Autograde every submission with nbgrader; a list of what scored wrong (empty: all right)."""
    problems = []
    by_notebook = {}
    for k, submission in enumerate(submissions):
        by_notebook.setdefault(submission.notebook, []).append((f"s{k:02d}", submission))
    for stem, group in by_notebook.items():
        numbers = set().union(*(exercises_of(s) for _, s in group))
        source_nb = cut_down(json.loads(notebook_path(stem).read_text(encoding="utf-8")), numbers)
        course_folder = folder / stem
        source = course_folder / "given" / f"{stem}.ipynb"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(json.dumps(source_nb, indent=1), encoding="utf-8")
        course = setup_course([source], course_folder / "nbgrader")
        code, tail = nbgrader(course, "generate_assignment", ASSIGNMENT)
        if code != 0:
            raise RuntimeError(f"nbgrader generate_assignment failed:\n{tail}")
        paths = {}
        for student_id, submission in group:
            path = course_folder / student_id / f"{stem}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            # its own exercises alone: nbgrader scores the check cells a submission has, and the
            # judge judges those, so the checks of the group's other exercises cost it nothing
            path.write_text(json.dumps(cut_down(submitted(submission), exercises_of(submission)), indent=1),
                            encoding="utf-8")
            paths[student_id] = [path]
        graded = autograde(course, paths)
        for student_id, submission in group:
            nb, scores = graded[student_id][f"{stem}.ipynb"]
            checks = judged_checks(source_nb, submission)
            unscored = [g for g in checks if scores[g][0] is None]
            if unscored:        # an attack must score 0 on checks that ran, not on checks left out
                problems.append(f"{submission.name}: nbgrader scored no {', '.join(unscored)}")
                continue
            got = sum(scores[g][0] for g in checks)
            most = sum(scores[g][1] for g in checks)
            want = 0 if submission.expect == "none" else most
            # an attack in the learner's kernel must be stopped by the seal, not miss its target
            stopped = "" if submission not in IN_KERNEL or submission.expect != "none" or not submission.by_seal \
                else sealed(nb, submission)
            print(f"{stem[:3].rstrip('_')}: {submission.name}: {got:g}/{most:g} points"
                  + ("" if got == want else f" (should be {want:g})") + (f" ({stopped})" if stopped else ""), flush=True)
            if got != want or (stopped and not stopped.startswith("sealed")):
                problems.append(f"{submission.name}: {got:g} of {most:g} points, should be {want:g}"
                                + (f"; {stopped}" if stopped else ""))
    return problems


def main(argv=None):
    """Autograde every submission; print a line each and return 1 if one scored wrong, else 0.
    ``argv`` is not read: the suite has no options."""
    with tempfile.TemporaryDirectory(prefix="act-attacks-") as folder:
        try:
            problems = run(ATTACKS + IN_KERNEL + HONEST, Path(folder))
        except RuntimeError as err:
            print(f"attacks.py: {err}", file=sys.stderr)
            return 1
    for line in problems:
        print(line)
    if problems:
        return 1
    everyone = ATTACKS + IN_KERNEL + HONEST
    attacks = sum(s.expect == "none" for s in everyone)
    print(f"{attacks} attacks score nothing and {len(everyone) - attacks} honest answers full marks under nbgrader autograde")
    return 0

