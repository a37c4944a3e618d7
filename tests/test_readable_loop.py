"""The training loop to read (act_experiments.training.readable) against the machinery.

`scripts/train.py --backend numpy --dtype float64` (its main, in this process) and
``train_readably`` with the same config: the same parameters bit for bit after training, and the
same held-out evaluations, error exactly and ponder to rounding.
"""

import json

import numpy as np
import pytest

from act_experiments.training import cli
from act_experiments.training.checkpoints import load_checkpoint
from act_experiments.training.loop import make_config
from act_experiments.training.readable import train_readably
from act_numpy.params import PARAM_NAMES

CASES = {
    "parity, rnn": ["--task", "parity", "--bits", "6", "--hidden", "16", "--batch-size", "16", "--lr", "3e-3",
                    "--tau", "1e-3"],
    "addition, lstm": ["--task", "addition", "--max-numbers", "3", "--max-digits", "2", "--hidden", "12",
                       "--batch-size", "8", "--lr", "3e-3", "--tau", "1e-2", "--max-ponder", "5"],
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_readable_loop_is_the_machinery_bit_for_bit(case, tmp_path, capsys):
    argv = ["--backend", "numpy", "--dtype", "float64", *CASES[case], "--iterations", "30", "--eval-every", "10",
            "--eval-size", "40", "--seed", "3", "--no-progress", "--out", str(tmp_path / "run")]
    summary = cli.main(argv)
    state, _ = load_checkpoint(tmp_path / "run" / "checkpoint.npz")
    evals = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    evals = [record for record in evals if record["kind"] == "eval"]

    params, history = train_readably(summary["config"], report=None)
    assert sorted(params) == sorted(PARAM_NAMES)
    for name in PARAM_NAMES:
        assert params[name].dtype == np.float64
        assert np.array_equal(params[name], state[f"param/{name}"]), f"{name} differs"
    assert [e["iteration"] for e in history] == [r["iteration"] for r in evals] == [0, 10, 20, 30]
    for ours, theirs in zip(history, evals):
        assert ours["sequence_error"] == theirs["sequence_error"]
        assert ours["mean_ponder"] == pytest.approx(theirs["mean_ponder"], rel=1e-12)
        assert ours["mean_N"] == pytest.approx(theirs["mean_N"], rel=1e-12)
    assert history[-1]["mean_ponder"] != history[0]["mean_ponder"]       # it trained


def test_the_readable_loop_reports_and_refuses_the_controls():
    options = {"task": "parity", "bits": 4, "hidden": 8, "batch_size": 4, "iterations": 2, "eval_every": 1,
               "eval_size": 8, "out": "unused"}
    config = make_config(options)
    lines = []
    _, history = train_readably(config, report=lines.append)
    assert len(lines) == len(history) == 3 and lines[-1].startswith("iteration 2: held-out sequence error")
    for control in ({"fixed_ponder": 2}, {"random_ponder": [0.5, 0.5]}):
        with pytest.raises(ValueError, match="^config: train_readably trains ACT itself"):
            train_readably(make_config({**options, **control}), report=None)
