"""Submissions to the exercises (scripts/attacks.py): ones that want the points without the
algorithm, and honest ones that must keep them.

Each submission is a notebook of the course with some answer cells replaced (``cells``: solution
grade_id -> the cell's new code); ``expect`` gives the points every judged check cell of the
exercises it answers must get: 0 for an attack, full marks for an honest variant. The attacks are
the ones issue 30 reports: rebinding the names the checks read, replacing the guard with the
identity, the library called from a thread or after ``sys.setprofile(None)``, its source run
under another name, an IPython input transformer that silences later cells, the source
notebook's solutions read at grading time, lookup tables of outputs on the notebook's fixed
inputs, autograd captured in a default argument, and ``os.path.realpath`` rebound while the
library's file is read. ``IN_KERNEL``: answers to 01's exercise 1, which is checked in the
learner's kernel, that run the source's solution found at grading time (the source notebook in
the course folder, the repository's through ``act_numpy.__file__``, ``!cat``, ``gradebook.db``
through sqlite3); each must fail on the grading seal (act_course/grading/seal.py), while
01's own solution keeps its points in the sealed kernel. The honest ones: a cumsum-based
halting, ``sigmoid`` used where the task allows it, code that raises a warning.

``cut_down`` keeps of a notebook only the setup cell and the attacked exercises' cells, so that
nbgrader's autograde runs in seconds; ``make exercises`` runs this after scripts/student.py --check,
and tests/test_judge.py runs the same submissions through the judge alone.
"""

import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from act_course.grading.nbgrader_run import ASSIGNMENT, autograde, cell_error, nbgrader, setup_course
from act_experiments.files import ROOT

NB_03B = "03b_write_your_own_act"
NB_12 = "12_attention_pondernet"
NB_01 = "01_forward_pass"


def notebook_path(stem):
    return ROOT / "notebooks" / f"{stem}.ipynb"


WRONG_HALTING = '''
def my_halting(h, epsilon=0.01, max_ponder=100):
    return 1, np.array([1.0]), 1.0
'''
HALTING_HEAD = "def my_halting(h, epsilon=0.01, max_ponder=100):\n"
KL_HEAD = "def kl_logit_gradient(lam, prior):\n"


@dataclass
class Submission:
    name: str
    notebook: str
    cells: dict                 # solution grade_id -> new source
    expect: str                 # "none" (every judged check of these exercises 0) or "full"


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


def source_answer(stem, grade_id):
    """The source's own code of cell ``grade_id`` of notebook ``stem``."""
    nb = json.loads(notebook_path(stem).read_text(encoding="utf-8"))
    return next("".join(c["source"]) for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


IN_KERNEL.append(Submission("01's own solution, checked in the sealed kernel", NB_01,
                            {"ex1-solution": source_answer(NB_01, "ex1-solution")}, "full"))

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


def submitted(submission):
    """The source notebook of ``submission`` with its answer cells replaced (a dict, nbformat 4)."""
    nb = json.loads(notebook_path(submission.notebook).read_text(encoding="utf-8"))
    found = set()
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in submission.cells:
            cell["source"] = submission.cells[grade_id].strip("\n").splitlines(keepends=True)
            found.add(grade_id)
    missing = set(submission.cells) - found
    if missing:
        raise ValueError(f"submission {submission.name!r}: {submission.notebook} has no cell {sorted(missing)}")
    return nb


def exercises_of(submission):
    return {re.match(r"ex(\d+)-", g).group(1) for g in submission.cells}


def judged_checks(nb, submission):
    """The grade_ids of the check cells of the exercises that ``submission`` answers."""
    numbers = exercises_of(submission)
    return [c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"]
            if c["metadata"].get("nbgrader", {}).get("grade") and not c["metadata"]["nbgrader"].get("solution")
            and c["cell_type"] == "code" and re.match(r"ex(\d+)-", c["metadata"]["nbgrader"]["grade_id"]).group(1) in numbers]


def cut_down(nb, numbers):
    """``nb`` with only its first code cell (the setup) and the cells of exercises ``numbers``, up to the
    last of them (later exercises call earlier ones, so their solution cells stay too)."""
    last = max(int(k) for k in numbers)
    kept, setup = [], False
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        match = re.match(r"ex(\d+)-", grade_id)
        if cell["cell_type"] == "code" and not setup and not match:
            kept.append(cell)
            setup = True
        elif match and (match.group(1) in numbers or (grade_id.endswith("-solution") and int(match.group(1)) <= last)):
            kept.append(cell)
    return dict(nb, cells=kept)


def sealed(nb, submission):
    """'sealed: <the refusal>' when the attack's answer cell failed on the grading seal, else what happened."""
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") in submission.cells:
            error = cell_error(cell)
            if error and "while a submission is graded" in error[1]:
                return f"sealed: {error[0]}: {error[1][:90]}"
            return f"not stopped by the seal: {error[0] + ': ' + error[1][:200] if error else 'the answer cell ran'}"
    return "not stopped by the seal: no answer cell"


def run(submissions, folder):
    """Autograde every submission with nbgrader; a list of what scored wrong (empty: all right)."""
    problems = []
    by_notebook = {}
    for k, submission in enumerate(submissions):
        by_notebook.setdefault(submission.notebook, []).append((f"s{k:02d}", submission))
    for stem, group in by_notebook.items():
        numbers = set().union(*(exercises_of(s) for _, s in group))
        source_nb = cut_down(json.loads(notebook_path(stem).read_text(encoding="utf-8")), numbers)
        course_folder = folder / stem
        source = course_folder / "given" / f"{stem}.ipynb"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(json.dumps(source_nb, indent=1), encoding="utf-8")
        course = setup_course([source], course_folder / "nbgrader")
        code, tail = nbgrader(course, "generate_assignment", ASSIGNMENT)
        if code != 0:
            raise RuntimeError(f"nbgrader generate_assignment failed:\n{tail}")
        paths = {}
        for student_id, submission in group:
            path = course_folder / student_id / f"{stem}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(cut_down(submitted(submission), numbers), indent=1), encoding="utf-8")
            paths[student_id] = [path]
        graded = autograde(course, paths)
        for student_id, submission in group:
            nb, scores = graded[student_id][f"{stem}.ipynb"]
            checks = judged_checks(source_nb, submission)
            got = sum(scores[g][0] or 0 for g in checks)
            most = sum(scores[g][1] for g in checks)
            want = 0 if submission.expect == "none" else most
            # an attack in the learner's kernel must be stopped by the seal, not miss its target
            stopped = "" if submission not in IN_KERNEL or submission.expect != "none" else sealed(nb, submission)
            print(f"{stem[:3].rstrip('_')}: {submission.name}: {got:g}/{most:g} points"
                  + ("" if got == want else f" (should be {want:g})") + (f" ({stopped})" if stopped else ""), flush=True)
            if got != want or (stopped and not stopped.startswith("sealed")):
                problems.append(f"{submission.name}: {got:g} of {most:g} points, should be {want:g}"
                                + (f"; {stopped}" if stopped else ""))
    return problems


def main(argv=None):
    """Autograde every submission; print a line each and return 1 if one scored wrong, else 0.
    ``argv`` is not read: the suite has no options."""
    with tempfile.TemporaryDirectory(prefix="act-attacks-") as folder:
        try:
            problems = run(ATTACKS + IN_KERNEL + HONEST, Path(folder))
        except RuntimeError as err:
            print(f"attacks.py: {err}", file=sys.stderr)
            return 1
    for line in problems:
        print(line)
    if problems:
        return 1
    everyone = ATTACKS + IN_KERNEL + HONEST
    attacks = sum(s.expect == "none" for s in everyone)
    print(f"{attacks} attacks score nothing and {len(everyone) - attacks} honest answers full marks under nbgrader autograde")
    return 0

