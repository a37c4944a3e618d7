"""pytest's settings for the whole repository (the unit tests' helpers are in tests/conftest.py).

- Under nbval, a graded check cell that writes to stderr fails, as nbgrader would score it 0
  (act_course/grading/nbval_rule.py).
- Under pytest-xdist's ``--dist loadgroup`` (``make test``), a notebook's cells form one group, so one
  worker runs them in order in one kernel, as nbval needs; every other test is sent on its own.
  The longest work is collected first, so that it does not start last: nbgrader's passes over the
  whole course, then the notebooks, then the unit tests.
"""

import pytest

pytest_plugins = ["act_course.grading.nbval_rule"]


def _order(item):
    if item.get_closest_marker("graded_course"):
        return 0
    return 1 if item.nodeid.partition("::")[0].endswith(".ipynb") else 2


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.nodeid.partition("::")[0]
        if path.endswith(".ipynb"):
            item.add_marker(pytest.mark.xdist_group(path))
    items.sort(key=_order)          # stable: each group keeps its order
