"""The notebooks whose exercises act_course.grading.judge grades, and the judge run on a whole notebook."""

import json
import secrets
from pathlib import Path

import numpy as np

from act_experiments.files import ROOT

from . import exercises_03b, exercises_12
from .exchange import one_line
from .judge import TIMEOUT, Verdict, cell_role, judge_cell

JUDGED = {"03b_write_your_own_act": exercises_03b.JUDGED, "12_attention_pondernet": exercises_12.JUDGED}


def lesson_cells(path):
    """The stripped sources of the lesson's code cells (no nbgrader role) of the notebook at ``path``:
    what the judge leaves out of a submission's cells, so that the learner's own cells are the
    rest. An empty set when there is no such notebook (every cell without a role then counts as
    the learner's, and its lesson statements at worst stop in the judge, noted, costing nothing)."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    return frozenset("".join(c["source"]).strip() for c in nb.get("cells", [])
                     if c.get("cell_type") == "code" and not c.get("metadata", {}).get("nbgrader"))


def judged_ids(nb, name):
    """[(cell index, grade_id)] of the check cells of ``nb`` that the judge grades."""
    judged = JUDGED.get(name)
    if judged is None:
        return []
    return [(index, cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")) for index, cell in enumerate(nb["cells"])
            if cell["cell_type"] == "code" and cell_role(cell) == "check"
            and cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in judged.checks]


def judge_notebook(nb, name, rng=None, timeout=TIMEOUT, only=None, lesson=None):
    """{grade_id: Verdict} for the judged check cells of notebook ``nb`` named ``name`` (its stem);
    ``only``: these grade_ids alone; ``lesson``: the lesson cells' sources (``lesson_cells``), by
    default those of the repository's notebook. Never raises: a check that cannot be judged fails."""
    judged = JUDGED.get(name)
    if judged is None:
        return {}
    lesson = lesson_cells(ROOT / "notebooks" / f"{name}.ipynb") if lesson is None else lesson
    rng = rng if rng is not None else np.random.default_rng(secrets.randbits(128))
    verdicts = {}
    for index, grade_id in judged_ids(nb, name):
        if only is None or grade_id in only:
            verdicts[grade_id] = judge_cell(nb, index, judged, judged.checks[grade_id], rng, timeout, lesson)
    return verdicts


def failed_all(nb, name, err):
    """Every judged check of ``nb`` failed, with one line on why: what the judge gives when it
    cannot run at all, so that no check falls back on what the learner's kernel printed."""
    text = one_line(f"the judge could not run ({type(err).__name__}: {err}); this check scores 0")
    return {grade_id: Verdict(False, text, type(err).__name__) for _, grade_id in judged_ids(nb, name)}
