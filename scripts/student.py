"""Write the student edition of the course, and check that none of its exercise checks is decorative.

    python scripts/student.py                    # build/student/: the solutions taken out
    python scripts/student.py --check            # and run it: every graded check must fail
    python scripts/student.py --check notebooks/03_backprop_remainder.ipynb
    python scripts/student.py --table            # the exercises and their points, for docs/teaching.md

The notebooks in notebooks/ are the teacher's edition: each exercise is a solution cell, whose
answer sits between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, and a graded check cell
after it, marked with nbgrader's cell metadata (docs/teaching.md, "Exercises"). The student
edition is what ``nbgrader generate_assignment`` makes of them: each answer replaced by
``raise NotImplementedError()`` and each written answer by "YOUR ANSWER HERE". This script runs
nbgrader itself on a course folder of its own under build/, so a teacher's nbgrader setup gets
exactly the same notebooks.

``--check`` executes every student notebook and requires three things: every graded check cell
fails (a check that passes without the answer checks nothing); every cell outside the exercises
runs (the lesson works before any exercise is done); and every check fails with a message that
says what is missing, not with an error from the lesson's own code.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
BUILD = ROOT / "build"
ASSIGNMENT = "act"
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


def generate(notebooks, out):
    """Write the student edition of ``notebooks`` into the folder ``out`` with nbgrader.

    Returns the student notebooks' paths. Raises RuntimeError with nbgrader's last lines when
    nbgrader refuses a notebook (a duplicate grade_id, say).
    """
    course = out.parent / "nbgrader"     # nbgrader's own course folder, beside the edition
    shutil.rmtree(course, ignore_errors=True)
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    for path in notebooks:
        shutil.copy(path, source / path.name)
    command = [sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT, "--force",
               f"--CourseDirectory.root={course}",
               f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}"]
    # nbgrader runs its database migrations through the `alembic` command, which lives beside
    # this interpreter; put that folder first on PATH so an unactivated venv works too
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    release = course / "release" / ASSIGNMENT
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{tail}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        shutil.copy(release / path.name, out / path.name)
        written.append(out / path.name)
    return written


def cell_error(cell):
    """(exception name, message) of a code cell's error output, or None if it ran."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", ""), output.get("evalue", "")
    return None


def check_student_notebook(path, timeout=300):
    """Execute one student notebook and list what is wrong with it (an empty list: nothing).

    Every cell runs even after an error, as a learner would run them one by one.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    problems, checks = [], 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        role, error = nbgrader_role(cell), cell_error(cell)
        name = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell {index}")
        if role == "check":
            checks += 1
            if error is None:
                problems.append(f"{path.name}: check {name} passes without its answer")
            elif error[0] not in EXPECTED_ERRORS:
                problems.append(f"{path.name}: check {name} fails with {error[0]}: {error[1]} "
                                f"instead of saying what is missing")
        elif role is None and error is not None:
            problems.append(f"{path.name}: lesson cell {index} fails in the student edition "
                            f"({error[0]}: {error[1]})")
    if checks == 0:
        problems.append(f"{path.name}: no graded check cells")
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook")
    parser.add_argument("--out", type=Path, default=BUILD / "student")
    parser.add_argument("--check", action="store_true",
                        help="run the student edition: every graded check must fail")
    parser.add_argument("--table", action="store_true", help="print the exercises and their points, and stop")
    args = parser.parse_args(argv)
    notebooks = [p.resolve() for p in args.notebooks] or NOTEBOOKS
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        parser.exit(2, f"student.py: no such notebook: {missing[0]}\n")
    if args.table:
        print(exercise_table(notebooks))
        return 0
    try:
        written = generate(notebooks, args.out)
    except RuntimeError as err:
        parser.exit(1, f"student.py: {err}\n")
    print(f"student edition: {len(written)} notebooks in {args.out}")
    if not args.check:
        return 0
    problems = []
    for path in written:
        found = check_student_notebook(path)
        print(f"{path.name}: {'ok' if not found else f'{len(found)} problems'}", flush=True)
        problems += found
    for line in problems:
        print(line)
    if problems:
        return 1
    print("every check fails without its answer, and every lesson cell runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
