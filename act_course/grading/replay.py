"""The judge's own run of a notebook's check cells, on the values an answer's process sent back.

An exercise whose answer is values worked out from the notebook's fixed inputs (01's ``N_pred``,
03's ``dp_lstm``, 04's ``delta32``...) is judged in two processes. The answer's process
(runner.py) runs the lesson's cells that the answer needs and the answer cells, and sends back
the values the check cell reads through ``answered(...)``: values only, read strictly
(exchange.py). Then this module, in a fresh process of nbgrader's own that runs no code of the
learner's, runs the course's source of the notebook: the lesson's cells that the check cells
need (lesson.needed), each answer cell in its released form (the names the task hands in, its
answer taken out), and each judged check cell whole, hidden tests included, with the answers'
names bound to those values. A check cell that runs to its end passes, with what it printed as
its report; one that raises fails, with its error's one line. So the decision is the check
cell's own, on references the teacher's notebook computes in the judge's process.

    python -m act_course.grading.replay      # the job on stdin, the verdicts on stdout (JSON)
"""

import contextlib
import io
import json
import os
import signal
import subprocess
import sys

from .exchange import decode, encode, one_line
from .lesson import cell_role, needed, release_form, source, without_unread_imports

CHECK_SECONDS = 120      # one check cell's tests, the lesson's cells before it included


def job(source_nb, values):
    """The cells to run, in order: the lesson's and the released answer cells the judged check
    cells need, and those check cells with the answers' values (``values``: {grade_id: {name:
    value}})."""
    from .judge import keep_statements
    cells = []
    for cell in source_nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        role, code = cell_role(cell), source(cell)
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if role == "check" and grade_id in values:
            cells.append({"check": grade_id, "code": code,
                          "values": {k: encode(v) for k, v in values[grade_id].items()}})
        elif role == "solution":
            cells.append({"code": keep_statements(release_form(code), True)[0]})
        elif role is None:
            cells.append({"code": keep_statements(code, True)[0]})
    must = {k for k, c in enumerate(cells) if "check" in c}
    cells = [cells[k] for k in needed([c["code"] for c in cells], must)]
    codes = without_unread_imports([c["code"] for c in cells], {k for k, c in enumerate(cells) if "check" not in c})
    return [dict(c, code=code) for c, code in zip(cells, codes)]


def decide(source_nb, values, timeout):
    """{grade_id: (passed, text, ename)} for the check cells of ``values``, decided in a process of
    the judge's own; every one failed, with one line saying why, when that process fails."""
    cells = job(source_nb, values)
    missing = set(values) - {c["check"] for c in cells if "check" in c}
    found = {g: (False, "the course's source of this notebook has no such check cell", "KeyError") for g in missing}
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", MPLBACKEND="Agg",
               ACT_SAVE_FIGURES="0")        # matplotlib, where a cell imports it, draws off screen
    try:
        done = subprocess.run([sys.executable, "-m", "act_course.grading.replay"], input=json.dumps(cells).encode(),
                              capture_output=True, timeout=timeout, env=env)
        verdicts = json.loads(done.stdout.decode("utf-8"))
    except (subprocess.TimeoutExpired, ValueError, OSError) as err:
        reason = f"the judge's run of the check cells stopped ({type(err).__name__})"
        return {**found, **{g: (False, reason, "RuntimeError") for g in set(values) - missing}}
    for grade_id in set(values) - missing:
        passed, text, ename = verdicts.get(grade_id, (False, "the judge's run ended before this check", "RuntimeError"))
        found[grade_id] = (bool(passed), str(text), str(ename))
    return found


class TooLong(Exception):
    """A check cell that ran past CHECK_SECONDS."""


def _alarm(signum, frame):
    raise TooLong(f"the check ran past {CHECK_SECONDS} s")


def _scalars(value):
    """0-d arrays as NumPy's scalars (np.float64), as the kernel had them; lists and dicts within."""
    import numpy as np
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    if isinstance(value, list):
        return [_scalars(v) for v in value]
    if isinstance(value, dict):
        return {k: _scalars(v) for k, v in value.items()}
    return value


def run(cells):
    """Run ``cells`` in one namespace; {grade_id: [passed, report or message, error name]}."""
    namespace = {"__name__": "__main__"}
    verdicts = {}
    signal.signal(signal.SIGALRM, _alarm)
    for cell in cells:
        printed = io.StringIO()
        signal.alarm(CHECK_SECONDS)
        try:
            if "check" in cell:
                namespace.update({k: _scalars(decode(v, [0], 0)) for k, v in cell["values"].items()})
            with contextlib.redirect_stdout(printed):
                exec(compile(cell["code"], cell.get("check", "<lesson>"), "exec"), namespace)
            if "check" in cell:
                verdicts[cell["check"]] = [True, printed.getvalue().strip(), ""]
        except BaseException as err:                             # noqa: BLE001 (a verdict, not a crash)
            if "check" in cell:
                verdicts[cell["check"]] = [False, one_line(str(err) or type(err).__name__), type(err).__name__]
        finally:
            signal.alarm(0)
    return verdicts


def main():
    cells = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    channel = os.dup(1)                     # the verdicts' way out; what the cells print goes nowhere
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    data = json.dumps(run(cells)).encode("utf-8")
    while data:
        data = data[os.write(channel, data):]


if __name__ == "__main__":
    main()
