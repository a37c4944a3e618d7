"""An exercise that asks for a piece of ACT gives no marks for calling the course's own piece.

act_course.grading.written_by_hand on small answers, then nbgrader itself on notebook 03b with
an answer to each of its six exercises that wraps act_numpy's piece instead of writing it: every
check cell of every exercise must score 0.
"""

import html
import json
import re
from pathlib import Path

import numpy as np
import pytest

import act_numpy.halting as halting_module
from act_course.grading import assignments, by_hand, nbgrader_run, written_by_hand
from act_course.upkeep import setup_cells

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_03B = ROOT / "notebooks" / "03b_write_your_own_act.ipynb"
H = [0.3, 0.4, 0.5]




def honest(h):
    total, n = 0.0, 0
    while total + h[n] < 0.99:
        total, n = total + h[n], n + 1
    return n + 1


def test_an_answer_written_by_hand_passes_and_the_library_is_put_back():
    namespace = {"halting_weights": halting_module.halting_weights}
    with written_by_hand("act_numpy.halting.halting_weights", namespace=namespace):
        assert honest(H) == 3
    assert namespace["halting_weights"] is halting_module.halting_weights
    assert halting_module.halting_weights(H)[0][0] == 3


@pytest.mark.parametrize("how", ["module attribute", "imported name", "alias", "default argument",
                                 "error caught", "another piece"])
def test_an_answer_that_calls_the_library_fails(how):
    namespace = {"halting_weights": halting_module.halting_weights, "np": np}
    source = {
        "module attribute": "import act_numpy.halting\ndef answer(h):\n    return act_numpy.halting.halting_weights(h)[0][0]",
        "imported name": "def answer(h):\n    return halting_weights(h)[0][0]",
        "alias": "hw = halting_weights\ndef answer(h):\n    return hw(h)[0][0]",
        "default argument": "def answer(h, f=halting_weights):\n    return f(h)[0][0]",
        "error caught": ("def answer(h):\n    try:\n        return halting_weights(h)[0][0]\n"
                         "    except Exception:\n        return 3"),
        "another piece": ("from act_numpy.act import act_forward\nfrom act_numpy.params import init_params\n"
                          "P = init_params('rnn', 1, 2, 1, np.random.default_rng(0))\n"
                          "def answer(h):\n    return act_forward(np.zeros((1, 1, 1)), P)[1][0, 0]"),
    }[how]
    exec(source, namespace)
    with pytest.raises(AssertionError, match="yourself"):
        by_hand(namespace["answer"], namespace, pieces=("act_numpy.halting.halting_weights",))(H)
    assert namespace["halting_weights"] is halting_module.halting_weights


def test_an_allowed_function_may_be_used():
    from act_numpy.cells import sigmoid

    def answer(z):
        return sigmoid(z)

    assert by_hand(answer, {}, allow=("act_numpy.cells.sigmoid",))(0.0) == 0.5
    with pytest.raises(AssertionError, match="act_numpy.cells.sigmoid"):
        by_hand(answer, {})(0.0)


# Answers to 03b that wrap the library instead of writing ACT: {exercise: (function, body)}
CHEATS = {
    1: ("my_halting", """
    N, p, R = halting_weights(np.asarray([h], dtype=float), epsilon=epsilon, max_ponder=max_ponder)
    return int(N[0]), p[0, :N[0]], float(R[0])"""),
    2: ("my_act_step", """
    s, states, halts = s_prev, [], []
    for n in range(1, max_ponder + 1):
        s = np.tanh(np.append(x_t, 1.0 if n == 1 else 0.0) @ P["W_x"] + s @ P["W_s"] + P["b_s"])
        states.append(s)
        halts.append(sigmoid(s @ P["W_h"] + P["b_h"])[0])
        if sum(halts) >= 1.0 - epsilon:
            break
    N, p, R = halting_weights(np.array([halts]), epsilon=epsilon, max_ponder=max_ponder)
    N, p, R = int(N[0]), p[0, :N[0]], float(R[0])
    s_t = p @ np.array(states)
    return s_t, N, R, {"x": x_t, "s_prev": s_prev, "s": np.array(states), "h": np.array(halts), "p": p}"""),
    3: ("my_act_forward", """
    y, N, R, cache = act_forward(x, P, epsilon=epsilon, max_ponder=max_ponder)
    return y, N + R, N, R, library_steps(x, cache)"""),
    4: ("my_halting_backward", """
    return halting_backward(np.asarray(dp, dtype=float)[None, :], np.array([dR]), np.array([N]))[0]"""),
    5: ("my_act_step_backward", """
    import act_numpy.halting
    s, h, p, x_t = step["s"], step["h"], step["p"], step["x"]
    N, D = len(p), len(x_t)
    dp = s @ ds_t
    dzh = act_numpy.halting.halting_backward(dp[None, :], np.array([drho]), np.array([N]))[0] * h * (1.0 - h)
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
    return g, d_next"""),
    6: ("my_act_backward", """
    B_, T_, _ = x.shape
    for epsilon, M in [(0.01, 100), (0.3, 100), (0.01, 3)]:     # the setting whose N the steps show
        _, N_c, _, cache = act_forward(x, P, epsilon=epsilon, max_ponder=M)
        if all(len(steps[b][t]["p"]) == N_c[b, t] for b in range(B_) for t in range(T_)):
            break
    return act_backward(dy, dponder, cache)"""),
}
SOLUTION = re.compile(r"(### BEGIN SOLUTION\n).*?(\n[ \t]*### END SOLUTION)", flags=re.S)


def cheating_03b(path):
    """03b with each exercise's answer replaced by one that wraps act_numpy's piece."""
    nb = json.loads(NOTEBOOK_03B.read_text(encoding="utf-8"))
    done = set()
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        match = re.fullmatch(r"ex(\d)-solution", grade_id)
        if match:
            number = int(match.group(1))
            function, body = CHEATS[number]
            source = "".join(cell["source"])
            assert f"def {function}(" in source, (grade_id, function)
            source = SOLUTION.sub(lambda m: m.group(1) + body.strip("\n") + m.group(2), source)
            cell["source"] = source.splitlines(keepends=True)
            done.add(number)
    assert done == set(CHEATS)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_wrapping_the_library_scores_nothing_in_03b(tmp_path):
    """nbgrader autograde on 03b answered by wrapping act_numpy: every check of every exercise 0."""
    course = nbgrader_run.setup_course([NOTEBOOK_03B], tmp_path / "nbgrader")
    code, tail = nbgrader_run.nbgrader(course, "generate_assignment", nbgrader_run.ASSIGNMENT)
    assert code == 0, tail
    cheat = cheating_03b(tmp_path / NOTEBOOK_03B.name)
    graded = nbgrader_run.autograde(course, {"cheat": [cheat]})
    nb, scores = graded["cheat"][NOTEBOOK_03B.name]
    assert len(scores) >= 6 and {g.split("-")[0] for g in scores} == {f"ex{k}" for k in CHEATS}, scores
    scored = {grade_id: score for grade_id, (score, _) in scores.items() if score}
    assert not scored, f"checks that gave points to an answer wrapping act_numpy: {scored}"
    outputs = {cell.metadata["nbgrader"]["grade_id"]: nbgrader_run.cell_error(cell) for cell in nb.cells
               if cell.metadata.get("nbgrader", {}).get("grade_id") in scores}
    for grade_id, error in outputs.items():
        assert error is not None and error[0] in ("AssertionError", "Forbidden"), (grade_id, error)
        assert "yourself" in error[1], (grade_id, error)


# The seal (act_course/grading/seal.py): what a grading kernel may not reach. One process
# sealed as a kernel would be, trying each way; {label: (what the line does, "refused" or "allowed")}
SEAL_TRIES = {
    "a file of the working folder": ("open('mine.txt').read()", "allowed"),
    "a file of the course folder": ("open(COURSE + '/source/answer.txt').read()", "refused"),
    "the course folder, listed": ("os.listdir(COURSE)", "refused"),
    "the course folder, climbed to": ("open('../../source/answer.txt').read()", "refused"),
    "the course folder, through /proc/self/root": ("open('/proc/self/root' + COURSE + '/source/answer.txt').read()",
                                                   "refused"),
    "a notebook outside the course": ("open(TMP + '/elsewhere.ipynb').read()", "refused"),
    "the repository's notebooks/": ("os.listdir(REPO + '/notebooks')", "refused"),
    "the repository's other files": ("open(REPO + '/README.md').read()", "refused"),
    "the repository's results/": ("os.listdir(REPO + '/results')", "allowed"),
    "the repository's root, listed": ("os.listdir(REPO)", "allowed"),
    "a folder holding the course, opened": ("os.open(TMP, os.O_RDONLY)", "refused"),
    "sqlite3": ("__import__('sqlite3').connect(TMP + '/x.db')", "refused"),
    "subprocess": ("__import__('subprocess').run(['true'])", "refused"),
    "os.system": ("os.system('true')", "refused"),
    "os.fork": ("os.fork()", "refused"),
    "_posixsubprocess.fork_exec": ("__import__('_posixsubprocess').fork_exec()", "refused"),
    "_posixsubprocess imported again": ("(sys.modules.pop('_posixsubprocess'), __import__('_posixsubprocess'))",
                                        "refused"),
    "a C function through ctypes": ("__import__('ctypes').CDLL(None).getpid()", "refused"),
    "a socket's connection": ("__import__('socket').create_connection(('127.0.0.1', 9))", "refused"),
    "another process's files": ("open(f'/proc/{os.getppid()}/cmdline').read()", "refused"),
    "its own memory": ("open('/proc/self/mem', 'rb')", "refused"),
    "tracing": ("sys.settrace(None)", "refused"),
    "a file written as a shared library": ("open(TMP + '/evil.so', 'wb')", "refused"),
    "writing into the Python installation": ("open(sys.prefix + '/planted.pth', 'w')", "refused"),
    "moving a course file out": ("os.rename(COURSE + '/source/answer.txt', 'moved.txt')", "refused"),
    "a symbolic link": ("os.symlink(COURSE, 'link')", "refused"),
    "a path object of its own kind": ("__import__('shutil').copyfile(type('P', (), {'__fspath__': lambda s: "
                                      "'mine.txt'})(), 'copy.txt')", "refused"),
    "the hook's defaults changed": ("setattr(HOOK, '__defaults__', None)", "refused"),
    "the hook's defaults deleted": ("delattr(HOOK, '__defaults__')", "refused"),
    "the hook's code changed": ("setattr(HOOK, '__code__', (lambda event, args: None).__code__)", "refused"),
    "after os.path.realpath is rebound": ("setattr(os.path, 'realpath', lambda p, **k: '/tmp') or "
                                          "open(COURSE + '/source/answer.txt').read()", "refused"),
    "after builtins are rebound": ("setattr(builtins, 'isinstance', lambda *a: True) or setattr(builtins, 'type', "
                                   "lambda *a: str) or open(COURSE + '/source/answer.txt').read()", "refused"),
    "a temporary folder, made and removed": ("__import__('tempfile').TemporaryDirectory().cleanup()", "allowed"),
    "a file of its own in /tmp, and pathlib": ("pathlib.Path(TMP + '/out.txt').write_text('x') and "
                                               "pathlib.Path(TMP + '/out.txt').read_text()", "allowed"),
    "/proc/cpuinfo": ("open('/proc/cpuinfo').read()", "allowed"),
    # paths relative to a descriptor (os.open's dir_fd, openat): str, bytes and pathlib, climbing from
    # a package folder the seal allows, or from the venv's site-packages, to the repository
    "a bytes path climbing from a package folder's descriptor": (
        "os.open(b'../README.md', os.O_RDONLY, dir_fd=os.open(REPO + '/act_numpy', os.O_RDONLY))", "refused"),
    "a str path climbing from a package folder's descriptor": (
        "os.open('../README.md', os.O_RDONLY, dir_fd=os.open(REPO + '/act_numpy', os.O_RDONLY))", "refused"),
    "a pathlib path climbing from a package folder's descriptor": (
        "os.open(pathlib.PurePosixPath('../README.md'), os.O_RDONLY, dir_fd=os.open(REPO + '/act_numpy', "
        "os.O_RDONLY))", "refused"),
    "the venv's repository's .git, by a bytes path from site-packages' descriptor": (
        "os.open(os.path.relpath(VREPO + '/.git', SITE).encode(), os.O_RDONLY, dir_fd=os.open(SITE, os.O_RDONLY))",
        "refused"),
    "the venv's repository's .git, listed by a path climbing from site-packages": (
        "os.listdir(SITE + '/' + os.path.relpath(VREPO + '/.git', SITE))", "refused"),
    "the venv's repository's root, opened as a folder from site-packages' descriptor": (
        "os.open(os.path.relpath(VREPO, SITE).encode(), os.O_RDONLY, dir_fd=os.open(SITE, os.O_RDONLY))", "refused"),
    "the course folder, by a bytes path from the working folder's descriptor": (
        "os.open(b'../../source/answer.txt', os.O_RDONLY, dir_fd=os.open('.', os.O_RDONLY))", "refused"),
    "a descriptor of the course folder, listed": ("os.listdir(EARLY)", "refused"),
    "a descriptor of the course folder, scanned": ("list(os.scandir(EARLY))", "refused"),
    "a descriptor of the course folder, walked": ("list(os.fwalk(dir_fd=EARLY))", "refused"),
    "a file of the working folder, by its descriptor": (
        "os.read(os.open(b'mine.txt', os.O_RDONLY, dir_fd=os.open('.', os.O_RDONLY)), 10)", "allowed"),
    "the working folder, listed by its descriptor": ("os.listdir(os.open('.', os.O_RDONLY))", "allowed"),
    "NumPy, PyTorch and a figure": ("float(__import__('torch').ones(3).sum()) + float(np.ones(2).sum()) + "
                                    "len(__import__('matplotlib.pyplot').pyplot.subplots())", "allowed"),
}
SEALED_PROCESS = """
import builtins, gc, json, os, pathlib, sys
import numpy as np
import matplotlib
matplotlib.use("Agg")
from act_course.grading.seal import seal_kernel
TMP, COURSE, REPO = sys.argv[1], sys.argv[2], sys.argv[3]
os.chdir(COURSE + "/autograded/alice")
SITE = __import__("sysconfig").get_paths()["purelib"]
VREPO = next(p for p in pathlib.Path(sys.prefix).resolve().parents if (p / "act_numpy").is_dir())
VREPO = str(VREPO)
# a descriptor opened before the seal, in a process of its own: while it is open, every relative path is
# read from it too (a dir_fd never reaches the hook), so that even the working folder's files are refused
EARLY = os.open(COURSE + "/source", os.O_RDONLY) if "EARLY" in sys.argv[4] else None
seal_kernel(json.dumps({"denied": [COURSE], "allowed": [os.getcwd()]}))
HOOK = next(f for f in gc.get_objects() if type(f).__name__ == "function" and f.__name__ == "hook"
            and f.__code__.co_filename.endswith("seal.py"))
real_type, saved, realpath, results = type, dict(vars(builtins)), os.path.realpath, {}
for label, line in json.loads(sys.argv[4]).items():
    try:
        eval(line)
        results[label] = "allowed"
    except PermissionError as err:
        results[label] = "refused"
    except BaseException as err:
        results[label] = f"{real_type(err).__name__}: {err}"
    vars(builtins).update(saved)
    os.path.realpath = realpath
sys.stdout.write(json.dumps(results))
"""


@pytest.mark.slow
def test_the_seal_refuses_what_could_reach_a_solution_and_allows_the_lessons(tmp_path):
    import subprocess
    import sys
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    (course / "source" / "answer.txt").write_text("the solution")
    (course / "autograded" / "alice").mkdir(parents=True)
    (course / "autograded" / "alice" / "mine.txt").write_text("my own")
    (tmp_path / "elsewhere.ipynb").write_text("{}")
    got = {}
    for early in (False, True):
        tries = {label: line for label, (line, _) in SEAL_TRIES.items() if ("EARLY" in line) == early}
        done = subprocess.run([sys.executable, "-c", SEALED_PROCESS, str(tmp_path), str(course), str(ROOT),
                               json.dumps(tries)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        got.update(json.loads(done.stdout))
    wrong = {label: got[label] for label, (_, want) in SEAL_TRIES.items() if got[label] != want}
    assert not wrong, wrong


def test_the_seals_hook_reads_no_global_name():
    """A learner can rebind any global a function reads at call time: the hook and its path
    resolver read only their arguments and defaults."""
    import dis
    import types

    from act_course.grading import seal

    def names(code):
        found = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF")}
        return found.union(*(names(c) for c in code.co_consts if isinstance(c, types.CodeType)))

    class Anything(dict):
        def __missing__(self, key):
            return None

    resolve, check = seal._resolver(*[None] * 10), seal._checker(Anything())
    hook = seal._hook(check, Anything())
    where, folders = seal._descriptors(*[None] * 11)
    assert names(hook.__code__) == names(check.__code__) == names(resolve.__code__) == set()
    assert names(where.__code__) == names(folders.__code__) == set()
    assert hook.__closure__ is check.__closure__ is where.__closure__ is folders.__closure__ is None


def test_a_kernel_whose_seal_fails_stops_instead_of_grading_unsealed():
    import subprocess
    import sys

    from act_course.grading.seal import kernel_line
    line = kernel_line(["/nowhere"], ["/tmp"])
    done = subprocess.run([sys.executable, "-c", "import sys\nsys.modules['act_course.grading.seal'] = None\n"
                           + line + "\nprint('graded unsealed')"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 86 and "graded unsealed" not in done.stdout
    assert "the grading seal could not be installed" in done.stderr


@pytest.mark.slow
def test_sealed_execute_seals_the_kernel_before_its_first_cell(tmp_path):
    """nbgrader's Execute as scripts/nbgrader_config.py sets it: the kernel nbgrader starts cannot
    read the course folder, but can read the submission's own working folder."""
    import nbformat

    from act_course.grading.preprocessors import SealedExecute
    course, here = tmp_path / "course", tmp_path / "course" / "autograded" / "alice" / "act"
    here.mkdir(parents=True)
    (course / "gradebook.db").write_text("the grades")
    (here / "data.txt").write_text("given")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("print(open('data.txt').read())"),
                nbformat.v4.new_code_cell(f"print(open({str(course / 'gradebook.db')!r}).read())")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    executed, _ = SealedExecute(denied=[str(course)], timeout=120).preprocess(nb, {"metadata": {"path": str(here)}})
    first, second = executed.cells
    assert first.outputs[0]["text"] == "given\n"
    assert second.outputs[0]["output_type"] == "error" and second.outputs[0]["ename"] == "PermissionError"
    assert "while a submission is graded" in second.outputs[0]["evalue"]


@pytest.mark.slow
def test_the_teachers_path_gives_feedback_that_reads_offline(tmp_path):
    """scripts/course.py's course, then docs/teaching.md's commands on session1 (notebook 01, its
    lesson's code cells taken out): a learner hands in the untouched release, autograde,
    generate_feedback. The feedback page embeds
    the figure its markdown shows and carries MathJax itself: nothing is fetched from a CDN."""
    from act_course.grading.nbgrader_run import autograde, nbgrader
    course = tmp_path / "course"
    assignments.build(course, generate=False)
    assert assignments.ASSIGNMENTS["session1"] == ["01_forward_pass"]
    # the lesson's code cells out (the page's text, figure links, exercises and setup stay), so that
    # autograde runs in seconds: the release's lessons are run by tests/test_graded_course.py
    source = course / "source" / "session1" / "01_forward_pass.ipynb"
    nb = json.loads(source.read_text(encoding="utf-8"))
    opening = [id(c) for c in setup_cells.opening_cells(nb)]
    nb["cells"] = [c for c in nb["cells"] if c["cell_type"] != "code" or id(c) in opening or c["metadata"].get("nbgrader")]
    source.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    code, tail = nbgrader(course, "generate_assignment", "session1")
    assert code == 0, tail
    released = course / "release" / "session1" / "01_forward_pass.ipynb"
    # bob's exercise 1 passes the visible checks and fails the hidden ones: N = 3, weights adding to 1
    wrong = json.loads(released.read_text(encoding="utf-8"))
    answer = next(c for c in wrong["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "ex1-solution")
    answer["source"] = "N_pred, p_pred = 3, [0.25, 0.4, 0.35]\nN_cap, p_cap = 3, [0.25, 0.4, 0.35]\n"
    (tmp_path / "bob").mkdir()
    (tmp_path / "bob" / released.name).write_text(json.dumps(wrong), encoding="utf-8")
    graded = autograde(course, {"alice": [released], "bob": [tmp_path / "bob" / released.name]},
                       assignment="session1")
    assert graded["bob"][released.name][1]["ex1-check"] == (0, 2)
    code, tail = nbgrader(course, "generate_feedback", "session1")
    assert code == 0, tail
    hidden = hidden_test_lines(nb)
    assert len(hidden) > 20
    for student in ("alice", "bob"):
        page = (course / "feedback" / student / "session1" / "01_forward_pass.html").read_text(encoding="utf-8")
        assert re.search(r'<img alt="ACT unrolled inside one input step" src="data:image/png;base64,', page)
        assert "figures/act_architecture.png" not in page
        assert "window.MathJax = {" in page and "cdnjs" not in page
        assert not re.search(r'<script[^>]+src="https?://', page), "a script loaded from the network"
        # which check failed and why, never the hidden tests' source (text of the page, tags taken out)
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        shown = [line for line in hidden if line in text]
        assert not shown, f"{student}'s feedback shows hidden tests: {shown[:3]}"
        assert "HIDDEN TESTS" not in text
        # a failed check shows its last line only (an answer cell's own error keeps its traceback)
        assert not re.search(r"AssertionError\s+Traceback", text)
    bob = html.unescape(re.sub(r"<[^>]+>", "", (course / "feedback" / "bob" / "session1" /
                                                "01_forward_pass.html").read_text(encoding="utf-8")))
    assert "AssertionError: epsilon = 0.01: N = 3 is not right" in bob


def hidden_test_lines(nb):
    """The lines of a notebook's hidden tests that appear nowhere else in it (stripped, long enough
    to be telling)."""
    hidden, seen = set(), set()
    for cell in nb["cells"]:
        inside = False
        for line in "".join(cell["source"]).splitlines():
            if "BEGIN HIDDEN TESTS" in line or "END HIDDEN TESTS" in line:
                inside = "BEGIN" in line
            elif len(line.strip()) > 25:
                (hidden if inside else seen).add(line.strip())
    return sorted(hidden - seen)


@pytest.mark.slow
def test_a_rebuilt_course_keeps_the_teachers_sources(tmp_path, capsys):
    """`make course` again: the course's own files are rewritten, a source the teacher edited or
    added is kept, and the edit is named in one line; deleted, the repository's comes back."""
    course = tmp_path / "course"
    assert assignments.build(course, generate=False) == []
    mine = course / "source" / "session1" / "01_forward_pass.ipynb"
    other = course / "source" / "session2" / "02_binary_flag.ipynb"
    figure = next((course / "source" / "session1" / "figures").iterdir())
    repository = mine.read_text(encoding="utf-8")
    edited = repository.replace("epsilon", "eps", 1)
    mine.write_text(edited, encoding="utf-8")
    figure.write_bytes(b"the teacher's own figure")
    (course / "source" / "session1" / "extra.ipynb").write_text("{}", encoding="utf-8")
    other.write_text("another edit", encoding="utf-8")
    (course / "source" / "session1" / "gone.ipynb").write_text("made", encoding="utf-8")
    record = json.loads((course / assignments.MADE).read_text(encoding="utf-8"))
    record["source/session1/gone.ipynb"] = assignments.digest(b"made")    # a notebook moved elsewhere
    (course / assignments.MADE).write_text(json.dumps(record), encoding="utf-8")
    capsys.readouterr()
    kept = assignments.build(course, generate=False)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("kept")]
    assert sorted(kept) == sorted([mine.relative_to(course).as_posix(), figure.relative_to(course).as_posix(),
                                   other.relative_to(course).as_posix()])
    assert len(lines) == 1 and "01_forward_pass.ipynb (edited)" in lines[0] and "--fresh" in lines[0]
    assert "source/session1/extra.ipynb (added)" in lines[0]
    assert mine.read_text(encoding="utf-8") == edited and figure.read_bytes() == b"the teacher's own figure"
    assert (course / "source" / "session1" / "extra.ipynb").is_file()
    assert not (course / "source" / "session1" / "gone.ipynb").exists()
    assert sorted(assignments.build(course, generate=False)) == sorted(kept)     # a third build too
    assert mine.read_text(encoding="utf-8") == edited
    mine.unlink()
    other.unlink()
    assert sorted(assignments.build(course, generate=False)) == [figure.relative_to(course).as_posix()]
    assert mine.read_text(encoding="utf-8") == repository
    assignments.build(course, generate=False, fresh=True)
    assert figure.read_bytes() != b"the teacher's own figure"
    assert not (course / "source" / "session1" / "extra.ipynb").exists()


def test_feedback_takes_the_hidden_tests_out_of_check_cells_only():
    """A check cell loses its hidden tests and its error keeps only its last line; a learner's
    answer that contains the delimiters (even unpaired) stays as written and breaks nothing."""
    import nbformat

    from act_course.grading.feedback import WithoutHiddenTests
    check = nbformat.v4.new_code_cell("assert x > 0\n### BEGIN HIDDEN TESTS\nassert x == 3, 'x is not 3'\n### END HIDDEN TESTS")
    check.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": "ex1-check", "points": 1}
    check.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="x is not 3",
                                            traceback=["---", "----> 3 assert x == 3, 'x is not 3'", "AssertionError: x is not 3"])]
    answer = nbformat.v4.new_code_cell("x = 4  # ### BEGIN HIDDEN TESTS, with no end")
    answer.metadata["nbgrader"] = {"grade": False, "solution": True, "grade_id": "ex1-solution"}
    lesson = nbformat.v4.new_code_cell("print('### BEGIN HIDDEN TESTS')")
    nb = nbformat.v4.new_notebook(cells=[answer, check, lesson])
    out, _ = WithoutHiddenTests().preprocess(nb, {})
    assert out.cells[1].source == "assert x > 0"
    assert out.cells[1].outputs[0]["traceback"] == ["AssertionError: x is not 3"]
    assert out.cells[0].source == answer.source and out.cells[2].source == lesson.source


def test_a_rebuilt_course_tells_an_edit_from_a_save(tmp_path):
    """A notebook opened and saved (outputs, metadata, indentation) is rewritten by a rebuild; one
    whose points were changed is the teacher's and is kept, with the figures it shows."""
    course = tmp_path / "course"
    assignments.build(course, generate=False)
    saved = course / "source" / "session2" / "02_binary_flag.ipynb"
    nb = json.loads(saved.read_text(encoding="utf-8"))
    nb["metadata"]["widgets"] = {"state": {}}
    for cell in nb["cells"]:
        cell["metadata"].setdefault("jupyter", {})["source_hidden"] = False
    saved.write_text(json.dumps(nb, indent=2), encoding="utf-8")
    pointed = course / "source" / "session4" / "05_parity.ipynb"
    nb = json.loads(pointed.read_text(encoding="utf-8"))
    check = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("points"))
    check["metadata"]["nbgrader"]["points"] += 1
    pointed.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    shown = set(assignments.FIGURE_LINK.findall(pointed.read_text(encoding="utf-8")))
    assert shown
    assert assignments.build(course, generate=False) == ["source/session4/05_parity.ipynb"]
    assert "widgets" not in json.loads(saved.read_text(encoding="utf-8"))["metadata"]
    assert all((course / "source" / "session4" / "figures" / name).is_file() for name in shown)
