"""The exercises follow nbgrader's conventions, and nbgrader grades both editions right.

The full run (nbgrader autograde gives the untouched release of every notebook no point, and every
lesson cell runs) is `make exercises`, part of `make test`, while nbval's run of the sources holds
their side (conftest.py: a check cell that raises or writes to stderr fails, as nbgrader scores it 0); here are its rules on the committed
notebooks, the grader itself on small notebooks made for the purpose, and the course that
`make course` builds.
"""

import json
import re
from pathlib import Path

import pytest

from act_course.grading import assignments, checks_table, student
from act_course.grading.nbgrader_run import autograde

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
GRADE_ID = re.compile(r"^ex(\d+)-(solution|check|answer)(-[a-z0-9]+)?$")


def exercises(cells):
    """{exercise number: [(cell index, role)]} from the grade_ids, in notebook order."""
    found = {}
    for index, cell in enumerate(cells):
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta:
            match = GRADE_ID.match(meta.get("grade_id", ""))
            assert match, f"cell {index}: grade_id {meta.get('grade_id')!r} is not ex<number>-solution/check/answer"
            found.setdefault(int(match.group(1)), []).append((index, student.nbgrader_role(cell)))
    return found


# the checks that read the network trained live in the learner's kernel: self-checks of no points
LIVE = {key for key, why in checks_table.REASONS.items()
        if (why[0] if isinstance(why, tuple) else why) == checks_table.LIVE}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_exercise_has_a_task_a_hint_an_answer_and_a_check(path):
    cells = json.loads(path.read_text())["cells"]
    found = exercises(cells)
    ids = [c["metadata"]["nbgrader"]["grade_id"] for c in cells if "nbgrader" in c.get("metadata", {})]
    assert len(ids) == len(set(ids)), f"duplicate grade_ids: {sorted(ids)}"
    checked_code = 0
    previous_end = 0
    for number, members in sorted(found.items(), key=lambda item: item[1][0][0]):
        first, last = members[0][0], members[-1][0]
        before = "".join("".join(c["source"]) for c in cells[previous_end:first] if c["cell_type"] == "markdown")
        assert f"Exercise {number}" in before, f"exercise {number}: no task cell titled 'Exercise {number}'"
        assert "<details>" in before and "Hint" in before, f"exercise {number}: no collapsed hint before it"
        roles = [role for _, role in members]
        assert "solution" in roles or "answer" in roles, f"exercise {number}: no solution or answer cell"
        if "solution" in roles:
            solution_at = roles.index("solution")
            assert "check" in roles[solution_at:], f"exercise {number}: no check cell after its solution"
            checked_code += 1
        for index, role in members:
            cell = cells[index]
            meta, source = cell["metadata"]["nbgrader"], "".join(cell["source"])
            assert "NBVAL_SKIP" not in source, f"exercise {number}: CI must run its cells"
            assert meta.get("schema_version") == 3
            if role in ("solution", "answer"):
                assert "### BEGIN SOLUTION" in source and "### END SOLUTION" in source, \
                    f"exercise {number}: {meta['grade_id']} does not mark its solution"
            if role in ("check", "answer") and f"{checks_table.number(path)}/{meta['grade_id']}" in LIVE:
                assert meta.get("points") == 0, f"{meta['grade_id']}: it reads the live network, so it has no points"
            elif role in ("check", "answer"):
                assert meta.get("points", 0) > 0, f"{meta['grade_id']}: a graded cell needs points"
            if role == "check":
                assert meta.get("locked") and cell["cell_type"] == "code", f"{meta['grade_id']}: not a locked code cell"
        previous_end = last + 1
    assert checked_code >= 2, f"{path.name}: {checked_code} checked code exercises, at least 2 wanted"


def notebook(cells):
    """A notebook of (source, grade_id or None, role) triples, as nbgrader metadata."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    for source, grade_id, role in cells:
        cell = nbformat.v4.new_markdown_cell(source) if role == "answer" else nbformat.v4.new_code_cell(source)
        if grade_id:
            cell.metadata["nbgrader"] = {
                "grade": role in ("check", "answer"), "solution": role in ("solution", "answer"),
                "locked": role == "check", "grade_id": grade_id, "schema_version": 3, "task": False,
                **({"points": 1} if role in ("check", "answer") else {})}
        nb.cells.append(cell)
    return nb


SOLUTION = "from act_course.course import answered\nx = None\n### BEGIN SOLUTION\nx = 3\n### END SOLUTION"


@pytest.mark.slow
def test_nbgrader_grades_the_source_and_the_release_and_reports_what_is_wrong(tmp_path):
    """Two notebooks in one course (nbgrader's start-up paid once): what fails where, and a check that
    fails for the wrong reason (a NameError, not a missing answer) reported as such."""
    import nbformat
    source, wrong_reason = tmp_path / "01_demo.ipynb", tmp_path / "02_demo.ipynb"
    nbformat.write(notebook([
        (SOLUTION, "ex1-solution", "solution"),
        ("assert y == 3", "ex1-check", "check"),
    ]), wrong_reason)
    nbformat.write(notebook([
        ("lesson = 1", None, None),
        (SOLUTION, "ex1-solution", "solution"),
        ("assert answered(x=x) is not None\n### BEGIN HIDDEN TESTS\nassert x == 3, 'x should be 3'\n"
         "### END HIDDEN TESTS", "ex1-check", "check"),
        ("assert True  # checks nothing", "ex1-check-b", "check"),
        ("import sys\nsys.stderr.write('a warning')\nassert answered(x=x) == 3", "ex1-check-c", "check"),
        ("lesson + undefined_name", None, None),
        ("Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION", "ex2-answer", "answer"),
    ]), source)
    found = student.check([source, wrong_reason], out=tmp_path / "student", source=True)
    problems = [p for p in found if p.startswith(f"{source.name}: ")]
    made = nbformat.read(tmp_path / "student" / source.name, as_version=4).cells
    assert "x = 3" not in made[1].source and "raise NotImplementedError()" in made[1].source
    assert "x == 3" not in made[2].source and "HIDDEN" not in made[2].source
    assert "Because." not in made[6].source and "YOUR ANSWER HERE" in made[6].source
    assert len(problems) == 4, problems
    assert "the source scores 0 of 1 on ex1-check-c (it writes to stderr: a warning)" in problems[0]
    assert "lesson cell 5 fails in the source (NameError" in problems[1]
    assert "check ex1-check-b passes without its answer" in problems[2]
    assert "lesson cell 5 fails in the student edition (NameError" in problems[3]
    wrong = [p for p in found if p.startswith(f"{wrong_reason.name}: ")]
    assert len(found) == len(problems) + len(wrong), found
    assert any("source scores 0 of 1 on ex1-check (NameError" in p for p in wrong), wrong
    assert any("fails with NameError" in p and "instead of saying what is missing" in p for p in wrong), wrong


@pytest.mark.slow
def test_hidden_tests_decide_the_grade(tmp_path):
    """A wrong answer that passes the visible check gets nothing once nbgrader restores the hidden tests."""
    import nbformat
    source = tmp_path / "01_demo.ipynb"
    nbformat.write(notebook([
        (SOLUTION, "ex1-solution", "solution"),
        ("assert answered(x=x) > 0\n### BEGIN HIDDEN TESTS\nassert x == 3\n### END HIDDEN TESTS",
         "ex1-check", "check"),
    ]), source)
    student.generate([source], tmp_path / "student")
    wrong = tmp_path / "wrong" / source.name
    wrong.parent.mkdir()
    nb = nbformat.read(source, as_version=4)
    nb.cells[0].source = nb.cells[0].source.replace("x = 3", "x = 4")
    nb.cells[1].source = "assert answered(x=x) > 0"          # the hidden tests deleted, as in a release
    nbformat.write(nb, wrong)
    graded = autograde(tmp_path / "nbgrader", {"wrong": [wrong], "right": [source]})
    assert graded["wrong"][source.name][1] == {"ex1-check": (0, 1)}
    assert graded["right"][source.name][1] == {"ex1-check": (1, 1)}


@pytest.mark.slow
def test_under_nbval_a_check_cell_that_writes_to_stderr_fails(tmp_path):
    """act_course.grading.nbval_rule, which conftest.py loads: nbgrader would score such a check 0,
    so the source's nbval run fails it; the same text in a lesson cell passes."""
    import subprocess
    import sys

    import nbformat
    source = tmp_path / "01_demo.ipynb"
    warn = "import sys\nsys.stderr.write('a warning')"
    nbformat.write(notebook([(SOLUTION, "ex1-solution", "solution"), (warn, "ex1-check", "check"),
                             (warn, None, None)]), source)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "act_course.grading.nbval_rule", "--nbval-lax",
                           "--nbval-current-env", str(source)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout, done.stdout
    assert "check cell ex1-check writes to stderr, so nbgrader would score it 0: a warning" in done.stdout


@pytest.mark.slow
def test_nbgrader_refusing_a_notebook_is_one_line_of_the_cli(tmp_path, capsys):
    import nbformat
    source = tmp_path / "01_demo.ipynb"
    nbformat.write(notebook([(SOLUTION, "ex1-solution", "solution"), (SOLUTION, "ex1-solution", "solution")]),
                   source)
    with pytest.raises(SystemExit) as stop:
        student.main([str(source), "--out", str(tmp_path / "student")])
    assert stop.value.code == 1
    assert capsys.readouterr().err.startswith("student.py: nbgrader generate_assignment failed")
    with pytest.raises(SystemExit) as stop:
        student.main([str(tmp_path / "missing.ipynb")])
    assert stop.value.code == 2


def test_the_exercise_table_has_a_row_per_exercise_with_its_points(tmp_path):
    import nbformat
    source = tmp_path / "07_demo.ipynb"
    nb = notebook([(SOLUTION, "ex1-solution", "solution"), ("assert x", "ex1-check", "check"),
                   ("assert x", "ex1-check-b", "check"), ("Why?\n### BEGIN SOLUTION\nB.\n### END SOLUTION", "ex2-answer",
                                                          "answer")])
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("### Exercise 1: choose x\n\n### Exercise 2 — why"))
    nbformat.write(nb, source)
    table = student.exercise_table([source]).splitlines()
    assert table[2:] == ["| 07 | 1. Choose x | 2 | - |", "| 07 | 2. Why | 0 | 1 |"]


SOLUTION_WORDS = re.compile(r"make student|student edition|model (solution|answer)|solution cell|this edition",
                            flags=re.I)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_code_exercise_keeps_its_decisive_checks_hidden(path):
    """Each exercise answered in code has a check cell with nbgrader hidden tests, and a visible
    part that is more than the markers (shape, type, one example, and a message)."""
    cells = json.loads(path.read_text())["cells"]
    for number, members in exercises(cells).items():
        if "solution" not in [role for _, role in members]:
            continue
        checks = ["".join(cells[i]["source"]) for i, role in members if role == "check"]
        hidden = [c for c in checks if "### BEGIN HIDDEN TESTS" in c]
        assert hidden, f"exercise {number}: no check cell has hidden tests (### BEGIN HIDDEN TESTS)"
        for check in hidden:
            assert check.count("### BEGIN HIDDEN TESTS") == check.count("### END HIDDEN TESTS")
            visible = re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", check, flags=re.S)
            assert visible.strip(), f"exercise {number}: a check with nothing visible says nothing to a learner"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_text_suits_both_editions(path):
    """No markdown a learner reads speaks of solutions, model answers or the student edition."""
    cells = json.loads(path.read_text())["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        text = re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", "", "".join(cell["source"]), flags=re.S)
        found = SOLUTION_WORDS.search(text)
        assert not found, f"cell {index} speaks of {found.group(0)!r}, which the release does not have"


def test_the_course_has_every_notebook_once_with_links_that_resolve(tmp_path):
    assignments.build(tmp_path / "course", generate=False)
    assert (tmp_path / "course" / "nbgrader_config.py").read_text() == (ROOT / "scripts" / "nbgrader_config.py").read_text()
    placed = sorted(p.name for p in (tmp_path / "course" / "source").glob("*/*.ipynb"))
    assert placed == sorted(p.name for p in NOTEBOOKS)
    assert len(assignments.ASSIGNMENTS) == 8
    for nb_path in (tmp_path / "course" / "source").glob("*/*.ipynb"):
        for cell in json.loads(nb_path.read_text())["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for target in re.findall(r"\]\(([^)\s]+)\)", "".join(cell["source"])):
                path = target.split("#")[0]
                if not path or "://" in path or path.startswith("mailto:"):
                    continue
                assert (nb_path.parent / path).is_file(), f"{nb_path.parent.name}/{nb_path.name}: {target} leads nowhere"
    text = (ROOT / "docs" / "teaching.md").read_text()
    for assignment in assignments.ASSIGNMENTS:
        assert f"`{assignment}`" in text, f"docs/teaching.md does not name the assignment {assignment}"


def test_building_the_course_again_keeps_the_gradebook_and_the_submissions(tmp_path):
    out = tmp_path / "course"
    assignments.build(out, generate=False)
    (out / "gradebook.db").write_bytes(b"grades")
    (out / "submitted" / "alice").mkdir(parents=True)
    (out / "source" / "stray.ipynb").write_text("{}")
    assignments.build(out, generate=False)
    assert (out / "gradebook.db").read_bytes() == b"grades" and (out / "submitted" / "alice").is_dir()
    # a file of the teacher's in source/ stays (tests/test_grading.py: edited sources are kept too)
    assert (out / "source" / "stray.ipynb").read_text() == "{}" and (out / "source" / "session1").is_dir()
    assignments.build(out, generate=False, fresh=True)
    assert not (out / "gradebook.db").exists() and not (out / "submitted").exists()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_graded_notebook_says_how_its_answers_are_graded(path):
    """Before its exercises, a learner reads what grading runs and what it refuses: the judge's
    rules where answers are judged outside the kernel, the sealed kernel where they are not."""
    from act_course.grading.registry import JUDGED
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    if not any(c["metadata"].get("nbgrader", {}).get("grade") for c in cells):
        pytest.skip("no graded cell")
    said = [c for c in cells if c["cell_type"] == "markdown" and "**How your answers are graded.**" in "".join(c["source"])]
    assert len(said) == 1, f"{path.name}: say once how the answers are graded"
    text = "".join(said[0]["source"])
    first_exercise = next(i for i, c in enumerate(cells) if c["metadata"].get("nbgrader", {}).get("grade"))
    assert cells.index(said[0]) < first_exercise, f"{path.name}: say it before the first exercise"
    if path.stem in JUDGED:
        assert "judge" in text and "the course's own" in text and "inputs drawn at grading time" in text
    else:
        assert "sealed" in text and "subprocess" in text and "network" in text
