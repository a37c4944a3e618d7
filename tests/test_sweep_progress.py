"""scripts/sweep_progress.py: an unfinished sweep's logs as progress.csv, windows and evaluations
agreeing with the log they come from, and one line for a sweep that is not there."""

import json

import pytest

from act_experiments.sweeps import launch, progress
from act_experiments.training.checkpoints import read_log
from act_experiments.tables import read_csv


SWEEP = ["--name", "tiny", "--task", "parity", "--bits", "3", "--hidden", "4", "--batch-size", "4",
         "--iterations", "30", "--eval-every", "20", "--eval-size", "8", "--log-every", "5",
         "--taus", "1e-2", "--seeds", "2", "--workers", "1", "--backend", "torch"]


@pytest.fixture
def swept(tmp_path):
    launch.main(SWEEP, root=tmp_path)
    return tmp_path


@pytest.mark.slow
def test_progress_rows_are_the_logs_means(swept, capsys):
    out = swept / "progress"
    progress.main(["tiny", "--out", str(out), "--window", "10"], root=swept)
    rows = read_csv(out / "progress.csv")
    assert list(rows[0]) == progress.COLUMNS
    assert {r["run"] for r in rows} == {"tau0.01-seed0", "tau0.01-seed1", "noact-seed0", "noact-seed1"}
    log = read_log(swept / "runs" / "sweeps" / "tiny" / "tau0.01-seed1" / "log.jsonl")
    mine = [r for r in rows if r["run"] == "tau0.01-seed1"]
    evals = [r for r in mine if r["kind"] == "eval"]
    assert [int(r["iteration"]) for r in evals] == [0, 20, 30]
    assert [float(r["sequence_error"]) for r in evals] == [r["sequence_error"] for r in log if r["kind"] == "eval"]
    window = next(r for r in mine if r["kind"] == "train" and r["iteration"] == "20")   # iterations 15 and 20
    batches = [r for r in log if r["kind"] == "train" and 10 < r["iteration"] <= 20]
    assert int(window["batches"]) == len(batches) == 2
    assert float(window["sequence_error"]) == pytest.approx(sum(r["sequence_error"] for r in batches) / 2)
    assert all(r["tau"] == "" and r["act"] == "0" for r in rows if r["run"].startswith("noact"))
    summary = json.loads((out / "progress.json").read_text())["tiny"]
    config = json.loads((swept / "runs" / "sweeps" / "tiny" / "sweep_config.json").read_text())
    assert summary == dict(runs=4, lr=config["runs"]["noact-seed0"]["lr"], iterations=30, reached_min=30,
                           reached_max=30)
    assert "tiny: lr" in capsys.readouterr().out


def test_a_sweep_that_has_not_started_is_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        progress.main(["nosuch", "--out", str(tmp_path / "out")], root=tmp_path)
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1 and "nosuch" in err
    assert not (tmp_path / "out").exists()
