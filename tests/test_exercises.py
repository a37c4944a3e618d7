"""The exercises follow nbgrader's conventions, and the student edition is made and checked right.

The full student-edition run (every check of every notebook fails without its answer) is
`make exercises`, part of `make test`; here are its rules on the committed notebooks and the
checker itself on small notebooks made for the purpose.
"""

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
GRADE_ID = re.compile(r"^ex(\d+)-(solution|check|answer)(-[a-z0-9]+)?$")


def load_student():
    spec = importlib.util.spec_from_file_location("student", ROOT / "scripts" / "student.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


student = load_student()


def exercises(cells):
    """{exercise number: [(cell index, role)]} from the grade_ids, in notebook order."""
    found = {}
    for index, cell in enumerate(cells):
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta:
            match = GRADE_ID.match(meta.get("grade_id", ""))
            assert match, f"cell {index}: grade_id {meta.get('grade_id')!r} is not exK-solution/check/answer"
            found.setdefault(int(match.group(1)), []).append((index, student.nbgrader_role(cell)))
    return found


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
            if role in ("check", "answer"):
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


SOLUTION = "from act_experiments.course import answered\nx = None\n### BEGIN SOLUTION\nx = 3\n### END SOLUTION"


def test_student_edition_takes_out_solutions_and_its_checker_finds_decorative_checks(tmp_path):
    import nbformat
    source = tmp_path / "01_demo.ipynb"
    nbformat.write(notebook([
        ("lesson = 1", None, None),
        (SOLUTION, "ex1-solution", "solution"),
        ("assert answered(x=x) == 3, 'x should be 3'", "ex1-check", "check"),
        ("assert True  # checks nothing", "ex1-check-b", "check"),
        ("lesson + undefined_name", None, None),
        ("Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION", "ex2-answer", "answer"),
    ]), source)
    [made] = student.generate([source], tmp_path / "student")
    cells = nbformat.read(made, as_version=4).cells
    assert "x = 3" not in cells[1].source and "raise NotImplementedError()" in cells[1].source
    assert "Because." not in cells[5].source and "YOUR ANSWER HERE" in cells[5].source
    problems = student.check_student_notebook(made)
    assert len(problems) == 2, problems
    assert "check ex1-check-b passes without its answer" in problems[0]
    assert "lesson cell 4 fails in the student edition (NameError" in problems[1]


def test_a_check_that_fails_for_the_wrong_reason_is_reported(tmp_path):
    import nbformat
    source = tmp_path / "01_demo.ipynb"
    nbformat.write(notebook([
        (SOLUTION, "ex1-solution", "solution"),
        ("assert y == 3", "ex1-check", "check"),
    ]), source)
    [made] = student.generate([source], tmp_path / "student")
    [problem] = student.check_student_notebook(made)
    assert "fails with NameError" in problem and "instead of saying what is missing" in problem


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
