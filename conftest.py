"""pytest's settings for the whole repository (the unit tests' helpers are in tests/conftest.py).

Under nbval, a graded check cell that writes to stderr fails, as nbgrader would score it 0
(act_experiments/grading/nbval_rule.py).
"""

pytest_plugins = ["act_experiments.grading.nbval_rule"]
