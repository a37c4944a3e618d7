"""A pytest plugin for nbval: a graded check cell that writes to stderr fails, as nbgrader scores it 0.

``make test`` runs the source notebooks once, under nbval; with this rule that run also says that the
source gets every point of every check cell (a check cell is one with nbgrader's ``grade`` and without
``solution``), so ``scripts/student.py --check`` grades only the untouched release with nbgrader.
The repository's conftest.py loads it; elsewhere: ``pytest -p act_course.grading.nbval_rule``.
"""

import pytest


def graded_check(cell):
    """True for a check cell that nbgrader grades automatically."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution") and cell.get("cell_type") == "code"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    cell = getattr(item, "cell", None)
    if call.when != "call" or not report.passed or cell is None or not graded_check(cell):
        return
    stderr = "".join(out.get("text", "") for out in (getattr(item, "test_outputs", None) or [])
                     if out.get("output_type") == "stream" and out.get("name") == "stderr")
    if stderr.strip():
        grade_id = cell["metadata"]["nbgrader"].get("grade_id", "?")
        report.outcome = "failed"
        report.longrepr = (f"check cell {grade_id} writes to stderr, so nbgrader would score it 0: "
                           f"{stderr.strip().splitlines()[0]}")
