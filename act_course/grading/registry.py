"""The notebooks whose exercises act_course.grading.judge grades, and the judge run on a whole notebook."""

import json
import secrets
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path

import numpy as np

from act_experiments.files import ROOT

from . import replay
from .exchange import one_line
from .judge import BY_ITS_TESTS, TIMEOUT, Verdict, _noted, judge_cell, read_answers
from .lesson import as_released, cell_role, learners_own, source as cell_source


class _Judged(Mapping):
    """{notebook stem: its Judged}, each exercises module imported when its notebook is first
    looked up: nbgrader loads this registry in every command it runs (scripts/nbgrader_config.py),
    and the modules of the later notebooks import PyTorch, SciPy and Matplotlib, seconds a command
    that grades one notebook, or none, need not spend."""

    STEMS = ("01_forward_pass", "02_binary_flag", "03_backprop_remainder", "03b_write_your_own_act",
             "04_numpy_vs_torch", "05_parity", "06_logic", "07_addition", "08_sort", "09_characters",
             "10_time_penalty", "11_pitfalls", "12_attention_pondernet", "13_universal_transformer", "14_convnet_aig",
             "15_when_adapting_pays")

    def __getitem__(self, stem):
        if stem not in self.STEMS:
            raise KeyError(stem)
        number = stem.split("_")[0]
        return import_module(f"{__package__}.exercises_{number}").JUDGED

    def __iter__(self):
        return iter(self.STEMS)

    def __len__(self):
        return len(self.STEMS)


JUDGED = _Judged()


def source_notebook(path):
    """The course's source of a notebook (the teacher's edition, at ``path``) as a dict, or {}."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return nb if isinstance(nb, dict) else {}


def lesson_cells(path_or_nb):
    """The stripped sources of the lesson's code cells (no nbgrader role) of the notebook at
    ``path_or_nb`` (a path, or the notebook itself): what the judge tells apart from the learner's
    own cells. An empty set when there is no such notebook (every cell without a role then counts
    as the learner's, and its lesson statements at worst stop in the judge, noted, costing nothing)."""
    nb = path_or_nb if isinstance(path_or_nb, dict) else source_notebook(path_or_nb)
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


def learners_from(nb, source, lesson):
    """The index of the first code cell of ``nb`` that holds something of the learner's: an answer
    cell other than the one nbgrader released (``as_released`` of the cell of its grade_id in the
    course's ``source``), or a code cell of no role that is not one of the ``lesson``'s cells (added
    or changed); the number of cells when there is none. The answers of a check cell above it are
    all as released: nothing of the learner's can make its calls pass or give its values."""
    released = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c for c in source.get("cells", [])
                if c.get("cell_type") == "code" and cell_role(c) == "solution"}
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        if cell_role(cell) == "solution":
            mine = released.get(cell["metadata"]["nbgrader"].get("grade_id"))
            made = as_released(mine) if mine is not None else None
            if made is None or cell_source(cell).rstrip() != made.rstrip():
                return index
        elif learners_own(cell, lesson):
            return index
    return len(nb["cells"])


def judge_notebook(nb, name, rng=None, timeout=TIMEOUT, only=None, source=None):
    """{grade_id: Verdict} for the judged check cells of notebook ``nb`` named ``name`` (its stem);
    ``only``: these grade_ids alone; ``source``: the course's source of the notebook (a dict, its
    lesson cells and check cells trusted), by default the repository's. Never raises: a check that
    cannot be judged fails."""
    judged = JUDGED.get(name)
    if judged is None:
        return {}
    source = source_notebook(ROOT / "notebooks" / f"{name}.ipynb") if source is None else source
    lesson = lesson_cells(source)
    rng = rng if rng is not None else np.random.default_rng(secrets.randbits(128))
    verdicts, values, notes = {}, {}, {}
    order = [(i, g) for i, g in judged_ids(nb, name) if only is None or g in only]
    untouched = learners_from(nb, source, lesson)
    for index, grade_id in order:
        check = judged.checks[grade_id]
        if index < untouched:           # a blank exercise: no process started for it
            verdicts[grade_id] = Verdict(False, f"{grade_id}: not answered yet, its answer cell is as released "
                                         "(it raises NotImplementedError)", "NotImplementedError")
        elif check is not BY_ITS_TESTS:
            verdicts[grade_id] = judge_cell(nb, index, judged, check, rng, timeout, lesson)
    reading = [(i, g) for i, g in order if judged.checks[g] is BY_ITS_TESTS and g not in verdicts]
    for grade_id, got in (read_answers(nb, reading, judged, timeout, lesson) if reading else {}).items():
        if isinstance(got, Verdict):
            verdicts[grade_id] = got
        else:
            values[grade_id], notes[grade_id] = got
    if values:
        for grade_id, (passed, text, ename) in replay.decide(source, values, timeout * 2).items():
            text = one_line(text, 2000) if not passed else text
            verdicts[grade_id] = Verdict(passed, text + _noted(notes[grade_id], "\n" if passed else "; "),
                                         ename or "AssertionError")
    return {g: verdicts[g] for _, g in order}


def failed_all(nb, name, err):
    """Every judged check of ``nb`` failed, with one line on why: what the judge gives when it
    cannot run at all, so that no check falls back on what the learner's kernel printed."""
    text = one_line(f"the judge could not run ({type(err).__name__}: {err}); this check scores 0")
    return {grade_id: Verdict(False, text, type(err).__name__) for _, grade_id in judged_ids(nb, name)}
