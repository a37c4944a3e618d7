"""The student edition of the course, and both editions graded by nbgrader itself
(scripts/student.py, `make student`).

The notebooks in notebooks/ are the source: each exercise is a solution cell, whose answer sits
between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, and graded check cells after it, marked
with nbgrader's cell metadata (docs/teaching.md, "Exercises"); a check's decisive comparisons sit
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``. The student edition is what
``nbgrader generate_assignment`` makes of them: each answer replaced by ``raise
NotImplementedError()``, each written answer by "YOUR ANSWER HERE", the hidden tests taken out.
It runs nbgrader itself on a course folder of its own under build/nbgrader/, with the
course's scripts/nbgrader_config.py, so a teacher's nbgrader gets exactly the same notebooks.

``--check`` hands nbgrader the untouched release of every notebook and runs ``nbgrader autograde``
on it, hidden tests restored and nbgrader's scoring rules applied (a check cell that raises, or
writes anything to stderr, scores 0):

- the untouched release must get no point, every check failing with a message that says what is
  missing (an AssertionError or NotImplementedError), not an error from the lesson's own code;
- every cell outside the exercises must run (the lesson works before any exercise is done).

The source's side, every point of every check cell, is held where the source already runs:
under nbval in ``make test``, whose rule (act_course/grading/nbval_rule.py) fails a check
cell that raises or writes to stderr, just as nbgrader scores it 0; and the judged exercises'
checks in tests/test_judge.py. ``--source`` grades the source with nbgrader too (every notebook
once more).

It prints the longest cell nbgrader ran, against the per-cell limit of nbgrader_config.py.
"""

import argparse
import json
import shutil
from pathlib import Path

from act_course import NOTEBOOKS
from act_course.grading.nbgrader_run import ASSIGNMENT, autograde, cell_error, cell_stderr, nbgrader, setup_course
from act_experiments.files import ROOT

DESCRIPTION = "Write the student edition of the course, and grade both editions with nbgrader itself."
BUILD = ROOT / "build"
# what a check cell may fail with in the student edition: the unanswered solution cell leaves its
# placeholder (None) or its NotImplementedError behind, and the check says so
EXPECTED_ERRORS = ("AssertionError", "NotImplementedError")


def nbgrader_role(cell):
    """'solution', 'check', 'answer' (a written answer, graded by hand) or None for a lesson cell."""
    meta = cell.get("metadata", {}).get("nbgrader")
    if not meta:
        return None
    if meta.get("solution") and meta.get("grade"):
        return "answer"
    if meta.get("solution"):
        return "solution"
    if meta.get("grade"):
        return "check"
    return None


SUBMISSIONS = ("source", "release")     # who hands in what: the source itself, the untouched release


def generate(notebooks, out):
    """Write the student edition of ``notebooks`` into the folder ``out`` with nbgrader.

    Its course folder is build/nbgrader/ beside ``out``. Returns the student notebooks' paths.
    Raises RuntimeError with nbgrader's last lines when nbgrader refuses a notebook (a duplicate
    grade_id, say).
    """
    course = setup_course(notebooks, out.parent / "nbgrader")
    code, tail = nbgrader(course, "generate_assignment", ASSIGNMENT)
    if code != 0:
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{tail}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        shutil.copy(course / "release" / ASSIGNMENT / path.name, out / path.name)
        written.append(out / path.name)
    return written


def cell_seconds(cell):
    """How long nbgrader's kernel took to run a code cell (from nbclient's timing), or None."""
    from datetime import datetime
    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return None
    return (datetime.fromisoformat(end.replace("Z", "+00:00"))
            - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()


def grading_problems(name, student, nb, scores):
    """What is wrong with one autograded notebook of ``student`` ('source' or 'release')."""
    problems, checks = [], 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        role, error, stderr = nbgrader_role(cell), cell_error(cell), cell_stderr(cell)
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell {index}")
        if role == "check":
            checks += 1
            score, most = scores.get(grade_id, (None, None))
            if student == "source" and score != most:
                why = (f"{error[0]}: {error[1]}" if error else
                       f"it writes to stderr: {stderr.strip().splitlines()[0] if stderr.strip() else '(blank)'}")
                problems.append(f"{name}: the source scores {score:g} of {most:g} on {grade_id} ({why})")
            elif student == "release" and score != 0:
                problems.append(f"{name}: check {grade_id} passes without its answer ({score:g} points)")
            elif student == "release" and error is not None and error[0] not in EXPECTED_ERRORS:
                problems.append(f"{name}: check {grade_id} fails with {error[0]}: {error[1]} "
                                f"instead of saying what is missing")
        elif role is None and error is not None:
            edition = "the source" if student == "source" else "the student edition"
            problems.append(f"{name}: lesson cell {index} fails in {edition} ({error[0]}: {error[1]})")
    if checks == 0:
        problems.append(f"{name}: no graded check cells")
    return problems


def check(notebooks, out=BUILD / "student", source=False):
    """Generate the release of ``notebooks``, grade the untouched release (and the source, with
    ``source``) with nbgrader, and list what is wrong (an empty list: nothing). Prints one line
    per notebook. nbgrader's course folder is build/nbgrader/ beside ``out``."""
    students = SUBMISSIONS if source else ("release",)
    released = generate(notebooks, out)
    handed_in = {"source": notebooks, "release": released}
    graded = autograde(out.parent / "nbgrader", {who: handed_in[who] for who in students})
    problems, longest = [], (0.0, "")
    for path in notebooks:
        found = []
        points = {}
        for student in students:
            nb, scores = graded[student][path.name]
            found += grading_problems(path.name, student, nb, scores)
            points[student] = (sum(s or 0 for s, _ in scores.values()), sum(m for _, m in scores.values()))
            for index, cell in enumerate(nb.cells):
                seconds = cell_seconds(cell) if cell.cell_type == "code" else None
                if seconds is not None and seconds > longest[0]:
                    longest = (seconds, f"{path.name}, cell {index}")
        print(f"{path.name}: " + ", ".join(f"{'the untouched release' if who == 'release' else who} "
                                          f"{points[who][0]:g}/{points[who][1]:g}" for who in students)
              + " points"
              + ("" if not found else f"; {len(found)} problems"), flush=True)
        problems += found
    if longest[1]:
        print(f"longest cell nbgrader ran: {longest[0]:.1f} s ({longest[1]})")
    return problems


def exercise_table(notebooks):
    """A markdown table of every exercise: notebook, number, title, points checked by code and
    points of written answers (graded by hand), read from the task headings and nbgrader metadata."""
    import re
    lines = ["| notebook | exercise | checked by code | written answer |", "|---|---|---|---|"]
    for path in notebooks:
        cells = json.loads(path.read_text())["cells"]
        titles, points = {}, {}
        for cell in cells:
            source = "".join(cell["source"])
            if cell["cell_type"] == "markdown":
                for number, title in re.findall(r"^#+ Exercise (\d+) *[:.—–-]? *(.*)$", source, flags=re.M):
                    titles.setdefault(int(number), title.strip()[:1].upper() + title.strip()[1:])
            meta = cell.get("metadata", {}).get("nbgrader")
            role = nbgrader_role(cell)
            if meta and role in ("check", "answer"):
                number = int(re.match(r"ex(\d+)", meta["grade_id"]).group(1))
                code, written = points.get(number, (0, 0))
                points[number] = (code + meta["points"], written) if role == "check" else (code, written + meta["points"])
        for number in sorted(points):
            code, written = points[number]
            lines.append(f"| {path.stem[:3].rstrip('_')} | {number}. {titles.get(number, '')} | {code:g} | "
                         f"{written:g} |" if written else
                         f"| {path.stem[:3].rstrip('_')} | {number}. {titles.get(number, '')} | {code:g} | - |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook")
    parser.add_argument("--out", type=Path, default=BUILD / "student")
    parser.add_argument("--check", action="store_true",
                        help="grade the untouched release with nbgrader autograde")
    parser.add_argument("--source", action="store_true",
                        help="with --check: grade the source too (every point of every check)")
    parser.add_argument("--table", action="store_true", help="print the exercises and their points, and stop")
    parser.add_argument("--checks", action="store_true",
                        help="print every check, judged or self-check, its points and why, and stop")
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or NOTEBOOKS
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        parser.exit(2, f"student.py: no such notebook: {missing[0]}\n")
    if args.table:
        print(exercise_table(notebooks))
        return 0
    if args.checks:
        from act_course.grading.checks_table import table
        print(table(notebooks))
        return 0
    try:
        if not args.check:
            written = generate(notebooks, args.out)
            print(f"student edition: {len(written)} notebooks in {args.out}")
            return 0
        problems = check(notebooks, out=args.out, source=args.source)
    except RuntimeError as err:
        parser.exit(1, f"student.py: {err}\n")
    for line in problems:
        print(line)
    if problems:
        return 1
    print(("nbgrader gives the source every point and " if args.source else "nbgrader gives ")
          + "the untouched release no point; every lesson cell runs")
    return 0

