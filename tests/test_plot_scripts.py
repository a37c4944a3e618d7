"""The plotting scripts draw the committed sweeps into the files they promise, byte for byte the same each time."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import plot_task  # noqa: E402


def test_plot_task_writes_four_figures_under_a_prefix(tmp_path):
    sweep = plot_task.load(plot_task.RESULTS / "addition_small")
    first = plot_task.save_all(sweep, tmp_path / "a", prefix="addition_test")
    assert sorted(p.name for p in first) == sorted(
        f"addition_test_{name}.png" for name in ("error_per_tau", "error_vs_ponder", "difficulty", "learning_curves"))
    again = plot_task.save_all(sweep, tmp_path / "b", prefix="addition_test")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in again]


def test_plot_task_prefix_defaults_to_the_task(tmp_path):
    sweep = plot_task.load(plot_task.RESULTS / "logic_small")
    assert {p.name.split("_")[0] for p in plot_task.save_all(sweep, tmp_path)} == {"logic"}


def test_plot_architecture_writes_the_same_bytes_twice(tmp_path):
    import plot_architecture

    first = plot_architecture.save(tmp_path / "a")
    again = plot_architecture.save(tmp_path / "b")
    assert first == tmp_path / "a" / "act_architecture.png" and first.is_file()
    assert first.read_bytes() == again.read_bytes()
