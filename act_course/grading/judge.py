"""Judge an exercise's answer outside the learner's kernel, on inputs drawn at grading time.

A hidden test cell runs inside the learner's kernel, and anything it starts there (a guard, a
profile hook, the names it reads) the answer can rewrite. The judge therefore sits in nbgrader's
own process, as two preprocessors in ``c.Autograde.autograde_preprocessors``
(scripts/nbgrader_config.py):

- ``JudgeAnswers``, before ``Execute``: for every check cell it knows, it takes the notebook's
  answer cells (the ``ex<number>-solution`` cells above the check), keeps by ``ast`` only their
  definitions, imports and literal constants, and runs them with ``runner.py`` in a fresh
  ``python -I`` in a temporary folder, with a time limit, the course's packages out of reach and
  an audit hook that refuses files outside the standard library and NumPy (PyTorch where the
  exercise allows it), subprocesses, sockets and ctypes. The exercise hands in the pieces it
  allows (``sigmoid``). The inputs are drawn now, from fresh entropy; the references are computed
  here, from the course's packages, before the learner's kernel has run at all; the results come
  back as JSON. The verdicts wait in nbgrader's ``resources``, in memory.
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
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from act_experiments.files import ROOT

from .guard import PACKAGES

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
    """A cell's code as Python: IPython's magics become calls (which keep_definitions drops)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except ImportError:                                          # pragma: no cover
        return source


def _literal(node):
    try:
        ast.literal_eval(node)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def keep_definitions(source):
    """The statements of a cell that the judge runs: ``def``, ``class``, imports, and names bound to
    literal constants (``EPS = 1e-9``). Everything else (calls, loops, prints, a hook installed at
    the top of the cell) is dropped. Returns (code, dropped count); code '' when the cell does not parse."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return "", 1
    kept = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            kept.append(node)
        elif (isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets)
              and _literal(node.value)):
            kept.append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None \
                and _literal(node.value):
            kept.append(node)
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


# ---------------------------------------------------------------------------------- the exchange
def _encode(value):
    if isinstance(value, dict):
        return {"dict": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"list": [_encode(v) for v in value]}
    if isinstance(value, Earlier):
        return {"result": [value.call, value.item]}
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        kind = "f8" if array.dtype.kind == "f" else "i8" if array.dtype.kind in "iu" else "?"
        return {"ndarray": [kind, list(array.shape), array.astype(kind).ravel().tolist()]}
    return value


def _decode(value):
    if isinstance(value, dict):
        if "ndarray" in value:
            kind, shape, flat = value["ndarray"]
            return np.array(flat, dtype=kind).reshape(shape)
        if "dict" in value:
            return {_decode(k): _decode(v) for k, v in value["dict"]}
        if "list" in value:
            return [_decode(v) for v in value["list"]]
    return value


@dataclass
class Earlier:
    """An argument that is what call number ``call`` returned (item ``item`` of it, or all of it)."""
    call: int
    item: int = None


class AnswerError(Exception):
    def __init__(self, ename, message):
        super().__init__(message)
        self.ename = ename


def returned(entry):
    """What one call returned, or raise AnswerError with the exception the answer raised."""
    if "error" in entry:
        raise AnswerError(*entry["error"])
    return _decode(entry["value"])


def run_answer(cells, calls, judged, out_of_reach, timeout=TIMEOUT):
    """Run the answer cells' kept code and ``calls`` [(function name, args)] in the answer's own
    process (runner.py).

    Returns the runner's result: {"cells": None or [error name, message], "calls": [entry]}.
    Raises AnswerError when the process gives no result (time limit, crash)."""
    job = {"cells": cells, "calls": [{"function": f, "args": [_encode(a) for a in args]} for f, args in calls],
           "given": judged.given, "modules": judged.modules, "pieces": {n: n for n in _pieces(judged)},
           "out_of_reach": out_of_reach, "blocked": list(judged.blocked) + ([] if judged.torch else ["torch"]), "why": judged.why, "torch": judged.torch,
           "denied": [str(ROOT)]}
    with tempfile.TemporaryDirectory(prefix="act-judge-") as folder:
        runner = Path(folder) / "runner.py"
        shutil.copy(RUNNER, runner)
        shutil.copy(SEAL, Path(folder) / "seal.py")
        (Path(folder) / "job.json").write_text(json.dumps(job), encoding="utf-8")
        env = {"PATH": os.defpath, "HOME": folder, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "LC_ALL": "C.UTF-8"}
        try:
            done = subprocess.run([sys.executable, "-I", str(runner), folder], cwd=folder, env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AnswerError("TimeoutError", f"your answer did not finish within {timeout} s") from None
        made = Path(folder) / "result.json"
        if done.returncode != 0 or not made.is_file():
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise AnswerError("RuntimeError", f"the process that runs your answer stopped: {last}")
        try:
            return json.loads(made.read_text(encoding="utf-8"))
        except ValueError:
            raise AnswerError("RuntimeError", "your answer's results could not be read") from None


def _pieces(judged):
    return sorted({p for pieces in judged.allowed.values() for p in pieces})


def judge_cell(nb, index, judged, check, rng, timeout=TIMEOUT):
    """The Verdict on check cell ``index`` of the notebook ``nb`` (a dict or NotebookNode)."""
    cells = nb["cells"]
    answers = [_source(c) for c in cells[:index] if c["cell_type"] == "code" and cell_role(c) == "solution"]
    lesson = [_source(c) for c in cells if c["cell_type"] == "code" and cell_role(c) != "solution"]
    kept = [keep_definitions(s)[0] for s in answers]
    out_of_reach = {k: v for k, v in course_imports(lesson).items() if k not in _pieces(judged)}
    calls, verify = check(rng)
    try:
        result = run_answer(kept, calls, judged, out_of_reach, timeout=timeout)
        if result["cells"] is not None:
            raise AnswerError(result["cells"][0], f"your answer cells stop with {result['cells'][0]}: "
                                                  f"{result['cells'][1]}")
        report = verify([e for e in result["calls"]])
    except AnswerError as err:
        return Verdict(False, str(err), err.ename)
    except Wrong as err:
        return Verdict(False, str(err), "AssertionError")
    noted = sorted({w for e in result["calls"] for w in e.get("warnings", [])})
    if noted:
        report += "\nnote: your answer raised " + "; ".join(noted[:3]) + " (shown here, not counted)"
    return Verdict(True, report)


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
        if number.shape != () or number != int(number):
            raise ValueError
        return int(number)
    except (TypeError, ValueError):
        raise Wrong(f"{what} should be a whole number, not {value!r}") from None
