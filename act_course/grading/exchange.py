"""The judge's one channel to the process that runs an answer: calls in on stdin, outputs back on stdout.

The answer's process (runner.py) is untrusted: its code runs beside whatever the runner holds,
and it can walk the runner's frames, rewrite its functions, write to any descriptor it owns or
end the process. So nothing it sends back is believed about itself. The judge

- writes the job (the code to run and the calls to make, inputs only: never a reference value)
  to the process's stdin, and leaves no file beside it;
- reads at most ``LIMIT_BYTES`` from its stdout, within the time limit, and nothing else
  (stderr gives at most the last line of a crash, as a reason);
- reads that as one JSON document of a strict form, {"statements": [...], "calls": [...]}, with
  exactly one output per call made, each a value or an error, every value of the few forms the
  runner writes (``read_outputs``). A missing or extra output, a document of another form, a
  value of another form, a number that is not finite, or more than ``MAX_VALUES`` numbers in one
  output: the call's check fails. A set comes back as a set (of numbers and strings), so that a
  check cell that asks for one gets one. The checks decide on the values alone (exercises_01.py
  and the other exercises_*.py), comparing them with references that never leave the judge's
  process.

A call is a function's name and its arguments (arrays, lists, dictionaries, numbers; ``Earlier``
for what an earlier call returned, ``Generator`` for a NumPy generator seeded by the judge,
``Tensor`` for a PyTorch tensor where the exercise allows PyTorch, ``Piece`` for a function the
judge wrote, handed over as its source and compiled in the answer's process), or ``Read``: the value
the answer cells bound to a name, for an exercise answered with values.
"""

import json
import math
import os
import subprocess
import sys
import threading
from dataclasses import dataclass

import numpy as np

LIMIT_BYTES = 16 * 2 ** 20        # what one answer's process may send back in all
MAX_VALUES = 1_000_000            # numbers in one output
MAX_DEPTH = 8                     # lists and dictionaries nested in one output
MAX_TEXT = 300                    # characters of a string, a message or a note the judge shows
INT64 = 2 ** 63


class AnswerError(Exception):
    """What an answer's call did instead of returning a value the judge can read."""

    def __init__(self, ename, message):
        super().__init__(message)
        self.ename = ename


@dataclass
class Earlier:
    """An argument that is what call number ``call`` returned (item ``item`` of it, or all of it)."""
    call: int
    item: int = None


@dataclass
class Tensor:
    """An argument handed to the answer as a PyTorch tensor (float64), where the exercise allows PyTorch."""
    array: object


@dataclass
class Generator:
    """An argument handed to the answer as ``np.random.default_rng(seed)``, the seed drawn at grading time."""
    seed: int


@dataclass
class Piece:
    """An argument handed to the answer as a function the judge wrote: ``source`` defines ``piece``
    (with ``torch`` and ``np`` beside it) and is compiled in the answer's process, under a name that
    says nothing of what it does (exercises_11.py: the halting distributions a test must tell apart)."""
    source: str


@dataclass
class Read:
    """Not a call: the value the answer cells bound to ``name`` (an exercise answered with values)."""
    name: str


def one_line(text, limit=MAX_TEXT):
    """``text`` on one line, at most ``limit`` characters: what a verdict may show of a message."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ------------------------------------------------------------------------- the calls, going out
def encode(value):
    """An argument as JSON for the runner: arrays as {"ndarray": [dtype, shape, values]}."""
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"set": [encode(v) for v in value]}
    if isinstance(value, Earlier):
        return {"result": [value.call, value.item]}
    if isinstance(value, Generator):
        return {"rng": int(value.seed)}
    if isinstance(value, Tensor):
        return {"tensor": encode(np.asarray(value.array, dtype=float))}
    if isinstance(value, Piece):
        return {"piece": value.source}
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        kind = "f8" if array.dtype.kind == "f" else "i8" if array.dtype.kind in "iu" else "?"
        return {"ndarray": [kind, list(array.shape), array.astype(kind).ravel().tolist()]}
    return value


# -------------------------------------------------------------------------- the process itself
def exchange(command, job, folder, env, timeout):
    """Run ``command`` in ``folder``, hand it ``job`` (JSON) on stdin, and return its stdout (bytes).

    Raises AnswerError when it runs past ``timeout`` seconds, sends back more than
    ``LIMIT_BYTES``, or exits with a non-zero status (the last line of its stderr as the reason)."""
    process = subprocess.Popen(command, cwd=folder, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    out, err, over = bytearray(), bytearray(), []

    def read_out():
        while True:
            chunk = process.stdout.read1(1 << 16)
            if not chunk:
                return
            if len(out) + len(chunk) > LIMIT_BYTES:
                over.append(True)
                process.kill()
                return
            out.extend(chunk)

    def read_err():
        while True:
            chunk = process.stderr.read1(1 << 16)
            if not chunk:
                return
            err.extend(chunk)
            del err[:-4096]                     # its last lines are all a reason needs

    def write_in():
        try:
            process.stdin.write(json.dumps(job).encode("utf-8"))
            process.stdin.close()
        except OSError:                         # it stopped before reading: its status says why
            pass

    threads = [threading.Thread(target=f, daemon=True) for f in (read_out, read_err, write_in)]
    for thread in threads:
        thread.start()
    try:
        status = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AnswerError("TimeoutError", f"your answer did not finish within {timeout} s") from None
    finally:
        for thread in threads:
            thread.join(timeout=10)
    if over:
        raise AnswerError("ValueError", f"your answer's process sent back more than {LIMIT_BYTES >> 20} MB")
    if status != 0:
        last = (err.decode("utf-8", "replace").strip().splitlines() or ["(no message)"])[-1]
        raise AnswerError("RuntimeError", one_line(f"the process that runs your answer stopped: {last}"))
    return bytes(out)


def python_command(runner, folder):
    """The command that runs ``runner`` in isolation: no PYTHONPATH, no user site, no current folder,
    no bytecode written beside it."""
    return [sys.executable, "-I", "-B", str(runner), str(folder)]


def plain_env(home):
    """The answer's environment: nothing of the grader's but a PATH, one thread per math library."""
    return {"PATH": os.defpath, "HOME": str(home), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "LC_ALL": "C.UTF-8"}


# ----------------------------------------------------------------------- the outputs, coming in
class Malformed(ValueError):
    """An output that is not of a form the runner writes (the message says how)."""


class _NotFinite:
    """What ``NaN``, ``Infinity`` and ``-Infinity`` read as: never a value a check accepts."""


NOT_FINITE = _NotFinite()


def read_outputs(data, count):
    """The document ``data`` (the runner's stdout) read strictly: (statements, entries).

    ``statements``: up to twenty one-line notes on statements of the answer's cells that stopped
    (text only, never a verdict). ``entries``: one per call, in order, each {"value": v},
    {"error": [name, message]} or {"bad": why}, with "warnings" (one-line notes) beside. Raises
    AnswerError when the document is not of that form or holds another number of outputs than
    ``count``: then no check of the cell can be decided, and each fails."""
    try:
        document = json.loads(data.decode("utf-8"), parse_constant=lambda name: NOT_FINITE)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise AnswerError("ValueError", "what your answer's process sent back is not the judge's format "
                                        "(did it write to its output itself?)") from None
    if not isinstance(document, dict) or set(document) != {"statements", "calls"} \
            or not isinstance(document["calls"], list) or not isinstance(document["statements"], list):
        raise AnswerError("ValueError", "what your answer's process sent back is not the judge's format")
    if len(document["calls"]) != count:
        raise AnswerError("ValueError", f"your answer's process sent back {len(document['calls'])} results for "
                                        f"{count} calls: every call must return once, in order")
    notes = [one_line(" ".join(map(str, s)) if isinstance(s, list) else s) for s in document["statements"][:20]
             if isinstance(s, (list, str))]
    return notes, [_entry(e) for e in document["calls"]]


def _entry(raw):
    if not isinstance(raw, dict) or not set(raw) <= {"value", "error", "warnings"} \
            or ("value" in raw) == ("error" in raw):
        return {"bad": "not a value or an error of the judge's format", "warnings": []}
    warnings = raw.get("warnings", [])
    warnings = [one_line(w, 120) for w in warnings[:5] if isinstance(w, str)] if isinstance(warnings, list) else []
    if "error" in raw:
        error = raw["error"]
        if not (isinstance(error, list) and len(error) == 2 and all(isinstance(e, str) for e in error)):
            return {"bad": "an error of another form than the judge's", "warnings": warnings}
        return {"error": [one_line(error[0], 60), one_line(error[1])], "warnings": warnings}
    try:
        return {"value": decode(raw["value"], [0], 0), "warnings": warnings}
    except Malformed as why:
        return {"bad": str(why), "warnings": warnings}


def _number(value):
    if value is NOT_FINITE:
        raise Malformed("it holds a number that is not finite (inf or nan)")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Malformed(f"it holds a {type(value).__name__} where a number belongs")
    if isinstance(value, float) and not math.isfinite(value):      # 1e400 reads as inf
        raise Malformed("it holds a number that is not finite (inf or nan)")
    if isinstance(value, int) and not -INT64 <= value < INT64:
        raise Malformed("it holds a whole number too large for 64 bits")
    return value


def decode(value, counted, depth):
    """One output of the runner's format as Python (arrays as NumPy arrays), or Malformed.
    ``counted``: [numbers read so far in this output]."""
    if depth > MAX_DEPTH:
        raise Malformed(f"it is nested more than {MAX_DEPTH} levels deep")
    counted[0] += 1
    if counted[0] > MAX_VALUES:
        raise Malformed(f"it holds more than {MAX_VALUES} numbers")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) or value is NOT_FINITE:
        return _number(value)
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise Malformed(f"it holds a string longer than {MAX_TEXT} characters")
        return value
    if not isinstance(value, dict) or len(value) != 1:
        raise Malformed("it is not a value of the judge's format")
    (form, body), = value.items()
    if form == "ndarray":
        return _array(body, counted)
    if form == "list" and isinstance(body, list):
        return [decode(v, counted, depth + 1) for v in body]
    if form == "set" and isinstance(body, list):
        return _set([decode(v, counted, depth + 1) for v in body])
    if form == "dict" and isinstance(body, list):
        out = {}
        for pair in body:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise Malformed("it holds a dictionary of another form than the judge's")
            key = decode(pair[0], counted, depth + 1)
            if isinstance(key, (list, dict, np.ndarray)):
                raise Malformed("it holds a dictionary key that is not a number or a string")
            out[key] = decode(pair[1], counted, depth + 1)
        return out
    raise Malformed("it is not a value of the judge's format")


def _set(members):
    """A set of numbers and strings (a 0-d array as its number, as NumPy's own scalars hash), or Malformed."""
    members = [m.item() if isinstance(m, np.ndarray) and m.shape == () else m for m in members]
    if any(isinstance(m, (list, dict, np.ndarray)) for m in members):
        raise Malformed("it holds a set whose members are not numbers or strings")
    return set(members)


def _array(body, counted):
    if not (isinstance(body, list) and len(body) == 3 and body[0] in ("f8", "i8", "?")
            and isinstance(body[1], list) and len(body[1]) <= 32 and isinstance(body[2], list)):
        raise Malformed("it holds an array of another form than the judge's")
    kind, shape, flat = body
    if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_VALUES for n in shape):
        raise Malformed("it holds an array whose shape is not whole numbers")
    size = int(np.prod(shape, dtype=object)) if shape else 1
    counted[0] += len(flat)
    if size != len(flat) or counted[0] > MAX_VALUES:
        raise Malformed("it holds an array whose values do not fill its shape, or too many of them")
    if kind == "?":
        if not all(isinstance(v, bool) for v in flat):
            raise Malformed("it holds a boolean array with other values in it")
    else:
        for v in flat:
            _number(v)
        if kind == "i8" and not all(isinstance(v, int) for v in flat):
            raise Malformed("it holds an integer array with other values in it")
    return np.array(flat, dtype=kind).reshape(shape)


def returned(entry):
    """What one call returned, or raise AnswerError: the exception the answer raised, or why its
    output cannot be read."""
    if "bad" in entry:
        raise AnswerError("ValueError", f"what your answer returned cannot be taken: {entry['bad']}")
    if "error" in entry:
        raise AnswerError(*entry["error"])
    return entry["value"]
