"""The program that runs a learner's answer for act_course.grading.judge, in a process of its own.

    python -I runner.py FOLDER      # reads the job on stdin, writes the outputs on stdout

It is a script, not a module of the course: it imports nothing of the course but seal.py, which
the judge copies beside it and which needs only the standard library; the judge runs a copy of
it in a fresh temporary FOLDER under ``python -I`` (no PYTHONPATH, no user site, no current
folder on the path). Nothing of the judge's is beside it: no job file, no reference value (the
job holds the code and the calls' inputs only). In order, it

1. reads the job from stdin: the kept statements of the answer cells and of the learner's own
   cells (judge.keep_statements), the names the exercise hands in, the packages out of reach,
   and the calls to make; keeps a copy of its stdout for the outputs and points fd 1 at
   /dev/null, so that what the answer prints goes nowhere;
2. imports NumPy, puts out of reach the course's packages (and those the exercise refuses:
   an import binds names whose calls fail with one line saying why) but those the exercise may
   use (``library``: act_numpy for 01-04), which it imports from the read-only copies the judge
   put in FOLDER/library, and installs the grading seal's audit hook (seal.py), told to refuse
   any file outside the Python installation, its packages and FOLDER, the repository the course
   comes from, subprocesses, sockets and ctypes (but loading PyTorch's libraries, where the
   exercise allows PyTorch); a plotting module (``inert``) and IPython's display are stand-ins
   that draw nothing, wherever they are imported (``InertModules``);
3. runs the kept statements one by one, in order, noting those that stop and going on (the
   lesson's cells, marked ``quiet``, without a note), then each call, with the warnings it
   raises recorded and what it prints kept apart; a call may instead read a value the cells
   bound (``read``), and a call marked ``at`` a checkpoint is made where that marker stands
   among the cells, before the cells after it run;
4. writes the outputs as one JSON document (arrays as dtype, shape and a flat list of values;
   no pickle) on its copy of stdout.

The answer runs in this process and can reach all of it: its frames, the job, this file's
functions. That is why the judge believes none of it but the outputs, read strictly and
compared with references that never leave the judge's process (act_course/grading/exchange.py).
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


CONSTANTS = {}         # {dotted name: value}: constants of the course the exercise hands in (the job's)


class OutOfReach:
    """Stands in for a name the notebook imported from the course: any call of it raises Forbidden."""

    def __init__(self, dotted, why):
        self._dotted, self._why = dotted, why

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if f"{self._dotted}.{name}" in CONSTANTS:           # a constant the exercise hands in (tasks.END_CLASS)
            return CONSTANTS[f"{self._dotted}.{name}"]
        return OutOfReach(f"{self._dotted}.{name}", self._why)

    def __call__(self, *args, **kwargs):
        raise Forbidden(f"your answer calls {self._dotted}: {self._why}")

    def __repr__(self):
        return f"<{self._dotted}: out of reach>"


class Inert:
    """Stands in for a plotting module (matplotlib): every attribute, call or item is another Inert,
    ``subplots(rows, columns)`` gives a figure and as many axes, so that a lesson's or an answer's
    drawing runs and draws nothing."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Inert()

    def __call__(self, *args, **kwargs):
        return Inert()

    def __getitem__(self, key):
        return Inert()

    def __iter__(self):
        return iter(())

    def subplots(self, nrows=1, ncols=1, **kwargs):
        import numpy as np
        if nrows * ncols == 1:
            return Inert(), Inert()
        axes = np.empty((nrows, ncols) if nrows > 1 and ncols > 1 else (nrows * ncols,), dtype=object)
        for index in np.ndindex(axes.shape):
            axes[index] = Inert()
        return Inert(), axes


def _inert_attribute(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(Inert(), name)


class InertModules:
    """A meta path finder that gives a plotting module (``inert``) and its submodules as stand-ins
    whose every attribute is an Inert, wherever they are imported: in the course's packages beside
    the answer too (act_experiments.figures imports pyplot), where the real import would build
    Matplotlib's list of fonts from system folders that the seal refuses."""

    def __init__(self, names):
        self.names = tuple(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in self.names:
            return None
        from importlib.machinery import ModuleSpec
        return ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        import types
        module = types.ModuleType(spec.name)
        module.__getattr__ = _inert_attribute
        return module

    def exec_module(self, module):
        pass


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


class Library:
    """A meta path finder that imports ``names`` (course packages an exercise may use, act_numpy
    say) from the read-only copies the judge put in ``root``, inside this process's folder, and
    never from the repository (which the seal refuses)."""

    def __init__(self, root, names):
        self.root, self.names = root, tuple(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in self.names:
            return None
        from importlib.machinery import PathFinder
        return PathFinder.find_spec(fullname, [self.root] if "." not in fullname else path)


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


MAX_VALUES = 1_000_000        # numbers in one output (exchange.MAX_VALUES, which the judge holds)


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
    if isinstance(value, (set, frozenset)):       # a set stays a set: a check may ask for one (14's exercise 3)
        return {"set": [encode(v, depth + 1) for v in sorted(value, key=repr)]}
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"returns a {type(value).__name__}, not numbers")
    if array.size > MAX_VALUES:
        raise ValueError(f"returns an array of {array.size} numbers, more than the judge reads ({MAX_VALUES})")
    kind = "f8" if array.dtype.kind == "f" else "i8" if array.dtype.kind in "iu" else "?"
    return {"ndarray": [kind, list(array.shape), array.astype(kind).ravel().tolist()]}


def piece(source):
    """A function the judge wrote, from its source: compiled here in a namespace of its own that holds
    PyTorch and NumPy alone, so that it reads nothing of the answer's; the source defines ``piece``."""
    import numpy as np
    import torch
    namespace = {"__name__": "__piece__", "torch": torch, "np": np}
    exec(compile(source, "<piece>", "exec"), namespace)
    return namespace["piece"]


def decode(value, results):
    """An argument of the judge's format as Python: arrays, lists, dictionaries, a generator seeded
    by the judge (``rng``), a PyTorch tensor (``tensor``), a function the judge wrote (``piece``) or
    what an earlier call returned."""
    import numpy as np
    if isinstance(value, dict):
        if "ndarray" in value:
            kind, shape, flat = value["ndarray"]
            return np.array(flat, dtype=kind).reshape(shape)
        if "dict" in value:
            return {decode(k, results): decode(v, results) for k, v in value["dict"]}
        if "list" in value:
            return [decode(v, results) for v in value["list"]]
        if "set" in value:
            return {decode(v, results) for v in value["set"]}
        if "rng" in value:              # a NumPy generator, seeded by the judge
            return np.random.default_rng(value["rng"])
        if "tensor" in value:           # a PyTorch tensor, where the exercise allows PyTorch
            import torch
            return torch.tensor(decode(value["tensor"], results), dtype=torch.float64)
        if "piece" in value:            # a function the judge wrote, where the exercise allows PyTorch
            return piece(value["piece"])
        if "result" in value:           # what an earlier call returned, handed on as it was
            call, item = value["result"]
            return results[call] if item is None else results[call][item]
    return value


def bind_import(node, namespace, blocked, why, inert=()):
    """An import of the course's packages binds OutOfReach names (or the piece the exercise hands
    in) instead of failing, and one of a plotting module (``inert``) binds Inert names: True when
    ``node`` was such an import, and nothing else is to be run."""
    if inert and isinstance(node, (ast.Import, ast.ImportFrom)) and all(
            (a.name if isinstance(node, ast.Import) else node.module or "").split(".")[0] in inert for a in node.names):
        for alias in node.names:
            namespace[alias.asname or alias.name.split(".")[0]] = Inert()
        return True
    if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in blocked:
        for alias in node.names:
            piece = PIECES.get(alias.name) if alias.name in namespace.get("__pieces__", ()) else None
            namespace[alias.asname or alias.name] = piece or OutOfReach(f"{node.module}.{alias.name}", why)
        return True
    if isinstance(node, ast.Import) and any(a.name.split(".")[0] in blocked for a in node.names):
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            if alias.name.split(".")[0] in blocked:
                namespace[bound] = OutOfReach(alias.name if alias.asname else bound, why)
            else:
                one = ast.fix_missing_locations(ast.Module(body=[ast.copy_location(ast.Import(names=[alias]), node)],
                                                           type_ignores=[]))
                exec(compile(one, "<import>", "exec"), namespace)
        return True
    return False


def run_cells(cells, namespace, blocked, why, inert=()):
    """Run the kept cells statement by statement, in order. A statement that stops (an import that
    fails, a name not defined here) is noted and the next one runs: only the calls that then fail
    cost points. A cell marked ``quiet`` (the lesson's, or another exercise's answer) stops without
    a note. Returns the notes: [where, what stopped it]."""
    stopped = []
    for cell in cells:
        if "checkpoint" in cell:
            continue
        try:
            body = ast.parse(cell["code"], filename=cell["name"]).body
        except SyntaxError as err:
            if not cell.get("quiet"):
                stopped.append([f"{cell['name']}:", f"SyntaxError: {err.msg} (line {err.lineno})"])
            continue
        for node in body:
            try:
                if not bind_import(node, namespace, blocked, why, inert):
                    exec(compile(ast.Module(body=[node], type_ignores=[]), cell["name"], "exec"), namespace)
            except BaseException as err:                         # noqa: BLE001 (noted, not raised)
                if cell.get("quiet"):
                    continue
                line = ast.unparse(node).splitlines()[0][:80]
                stopped.append([f"{cell['name']}: `{line}`", f"stopped with {type(err).__name__}: {str(err)[:200]}"])
    return stopped


def make_call(call, namespace, raw, printed):
    """One call of the answer's function: its output entry, {"value": ...} or {"error": ...}."""
    if "read" in call:                     # a value the answer cells bound, read by name
        raw.append(None)
        if call["read"] not in namespace:
            return {"error": ["NameError", f"{call['read']} is not defined in your answer cells"], "warnings": []}
        try:
            return {"value": encode(namespace[call["read"]]), "warnings": []}
        except BaseException as err:                             # noqa: BLE001
            return {"error": [type(err).__name__, f"{call['read']} {str(err)[:2000]}"], "warnings": []}
    function = namespace.get(call["function"])
    entry = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if not callable(function):
                raise NameError(f"no function {call['function']} is defined in your answer cells")
            args = [decode(a, raw) for a in call["args"]]
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
                value = function(*args)
            raw.append(value)
            entry["value"] = encode(value)
        except BaseException as err:                             # noqa: BLE001
            raw.append(None)
            entry = {"error": [type(err).__name__, f"{call['function']} raised {type(err).__name__}"
                               + (f": {str(err)[:2000]}" if str(err) else "")]}
    entry["warnings"] = sorted({f"{w.category.__name__}: {w.message}" for w in caught})[:5]
    return entry


def main(folder):
    folder = os.path.realpath(folder)
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    # the one way back to the judge; the answer's own prints and fd 1 go to /dev/null
    channel = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    import numpy as np
    modules = {"np": np, "numpy": np, "math": math}
    import importlib
    import importlib.util
    denied = []
    for name in job["blocked"]:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and (spec.submodule_search_locations or spec.origin):
            denied += [folder_of(p) for p in (spec.submodule_search_locations or [os.path.dirname(spec.origin)])]
    denied = tuple(folder_of(p) for p in job.get("denied", [])) + tuple(denied)
    paths = sysconfig.get_paths()
    allowed = [folder_of(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    allowed += [folder_of(os.path.dirname(np.__file__)), folder, "/dev/null" + os.sep]
    why = job["why"]
    for name in list(sys.modules):
        if name.split(".")[0] in job["blocked"]:
            del sys.modules[name]
    sys.meta_path.insert(0, Blocker(job["blocked"], why))
    if job.get("library"):
        sys.meta_path.insert(0, Library(os.path.join(folder, "library"), job["library"]))
    if job.get("inert"):
        sys.meta_path.insert(0, InertModules(job["inert"]))
    seal = load_seal(os.path.dirname(os.path.realpath(__file__)))
    here = REFUSED_HERE if "torch" in job["blocked"] else tuple(e for e in REFUSED_HERE if e != "ctypes.")
    seal.seal(denied, only=allowed, refused=seal.REFUSED + here)

    namespace = {"__name__": "__answer__", "__builtins__": __builtins__, "__pieces__": tuple(job["pieces"])}
    for name, module in job.get("modules", {}).items():
        if module not in modules and module.split(".")[0] not in job["blocked"]:
            try:                             # a module the exercise allows (PyTorch, for 11)
                modules[module] = importlib.import_module(module)
            except ImportError:
                pass
        namespace[name] = modules.get(module) or OutOfReach(module, why)
    for name, piece in job["pieces"].items():
        namespace[name] = PIECES[piece]
    for name, dotted in job["out_of_reach"].items():
        namespace[name] = OutOfReach(dotted, why)
    namespace.update(job["given"])
    CONSTANTS.update(job.get("constants", {}))
    if job.get("inert"):              # IPython's and the notebook's display: stand-ins that show nothing
        namespace.update(get_ipython=Inert(), display=Inert())
    printed, stopped, raw, calls = io.StringIO(), [], [], []
    # the cells up to each checkpoint, then the calls made there ("at"), then the rest at the end
    ends = [k for k, cell in enumerate(job["cells"]) if "checkpoint" in cell] + [len(job["cells"])]
    start = 0
    for end in ends:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            stopped += run_cells(job["cells"][start:end], namespace, tuple(job["blocked"]), why,
                                 tuple(job.get("inert", ())))
        here = job["cells"][end]["checkpoint"] if end < len(job["cells"]) else None
        for call in job["calls"]:
            if call.get("at") == here:
                calls.append(make_call(call, namespace, raw, printed))
        start = end + 1
    # non-finite numbers go back as JSON's NaN and Infinity: the judge refuses them
    data = json.dumps({"statements": stopped, "calls": calls}).encode("utf-8")
    while data:
        data = data[os.write(channel, data):]


if __name__ == "__main__":
    main(sys.argv[1])
