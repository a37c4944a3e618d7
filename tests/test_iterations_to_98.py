"""Iterations to solve, as Fojo et al. (2018) count them: the first evaluation at which the held-out
sequence error is at most 0.02. Counted once from a run's eval records, written as the last column
of runs.csv, read back (None when never reached and in older files), printed by
scripts/plot_parity.py and marked on parity's learning curves, whose older figures keep their bytes."""

import csv
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from act_experiments.experiments import parity  # noqa: E402
from act_experiments.figures import save_figure  # noqa: E402
from act_experiments.plots import tau_sweep  # noqa: E402
from act_experiments.sweeps import reading, writing  # noqa: E402
from act_experiments.sweeps.writing import SOLVED_ERROR, collect, iterations_to_98  # noqa: E402


def evals(*errors, every=100):
    """Eval records at iterations 0, every, 2 * every, ... with these sequence errors."""
    return [{"iteration": i * every, "sequence_error": e} for i, e in enumerate(errors)]


# ---------------------------------------------------------------------------------------------
# The count, on hand-made records
# ---------------------------------------------------------------------------------------------


def test_the_first_evaluation_at_or_below_two_percent_counts():
    assert SOLVED_ERROR == 0.02
    assert iterations_to_98(evals(0.5, 0.3, 0.01, 0.0)) == 200
    # the first one, even when the error climbs back above the line later
    assert iterations_to_98(evals(0.5, 0.015, 0.2, 0.0)) == 100


def test_an_error_of_exactly_two_percent_counts():
    assert iterations_to_98(evals(0.5, 0.021, 0.02, 0.0)) == 200
    assert iterations_to_98(evals(0.02)) == 0            # 20 wrong of 1000 at the first evaluation


def test_never_reached_is_none():
    assert iterations_to_98(evals(0.5, 0.3, 0.0201, 0.03)) is None
    assert iterations_to_98([]) is None


# ---------------------------------------------------------------------------------------------
# runs.csv and reading it back
# ---------------------------------------------------------------------------------------------


def fake_run(folder, tau, seed, errors, every=100):
    """A finished run's summary.json and log.jsonl, as the training loop writes them, with these
    held-out errors at its evaluations."""
    folder.mkdir(parents=True)
    records = [{"kind": "eval", "iteration": r["iteration"], "sequence_error": r["sequence_error"],
                "mean_ponder": 3.0, "max_N": 4, "loss": 0.1} for r in evals(*errors, every=every)]
    (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    by_difficulty = [{"difficulty": d, "count": 5, "error": errors[-1], "ponder": 2.0 + d, "N": 1.0 + d} for d in (1, 2)]
    final = {**records[-1], "by_difficulty": by_difficulty, "N_counts": [[2, 5], [3, 5]], "mean_N": 2.5, "mean_R": 1.0}
    config = {"tau": tau, "seed": seed, "no_act": False, "fixed_ponder": None, "random_ponder": None}
    (folder / "summary.json").write_text(json.dumps({"config": config, "final_eval": final,
                                                      "iterations": records[-1]["iteration"], "train_time_s": 1.0}))
    return f"tau{tau}-seed{seed}", {"out": folder}


@pytest.fixture
def solved_sweep(tmp_path):
    """A sweep folder of three runs: solved at 200, solved at 100, never solved."""
    jobs = [fake_run(tmp_path / "runs" / "a", 0.001, 0, (0.5, 0.3, 0.01)),
            fake_run(tmp_path / "runs" / "b", 0.001, 1, (0.5, 0.02, 0.0)),
            fake_run(tmp_path / "runs" / "c", 0.01, 0, (0.5, 0.4, 0.3))]
    collect(jobs, tmp_path / "results" / "parity_solved")
    return tmp_path / "results" / "parity_solved"


def test_runs_csv_ends_with_the_count_and_leaves_it_empty_when_never_reached(solved_sweep):
    with open(solved_sweep / "runs.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[-2:] == ["random_of", "iterations_to_98"]
    assert [r["iterations_to_98"] for r in rows] == ["200", "100", ""]
    sweep = reading.load_sweep(solved_sweep)
    assert [r["iterations_to_98"] for r in sweep["runs"]] == [200, 100, None]


def test_a_sweep_written_before_the_count_reads_as_never_counted():
    with open(reading.sweep_folder("parity16_seeds") / "runs.csv") as f:
        assert "iterations_to_98" not in f.readline()
    sweep = reading.load_sweep("parity16_seeds")
    assert sweep["runs"] and all(r["iterations_to_98"] is None for r in sweep["runs"])
    assert parity.solved_table(sweep) == []


def test_only_sequence_error_runs_are_counted(tmp_path):
    # bits per character has no 98% right: a characters run's row has no such field
    run_id, options = fake_run(tmp_path / "run", 0.001, 0, (0.5, 0.01))
    row, _, _ = writing.run_record(run_id, options["out"], "sequence_error")
    assert row["iterations_to_98"] == 100 and list(row)[-1] == "iterations_to_98"
    log = options["out"] / "log.jsonl"
    log.write_text(log.read_text().replace("sequence_error", "bits_per_char"))
    summary = json.loads((options["out"] / "summary.json").read_text())
    summary["final_eval"]["bits_per_char"] = summary["final_eval"].pop("sequence_error")
    (options["out"] / "summary.json").write_text(json.dumps(summary))
    row, _, _ = writing.run_record(run_id, options["out"], "bits_per_char")
    assert "iterations_to_98" not in row


# ---------------------------------------------------------------------------------------------
# What scripts/plot_parity.py prints and draws
# ---------------------------------------------------------------------------------------------


def test_the_summary_prints_the_count_seed_by_seed(solved_sweep, capsys):
    sweep = reading.load_sweep(solved_sweep)
    assert parity.solved_table(sweep) == [("1e-3", [200, 100]), ("1e-2", [None])]
    parity.print_summary(sweep)
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("iterations to 98% right"))
    assert lines[at + 1:at + 3] == ["    1e-3 200, 100", "    1e-2 -"]


def test_an_older_sweeps_summary_prints_no_count(capsys):
    parity.print_summary(reading.load_sweep("parity16_seeds"))
    assert "98%" not in capsys.readouterr().out


def test_the_learning_curves_mark_each_solved_run_where_its_curve_reaches_the_line(solved_sweep):
    sweep = reading.load_sweep(solved_sweep)
    fig = parity.plot_learning_curves(sweep)
    top = fig.axes[0]
    lines = {line.get_label(): line for line in top.get_lines()}
    assert list(lines["98% right (error 0.02)"].get_ydata()) == [SOLVED_ERROR, SOLVED_ERROR]
    dots = sorted((float(line.get_xdata()[0]), float(line.get_ydata()[0])) for line in top.get_lines()
                  if line.get_marker() == "o" and len(line.get_xdata()) == 1)
    assert dots == [(100.0, 0.02), (200.0, 0.01)]
    plt.close(fig)


def test_learning_curves_of_an_older_sweep_keep_their_bytes(tmp_path):
    sweep = reading.load_sweep("parity8_long")
    colours = parity.colours(sweep)
    paths = []
    for mark in (False, True):
        fig = tau_sweep.plot_learning_curves(sweep, colours, "title", reference=parity.CHANCE_LINE,
                                             log_ponder=True, mark_solved=mark)
        paths.append(save_figure(fig, f"curves_{mark}", tmp_path))
        plt.close(fig)
    assert paths[0].read_bytes() == paths[1].read_bytes()
