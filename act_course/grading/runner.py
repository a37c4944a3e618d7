"""The program that runs a learner's answer for act_course.grading.judge, in a process of its own.

    python -I runner.py FOLDER               # reads FOLDER/job.json, writes FOLDER/result.json

It is a script, not a module of the course: it imports nothing of the course but seal.py, which
the judge copies beside it and which needs only the standard library; the judge runs a copy of
it in a fresh temporary FOLDER under ``python -I`` (no PYTHONPATH, no user site, no
current folder on the path). In order, it

1. reads the job: the answer cells' code (definitions, imports and literal constants, already
   kept by ``ast`` in the judge), the names the exercise hands in, the packages out of reach, and
   the calls to make;
2. imports NumPy (and PyTorch when the exercise allows it), then puts out of reach the course's
   packages (an import of one fails) and installs the grading seal's audit hook (seal.py), told
   to refuse any file outside the standard library, NumPy, PyTorch and FOLDER, and subprocesses,
   sockets and ctypes; the hook reads nothing that an answer could rebind;
3. runs the answer's code, then each call, with the warnings it raises recorded and what it
   prints kept apart;
4. writes the results as JSON (arrays as dtype, shape and a flat list of values; no pickle).

An audit hook cannot be removed once installed, so nothing the answer does can lift step 2.
"""

import ast
import contextlib
import io
import json
import math
import os
import sys
import sysconfig
import warnings


class Forbidden(AssertionError):
    """What an answer gets for reaching a piece of the course it was asked to write."""


class OutOfReach:
    """Stands in for a name the notebook imported from the course: any call of it raises Forbidden."""

    def __init__(self, dotted, why):
        self._dotted, self._why = dotted, why

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return OutOfReach(f"{self._dotted}.{name}", self._why)

    def __call__(self, *args, **kwargs):
        raise Forbidden(f"your answer calls {self._dotted}: {self._why}")

    def __repr__(self):
        return f"<{self._dotted}: out of reach>"


def sigmoid(z):
    """The logistic function, as the course writes it (through tanh, so it never overflows)."""
    import numpy as np
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=float)))


PIECES = {"sigmoid": sigmoid}


class Blocker:
    """A meta path finder that refuses the course's packages (the editable install would find them)."""

    def __init__(self, names, why):
        self.names, self.why = tuple(names), why

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise Forbidden(f"your answer imports {fullname}: {self.why}")
        return None


def folder_of(path):
    return os.path.realpath(path).rstrip(os.sep) + os.sep


# what the runner refuses beyond the seal's own list: every use of ctypes and sockets, signals,
# and changes to the working folder or the environment
REFUSED_HERE = ("ctypes.", "socket.", "os.kill", "os.chdir", "os.putenv", "os.unsetenv", "sys.remote_exec")


def load_seal(folder):
    """seal.py, which the judge copies beside this file (it imports only the standard library)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("act_grading_seal", os.path.join(folder, "seal.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def encode(value, depth=0):
    """A JSON-able copy of what an answer returned; arrays as {"ndarray": [dtype, shape, values]}."""
    import numpy as np
    if depth > 6:
        raise TypeError("nested more than six levels deep")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)) and type(value) in (int, float):
        return value
    if isinstance(value, dict):
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"list": [encode(v, depth + 1) for v in value]}
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"returns a {type(value).__name__}, not numbers")
    kind = "f8" if array.dtype.kind == "f" else "i8" if array.dtype.kind in "iu" else "?"
    return {"ndarray": [kind, list(array.shape), array.astype(kind).ravel().tolist()]}


def decode(value, results):
    import numpy as np
    if isinstance(value, dict):
        if "ndarray" in value:
            kind, shape, flat = value["ndarray"]
            return np.array(flat, dtype=kind).reshape(shape)
        if "dict" in value:
            return {decode(k, results): decode(v, results) for k, v in value["dict"]}
        if "list" in value:
            return [decode(v, results) for v in value["list"]]
        if "result" in value:           # what an earlier call returned, handed on as it was
            call, item = value["result"]
            return results[call] if item is None else results[call][item]
    return value


def run_cell(code, name, namespace, blocked, why):
    """Run one answer cell statement by statement; an import of the course binds OutOfReach names."""
    for node in ast.parse(code, filename=name).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if isinstance(node, ast.ImportFrom) and node.level == 0 and module.split(".")[0] in blocked:
                for alias in node.names:
                    piece = PIECES.get(alias.name) if alias.name in namespace.get("__pieces__", ()) else None
                    namespace[alias.asname or alias.name] = piece or OutOfReach(f"{module}.{alias.name}", why)
                continue
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] in blocked for a in node.names):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    namespace[bound] = OutOfReach(alias.name if alias.asname else bound, why)
                continue
        exec(compile(ast.Module(body=[node], type_ignores=[]), name, "exec"), namespace)


def main(folder):
    folder = os.path.realpath(folder)
    with open(os.path.join(folder, "job.json"), encoding="utf-8") as f:
        job = json.load(f)
    import numpy as np
    modules = {"np": np, "numpy": np, "math": math}
    if job.get("torch"):
        import torch
        modules["torch"] = torch
    import importlib.util
    denied = []
    for name in job["blocked"]:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            denied += [folder_of(p) for p in (spec.submodule_search_locations or [os.path.dirname(spec.origin)])]
    denied = tuple(folder_of(p) for p in job.get("denied", [])) + tuple(denied)
    allowed = [folder_of(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib")]
    allowed += [folder_of(os.path.dirname(np.__file__)), folder]
    if job.get("torch"):
        allowed.append(folder_of(os.path.dirname(modules["torch"].__file__)))
    allowed.append("/dev/null" + os.sep)
    why = job["why"]
    for name in list(sys.modules):
        if name.split(".")[0] in job["blocked"]:
            del sys.modules[name]
    sys.meta_path.insert(0, Blocker(job["blocked"], why))
    seal = load_seal(os.path.dirname(os.path.realpath(__file__)))
    seal.seal(denied, only=allowed, refused=seal.REFUSED + REFUSED_HERE)

    namespace = {"__name__": "__answer__", "__builtins__": __builtins__, "__pieces__": tuple(job["pieces"])}
    for name, module in job.get("modules", {}).items():
        namespace[name] = modules.get(module) or OutOfReach(module, why)
    for name, piece in job["pieces"].items():
        namespace[name] = PIECES[piece]
    for name, dotted in job["out_of_reach"].items():
        namespace[name] = OutOfReach(dotted, why)
    namespace.update(job["given"])
    result = {"cells": None, "calls": []}
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            for index, code in enumerate(job["cells"]):
                run_cell(code, f"<answer cell {index + 1}>", namespace, tuple(job["blocked"]), why)
    except BaseException as err:                                 # noqa: BLE001 (reported, not raised)
        result["cells"] = [type(err).__name__, str(err)[:2000] or "(no message)"]
    raw = []
    for call in job["calls"]:
        entry = {}
        if result["cells"] is None:
            function = namespace.get(call["function"])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    if not callable(function):
                        raise NameError(f"no function {call['function']} is defined in the answer cells")
                    args = [decode(a, raw) for a in call["args"]]
                    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                        value = function(*args)
                    raw.append(value)
                    entry["value"] = encode(value)
                except BaseException as err:                     # noqa: BLE001
                    raw.append(None)
                    entry["error"] = [type(err).__name__, f"{call['function']} raised {type(err).__name__}"
                                      + (f": {str(err)[:2000]}" if str(err) else "")]
            entry["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})[:5]
        result["calls"].append(entry)
    with open(os.path.join(folder, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1])
