"""What the notebooks share: the settings that may be changed from outside, and checked claims.

A notebook's live runs are short, and their exact numbers depend on the machine: the BLAS and
vector kernels that NumPy and PyTorch pick differ with the CPU and the thread count, and so do
the rounding errors that a training run amplifies. A check in a notebook therefore states a
claim that holds with room to spare for every seed and kernel variant measured
(docs/notebook_checks.md, made by scripts/notebook_variants.py), never one run's exact number.

Environment variables, read by the functions below:

    ACT_FULL=1          larger live runs (a few minutes each instead of well under one)
    ACT_SEED=n          seed of the live training runs (default 0)
    ACT_CHECK_LOG=path  append every check's numbers to this JSON-lines file
    ACT_CHECK_MODE=record
                        with ACT_CHECK_LOG: record a failed check and go on instead of stopping,
                        so that one run measures every check (scripts/notebook_variants.py)

PyTorch's thread count (OMP_NUM_THREADS, default 1) is set by ``act_experiments.threads``, which
the experiments use too.
"""

import json
import operator
import os
import shutil
from pathlib import Path

from act_numpy.checks import check_int

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def full():
    """True when ACT_FULL=1 asks for the larger live runs."""
    return os.environ.get("ACT_FULL") == "1"


def live_seed(default=0):
    """The seed of a notebook's live training runs: ACT_SEED, or ``default``."""
    value = os.environ.get("ACT_SEED", "")
    if not value:
        return default
    try:
        seed = int(value)
    except ValueError:
        raise ValueError(f"ACT_SEED must be an integer >= 0, got {value!r}") from None
    return check_int("ACT_SEED", seed, 0)


def fresh(folder):
    """An empty ``folder`` for a live run, as a string for a config's "out".

    The training loop refuses a folder that already holds a run (it would resume or mix two runs),
    so a cell that trains into a fixed folder under the notebook's temporary WORK folder calls this
    first: the cell can then be run again, and trains again from the start.
    """
    shutil.rmtree(folder, ignore_errors=True)
    return str(Path(folder))


def margin(value, op, bound):
    """How far ``value`` is from failing ``value op bound``, in the value's units (> 0: it holds)."""
    return bound - value if op in ("<", "<=") else value - bound


def check(claim, value, op, bound):
    """Assert ``value op bound`` and print the claim with its numbers; returns ``value``.

    claim: the statement in words, e.g. "ACT's held-out error after training".
    value: the measured number. op: one of < <= > >=. bound: the threshold, chosen with a
    margin measured over seeds and kernel variants (docs/notebook_checks.md).
    """
    if op not in OPS:
        raise ValueError(f"op must be one of {sorted(OPS)}, got {op!r}")
    value, bound = float(value), float(bound)
    holds = bool(OPS[op](value, bound))
    log = os.environ.get("ACT_CHECK_LOG")
    if log:
        record = {"claim": claim, "value": value, "op": op, "bound": bound,
                  "margin": margin(value, op, bound), "holds": holds}
        with open(log, "a") as f:
            f.write(json.dumps(record) + "\n")
    if holds:
        print(f"check: {claim}: {value:.4g} {op} {bound:.4g}")
    elif log and os.environ.get("ACT_CHECK_MODE") == "record":
        print(f"check FAILED (recorded, going on): {claim}: {value:.4g} is not {op} {bound:.4g}")
    else:
        raise AssertionError(f"{claim}: {value:.4g} is not {op} {bound:.4g}")
    return value


def answered(**answers):
    """Stop an exercise's check with a clear message while any of its answers is still ``None``.

    Each exercise's solution cell starts by setting its answers to ``None``; in the student
    edition the solution below that is replaced by ``raise NotImplementedError()``, so the
    answers stay ``None`` and the check says which one to fill in. Returns the answers' values:
    one value for one answer, a tuple for several.

        answered(eps=eps)             # AssertionError "eps is not answered yet ..." while None
    """
    if not answers:
        raise ValueError("answered needs at least one answer, e.g. answered(eps=eps)")
    missing = [name for name, value in answers.items() if value is None]
    if missing:
        raise AssertionError(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
                             f"answered yet: fill in the solution cell above and run it")
    values = tuple(answers.values())
    return values[0] if len(values) == 1 else values


# The lines of every notebook's install cell (its first code cell, collapsed), kept here once and
# copied into each notebook by scripts/notebook_setup.py (tests/test_opened_alone.py checks they agree). They run before any
# import of the course, so they cannot call it: a notebook opened on its own (Colab, a hosted
# Jupyter) installs the course from a wheel beside it (`make wheel`), or from the pip source in
# ACT_COURSE, and says what to do when neither is there.
OPENED_ALONE = '''\
# Opened on its own (Colab, a hosted Jupyter)? Install the course first (README, "Opened alone").
import glob, importlib, importlib.util, os, subprocess, sys
if importlib.util.find_spec("act_course") is None:
    source = (sorted(glob.glob("act_course-*.whl")) or [os.environ.get("ACT_COURSE", "")])[-1]
    if not source or subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", source]).returncode:
        raise SystemExit("The course is not installed here. Put act_course-*.whl (made by `make wheel`) "
                         "beside this notebook, or set ACT_COURSE to a pip source such as "
                         "'act-course @ git+<repository URL>' (that needs a network); then run this cell again.")
    importlib.invalidate_caches()
'''
