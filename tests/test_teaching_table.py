"""docs/teaching.md's "What is graded, and where" is what the notebooks and the judge's registry say.

The table is regenerated from the notebooks (act_course.grading.checks_table) and must stand in
the guide exactly; every self-check has a reason and no judged check has one.
"""

import json

import pytest

from act_course import NOTEBOOKS
from act_course.grading import checks_table
from act_course.grading.judge import cell_role
from act_course.grading.registry import JUDGED
from act_experiments.files import ROOT


def test_the_guide_holds_the_table_of_checks_as_the_notebooks_give_it():
    text = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    table = checks_table.table(NOTEBOOKS)
    assert table in text, ("docs/teaching.md's \"What is graded, and where\" differs from the notebooks: paste in "
                           "the output of `python scripts/student.py --checks`")


def test_every_check_cell_is_in_the_table_once_judged_as_the_registry_says():
    found = dict(checks_table.checks(NOTEBOOKS))
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        ids = [c["metadata"]["nbgrader"]["grade_id"] for c in cells if c["cell_type"] == "code" and cell_role(c) == "check"]
        rows = found[checks_table.number(path)]
        assert [row[0] for row in rows] == ids
        judged = JUDGED[path.stem].checks if path.stem in JUDGED else {}
        assert {row[0] for row in rows if row[3] == "judged"} == set(judged)
        assert all(row[4] for row in rows if row[3] == "self-check"), "a self-check without its reason"


def test_a_self_check_without_a_reason_or_a_stale_reason_is_refused(tmp_path, monkeypatch):
    source = next(p for p in NOTEBOOKS if p.stem.startswith("05_"))
    nb = json.loads(source.read_text(encoding="utf-8"))
    copy = tmp_path / source.name
    copy.write_text(json.dumps(nb), encoding="utf-8")
    monkeypatch.setitem(checks_table.REASONS, "05/ex9-check", checks_table.VALUES)
    with pytest.raises(ValueError, match="05/ex9-check"):
        checks_table.checks([copy])
    monkeypatch.delitem(checks_table.REASONS, "05/ex9-check")
    monkeypatch.delitem(checks_table.REASONS, "05/ex3-check-b")
    with pytest.raises(KeyError, match="05/ex3-check-b"):
        checks_table.checks([copy])


def test_a_check_that_reads_the_live_network_carries_no_points(tmp_path):
    """The issue's rule: such a check stays a self-check for the learner, worth 0 in the gradebook."""
    source = next(p for p in NOTEBOOKS if p.stem.startswith("09_"))
    nb = json.loads(source.read_text(encoding="utf-8"))
    rows = dict(checks_table.checks([source]))["09"]
    live = [row for row in rows if row[4].startswith(checks_table.LIVE)]
    assert live and all(row[1] == 0 for row in live)
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == live[0][0]:
            cell["metadata"]["nbgrader"]["points"] = 1
    copy = tmp_path / source.name
    copy.write_text(json.dumps(nb), encoding="utf-8")
    with pytest.raises(ValueError, match=f"09/{live[0][0]} reads the network trained live"):
        checks_table.checks([copy])


def test_the_guide_holds_the_table_of_exercises_and_their_points_as_the_notebooks_give_them():
    from act_course.grading import student
    text = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    assert student.exercise_table(NOTEBOOKS) in text, (
        "docs/teaching.md's table of exercises differs from the notebooks: paste in the output of "
        "`python scripts/student.py --table`")
