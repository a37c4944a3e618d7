"""The submissions of the attack suite (act_course.grading.attacks runs them): ones that want the
points without the algorithm, and honest ones that must keep them.

``ATTACKS``: answers to the judged exercises (03b, 12's exercise 2), among them the issues' rounds:
names the checks read rebound, the guard replaced, the library called from a thread or after
``sys.setprofile(None)``, its source run under another name, input and AST transformers that wrap
cells in try/except, the source notebook read at grading time, lookup tables, autograd in a default
argument, ``os.path.realpath`` rebound; and those that go for the judge itself: a class body that
walks the runner's frames and empties its list of calls, the runner's result written by the answer
before it exits, N = inf to crash the judge, a bytes path relative to a descriptor climbing from
NumPy's folder. ``IN_KERNEL``: answers to 01's exercise 1, checked in the learner's kernel, that
reach the source's solution where the seal must refuse it (the course folder, the repository
through ``act_numpy.__file__``, ``!cat``, ``gradebook.db``, descriptor-relative bytes paths from a
package folder or through the venv to .git), and a result published before each check's error,
which must score 0 all the same (01 is judged outside the kernel now, and these run in its answer
process too); and on 12's exercises 1 and 3, judged now as values, numbers that equal anything, an
input transformer, and SciPy with a helper of one's own, which must score full marks. ``HONEST``: a cumsum-based halting, ``sigmoid`` where the task allows it, code that
warns, a module-level lambda, a constant ``DTYPE``, ``scipy.special.expit``, a helper in a cell of
the learner's own, ``scipy.special.xlogy`` in 12, ``halting_weights`` in a cell of the learner's
own in 01. 01's own attacks on the judge (frames emptied of calls, a forged result) are in
``ATTACKS``; those run through the judge alone, without nbgrader, are in ``judged_alone``.
"""

import json
from dataclasses import dataclass

from act_experiments.files import ROOT

NB_03B = "03b_write_your_own_act"
NB_11 = "11_pitfalls"
NB_12 = "12_attention_pondernet"
NB_13 = "13_universal_transformer"
NB_01 = "01_forward_pass"
NB_02 = "02_binary_flag"
NB_03 = "03_backprop_remainder"
NB_09 = "09_characters"
NB_14 = "14_convnet_aig"
NB_15 = "15_when_adapting_pays"


def notebook_path(stem):
    return ROOT / "notebooks" / f"{stem}.ipynb"


WRONG_HALTING = '''
def my_halting(h, epsilon=0.01, max_ponder=100):
    return 1, np.array([1.0]), 1.0
'''
HALTING_HEAD = "def my_halting(h, epsilon=0.01, max_ponder=100):\n"
KL_HEAD = "def kl_logit_gradient(lam, prior):\n"
# a class body the judge keeps, run before the calls: it walks up the frames of the process it
# runs in and empties every list of calls it finds there
# an AST transformer that wraps a cell in try/except, so that a failing check prints nothing
SILENCE = """
import ast as _ast
class _Silence(_ast.NodeTransformer):
    def visit_Module(self, node):
        handler = _ast.ExceptHandler(type=_ast.Name("BaseException", _ast.Load()), name=None, body=[_ast.Pass()])
        return _ast.fix_missing_locations(_ast.Module(body=[_ast.Try(body=node.body or [_ast.Pass()],
                                                               handlers=[handler], orelse=[], finalbody=[])],
                                                      type_ignores=[]))
"""
REACH_FRAMES = """
class _Reach:
    import sys as _sys
    _frame = _sys._getframe(0)
    while _frame is not None:
        for _value in list(_frame.f_locals.values()):
            if isinstance(_value, dict) and isinstance(_value.get("calls"), list):
                _value["calls"].clear()
        _frame = _frame.f_back
"""


@dataclass
class Submission:
    name: str
    notebook: str
    cells: dict                 # solution grade_id -> new source
    expect: str                 # "none" (every judged check of these exercises 0) or "full"
    by_seal: bool = True        # an attack in the learner's kernel that the seal must stop (IN_KERNEL)


ATTACKS = [
    Submission("rebinds same, rel_error, abs, SETTINGS and CASES", NB_03B, {"ex1-solution": '''
def same(*args, **kwargs):
    return 0.0
def rel_error(a, b):
    return 0.0
def abs(x):
    return 0.0
SETTINGS = []
CASES = {}
''' + WRONG_HALTING}, "none"),
    Submission("replaces by_hand with the identity", NB_03B, {"ex1-solution": '''
import act_course.grading
act_course.grading.by_hand = lambda function, *args, **kwargs: function
''' + HALTING_HEAD + '''    N, p, R = halting_weights(np.asarray([h], dtype=float), epsilon=epsilon, max_ponder=max_ponder)
    return int(N[0]), p[0, :N[0]], float(R[0])
'''}, "none"),
    Submission("calls the library in a thread", NB_03B, {"ex1-solution": HALTING_HEAD + '''    import threading
    out = {}
    def work():
        out["r"] = halting_weights(np.asarray([h], dtype=float), epsilon=epsilon, max_ponder=max_ponder)
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    N, p, R = out["r"]
    return int(N[0]), p[0, :N[0]], float(R[0])
'''}, "none"),
    Submission("sys.setprofile(None) before the call", NB_03B, {"ex1-solution": HALTING_HEAD + '''    import sys
    sys.setprofile(None)
    import act_numpy.halting as m
    N, p, R = m.halting_weights(np.asarray([h], dtype=float), epsilon=epsilon, max_ponder=max_ponder)
    return int(N[0]), p[0, :N[0]], float(R[0])
'''}, "none"),
    Submission("execs the library's source under another filename", NB_03B, {"ex1-solution": HALTING_HEAD + '''    import inspect
    space = {"np": np}
    exec(compile(inspect.getsource(inspect.getmodule(halting_weights)), "mine.py", "exec"), space)
    N, p, R = space["halting_weights"](np.asarray([h], dtype=float), epsilon=epsilon, max_ponder=max_ponder)
    return int(N[0]), p[0, :N[0]], float(R[0])
'''}, "none"),
    Submission("reads the library's file by path", NB_03B, {"ex1-solution": HALTING_HEAD + f'''    space = {{"np": np}}
    path = {str(ROOT / "act_numpy" / "halting.py")!r}
    exec(open(path).read().replace("from .", "from act_numpy."), space)
    N, p, R = space["halting_weights"](np.asarray([h], dtype=float), epsilon=epsilon, max_ponder=max_ponder)
    return int(N[0]), p[0, :N[0]], float(R[0])
'''}, "none"),
    Submission("rebinds os.path.realpath while it reads the library's file", NB_03B, {"ex1-solution": HALTING_HEAD + f'''    import os, posixpath
    real, space = os.path.realpath, {{"np": np}}
    posixpath.realpath = os.path.realpath = lambda path, **kwargs: os.getcwd()
    try:
        code = open({str(ROOT / "act_numpy" / "halting.py")!r}).read()
    finally:
        posixpath.realpath = os.path.realpath = real
    exec(code.replace("from .", "from act_numpy."), space)
    N, p, R = space["halting_weights"](np.asarray([h], dtype=float), epsilon=epsilon, max_ponder=max_ponder)
    return int(N[0]), p[0, :N[0]], float(R[0])
'''}, "none"),
    Submission("an IPython input transformer that wraps later cells in try/except", NB_03B, {"ex1-solution": '''
def _silence(lines):
    return ["try:\\n"] + ["    " + line for line in lines] + ["\\nexcept BaseException:\\n    pass\\n"]
get_ipython().input_transformers_cleanup.append(_silence)
''' + WRONG_HALTING}, "none"),
    Submission("runs the source notebook's solution, found through act_numpy.__file__", NB_03B, {"ex1-solution": '''
import json, os, act_numpy
''' + HALTING_HEAD + '''    root = os.path.dirname(os.path.dirname(act_numpy.__file__))
    nb = json.load(open(os.path.join(root, "notebooks", "03b_write_your_own_act.ipynb")))
    code = [c["source"] for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "ex1-solution"]
    space = {"np": np}
    exec("".join(code[0]), space)
    return space["my_halting"](h, epsilon, max_ponder)
'''}, "none"),
    Submission("runs the solution from the course folder's source/ or the repository, by path", NB_03B, {
        "ex1-solution": HALTING_HEAD + f'''    import json, os
    for path in ("../../../source/act/03b_write_your_own_act.ipynb",
                 {str(ROOT / "notebooks" / "03b_write_your_own_act.ipynb")!r}):
        if os.path.exists(path):
            nb = json.load(open(path))
            break
    code = [c["source"] for c in nb["cells"] if c["metadata"].get("nbgrader", {{}}).get("grade_id") == "ex1-solution"]
    space = {{"np": np}}
    exec("".join(code[0]), space)
    return space["my_halting"](h, epsilon, max_ponder)
'''}, "none"),
    Submission("a subprocess that imports the library", NB_03B, {"ex1-solution": HALTING_HEAD + '''    import subprocess, sys, json
    code = "import json,sys; from act_numpy.halting import halting_weights as w; " \\
           "N,p,R = w([json.loads(sys.argv[1])], float(sys.argv[2]), int(sys.argv[3])); " \\
           "print(json.dumps([int(N[0]), p[0,:N[0]].tolist(), float(R[0])]))"
    out = subprocess.run([sys.executable, "-c", code, json.dumps(list(map(float, h))), str(epsilon), str(max_ponder)],
                         capture_output=True, text=True).stdout
    N, p, R = json.loads(out)
    return N, np.array(p), R
'''}, "none"),
    Submission("a lookup table of the outputs on the notebook's cases", NB_03B, {"ex1-solution": '''
TABLE = {(0.3, 0.01, 100): (4, [0.3, 0.3, 0.3, 0.1], 0.1), (0.2485, 0.01, 100): (4, [0.2485, 0.2485, 0.2485, 0.2545], 0.2545),
         (0.2, 0.01, 100): (2, [0.2, 0.8], 0.8), (0.1, 0.01, 100): (4, [0.1, 0.1, 0.5, 0.3], 0.3),
         (0.02, 0.01, 6): (6, [0.02, 0.02, 0.02, 0.02, 0.02, 0.9], 0.9), (0.1, 0.1, 100): (3, [0.1, 0.3, 0.6], 0.6)}
''' + HALTING_HEAD + '''    N, p, R = TABLE.get((round(float(h[0]), 4), epsilon, max_ponder), (1, [1.0], 1.0))
    return N, np.array(p), R
'''}, "none"),
    Submission("autograd captured in a default argument", NB_12, {"ex2-solution": '''
def kl_logit_gradient(lam, prior, grad=torch.autograd.grad, t=torch):
    z = t.logit(t.tensor(lam, dtype=t.float64)).requires_grad_(True)
    lam_t = t.sigmoid(z)
    still = t.cumprod(1.0 - lam_t, dim=-1)
    not_yet = t.cat([t.ones(1, dtype=t.float64), still[:-1]])
    p = t.cat([lam_t[:-1] * not_yet[:-1], not_yet[-1:]])
    kl = (p * (t.log(p) - t.log(t.tensor(prior)))).sum()
    return grad(kl, z)[0].numpy()
'''}, "none"),
    Submission("a class body that walks the runner's frames and empties its list of calls", NB_03B,
               {"ex1-solution": REACH_FRAMES + WRONG_HALTING}, "none"),
    Submission("the runner's frames emptied of calls, on 12's exercise 2", NB_12,
               {"ex2-solution": REACH_FRAMES + KL_HEAD + "    return np.zeros(len(lam))\n"}, "none"),
    Submission("writes the runner's result itself and exits", NB_03B, {"ex1-solution": """
class _Speak:
    if __name__ == "__answer__":
        import json as _json, os as _os
        _forged = _json.dumps({"cells": None, "statements": [], "calls": []}).encode()
        open("result.json", "w").write(_forged.decode())
        for _fd in range(1, 12):
            try:
                _os.write(_fd, _forged)
            except OSError:
                pass
        _os._exit(0)
""" + WRONG_HALTING}, "none"),
    Submission("writes the runner's result itself, on 12's exercise 2", NB_12, {"ex2-solution": """
class _Speak:
    if __name__ == "__answer__":
        import json as _json, os as _os
        _forged = _json.dumps({"cells": None, "statements": [], "calls": []}).encode()
        for _fd in range(1, 12):
            try:
                _os.write(_fd, _forged)
            except OSError:
                pass
        _os._exit(0)
""" + KL_HEAD + "    return np.zeros(len(lam))\n"}, "none"),
    Submission("returns N = inf to crash the judge", NB_03B, {"ex1-solution": HALTING_HEAD
                                                              + "    return float('inf'), np.array([1.0]), 1.0\n"},
               "none"),
    Submission("an AST transformer that wraps every cell in try/except", NB_03B, {"ex1-solution": SILENCE + """try:
    get_ipython().ast_transformers.append(_Silence())
except NameError:
    pass
""" + WRONG_HALTING}, "none"),
    Submission("an AST transformer that wraps every cell in try/except, on 12's exercise 2", NB_12, {"ex2-solution": SILENCE + """get_ipython().ast_transformers.append(_Silence())
""" + KL_HEAD + "    return np.zeros(len(lam))\n"}, "none"),
    Submission("reads the library through a descriptor, a bytes path climbing from NumPy's folder", NB_03B, {
        "ex1-solution": HALTING_HEAD + """    import os
    here = os.open(os.path.dirname(np.__file__), os.O_RDONLY)
    for up in range(1, 12):
        try:
            fd = os.open(b"/".join([b".."] * up + [b"act_numpy", b"halting.py"]), os.O_RDONLY, dir_fd=here)
        except OSError:
            continue
        code = os.read(fd, 1 << 20).decode()
        space = {"np": np}
        exec(code.replace("from .", "from act_numpy."), space)
        N, p, R = space["halting_weights"](np.asarray([h], dtype=float), epsilon=epsilon, max_ponder=max_ponder)
        return int(N[0]), p[0, :N[0]], float(R[0])
    raise RuntimeError("not found")
"""}, "none"),
    Submission("sys.setprofile(None), then pondernet's own functions", NB_12, {"ex2-solution": '''
import sys
sys.setprofile(None)
''' + KL_HEAD + '''    import torch
    from act_beyond import pondernet
    z = torch.logit(torch.tensor(lam, dtype=torch.float64)).requires_grad_(True)
    kl = pondernet.kl_divergence(pondernet.generalised_geometric(torch.sigmoid(z)), torch.tensor(prior))
    return torch.autograd.grad(kl, z)[0].numpy()
'''}, "none"),
]

# 01's exercise 1 is checked in the learner's kernel: these answers run the source's solution,
# found where the grading kernel could reach it but for the seal (act_course/grading/seal.py)
RUN_SOLUTION = """
code = [c["source"] for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "ex1-solution"]
exec("".join(code[0]))
"""
COURSE = 'course = os.path.abspath(os.path.join(os.getcwd(), os.pardir, os.pardir, os.pardir))\n'
IN_KERNEL = [
    Submission("reads the source notebook from the course folder", NB_01, {"ex1-solution": "import json, os\n" + COURSE
               + 'nb = json.load(open(os.path.join(course, "source", "act", "01_forward_pass.ipynb")))' + RUN_SOLUTION},
               "none"),
    Submission("finds the repository's notebook through act_numpy.__file__", NB_01, {"ex1-solution": """
import json, os, act_numpy
root = os.path.dirname(os.path.dirname(act_numpy.__file__))
nb = json.load(open(os.path.join(root, "notebooks", "01_forward_pass.ipynb")))""" + RUN_SOLUTION}, "none"),
    Submission("reads the repository's notebook with !cat", NB_01, {"ex1-solution": """
import json, os, act_numpy
path = os.path.join(os.path.dirname(os.path.dirname(act_numpy.__file__)), "notebooks", "01_forward_pass.ipynb")
lines = !cat {path}
nb = json.loads(lines.n)""" + RUN_SOLUTION}, "none"),
    Submission("queries the course's gradebook.db with sqlite3", NB_01, {"ex1-solution": "import os, sqlite3\n" + COURSE + """
db = sqlite3.connect(os.path.join(course, "gradebook.db"))
exec(db.execute("select source from source_cell where name = 'ex1-solution'").fetchone()[0])"""}, "none"),
]


# through descriptors: a folder the seal allows opened, then a bytes path relative to it
# (os.open's dir_fd, what openat does) climbing to the repository's .git, from the course's
# packages or from the venv's site-packages (the venv lives in the repository); then the source
# notebook read out of git's objects
FROM_GIT = """
def _blobs(git):
    objects = os.open(b"objects", os.O_RDONLY, dir_fd=git)
    for sub in os.listdir(objects):
        folder = os.open(sub.encode(), os.O_RDONLY, dir_fd=objects)
        for name in os.listdir(folder):
            data = os.read(os.open(name.encode(), os.O_RDONLY, dir_fd=folder), 1 << 28)
            if name.endswith(".pack"):
                for at in (k for k in range(len(data)) if data[k] == 0x78):
                    try:
                        yield zlib.decompressobj().decompress(data[at:at + (1 << 22)])
                    except zlib.error:
                        pass
            elif len(sub) == 2:
                yield zlib.decompress(data)
for _blob in _blobs(git):
    if b'"ex1-solution"' in _blob and b"BEGIN SOLUTION" in _blob:
        nb = json.loads(_blob[_blob.index(b"{"):])
        break
""" + RUN_SOLUTION
IN_KERNEL += [
    Submission("climbs by a descriptor-relative bytes path from a package folder to .git", NB_01, {"ex1-solution": """
import json, os, zlib, act_numpy
start = os.open(os.path.dirname(act_numpy.__file__), os.O_RDONLY)
git = os.open(b"../.git", os.O_RDONLY, dir_fd=start)""" + FROM_GIT}, "none"),
    Submission("climbs by a descriptor-relative bytes path from the venv's site-packages to .git", NB_01, {
        "ex1-solution": """
import json, os, sysconfig, zlib
start = os.open(sysconfig.get_paths()["purelib"], os.O_RDONLY)
for up in range(1, 8):
    above = os.open(b"/".join([b".."] * up), os.O_RDONLY, dir_fd=start)
    if ".git" in os.listdir(above):
        break
git = os.open(b".git", os.O_RDONLY, dir_fd=above)""" + FROM_GIT}, "none"),
    Submission("has a result published before each check's error", NB_01, {"ex1-solution": """
N_pred, p_pred, N_cap, p_cap = 1, [1.0], 1, [1.0]
eps_N4, p_N4, eps_N2, p_N2 = 0.5, [0.25] * 4, 0.5, [0.5, 0.5]
_shell = get_ipython()
_shell.events.register("pre_run_cell", lambda *args: _shell.displayhook(2))"""}, "none", by_seal=False),
]


def source_answer(stem, grade_id):
    """The source's own code of cell ``grade_id`` of notebook ``stem``."""
    nb = json.loads(notebook_path(stem).read_text(encoding="utf-8"))
    return next("".join(c["source"]) for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


IN_KERNEL.append(Submission("01's own solution, checked in the sealed kernel", NB_01,
                            {"ex1-solution": source_answer(NB_01, "ex1-solution")}, "full"))

# 12's exercises 1 and 3 were checked in the kernel; they are judged now, values read back by name:
# numbers that equal anything (they pass the check cell's == and abs(a - b) < tol in a kernel), the
# input transformer that still scored there, and an honest answer with SciPy and a helper of one's own
EQUAL_12 = """
class _Equal(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__
    def __sub__(self, other):
        return 0.0
    __rsub__ = __sub__
p_pondernet = [0.2, 0.4, 0.1, 0.3]
steps_pondernet = median_step = p_beyond_2 = _Equal(0.0)
"""
PRIOR_MEAN = "def prior_mean(lam, N=10):\n    return float(pn.expected_steps(pn.geometric_prior(lam, N)))\n"
IN_KERNEL += [
    Submission("values that equal anything, on 12's exercise 1", NB_12, {"ex1-solution": EQUAL_12}, "none", by_seal=False),
    Submission("an IPython input transformer that wraps later cells in try/except, on 12's exercise 3", NB_12,
               {"ex3-solution": '''
def _silence(lines):
    return ["try:\\n"] + ["    " + line for line in lines] + ["\\nexcept BaseException:\\n    pass\\n"]
get_ipython().input_transformers_cleanup.append(_silence)
lambda_p_3 = 0.5
'''}, "none", by_seal=False),
    Submission("SciPy's brentq and a helper of one's own, on 12's exercise 3", NB_12, {
        "ex3-added": PRIOR_MEAN,
        "ex3-solution": "from scipy.optimize import brentq\nlambda_p_3 = brentq(lambda lam: prior_mean(lam) - 3.0, 0.01, 0.99)\n"},
               "full"),
]

HONEST = [
    Submission("a cumsum-based halting", NB_03B, {"ex1-solution": HALTING_HEAD + '''    h = np.asarray(h, dtype=float)[:max_ponder]
    reached = np.flatnonzero(np.cumsum(h) >= 1.0 - epsilon)
    N = int(reached[0]) + 1 if reached.size else max_ponder
    R = 1.0 - float(np.sum(h[:N - 1]))
    return N, np.append(h[:N - 1], R), R
'''}, "full"),
    Submission("sigmoid recomputes h in exercise 5", NB_03B, {"ex5-solution": '''
from act_numpy.cells import sigmoid
def my_act_step_backward(ds_t, drho, step, P):
    s, p, x_t = step["s"], step["p"], step["x"]
    h = sigmoid(s @ P["W_h"] + P["b_h"])[:, 0]
    N, D = len(p), len(x_t)
    dzh = my_halting_backward(s @ ds_t, drho, N) * h * (1.0 - h)
    g = {"W_x": np.zeros_like(P["W_x"]), "W_s": np.zeros_like(P["W_s"]), "b_s": np.zeros_like(P["b_s"]),
         "W_h": (s.T @ dzh)[:, None], "b_h": np.array([dzh.sum()]), "x": np.zeros(D)}
    d_next = np.zeros_like(ds_t)
    for n in reversed(range(N)):
        dz = (p[n] * ds_t + dzh[n] * P["W_h"][:, 0] + d_next) * (1.0 - s[n] ** 2)
        s_in = step["s_prev"] if n == 0 else s[n - 1]
        g["W_x"] += np.outer(np.append(x_t, 1.0 if n == 0 else 0.0), dz)
        g["W_s"] += np.outer(s_in, dz)
        g["b_s"] += dz
        g["x"] += P["W_x"][:D] @ dz
        d_next = P["W_s"] @ dz
    return g, d_next
'''}, "full"),
    Submission("code that raises a DeprecationWarning", NB_03B, {"ex1-solution": HALTING_HEAD + '''    import warnings
    warnings.warn("an old spelling, still right", DeprecationWarning)
    total = 0.0
    for n in range(1, max_ponder + 1):
        if total + h[n - 1] >= 1.0 - epsilon or n == max_ponder:
            break
        total += h[n - 1]
    return n, np.append(np.asarray(h[:n - 1], dtype=float), 1.0 - total), 1.0 - total
'''}, "full"),
]


# the honest answers that lost points: a lambda, a constant, scipy, a helper in a cell of the
# learner's own (``ex1-added``: a new code cell right before ex1's answer cell), and scipy in 12
HONEST += [
    Submission("a module-level lambda used by exercise 2", NB_03B, {"ex2-solution": "sig = lambda z: 1.0 / (1.0 + np.exp(-z))\n"
               + source_answer(NB_03B, "ex2-solution").replace("sigmoid(", "sig(")}, "full"),
    Submission("a module constant DTYPE used by exercise 1", NB_03B, {"ex1-solution": "DTYPE = np.float64\n"
               + source_answer(NB_03B, "ex1-solution").replace("dtype=float", "dtype=DTYPE")}, "full"),
    Submission("from scipy.special import expit", NB_03B, {"ex2-solution": "from scipy.special import expit\n"
               + source_answer(NB_03B, "ex2-solution").replace("sigmoid(", "expit(")}, "full"),
    Submission("a helper function in a cell of the learner's own", NB_03B, {
        "ex1-added": "def running_total(h, n):\n    return float(np.sum(np.asarray(h[:n], dtype=float)))\n",
        "ex1-solution": HALTING_HEAD + '''    for n in range(1, max_ponder + 1):
        if running_total(h, n) >= 1.0 - epsilon or n == max_ponder:
            break
    R = 1.0 - running_total(h, n - 1)
    return n, np.append(np.asarray(h[:n - 1], dtype=float), R), R
'''}, "full"),
    Submission("scipy.special.xlogy in 12's exercise 2", NB_12, {"ex2-solution": "import scipy.special\n"
               + source_answer(NB_12, "ex2-solution").replace("p * np.log(p / prior)", "scipy.special.xlogy(p, p / prior)")},
               "full"),
]


# 01-04 are judged outside the kernel too (their answers after the lesson's cells they need, with
# act_numpy beside them): the attacks on the judge itself, and honest answers that use the library
# or a cell of the learner's own. Those on 01 run under nbgrader with the rest; those on 02 and 03,
# which would each add an nbgrader course of their own, through the judge alone (judged_alone.py,
# tests/test_judge.py).
WRONG_01 = """
N_pred, p_pred, N_cap, p_cap = 1, [1.0], 1, [1.0]
eps_N4, p_N4, eps_N2, p_N2 = 0.5, [0.25] * 4, 0.5, [0.5, 0.5]
"""
ATTACKS += [
    Submission("a class body that walks the runner's frames and empties its list of calls, on 01", NB_01,
               {"ex1-solution": REACH_FRAMES + WRONG_01}, "none"),
    Submission("writes the runner's result itself, on 01", NB_01, {"ex1-solution": """
class _Speak:
    if __name__ == "__answer__":
        import json as _json, os as _os
        _forged = _json.dumps({"statements": [], "calls": []}).encode()
        for _fd in range(1, 12):
            try:
                _os.write(_fd, _forged)
            except OSError:
                pass
        _os._exit(0)
""" + WRONG_01}, "none"),
]
HONEST += [
    Submission("01's exercise 2 with halting_weights in a cell of the learner's own", NB_01, {
        "ex2-added": "from act_numpy.halting import halting_weights as hw\n\ndef first_N(h, eps, M):\n"
                     "    return int(hw(h, epsilon=eps, max_ponder=M)[0][0])\n",
        "ex2-solution": source_answer(NB_01, "ex2-solution").replace(
            "N = int(halting_weights(h, epsilon=epsilon, max_ponder=max_ponder)[0][0])",
            "N = first_N(h, epsilon, max_ponder)")}, "full"),
]
