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
  so that autograde itself never fails on a submission. A check with nothing of the learner's
  above it (every answer cell as nbgrader released it, no cell added or changed:
  ``registry.learners_from``) fails at once, without a process. The verdicts wait in nbgrader's
  ``resources``, in memory.
- ``WriteVerdicts``, after ``Execute`` and before ``SaveAutoGrades``: each judged check cell's
  outputs are replaced by its verdict (a report on stdout, or an error naming the first number
  that differs), so nbgrader scores the verdict and nothing the kernel printed.

Nothing the kernel defines reaches the comparison: not its globals, not its files (the judge ran
before it), not its stderr. Warnings an answer raises are reported as a note, not counted.
``act_course.grading.registry.judge_notebook`` runs the same judge on a notebook outside nbgrader (the
tests use it).

Each judged notebook is a ``Judged`` (act_course.grading.registry.JUDGED lists them; the modules
exercises_<notebook>.py write them): the exercises' allowed pieces (the table in docs/teaching.md,
"Writing ACT means writing it", says the same; a test holds them together), the names handed in,
the course packages the answers may use (``library``: 01-04 use ``act_numpy``; ``committed``: the
committed sweeps a lesson cell reads, copied read-only into the copy of ``act_experiments``, where
``tables.committed_results`` finds them as in an installed wheel), and for each
check cell either a function that draws inputs and returns the calls to make with a ``verify``
that compares their results with the references, or ``BY_ITS_TESTS``: its answers are values,
read back by name from the answer's process (``read_answers``, after the lesson's cells they
need: lesson.py), and the check cell's own tests decide on them in a process of the judge's
(replay.py). A check marked ``by_hand`` (a piece the course provides, 03's ``eq19_gradient``)
runs as 03b's do: without the lesson, the course's packages and PyTorch out of reach; one marked
``apart`` (11's ``kl_directions``, beside a test that runs the course's gallery) runs without the
lesson and the course's packages, PyTorch kept where the notebook allows it.
"""

import ast
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .exchange import AnswerError, Earlier, Read, encode, exchange, one_line, plain_env, python_command, \
    read_outputs, returned
from ..course import answered
from .guard import PACKAGES
from .lesson import cell_role, learners_own, needed, without_unread_imports
from .seal import repository_entries

__all__ = ["AnswerError", "BY_ITS_TESTS", "Earlier", "Judged", "Read", "Verdict", "Wrong", "answer_names", "apart",
           "as_int", "by_hand", "judge_cell", "keep_statements", "read_answers", "returned", "same", "shaped", "truth",
           "unpack"]

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
    library: tuple = ()              # course packages the answer may use, copied read-only beside it
    inert: tuple = ("matplotlib",)   # modules whose import binds a stand-in that draws nothing
    constants: dict = field(default_factory=dict)   # {dotted name: value} read through an out-of-reach module
    committed: tuple = ()            # folders of results/ the lesson reads, copied with act_experiments (copy_package)


BY_ITS_TESTS = "by its hidden tests"       # a check of values: its own cell decides, in the judge's process (replay.py)
ANSWERED = re.compile(r"\banswered\(([^)]*)\)")


def by_hand(check):
    """Mark a check whose answer is a piece the course provides: it runs without the lesson and
    with the course's packages out of reach, as in 03b, however the notebook is judged."""
    check.by_hand = True
    return check


def apart(check):
    """Mark a check whose answer runs without the lesson and with the course's packages out of reach,
    PyTorch kept where the notebook allows it, in a notebook whose other checks may use ``library``
    (11's ``kl_directions``, to be written with ``F.kl_div``, beside a test of the gallery's pieces)."""
    check.apart = True
    return check


def answer_names(code):
    """The names a check cell hands to ``answered(...)``, in order: the answers it reads."""
    found = []
    for args in ANSWERED.findall(code):
        for name in (a.strip().split("=")[0].strip() for a in args.split(",")):
            if name and name not in found:
                found.append(name)
    return found


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


def keep_statements(source, expressions=False):
    """The statements of a cell that the judge runs, in order: every top-level statement but a bare
    expression (a call for its display or its effect: ``print(...)``, ``plt.plot(...)``, an IPython
    magic, ``get_ipython()...``); with ``expressions``, bare expressions too (where an answer is
    values, a call's effect can be part of it: ``loss.backward()``). Imports, assignments of any
    value (``DTYPE = np.float64``, ``sig = lambda z: ...``), ``def``, ``class`` and the rest are
    kept. Returns (code, dropped count); code '' when the cell does not parse."""
    try:
        tree = ast.parse(_python(source))
    except SyntaxError:
        return "", 1
    kept = [node for node in tree.body if expressions or not isinstance(node, ast.Expr)]
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
def run_answer(cells, calls, judged, out_of_reach, timeout=TIMEOUT, library=None, torch=None):
    """Run the kept cells ``cells`` [{"name", "code", "quiet"?}] and ``calls`` [(function name,
    args) or Read(name)] in the answer's own process (runner.py), through exchange.py's channel,
    with read-only copies of the course's packages ``library`` beside it (and those alone; None:
    the notebook's), and PyTorch where ``torch`` (None: where the notebook allows it).

    Returns (notes, entries): one-line notes on statements that stopped, and one entry per call
    (exchange.read_outputs). Raises AnswerError when the process gives no readable outputs."""
    torch = judged.torch if torch is None else torch
    library = judged.library if library is None else library
    blocked = [p for p in judged.blocked if p not in library] + ([] if torch else ["torch"])
    job = {"cells": cells, "calls": [_call(c) for c in calls], "given": judged.given, "modules": judged.modules,
           "pieces": {n: n for n in _pieces(judged)}, "out_of_reach": out_of_reach, "blocked": blocked,
           "why": judged.why, "denied": repository_entries(), "library": list(library), "inert": list(judged.inert),
           "constants": judged.constants}
    with tempfile.TemporaryDirectory(prefix="act-judge-") as folder:
        runner = Path(folder) / "runner.py"
        shutil.copy(RUNNER, runner)
        shutil.copy(SEAL, Path(folder) / "seal.py")
        for package in library:
            copy_package(package, Path(folder) / "library" / package,
                         committed=judged.committed if package == "act_experiments" else ())
        out = exchange(python_command(runner, folder), job, folder, plain_env(folder), timeout)
    return read_outputs(out, len(calls))


def _call(call):
    if isinstance(call, Read):
        return {"read": call.name}
    if isinstance(call, dict):                      # a Read made where a check cell stands: {"name", "at"}
        return {"read": call["name"], "at": call["at"]}
    function, args = call
    return {"function": function, "args": [encode(a) for a in args]}


def copy_package(package, target, committed=()):
    """A read-only copy of the installed course package ``package`` (its .py files) at ``target``,
    with the committed sweeps ``committed`` (folders of results/) in its ``committed/`` folder: where
    act_experiments.tables.committed_results finds them, as in an installed wheel, since the answer's
    process may not open the repository's results/."""
    import importlib.util
    import os
    from act_experiments.tables import RESULTS
    spec = importlib.util.find_spec(package)
    shutil.copytree(spec.submodule_search_locations[0], target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in committed:
        shutil.copytree(RESULTS / name, target / "committed" / name)
    for here, folders, files in os.walk(target, topdown=False):
        for name in files:
            os.chmod(os.path.join(here, name), 0o444)
        os.chmod(here, 0o555)


def _pieces(judged):
    return sorted({p for pieces in judged.allowed.values() for p in pieces})


def answer_cells(cells, index, lesson, replay=False, checkpoints=None):
    """The cells the judge runs for check cell ``index``: every answer cell above it and every code
    cell above it that the learner added (no nbgrader role, and not a lesson cell: ``lesson`` holds
    the lesson cells' sources, stripped), in order, as [{"name", "code", "quiet"}] of their kept
    statements (with ``replay``, bare expressions too, and the lesson cells these need:
    lesson.needed). The lesson's cells and the answer cells of other exercises are ``quiet``: what
    stops in them is not noted. ``checkpoints`` ({cell index: grade_id}, up to ``index``): a marker
    {"checkpoint": grade_id} where each of those check cells stands, for values read there."""
    checkpoints = checkpoints or {}
    noted = {_exercise(g) for g in checkpoints.values()} or {
        _exercise(cells[index].get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))}
    found = []
    for number, cell in enumerate(cells[:index + 1 if checkpoints else index]):
        if number in checkpoints:
            found.append({"checkpoint": checkpoints[number], "code": "", "must": True})
        if cell["cell_type"] != "code":
            continue
        source, meta = _source(cell), cell.get("metadata", {}).get("nbgrader")
        if cell_role(cell) == "solution":
            grade_id = meta.get("grade_id", "answer cell")
            found.append({"name": f"<{grade_id}>", "code": keep_statements(source, replay)[0],
                          "quiet": _exercise(grade_id) not in noted, "must": True})
        elif learners_own(cell, lesson):
            found.append({"name": f"<your cell {number + 1}>", "code": keep_statements(source, replay)[0],
                          "must": True})
        elif not meta and replay and source.strip():
            found.append({"name": f"<lesson cell {number + 1}>", "code": keep_statements(source, True)[0],
                          "quiet": True})
    if replay:
        found = [found[k] for k in needed([c["code"] for c in found], {k for k, c in enumerate(found) if c.get("must")})]
        codes = without_unread_imports([c["code"] for c in found], {k for k, c in enumerate(found) if not c.get("must")})
        found = [dict(c, code=code) for c, code in zip(found, codes)]
    return [{k: v for k, v in c.items() if k != "must"} for c in found]


def _exercise(grade_id):
    match = re.match(r"ex(\d+)-", grade_id or "")
    return match.group(1) if match else None


def judge_cell(nb, index, judged, check, rng, timeout=TIMEOUT, lesson=frozenset()):
    """The Verdict on check cell ``index`` of the notebook ``nb`` (a dict or NotebookNode). Never
    raises: whatever goes wrong while judging scores the cell 0, with one line saying what."""
    try:
        return _judge_cell(nb, index, judged, check, rng, timeout, lesson)
    except Exception as err:                                    # noqa: BLE001 (a verdict, not a crash)
        return Verdict(False, one_line(f"the judge could not grade this answer ({type(err).__name__}: {err}); "
                                       "it scores 0"), type(err).__name__)


def _setting(nb, judged, check):
    """(replay, library, out_of_reach, torch) of a check: whether the lesson's cells run before the
    answer, the course packages copied beside it, the names the notebook imports from the others,
    and whether PyTorch may be imported (not for an answer written by hand)."""
    hand = getattr(check, "by_hand", False)
    replay = bool(judged.library) and not hand and not getattr(check, "apart", False)
    library = judged.library if replay else ()
    lesson_code = [_source(c) for c in nb["cells"] if c["cell_type"] == "code" and cell_role(c) != "solution"]
    out_of_reach = {k: v for k, v in course_imports(lesson_code).items()
                    if k not in _pieces(judged) and v.split(".")[0] not in library}
    return replay, library, out_of_reach, judged.torch and not hand


def _judge_cell(nb, index, judged, check, rng, timeout, lesson):
    cells = nb["cells"]
    replay, library, out_of_reach, torch = _setting(nb, judged, check)
    calls, verify = check(rng)
    notes = []
    try:
        notes, entries = run_answer(answer_cells(cells, index, lesson, replay), calls, judged, out_of_reach,
                                    timeout=timeout, library=library, torch=torch)
        report = verify(entries)
    except (AnswerError, Wrong) as err:
        ename = err.ename if isinstance(err, AnswerError) else "AssertionError"
        return Verdict(False, one_line(str(err)) + _noted(notes, "; "), ename)
    warned = sorted({w for e in entries for w in e.get("warnings", [])})
    if warned:
        report += "\nnote: your answer raised " + "; ".join(warned[:3]) + " (shown here, not counted)"
    return Verdict(True, report + _noted(notes, "\n"))


def read_answers(nb, targets, judged, timeout=TIMEOUT, lesson=frozenset()):
    """The values of the answers that the check cells ``targets`` [(cell index, grade_id)] read
    (``answer_names``), each as the answer's process worked it out where its check cell stands,
    after the lesson's cells it needs: {grade_id: ({name: value}, notes) or a failed Verdict}. One
    process reads them all; when it gives no readable outputs, each check is read in a process of
    its own, so that an answer that never ends costs its own check alone. Never raises."""
    if len(targets) > 1:
        try:
            return _read(nb, targets, judged, timeout, lesson)
        except Exception:                                       # noqa: BLE001 (each on its own, below)
            pass
    found = {}
    for target in targets:
        try:
            found.update(_read(nb, [target], judged, timeout, lesson))
        except AnswerError as err:
            found[target[1]] = Verdict(False, one_line(str(err)), err.ename)
        except Exception as err:                                # noqa: BLE001 (a verdict, not a crash)
            found[target[1]] = Verdict(False, one_line(f"the judge could not grade this answer "
                                                       f"({type(err).__name__}: {err}); it scores 0"), type(err).__name__)
    return found


def _read(nb, targets, judged, timeout, lesson):
    cells = nb["cells"]
    names = {g: answer_names(_source(cells[i])) for i, g in targets}
    calls = [dict(Read(n).__dict__, at=g) for _, g in targets for n in names[g]]
    replay, library, out_of_reach, torch = _setting(nb, judged, BY_ITS_TESTS)
    where = answer_cells(cells, max(i for i, _ in targets), lesson, replay, checkpoints=dict(targets))
    notes, entries = run_answer(where, calls, judged, out_of_reach, timeout=timeout, library=library, torch=torch)
    found, at = {}, 0
    for _, grade_id in targets:
        mine = [n for n in notes if n.startswith((f"<ex{_exercise(grade_id)}-", "<your cell"))]
        values = {}
        for name in names[grade_id]:
            try:
                values[name] = returned(entries[at])
            except AnswerError as err:
                found[grade_id] = Verdict(False, one_line(f"{name}: {err}") + _noted(mine, "; "), err.ename)
            at += 1
        if grade_id not in found and any(v is None for v in values.values()):
            try:                                    # the check's answered(...) would stop there: say so now
                answered(**values)
            except AssertionError as err:
                found[grade_id] = Verdict(False, one_line(str(err)) + _noted(mine, "; "), "AssertionError")
        found.setdefault(grade_id, (values, mine))
    return found


def _noted(notes, joint):
    """The statements of the learner's cells that stopped, as one note (they cost nothing themselves)."""
    if not notes:
        return ""
    return joint + one_line("note: in your cells, " + "; ".join(notes) + " (the other statements ran; "
                            "a check loses its points only when its calls fail)", 600)


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


def truth(value):
    """True or False when ``value`` is one truth value (a bool, NumPy's, or 0 or 1), else None."""
    if isinstance(value, bool):
        return value
    array = np.asarray(value) if isinstance(value, (int, float, np.ndarray, np.generic)) else None
    if array is None or array.shape != () or array.dtype.kind not in "biuf" or array.item() not in (0, 1):
        return None
    return bool(array.item())


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
