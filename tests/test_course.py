"""The notebooks' shared plumbing: checks that record their margin, the live seed, figures written
only when asked, and the script that runs the notebooks under other math kernels."""

import json
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402

from act_course import course  # noqa: E402
from act_course.upkeep import variants as nv  # noqa: E402
from act_experiments import figures  # noqa: E402
from act_experiments.tables import read_csv  # noqa: E402
from act_experiments.threads import torch_threads  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def clean_env(monkeypatch):
    for key in ("ACT_CHECK_LOG", "ACT_CHECK_MODE", "ACT_SEED", "ACT_SAVE_FIGURES", "ACT_FULL"):
        monkeypatch.delenv(key, raising=False)
    return monkeypatch


def test_check_passes_prints_and_returns_the_value(clean_env, capsys):
    assert course.check("error after training", 0.02, "<", 0.1) == 0.02
    assert "check: error after training: 0.02 < 0.1" in capsys.readouterr().out


@pytest.mark.parametrize("value, op, bound", [(0.2, "<", 0.1), (0.1, "<", 0.1), (0.0, ">", 0.0), (float("nan"), "<", 1)])
def test_check_fails_with_the_claim_and_its_numbers(clean_env, value, op, bound):
    with pytest.raises(AssertionError, match="error after training"):
        course.check("error after training", value, op, bound)


def test_check_rejects_an_unknown_comparison(clean_env):
    with pytest.raises(ValueError, match="op"):
        course.check("x", 1.0, "==", 1.0)


def test_check_records_value_and_margin_and_record_mode_goes_on(clean_env, tmp_path):
    log = tmp_path / "checks.jsonl"
    clean_env.setenv("ACT_CHECK_LOG", str(log))
    course.check("gap", 0.35, ">", 0.1)
    with pytest.raises(AssertionError):
        course.check("error", 0.3, "<", 0.1)          # recording alone does not hide a failure
    clean_env.setenv("ACT_CHECK_MODE", "record")
    course.check("error", 0.3, "<", 0.1)              # recorded, not raised
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["claim"], r["holds"]) for r in rows] == [("gap", True), ("error", False), ("error", False)]
    assert rows[0]["margin"] == pytest.approx(0.25) and rows[1]["margin"] == pytest.approx(-0.2)


def test_record_mode_without_a_log_still_stops(clean_env):
    clean_env.setenv("ACT_CHECK_MODE", "record")
    with pytest.raises(AssertionError):
        course.check("error", 0.3, "<", 0.1)


def test_live_seed_and_full_read_the_environment(clean_env):
    assert course.live_seed() == 0 and course.live_seed(default=5) == 5 and not course.full()
    clean_env.setenv("ACT_SEED", "3")
    clean_env.setenv("ACT_FULL", "1")
    assert course.live_seed() == 3 and course.full()
    clean_env.setenv("ACT_SEED", "-1")
    with pytest.raises(ValueError, match="ACT_SEED"):
        course.live_seed()


def test_torch_threads_follows_omp_num_threads(monkeypatch):
    import torch
    before = torch.get_num_threads()
    try:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        assert torch_threads() == 1 == torch.get_num_threads()
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        assert torch_threads() == 2 == torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def test_notebook_figures_are_written_only_when_asked(clean_env, tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    assert figures.notebook_figure(fig, "demo", tmp_path) is None and not any(tmp_path.iterdir())
    clean_env.setenv("ACT_SAVE_FIGURES", "1")
    assert figures.notebook_figure(fig, "demo", tmp_path) == tmp_path / "demo.png" and (tmp_path / "demo.png").is_file()
    plt.close(fig)


def test_no_notebook_writes_into_the_repository_unless_asked():
    """Running a notebook must leave the checkout as it was: figures go through notebook_figure."""
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        assert "save_figure" not in code and ".savefig(" not in code, path.name
        if "loop.run(" in code or "run(options" in code:
            assert "course.live_seed()" in code, f"{path.name}: live runs should take their seed from ACT_SEED"


def test_variant_environment_sets_the_kernels_and_drops_stray_settings(monkeypatch):
    monkeypatch.setenv("ACT_SAVE_FIGURES", "1")
    monkeypatch.setenv("ACT_SEED", "9")
    env = nv.variant_env("compatible", seed=2, check_log="/tmp/x.jsonl")
    assert env["MKL_CBWR"] == "COMPATIBLE" and env["ATEN_CPU_CAPABILITY"] == "default"
    assert env["OPENBLAS_CORETYPE"] == "Prescott" and env["OMP_NUM_THREADS"] == "1"
    assert env["ACT_SEED"] == "2" and env["ACT_CHECK_MODE"] == "record" and "ACT_SAVE_FIGURES" not in env
    assert nv.variant_env("native")["ACT_SEED"] == "9"       # ACT_SEED=9 make variant: seed 9
    with pytest.raises(ValueError, match="variant"):
        nv.variant_env("fastest")


def test_grid_has_every_seed_natively_and_at_least_four_other_kernel_settings():
    pairs = nv.grid((0, 1, 2))
    assert [s for v, s in pairs if v == "native"] == [0, 1, 2]
    assert len({v for v, _ in pairs} - {"native"}) >= 4 and {s for _, s in pairs} == {0, 1, 2}
    assert all(v in nv.VARIANTS for v, _ in pairs)
    assert {s for _, s in nv.grid((5,))} == {5}


@pytest.mark.slow
def test_measure_runs_a_notebook_per_variant_and_tabulates_its_checks(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(
        "import os\nfrom act_course import course\nfrom act_course.course import check\n"
        "seed = course.live_seed()\n"
        "check('seed plus one', seed + 1, '>', 1.5)\n"
        "check('threads', int(os.environ.get('OMP_NUM_THREADS', '0')), '>=', 0)")]
    path = tmp_path / "tiny.ipynb"
    nbformat.write(nb, path)
    rows = nv.measure([path], [("native", 0), ("compatible", 1)], tmp_path / "out", jobs=2)
    assert [(r["variant"], r["seed"], r["claim"], r["holds"]) for r in rows] == [
        ("native", 0, "seed plus one", 0), ("native", 0, "threads", 1),
        ("compatible", 1, "seed plus one", 1), ("compatible", 1, "threads", 1)]
    table = nv.table(read_csv(tmp_path / "out" / "checks.csv"))
    assert "| tiny | seed plus one | > 1.5 | 2 | 1 | 2 | -0.5 | 1/2 |" in table


@pytest.mark.parametrize("args, message", [
    ([], "exactly one of"),
    (["--variant", "compatible", "--table", "x.csv"], "exactly one of"),
    (["--table", "no/such.csv"], "no such file"),
    (["--variant", "compatible", "notebooks/99_missing.ipynb"], "no such notebook"),
    (["--measure", "--seeds", "a,b"], "--seeds"),
])
def test_variants_cli_refuses_bad_input_in_one_line(args, message):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "notebook_variants.py"), *args],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_answered_names_every_missing_answer_and_returns_the_values():
    from act_course.course import answered
    assert answered(eps=0.1) == 0.1
    assert answered(N=3, p=(0.5, 0.5)) == (3, (0.5, 0.5))
    assert answered(flag=0) == 0            # a falsy answer is still an answer
    with pytest.raises(AssertionError, match="^N, p are not answered yet"):
        answered(N=None, p=None, eps=0.1)
    with pytest.raises(AssertionError, match="^eps is not answered yet"):
        answered(eps=None)
    with pytest.raises(ValueError, match="at least one answer"):
        answered()


def test_fresh_empties_a_live_runs_folder_so_a_cell_can_train_again(tmp_path):
    from act_experiments.training import loop
    from act_experiments.training.backends import NumpyBackend
    options = dict(task="parity", bits=3, hidden=4, batch_size=8, iterations=2, eval_every=0, eval_size=8)
    folder = tmp_path / "act"
    first = loop.run({**options, "out": course.fresh(folder)}, NumpyBackend, progress=False)
    with pytest.raises(ValueError, match="already holds a run"):
        loop.run({**options, "out": str(folder)}, NumpyBackend, progress=False)
    again = loop.run({**options, "out": course.fresh(folder)}, NumpyBackend, progress=False)
    assert again["final_eval"] == first["final_eval"]
    assert course.fresh(tmp_path / "never made") == str(tmp_path / "never made")
