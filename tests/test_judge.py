"""The judge (act_course.grading.judge): answers run outside the learner's kernel, on inputs drawn at
grading time. Every attack of act_course.grading.attacks scores nothing, every honest variant full marks;
the runner refuses the ways out; the allow-lists agree with docs/teaching.md."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from act_course.grading import attacks, exchange, judge, submissions
from act_course.grading import registry as judged

ROOT = Path(__file__).resolve().parent.parent


def verdicts(submission, seed=0):
    nb = attacks.submitted(submission)
    only = [g for g in attacks.judged_checks(nb, submission) if g in judged.JUDGED[submission.notebook].checks]
    found = judged.judge_notebook(nb, submission.notebook, rng=np.random.default_rng(seed), only=only)
    assert sorted(found) == sorted(only), (found, only)
    return found


@pytest.mark.twin
@pytest.mark.parametrize("submission", attacks.ATTACKS, ids=[a.name for a in attacks.ATTACKS])
def test_every_attack_scores_nothing(submission):
    for grade_id, verdict in verdicts(submission).items():
        assert not verdict.passed, (grade_id, verdict.text)


@pytest.mark.parametrize("submission", attacks.JUDGE_ONLY, ids=[a.name for a in attacks.JUDGE_ONLY])
def test_the_judge_alone_scores_the_submissions_of_the_other_judged_notebooks_as_expected(submission):
    for grade_id, verdict in verdicts(submission).items():
        assert verdict.passed == (submission.expect == "full"), (grade_id, verdict.text)


@pytest.mark.twin
@pytest.mark.parametrize("submission", attacks.HONEST, ids=[a.name for a in attacks.HONEST])
def test_every_honest_variant_scores_full_marks(submission):
    for grade_id, verdict in verdicts(submission).items():
        assert verdict.passed, (grade_id, verdict.text)


def test_a_warning_is_a_note_not_a_failure():
    found = verdicts(next(h for h in attacks.HONEST if "Warning" in h.name))
    assert "note: your answer raised DeprecationWarning: an old spelling, still right" in found["ex1-check"].text


# the release's side of every judged notebook is graded by nbgrader in tests/test_graded_course.py (the
# untouched release scores nothing), where the judge fails its blank exercises without running them;
# here, one notebook of each kind is run the long way, its answers replaced by hand (not by nbgrader's
# stub, which the judge would recognise): values (01), pieces of ACT written by hand (03b), a gradient
# by hand without PyTorch (12), and functions checked against the course's frontier and SciPy (15)
RELEASE_HERE = ("01_forward_pass", "03b_write_your_own_act", "12_attention_pondernet", "15_when_adapting_pays")


@pytest.mark.slow
def test_the_registry_names_every_exercises_module_and_loads_none_before_it_is_asked():
    """JUDGED imports a notebook's exercises module on first lookup (nbgrader loads the registry in
    every command); every act_course/grading/exercises_*.py is the entry of a notebook that exists."""
    import subprocess
    import sys
    folder = ROOT / "act_course" / "grading"
    modules = sorted(p.stem.split("_", 1)[1] for p in folder.glob("exercises_*.py"))
    assert modules == sorted(stem.split("_")[0] for stem in judged.JUDGED)
    assert all((ROOT / "notebooks" / f"{stem}.ipynb").is_file() for stem in judged.JUDGED)
    assert all(judged.JUDGED[stem].checks for stem in judged.JUDGED)
    loaded = subprocess.run([sys.executable, "-c", "import sys, act_course.grading.preprocessors\n"
                             "print(sorted(m for m in sys.modules if 'exercises_' in m or m == 'torch'))"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", loaded
    with pytest.raises(KeyError):
        judged.JUDGED["00_no_such_notebook"]


@pytest.mark.slow
@pytest.mark.parametrize("stem", sorted(judged.JUDGED))
def test_the_source_passes_and_the_release_fails_every_judged_check(stem):
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    found = judged.judge_notebook(nb, stem, rng=np.random.default_rng(1))
    assert sorted(found) == sorted(judged.JUDGED[stem].checks), "a judged grade_id the notebook does not have"
    assert all(v.passed for v in found.values()), {g: v.text for g, v in found.items() if not v.passed}
    if stem not in RELEASE_HERE:
        return
    released = re.compile(r"### BEGIN SOLUTION.*?### END SOLUTION", flags=re.S)
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == "code":
            cell["source"] = released.sub("raise NotImplementedError()", "".join(cell["source"]))
    found = judged.judge_notebook(nb, stem, rng=np.random.default_rng(1))
    for grade_id, verdict in found.items():
        if judged.JUDGED[stem].checks[grade_id] is judge.BY_ITS_TESTS:     # values: None, as the release sets them
            assert verdict.ename == "AssertionError" and "not answered yet" in verdict.text, (grade_id, verdict)
        else:
            assert verdict.ename == "NotImplementedError" and "raised NotImplementedError" in verdict.text, (grade_id,
                                                                                                           verdict)


def test_an_exercise_left_as_released_fails_without_a_process_and_one_of_the_learners_own_is_run(monkeypatch):
    """The judge's shortcut for a blank exercise: a check with nothing of the learner's above it
    (every answer cell as nbgrader released it, no cell added or changed) fails at once; an answer
    cell changed, or a cell added above, and the check is run the long way."""
    import nbformat
    from nbgrader.preprocessors import ClearSolutions
    stem = attacks.NB_01
    source = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text(encoding="utf-8"))
    release = nbformat.from_dict(json.loads(json.dumps(source)))
    for cell in release.cells:
        cell.source = "".join(cell.source) if isinstance(cell.source, list) else cell.source
        ClearSolutions().preprocess_cell(cell, {"language": "python"}, 0)
    started = []
    monkeypatch.setattr(judge, "run_answer", lambda *a, **k: started.append(1) or ([], []))
    found = judged.judge_notebook(release, stem, rng=np.random.default_rng(0))
    assert found and not started
    assert all(not v.passed and v.ename == "NotImplementedError" and "as released" in v.text for v in found.values())
    first = next(i for i, c in enumerate(release.cells) if c.metadata.get("nbgrader", {}).get("solution"))
    added = release.cells[:first] + [nbformat.v4.new_code_cell("def helper():\n    return 1")] + release.cells[first:]
    judged.judge_notebook(dict(release, cells=added), stem, rng=np.random.default_rng(0), only=["ex1-check"])
    assert started, "a cell of the learner's own above the check: the check runs"
    release.cells[first].source += "\nx = 1"
    assert judged.learners_from(release, source, judged.lesson_cells(source)) == first
    assert judged.learners_from(source, source, judged.lesson_cells(source)) == first


def test_the_library_reached_by_name_gets_a_message_that_says_so():
    cheat = attacks.Submission("calls halting_weights", attacks.NB_03B, {"ex1-solution": attacks.HALTING_HEAD + (
        "    N, p, R = halting_weights([h], epsilon, max_ponder)\n    return int(N[0]), p[0, :N[0]], float(R[0])\n")},
        "none")
    verdict = verdicts(cheat)["ex1-check"]
    assert verdict.ename == "Forbidden"
    assert "your answer calls act_numpy.halting.halting_weights: this exercise asks you to write this piece yourself" \
        in verdict.text


def test_every_top_level_statement_but_bare_expressions_is_kept_in_order():
    code, dropped = judge.keep_statements(
        "import numpy as np\nEPS = 1e-9\nDTYPE = np.float64\nf = lambda: 0\nprint('hi')\n"
        "get_ipython().input_transformers_cleanup.append(None)\n%timeit 1\nfor i in range(3):\n    pass\n"
        "def g(x):\n    return x\nclass C:\n    pass\n")
    assert dropped == 3
    lines = code.splitlines()
    assert lines[:4] == ["import numpy as np", "EPS = 1e-09", "DTYPE = np.float64", "f = lambda: 0"]
    assert "for i in range(3):" in code and "def g(x):" in code and "class C:" in code
    assert "print" not in code and "get_ipython" not in code
    assert judge.keep_statements("def broken(:\n")[0] == ""


def test_course_imports_are_found_under_every_name():
    names = judge.course_imports(["import numpy as np\nfrom act_numpy.halting import halting_weights as hw\n"
                                  "import act_numpy.act\nimport act_beyond.pondernet as pn\n"])
    assert names == {"hw": "act_numpy.halting.halting_weights", "act_numpy": "act_numpy",
                     "pn": "act_beyond.pondernet"}


def run_cells(code, calls, timeout=60):
    """Run ``code`` as one answer cell in the runner, as for 03b, and ``calls``: (notes, entries)."""
    return judge.run_answer([{"name": "<cell>", "code": code}], calls, judged.JUDGED["03b_write_your_own_act"], {},
                            timeout=timeout)


def run_alone(body, timeout=60):
    """Run ``def answer(): <body>`` in the runner, as for 03b; the entry of its one call."""
    code = "def answer():\n" + "".join(f"    {line}\n" for line in body.splitlines())
    notes, entries = run_cells(code, [("answer", [])], timeout)
    assert notes == [], notes
    return entries[0]


@pytest.mark.parametrize("body, refused", [
    (f"return open({str(ROOT / 'act_numpy' / 'halting.py')!r}).read()", "PermissionError"),
    (f"return open({str(ROOT / 'README.md')!r}).read()", "PermissionError"),
    ("import os\nreturn os.open('/etc/hostname', os.O_RDONLY)", "PermissionError"),
    ("import subprocess\nreturn subprocess.run(['true']).returncode", "PermissionError"),
    ("import os\nreturn os.system('true')", "PermissionError"),
    ("import ctypes\nreturn ctypes.CDLL(None).getpid()", "PermissionError"),
    ("import socket\nreturn socket.socket()", "PermissionError"),
    ("import os, posixpath\nreal = os.path.realpath\nposixpath.realpath = os.path.realpath = lambda p, **k: '/tmp'\n"
     f"try:\n    return open({str(ROOT / 'act_numpy' / 'halting.py')!r}).read()\n"
     "finally:\n    posixpath.realpath = os.path.realpath = real", "PermissionError"),
    ("import _posixsubprocess\nreturn _posixsubprocess.fork_exec()", "PermissionError"),
    ("import act_numpy\nreturn 1", "Forbidden"),
    ("import importlib\nreturn importlib.import_module('act_course.grading')", "Forbidden"),
    ("import torch\nreturn 1", "Forbidden"),
])
@pytest.mark.slow
def test_the_runner_refuses_the_ways_out(body, refused):
    entry = run_alone(body)
    assert "error" in entry and entry["error"][0] == refused, entry


def test_the_runner_lets_numpy_and_the_standard_library_work():
    entry = run_alone("import math, json, itertools\nimport numpy.linalg\n"
                      "return float(np.linalg.det(np.eye(2))) + math.pi + len(json.dumps([1]))")
    assert entry["value"] == pytest.approx(1.0 + np.pi + 3)


@pytest.mark.slow
def test_any_installed_package_may_be_imported_but_the_course_and_torch_answer_in_one_line():
    entry = run_alone("from scipy.special import expit\nreturn float(expit(0.0))")
    assert entry["value"] == 0.5
    notes, entries = run_cells("from act_numpy.halting import halting_weights\nimport torch\n"
                               "def answer():\n    return halting_weights([0.5])\ndef autograd():\n    return torch.ones(1)\n",
                               [("answer", []), ("autograd", [])])
    assert notes == []
    for entry, named in zip(entries, ("act_numpy.halting.halting_weights", "torch.ones")):
        assert entry["error"][0] == "Forbidden" and "\n" not in entry["error"][1]
        assert f"your answer calls {named}" in entry["error"][1]
    entry = run_alone("import act_course\nreturn 1")
    assert entry["error"][0] == "Forbidden" and "your answer imports act_course" in entry["error"][1]


def test_a_statement_that_stops_is_noted_once_and_only_the_calls_that_fail_lose():
    notes, entries = run_cells("import no_such_package\nfrom scipy.special import expit\n"
                               "def good():\n    return 1.0\ndef bad():\n    return no_such_package.x\n",
                               [("good", []), ("bad", [])])
    assert len(notes) == 1 and "import no_such_package" in notes[0] and "ModuleNotFoundError" in notes[0]
    assert entries[0]["value"] == 1.0 and entries[1]["error"][0] == "NameError"


# what the answer's process sends back, read strictly: (document, the reason a check then fails)
CALLS = [("f", []), ("f", [])]


@pytest.mark.parametrize("document, why", [
    ('{"statements": [], "calls": [{"value": 1.0}]}', "1 results for 2 calls"),
    ('{"statements": [], "calls": [{"value": 1.0}, {"value": 1.0}, {"value": 1.0}]}', "3 results for 2 calls"),
    ('{"statements": [], "calls": [{"value": 1.0}, {"value": 1.0}]} extra', "not the judge's format"),
    ('{"cells": null, "calls": []}', "not the judge's format"),
    ('[1, 2]', "not the judge's format"),
])
def test_a_document_of_another_form_fails_every_check(document, why):
    with pytest.raises(exchange.AnswerError, match=why):
        exchange.read_outputs(document.encode(), len(CALLS))


@pytest.mark.parametrize("value, why", [
    ('Infinity', "not finite"), ('NaN', "not finite"), ('{"ndarray": ["f8", [2], [1.0, NaN]]}', "not finite"),
    ('{"ndarray": ["f8", [3], [1.0, 2.0]]}', "do not fill its shape"), ('{"pickle": "gASV"}', "judge's format"),
    ('{"ndarray": ["i8", [1], [1e400]]}', "not finite"), ('{"list": [1, {"x": 2, "y": 3}]}', "judge's format"),
    (json.dumps("x" * 1000), "longer than"), (json.dumps({"ndarray": ["f8", [10 ** 7], []]}), "shape"),
    ("9" * 40, "too large for 64 bits"), ('{"set": [1, {"list": [2]}]}', "set whose members"),
])
def test_a_malformed_non_finite_or_oversized_output_fails_its_check(value, why):
    _, entries = exchange.read_outputs(('{"statements": [], "calls": [{"value": %s}, {"value": 2.0}]}' % value).encode(), 2)
    with pytest.raises(exchange.AnswerError, match=why):
        exchange.returned(entries[0])
    assert exchange.returned(entries[1]) == 2.0


def test_more_than_the_limit_sent_back_fails(monkeypatch):
    monkeypatch.setattr(exchange, "LIMIT_BYTES", 1000)
    with pytest.raises(exchange.AnswerError, match="more than"):
        run_cells("def f():\n    return np.zeros(10_000)\n", [("f", [])])


@pytest.mark.parametrize("body", [
    "import json, os\nos.write(1, json.dumps({'statements': [], 'calls': []}).encode())\nos._exit(0)",
    "import sys\nframe = sys._getframe(0)\nwhile frame is not None:\n"
    "    for v in list(frame.f_locals.values()):\n"
    "        if isinstance(v, dict) and isinstance(v.get('calls'), list):\n            v['calls'].clear()\n"
    "    frame = frame.f_back\nreturn 1",
])
def test_nothing_the_answer_does_to_its_process_speaks_for_the_judge(body):
    code = "def answer():\n" + "".join(f"    {line}\n" for line in body.splitlines())
    with pytest.raises(exchange.AnswerError):
        run_cells(code, [("answer", []), ("answer", [])])


def test_the_answers_process_has_no_file_of_the_judges_beside_it():
    """No job, no result file: the runner and the seal it installs, nothing else."""
    entry = run_alone("import os\nreturn sorted(os.listdir('.'))")
    assert entry["value"] == ["runner.py", "seal.py"]


def test_an_exception_while_judging_scores_the_cell_0_in_one_line():
    def broken(rng):
        def verify(entries):
            return int(float("inf"))
        return [("my_halting", [np.array([0.5]), 0.01, 3])], verify
    nb = attacks.submitted(attacks.HONEST[0])
    index = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == "ex1-check")
    verdict = judge.judge_cell(nb, index, judged.JUDGED["03b_write_your_own_act"], broken, np.random.default_rng(0))
    assert not verdict.passed and verdict.ename == "OverflowError" and "\n" not in verdict.text
    assert "scores 0" in verdict.text


def test_a_judge_that_cannot_run_fails_every_judged_check():
    nb = json.loads((ROOT / "notebooks" / "12_attention_pondernet.ipynb").read_text(encoding="utf-8"))
    found = judged.failed_all(nb, "12_attention_pondernet", RuntimeError("boom"))
    assert list(found) == ["ex1-check", "ex2-check", "ex3-check"]
    assert not any(v.passed for v in found.values()) and all("boom" in v.text for v in found.values())


@pytest.mark.slow
def test_an_answer_that_never_ends_fails_with_a_time_limit():
    nb = attacks.submitted(attacks.Submission("loops", attacks.NB_03B, {"ex1-solution": attacks.HALTING_HEAD
                                                                        + "    while True:\n        pass\n"}, "none"))
    found = judged.judge_notebook(nb, attacks.NB_03B, rng=np.random.default_rng(0), timeout=1, only=["ex1-check"])
    assert found["ex1-check"].ename == "TimeoutError" and "within 1 s" in found["ex1-check"].text


def test_the_allow_lists_agree_with_the_teacher_guide():
    """docs/teaching.md's table "what the answer may not call" names, after "but", what each judged
    exercise may use; the judge hands in exactly those pieces."""
    text = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    rows = {}
    for number, exercises, rule in re.findall(r"^\| (\d\d\w?) \| ([^|]+) \| ([^|]+) \|$", text, flags=re.M):
        span = re.match(r"(\d+)(?:–(\d+))?", exercises.strip())
        if not span or "course's code" not in rule:
            continue
        first, last = int(span.group(1)), int(span.group(2) or span.group(1))
        allowed = re.findall(r"`(\w+)`", rule.split(" but ", 1)[1].split("(")[0]) if " but " in rule else []
        for k in range(first, last + 1):
            rows[(number, k)] = tuple(allowed)
    for stem, entry in judged.JUDGED.items():
        for number, pieces in entry.allowed.items():
            assert rows.get((stem[:3].rstrip("_"), number)) == tuple(pieces), (stem, number, rows)


def test_the_course_library_beside_an_answer_of_01_is_a_read_only_copy_in_its_own_folder():
    notes, entries = judge.run_answer(
        [{"name": "<cell>", "code": "import os\nfrom act_numpy.halting import halting_weights\nimport act_numpy\n"
                                    "def where():\n    path = act_numpy.__file__\n"
                                    "    return [path.startswith(os.getcwd()), os.stat(path).st_mode & 0o222, "
                                    "int(halting_weights([0.5, 0.6])[0][0])]\n"}],
        [("where", [])], judged.JUDGED["01_forward_pass"], {}, timeout=60)
    assert notes == [] and entries[0]["value"] == [True, 0, 2], entries


def test_a_committed_sweep_is_copied_beside_the_answer_and_the_repository_stays_out_of_reach():
    """05's exercise 4 reads results/parity16_seeds: the judge copies it, read-only, into the copy of
    act_experiments, where tables.RESULTS points in the answer's process; the repository's own copy
    stays refused, and a course module that imports pyplot (act_experiments.figures) gets a stand-in."""
    from act_experiments.sweeps.reading import load_sweep
    code = ("import os\nfrom act_experiments.tables import RESULTS\nfrom act_experiments.sweeps.reading import load_sweep\n"
            "from act_experiments.figures import notebook_figure\n"
            "def where(path):\n"
            "    try:\n        open(path).close()\n        theirs = 'read'\n"
            "    except PermissionError:\n        theirs = 'refused'\n"
            "    return [str(RESULTS).startswith(os.getcwd()), os.listdir(RESULTS), len(load_sweep('parity16_seeds')['runs']),"
            " theirs]\n")
    notes, entries = judge.run_answer([{"name": "<cell>", "code": code}],
                                      [("where", [str(ROOT / "results" / "parity16_seeds" / "sweep.json")])],
                                      judged.JUDGED["05_parity"], {}, timeout=60)
    runs = len(load_sweep("parity16_seeds")["runs"])
    assert notes == [] and entries[0]["value"] == [True, ["parity16_seeds"], runs, "refused"], (notes, entries)


def test_the_lesson_cells_run_are_those_a_later_cell_reads():
    from act_course.grading.lesson import needed, release_form, without_unread_imports
    codes = ["import numpy as np\nimport torch", "P = np.ones(2)", "fig = plt.figure()", "P['b'] = 1.0",
             "x = np.zeros(3)", "answer = P['b'] + 1"]
    assert needed(codes, {5}) == [0, 1, 3, 5]
    assert "torch" not in without_unread_imports([codes[k] for k in (0, 1, 3, 5)], {0, 1, 2})[0]
    assert release_form("a = None\n### BEGIN SOLUTION\na = 1\n### END SOLUTION\n") == "a = None\npass\n"
    # a name a loop binds before reading it is its own (06's check of eq. (21) reuses the lesson's p and
    # q, whose cell reads the runs trained live); one it reads before binding it comes from earlier
    assert needed(["p = train()", "for i in range(3):\n    p, q = i, i + 1\n    out = p + q"], {1}) == [1]
    assert needed(["total = 0", "for i in range(3):\n    total = total + i"], {1}) == [0, 1]
    assert needed(["x = 1", "if flag:\n    x = 2\nprint(x)"], {1}) == [0, 1]
    assert needed(["f = train()", "with open('runs.csv') as f:\n    rows = f.read()\nprint(rows)"], {1}) == [1]


# 12's exercises 1 and 3 are values, decided by their check cells in the judge's process: one run
# of the judge, an attack on exercise 1 beside an honest answer to exercise 3 (each check stands alone;
# the same attack, an input transformer and SciPy run under nbgrader, in attacks.IN_KERNEL)


def test_12s_values_that_equal_anything_score_0_and_a_helper_of_ones_own_full_marks():
    """In the kernel, submissions.EQUAL_12's numbers pass ``median_step == want_median`` and
    ``abs(p_beyond_2 - want) < 1e-9``; the judge's channel sends back numbers only. Exercise 3 finds lambda_p with ``pn`` through a
    helper in a cell of the learner's own, and ``np.interp`` on a grid (SciPy's brentq, with the
    same helper, is graded by nbgrader in attacks.IN_KERNEL)."""
    found = verdicts(attacks.Submission("values that equal anything on 12's exercise 1; a helper on exercise 3",
                                        attacks.NB_12, {"ex1-solution": submissions.EQUAL_12,
                                                        "ex3-added": submissions.PRIOR_MEAN,
                                                        "ex3-solution": "grid = np.linspace(0.2, 0.5, 301)\n"
                                                                        "means = [prior_mean(lam) for lam in grid]\n"
                                                                        "lambda_p_3 = np.interp(3.0, means[::-1], grid[::-1])\n"},
                                        "mixed"))
    assert sorted(found) == ["ex1-check", "ex3-check"]
    assert not found["ex1-check"].passed and "E[n] = sum_n n p_n is not 0.0" in found["ex1-check"].text
    assert found["ex3-check"].passed and "mean 3.000 steps" in found["ex3-check"].text, found["ex3-check"].text


# the values of 06-14 that only the learner's kernel checked (issue 40): there an answer cell that
# installs an IPython AST transformer wrapping every later cell in try/except silences the check
# cell, whatever the values; in the judge get_ipython() is a stand-in that does nothing, and the
# check cell's own tests decide on the values sent back. One run, 14's exercise 3: its two checks
# read one answer cell


def test_values_that_silence_the_kernels_check_score_0_and_the_right_values_full_marks():
    """ex3-check's blocks pushed open are wrong (a block at the target rate is pushed neither way);
    ex3-check-b's answer is right, an empty set, which comes back as a set as its check cell asks."""
    answer = (submissions.SILENCE + "get_ipython().ast_transformers.append(_Silence())\n"
              "rate_loss8, pushed_open, pushed_closed = 0.265625, {2, 3, 4}, {1}\n"
              "act_pushed_open = set()\n")
    found = verdicts(attacks.Submission("wrong values behind an AST transformer on 14's exercise 3", submissions.NB_14,
                                        {"ex3-solution": answer}, "mixed"))
    assert sorted(found) == ["ex3-check", "ex3-check-b"]
    assert not found["ex3-check"].passed and "pushed_open = [2, 3, 4]" in found["ex3-check"].text, found["ex3-check"]
    assert found["ex3-check-b"].passed and "never asks for more computation" in found["ex3-check-b"].text, \
        found["ex3-check-b"].text


def test_a_piece_reaches_the_answer_as_a_function_that_says_nothing_of_what_it_is():
    """11's catches is handed halting distributions the judge wrote (exchange.Piece): each arrives as
    a function named ``piece``, compiled from its source in a namespace of its own (PyTorch and NumPy
    alone), with no file to read that source from, and computes there what it computes here."""
    from act_course.grading import exercises_11
    source = next(s for _, s, needs in exercises_11.pieces(np.random.default_rng(0)) if needs is None)
    look = ("import inspect\n"
            "def look(weights):\n"
            "    p, R = weights(torch.tensor([[0.3] * 5], dtype=torch.float64), torch.tensor([4]), torch.tensor([False]))\n"
            "    try:\n"
            "        inspect.getsource(weights)\n"
            "        hidden = False\n"
            "    except (OSError, TypeError):\n"
            "        hidden = True\n"
            "    return [weights.__name__, sorted(k for k in weights.__globals__ if not k.startswith('__')), hidden, p]\n")
    notes, entries = judge.run_answer([{"name": "<cell>", "code": look}], [("look", [exchange.Piece(source)])],
                                      judged.JUDGED["11_pitfalls"], {}, timeout=60, library=(), torch=True)
    name, names, hidden, p = exchange.returned(entries[0])
    assert notes == [] and (name, names, hidden) == ("piece", ["np", "piece", "torch"], True)
    assert np.allclose(p, [[0.3, 0.3, 0.3, 0.1, 0.0]], rtol=0, atol=1e-15), p
