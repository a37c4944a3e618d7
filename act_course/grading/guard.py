"""What the graded checks share: an exercise that asks for a piece of ACT gets no marks for calling it.

An exercise whose task is to write a piece that the course's packages already provide (the halting
weights, one input step, the backward pass...) would be passed by an answer that only calls that
piece. Its check therefore runs the answer inside ``written_by_hand``:

    from act_course.grading import written_by_hand

    with written_by_hand("act_numpy.halting.halting_weights", namespace=globals()):
        N, p, R = my_halting(h, epsilon, M)          # the learner's function, and nothing else

Inside the block,

- each named piece raises an AssertionError wherever the answer can reach it by name: as the
  attribute of its module (``act_numpy.halting.halting_weights``), in every module of the course
  that imported it (``act_numpy.act`` uses it too), and under every name in ``namespace`` (the
  notebook's globals) bound to it, so both ``halting_weights(...)`` after the setup cell's import
  and an alias made in the answer cell fail;
- any function of the course's packages that the answer's own code calls (directly, not from inside
  an allowed function) is recorded, however it was reached (a default argument, a closure, a copy
  kept in a list), and the block ends with an AssertionError naming it. ``allow`` names the
  functions an exercise may use (``act_numpy.cells.sigmoid``, say).

Everything is put back when the block ends, whether it passed or failed. Compute the reference
values outside the block: they come from the library itself. ``by_hand`` does this for every call
of one function, so that a check can run its comparisons unchanged on a guarded copy:

    mine = by_hand(my_halting, namespace=globals())   # ACT_NUMPY out of reach while it runs
    N, p, R = mine(h, epsilon, M)                     # the reference values as before

A check that guards an answer this way belongs in the hidden tests, with the comparisons.
"""

import importlib
import importlib.util
import sys
from contextlib import contextmanager
from pathlib import Path

# The pieces of ACT that act_numpy provides and an exercise may ask the learner to write.
ACT_NUMPY = ("act_numpy.halting.halting_weights", "act_numpy.halting.halting_backward",
             "act_numpy.act.act_forward", "act_numpy.act.act_backward")
PACKAGES = ("act_numpy", "act_torch", "act_engine", "act_beyond", "act_experiments", "act_course")


def _resolve(dotted):
    module_name, _, attribute = dotted.rpartition(".")
    return importlib.import_module(module_name), attribute


def _package_folders():
    folders = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders += [str(Path(p).resolve()) for p in spec.submodule_search_locations]
    return tuple(folder.rstrip("/") + "/" for folder in folders)


def _code_of(function):
    function = getattr(function, "__wrapped__", function)
    return getattr(function, "__code__", None)


class Forbidden(AssertionError):
    pass


def _stub(dotted, calls):
    def forbidden(*args, **kwargs):
        calls.append(dotted)         # recorded too, in case the answer catches the error
        raise Forbidden(f"this exercise asks you to write this piece yourself, but your answer calls "
                        f"{dotted}: write it from the equations instead (NumPy or PyTorch operations)")
    forbidden.__name__ = dotted.rpartition(".")[2]
    return forbidden


@contextmanager
def written_by_hand(*pieces, namespace=None, allow=()):
    """Run the block with the course's ``pieces`` (dotted names) out of reach; see the module's docstring."""
    originals = {}
    for dotted in pieces:
        module, attribute = _resolve(dotted)
        originals[dotted] = getattr(module, attribute)
    allowed = {_code_of(getattr(*_resolve(dotted))) for dotted in allow}
    calls = []
    # every place a piece can be reached by name: module attributes of the course, the namespace
    patched = []
    holders = [vars(m) for name, m in list(sys.modules.items())
               if m is not None and name.split(".")[0] in PACKAGES and name != __name__]
    if namespace is not None:
        holders.append(namespace)
    for dotted, original in originals.items():
        stub = _stub(dotted, calls)
        for holder in holders:
            for key, value in list(holder.items()):
                if value is original:
                    patched.append((holder, key, value))
                    holder[key] = stub
    folders = _package_folders()
    here = str(Path(__file__).resolve())

    known = {}

    def course_code(code):
        if code not in known:
            filename = str(Path(code.co_filename).resolve()) if code.co_filename else ""
            known[code] = filename.startswith(folders) and filename != here
        return known[code]

    def watch(frame, event, arg):
        if (event != "call" or not course_code(frame.f_code) or frame.f_code in allowed
                or frame.f_code.co_name == "<module>"):         # a module imported on the way
            return
        caller = frame.f_back
        if caller is not None and (course_code(caller.f_code) or caller.f_code is watch.__code__):
            return                     # called by the course's own code (an allowed function, a stub)
        calls.append(f"{frame.f_globals.get('__name__', '?')}.{frame.f_code.co_name}")

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        yield
    finally:
        sys.setprofile(previous)
        for holder, key, value in reversed(patched):
            holder[key] = value
    called = sorted(set(calls))
    if called:
        raise AssertionError(f"this exercise asks you to write the piece yourself, but your answer calls the "
                             f"course's own code: {', '.join(called)}")


def by_hand(function, namespace=None, pieces=ACT_NUMPY, allow=()):
    """``function`` wrapped so that every call runs inside ``written_by_hand(*pieces, ...)``."""
    def guarded(*args, **kwargs):
        with written_by_hand(*pieces, namespace=namespace, allow=allow):
            return function(*args, **kwargs)
    guarded.__name__ = getattr(function, "__name__", "answer")
    return guarded
