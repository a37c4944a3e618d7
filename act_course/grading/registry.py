"""The notebooks whose exercises act_course.grading.judge grades, and the judge run on a whole notebook."""

import secrets

import numpy as np

from . import exercises_03b, exercises_12
from .judge import TIMEOUT, cell_role, judge_cell

JUDGED = {"03b_write_your_own_act": exercises_03b.JUDGED, "12_attention_pondernet": exercises_12.JUDGED}


def judge_notebook(nb, name, rng=None, timeout=TIMEOUT, only=None):
    """{grade_id: Verdict} for the judged check cells of notebook ``nb`` named ``name`` (its stem);
    ``only``: these grade_ids alone."""
    judged = JUDGED.get(name)
    if judged is None:
        return {}
    rng = rng if rng is not None else np.random.default_rng(secrets.randbits(128))
    verdicts = {}
    for index, cell in enumerate(nb["cells"]):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell["cell_type"] == "code" and cell_role(cell) == "check" and grade_id in judged.checks \
                and (only is None or grade_id in only):
            verdicts[grade_id] = judge_cell(nb, index, judged, judged.checks[grade_id], rng, timeout)
    return verdicts
