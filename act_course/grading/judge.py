"""Judge an exercise's answer outside the learner's kernel, on inputs drawn at grading time.

A hidden test cell runs inside the learner's kernel, and anything it starts there (a guard, a
profile hook, the names it reads) the answer can rewrite. The judge therefore sits in nbgrader's
own process, as two preprocessors in ``c.Autograde.autograde_preprocessors``
(scripts/nbgrader_config.py):

- ``JudgeAnswers``, before ``Execute``: for every check cell it knows, it takes the code cells
  above it that are the learner's (the ``ex<number>-solution`` answer cells, and cells the
  learner added), keeps by ``ast`` every top-level statement but bare expressions
  (``keep_statements``), and runs them with ``runner.py`` in a fresh ``python -I`` in a
  temporary folder, with a time limit, the course's packages out of reach and an audit hook
  that refuses files outside the Python installation and its packages, the repository,
  subprocesses, sockets and ctypes. The exercise hands in the pieces it allows (``sigmoid``).
  The inputs are drawn now, from fresh entropy; the references are computed here, from the
  course's packages, and never leave this process: the answer's process gets the calls on stdin
  and sends back their outputs on stdout, read strictly (exchange.py). Every verdict is decided
  here; whatever goes wrong while judging a cell scores that cell 0 with one line saying what,
  so that autograde itself never fails on a submission. The verdicts wait in nbgrader's
  ``resources``, in memory.
- ``WriteVerdicts``, after ``Execute`` and before ``SaveAutoGrades``: each judged check cell's
  outputs are replaced by its verdict (a report on stdout, or an error naming the first number
  that differs), so nbgrader scores the verdict and nothing the kernel printed.

Nothing the kernel defines reaches the comparison: not its globals, not its files (the judge ran
before it), not its stderr. Warnings an answer raises are reported as a note, not counted.
``act_course.grading.registry.judge_notebook`` runs the same judge on a notebook outside nbgrader (the
tests use it).

Each judged notebook is a ``Judged`` (act_course.grading.registry.JUDGED lists them; exercises_03b and
exercises_12 write them): the exercises' allowed pieces (the
table in docs/teaching.md, "Writing ACT means writing it", says the same; a test holds them
together), the names handed in, and one function per check cell that draws inputs and returns
the calls to make with a ``verify`` that compares their results with the references.
"""

import ast
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .exchange import AnswerError, Earlier, encode, exchange, one_line, plain_env, python_command, read_outputs, \
    returned
from .guard import PACKAGES
from .seal import repository_entries

__all__ = ["AnswerError", "Earlier", "Judged", "Verdict", "Wrong", "as_int", "judge_cell", "keep_statements",
           "returned", "same", "shaped", "unpack"]

RUNNER = Path(__file__).with_name("runner.py")
SEAL = Path(__file__).with_name("seal.py")         # the runner's audit hook, copied beside it
TIMEOUT = 120          # seconds for one check's answer, NumPy's import included
WHY = "this exercise asks you to write this piece yourself, from the equations (NumPy operations)"


class Wrong(AssertionError):
    """An answer's result differs from the reference: the message names the first difference."""


@dataclass
class Verdict:
    passed: bool
    text: str                        # the report (passed) or the message (failed)
    ename: str = "AssertionError"    # the error's name when failed


@dataclass
class Judged:
    """One notebook's judged exercises: {exercise: allowed pieces}, handed-in names, {grade_id: check}."""
    allowed: dict
    checks: dict
    given: dict = field(default_factory=dict)
    modules: dict = field(default_factory=lambda: {"np": "numpy", "numpy": "numpy", "math": "math"})
    blocked: tuple = PACKAGES
    torch: bool = False
    why: str = WHY


# ------------------------------------------------------------------------------------ the answer
COURSE = re.compile(r"^(%s)(\.|$)" % "|".join(PACKAGES))


def _source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _python(source):
    """A cell's code as Python: IPython's magics become calls (which keep_statements drops)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except ImportError:                                          # pragma: no cover
        return source


def keep_statements(source):
    """The statements of a cell that the judge runs, in order: every top-level statement but a bare
    expression (a call for its display or its effect: ``print(...)``, ``plt.plot(...)``, an IPython
    magic, ``get_ipython()...``). Imports, assignments of any value (``DTYPE = np.float64``,
    ``sig = lambda z: ...``), ``def``, ``class`` and the rest are kept. Returns (code, dropped
    count); code '' when the cell does not parse."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return "", 1
    kept = [node for node in tree.body if not isinstance(node, ast.Expr)]
    return ast.unparse(ast.Module(body=kept, type_ignores=[])), len(tree.body) - len(kept)


def course_imports(sources):
    """{name: dotted} for every name that the cells ``sources`` bind by importing the course."""
    names = {}
    for source in sources:
        try:
            tree = ast.parse(_python(source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and COURSE.match(node.module or ""):
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if COURSE.match(alias.name):
                        bound = alias.asname or alias.name.split(".")[0]
                        names[bound] = alias.name if alias.asname else bound
    return names


# ------------------------------------------------------------------------------------- the judge
def run_answer(cells, calls, judged, out_of_reach, timeout=TIMEOUT):
    """Run the kept cells ``cells`` [{"name", "code"}] and ``calls`` [(function name, args)] in
    the answer's own process (runner.py), through exchange.py's channel.

    Returns (notes, entries): one-line notes on statements that stopped, and one entry per call
    (exchange.read_outputs). Raises AnswerError when the process gives no readable outputs."""
    job = {"cells": cells, "calls": [{"function": f, "args": [encode(a) for a in args]} for f, args in calls],
           "given": judged.given, "modules": judged.modules, "pieces": {n: n for n in _pieces(judged)},
           "out_of_reach": out_of_reach, "blocked": list(judged.blocked) + ([] if judged.torch else ["torch"]),
           "why": judged.why, "denied": repository_entries()}
    with tempfile.TemporaryDirectory(prefix="act-judge-") as folder:
        runner = Path(folder) / "runner.py"
        shutil.copy(RUNNER, runner)
        shutil.copy(SEAL, Path(folder) / "seal.py")
        out = exchange(python_command(runner, folder), job, folder, plain_env(folder), timeout)
    return read_outputs(out, len(calls))


def _pieces(judged):
    return sorted({p for pieces in judged.allowed.values() for p in pieces})


def answer_cells(cells, index, lesson):
    """The cells the judge runs for check cell ``index``: every answer cell above it and every code
    cell above it that the learner added (no nbgrader role, and not a lesson cell: ``lesson`` holds
    the lesson cells' sources, stripped), in order, as [{"name", "code"}] of their kept statements."""
    found = []
    for number, cell in enumerate(cells[:index]):
        if cell["cell_type"] != "code":
            continue
        source, meta = _source(cell), cell.get("metadata", {}).get("nbgrader")
        if cell_role(cell) == "solution":
            found.append({"name": f"<{meta.get('grade_id', 'answer cell')}>", "code": keep_statements(source)[0]})
        elif not meta and source.strip() and source.strip() not in lesson:
            found.append({"name": f"<your cell {number + 1}>", "code": keep_statements(source)[0]})
    return found


def judge_cell(nb, index, judged, check, rng, timeout=TIMEOUT, lesson=frozenset()):
    """The Verdict on check cell ``index`` of the notebook ``nb`` (a dict or NotebookNode). Never
    raises: whatever goes wrong while judging scores the cell 0, with one line saying what."""
    try:
        return _judge_cell(nb, index, judged, check, rng, timeout, lesson)
    except Exception as err:                                    # noqa: BLE001 (a verdict, not a crash)
        return Verdict(False, one_line(f"the judge could not grade this answer ({type(err).__name__}: {err}); "
                                       "it scores 0"), type(err).__name__)


def _judge_cell(nb, index, judged, check, rng, timeout, lesson):
    cells = nb["cells"]
    lesson_code = [_source(c) for c in cells if c["cell_type"] == "code" and cell_role(c) != "solution"]
    out_of_reach = {k: v for k, v in course_imports(lesson_code).items() if k not in _pieces(judged)}
    calls, verify = check(rng)
    notes = []
    try:
        notes, entries = run_answer(answer_cells(cells, index, lesson), calls, judged, out_of_reach, timeout=timeout)
        report = verify(entries)
    except (AnswerError, Wrong) as err:
        ename = err.ename if isinstance(err, AnswerError) else "AssertionError"
        return Verdict(False, one_line(str(err)) + _noted(notes, "; "), ename)
    warned = sorted({w for e in entries for w in e.get("warnings", [])})
    if warned:
        report += "\nnote: your answer raised " + "; ".join(warned[:3]) + " (shown here, not counted)"
    return Verdict(True, report + _noted(notes, "\n"))


def _noted(notes, joint):
    """The statements of the learner's cells that stopped, as one note (they cost nothing themselves)."""
    if not notes:
        return ""
    return joint + one_line("note: in your cells, " + "; ".join(notes) + " (the other statements ran; "
                            "a check loses its points only when its calls fail)", 600)


def cell_role(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("solution") and not meta.get("grade"):
        return "solution"
    if meta.get("grade") and not meta.get("solution"):
        return "check"
    return None


# ------------------------------------------------------------------------------ the comparisons
def same(what, mine, reference, tol=1e-10, source="act_numpy", hint=""):
    """max |mine - reference|, or Wrong naming the first entry that differs by more than ``tol``."""
    try:
        mine = np.asarray(mine, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"{what}: yours is not an array of numbers") from None
    reference = np.asarray(reference, dtype=float)
    if mine.shape != reference.shape:
        raise Wrong(f"{what}: yours has shape {mine.shape}, {source} gives {reference.shape}")
    diff = np.abs(mine - reference)
    diff = np.where(np.isnan(diff), np.inf, diff)
    worst = float(diff.max()) if diff.size else 0.0
    if worst > tol:
        i = tuple(int(k) for k in np.argwhere(diff > tol)[0])
        at = f" first at index {i}" if i else ""
        raise Wrong(f"{what} differs{at}: yours {mine[i]:.6g}, {source} gives {reference[i]:.6g} "
                    f"(largest |difference| {worst:.1e} > {tol:g}). {hint}".strip())
    return worst


def unpack(value, count, what):
    if not isinstance(value, list) or len(value) != count:
        raise Wrong(f"{what} should return {count} values, not {type(value).__name__} "
                    f"{len(value) if isinstance(value, list) else ''}".strip())
    return value


def shaped(what, value, shape):
    """``value`` as a float array of shape ``shape``, or Wrong saying which shape it has."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"{what}: yours is not an array of numbers") from None
    if array.shape != tuple(shape):
        raise Wrong(f"{what} should have shape {tuple(shape)}, not {array.shape}")
    return array


def as_int(value, what):
    try:
        number = np.asarray(value)
        if number.shape != () or not np.isfinite(number) or number != int(number):
            raise ValueError
        return int(number)
    except (TypeError, ValueError, OverflowError):
        raise Wrong(f"{what} should be a whole number, not {value!r}") from None
