"""The committed sweeps as the plotting scripts read them, the figures they promise byte for byte the
same each time, and one line, not a traceback, when a script is given a sweep it cannot draw."""

import importlib
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

from act_experiments.sweeps import stats  # noqa: E402
from act_experiments import tables
from act_experiments.sweeps import reading
from act_experiments.figures import save_figures  # noqa: E402
from act_experiments.experiments import logic_addition, sort  # noqa: E402
from act_experiments.experiments.registry import EXPERIMENTS  # noqa: E402
from act_experiments.plots import architecture  # noqa: E402
from act_experiments.plots.style import tau_colours  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def test_every_row_carries_its_runs_key_tau_and_seed():
    sweep = reading.load_sweep("addition_small")
    runs = {r["run"]: r for r in sweep["runs"]}
    assert {r["key"] for r in sweep["runs"]} == set(stats.taus(sweep)) | {reading.NO_ACT}
    for row in sweep["difficulty"] + sweep["curves"]:
        run = runs[row["run"]]
        assert (row["key"], row["tau"], row["act"], row["seed"]) == (run["key"], run["tau"], run["act"], run["seed"])
    assert all((r["tau"] is None) == (r["key"] == reading.NO_ACT) == (not r["act"]) for r in sweep["runs"])


def test_find_sweeps_names_the_tau_sweeps_it_skips_and_passes_over_other_experiments(tmp_path, capsys):
    import shutil
    shutil.copytree(ROOT / "results" / "parity8", tmp_path / "parity8")
    shutil.copytree(ROOT / "results" / "characters_small", tmp_path / "characters_small")
    (tmp_path / "running").mkdir()                              # a τ sweep not yet written out
    (tmp_path / "running" / "sweep.json").write_text("{}")
    (tmp_path / "pitfalls").mkdir()                             # another experiment's results
    (tmp_path / "pitfalls" / "gallery.csv").write_text("pitfall,seed\n")
    (tmp_path / "gates").mkdir()
    (tmp_path / "gates" / "runs.csv").write_text("kind,target_rate,seed,accuracy\n")
    found = reading.find_sweeps(tmp_path)
    assert [s["name"] for s in found] == ["parity8"]
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["skipped results/characters_small: not a sequence-error sweep",
                       "skipped results/running: no runs.csv (missing, or a sweep still running)"]


def test_numbers_keep_their_kind():
    assert [tables.number(t) for t in ("", "300", "0.25", "1e-3")] == [None, 300, 0.25, 0.001]
    assert isinstance(tables.number("300"), int)
    with pytest.raises(ValueError):
        tables.number("letter")


def test_table_is_the_mean_and_standard_error_over_seeds():
    sweep = reading.load_sweep("logic_small")
    for row in stats.table(sweep):
        errors = [r["sequence_error"] for r in sweep["runs"] if r["key"] == row["key"]]
        assert row["errors"] == errors and row["seeds"] == len(errors)
        assert row["error"] == pytest.approx(sum(errors) / len(errors))
        assert (row["error_min"], row["error_max"]) == (min(errors), max(errors))
    assert [r["key"] for r in stats.table(sweep)] == stats.keys(sweep)
    assert stats.keys(sweep)[-1] == reading.NO_ACT


def test_by_difficulty_pools_the_seeds_by_count():
    rows = [{"key": 0.01, "seed": s, "difficulty": d, "count": c, "error": e}
            for s, d, c, e in ((0, 1, 10, 0.0), (1, 1, 30, 0.4), (0, 2, 5, 1.0))]
    d, pooled, low, high = stats.by_difficulty(rows, 0.01, "error")
    assert d.tolist() == [1.0, 2.0]
    assert pooled.tolist() == pytest.approx([0.3, 1.0])
    assert low.tolist() == [0.0, 1.0] and high.tolist() == [0.4, 1.0]


def test_tau_labels_and_colours():
    assert [reading.tau_label(k) for k in (0.001, 0.0003, 0.01, reading.NO_ACT)] == ["1e-3", "3e-4", "1e-2", "no ACT"]
    colours = tau_colours([0.1, 0.001, 0.01], "viridis", 0.9, -0.8, "grey")
    cmap = matplotlib.colormaps["viridis"]
    assert colours[0.001] == cmap(0.9) and colours[0.1] == cmap(0.1) and colours[reading.NO_ACT] == "grey"
    by_rank = tau_colours([0.006, 0.03, 0.1], "viridis", 0.0, 0.9, "black", spacing="rank")
    assert by_rank[0.03] == cmap(0.45)


@pytest.mark.slow
def test_logic_addition_figures_come_out_the_same_twice(tmp_path):
    sweep = reading.load_sweep("addition_small")
    first = save_figures(logic_addition.FIGURES, sweep, "addition_test", tmp_path / "a")
    assert sorted(p.name for p in first) == sorted(
        f"addition_test_{name}.png" for name in ("error_per_tau", "error_vs_ponder", "difficulty", "learning_curves"))
    again = save_figures(logic_addition.FIGURES, sweep, "addition_test", tmp_path / "b")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in again]


@pytest.mark.slow
def test_plot_task_names_the_figures_after_the_task_unless_told(tmp_path, capsys):
    def names(*args):
        assert logic_addition.main([*args[:-1], "--figures", str(tmp_path / args[-1])]) == 0
        return sorted(p.name for p in (tmp_path / args[-1]).glob("*.png"))

    assert names("logic_small", "a") == sorted(f"logic_{n}.png" for n in ("error_per_tau", "error_vs_ponder",
                                                                         "difficulty", "learning_curves"))
    assert {n.split("_")[0] for n in names("logic_small", "--prefix", "mine", "b")} == {"mine"}


@pytest.mark.slow
def test_plot_sort_names_the_figures_sort_unless_told(tmp_path, capsys):
    def names(*args):
        assert sort.main([*args[:-1], "--figures", str(tmp_path / args[-1])]) == 0
        return sorted(p.name for p in (tmp_path / args[-1]).glob("*.png"))

    kinds = ("error_per_tau", "error_vs_ponder", "length", "learning_curves")
    assert names("sort_small", "a") == sorted(f"sort_{n}.png" for n in kinds)
    assert names("sort_small", "--prefix", "sort_len8", "b") == sorted(f"sort_len8_{n}.png" for n in kinds)


@pytest.mark.slow
def test_architecture_writes_the_same_bytes_twice(tmp_path):
    first = architecture.save(tmp_path / "a")
    again = architecture.save(tmp_path / "b")
    assert first == tmp_path / "a" / "act_architecture.png" and first.is_file()
    assert first.read_bytes() == again.read_bytes()


PLOT_SCRIPTS = sorted({e.module_name for e in EXPERIMENTS.values()
                       if e.module().SCRIPT.startswith("scripts/plot_")})


@pytest.mark.parametrize("name", PLOT_SCRIPTS)
def test_every_plot_script_has_the_one_command_line_shape(name, capsys):
    """plot_<name>.py [SWEEP ...] [--figures DIR] [--prefix P] (act_experiments.figures.plot_main)."""
    module = importlib.import_module(f"act_experiments.experiments.{name}")
    with pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    assert stop.value.code == 0
    usage = " ".join(capsys.readouterr().out.split())
    assert usage.startswith(f"usage: {Path(module.SCRIPT).name} [-h] [--figures FIGURES]")
    assert "[SWEEP ...]" in usage


@pytest.mark.parametrize("name, args", [
    ("logic_addition", ["no_such_sweep"]),
    ("logic_addition", []),
    ("sort", ["logic_small"]),
    ("parity", ["sort_small"]),
    ("parity", ["parity8", "parity8_long", "--prefix", "two"]),
    ("characters", ["no_such_folder"]),
    ("time_penalty", ["no_such_folder"]),
    ("controls", ["chess"]),
    ("measured", ["chess"]),
    ("skewed", ["skewed_parity16"]),
    ("parity64", ["no_such_folder"]),
    ("frontier", ["--bits", "3"]),
])
def test_a_script_refuses_what_it_cannot_draw_in_one_line(name, args, tmp_path, capsys):
    """One line ("<script>: ..." or argparse's), a non-zero status and no figure, before anything is drawn."""
    module = importlib.import_module(f"act_experiments.experiments.{name}")
    with pytest.raises(SystemExit) as stop:
        module.main([*args, "--figures", str(tmp_path)])
    said = str(stop.value.code) if isinstance(stop.value.code, str) else capsys.readouterr().err
    assert stop.value.code not in (0, None)
    assert len(said.strip().splitlines()) == 1 and Path(module.SCRIPT).name in said, said
    assert not list(tmp_path.glob("*.png"))


@pytest.mark.slow
def test_a_script_run_as_a_command_refuses_in_one_line_without_a_traceback(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "plot_task.py"), "no_such_sweep", "--figures",
                           str(tmp_path)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert not list(tmp_path.glob("*.png"))
