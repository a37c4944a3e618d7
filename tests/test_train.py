"""The training loop on both backends: files written, determinism, exact resume, NumPy = PyTorch.

Every run here is tiny (a few units, a few iterations) so the whole file takes seconds.
"""

import json

import numpy as np
import pytest
import torch

from act_experiments.training import checkpoints, cli, evaluation, loop
from act_experiments.data import tasks
from act_experiments.training.backends import NumpyBackend, TorchBackend
from conftest import Interrupted, crashing

BACKENDS = {"numpy": NumpyBackend, "torch": TorchBackend}
TIME_FIELDS = ("time_s", "train_time_s")

# Small versions of every task, small enough for a test, with their networks.
SMALL = {
    "parity": dict(task="parity", bits=6, cell="rnn", hidden=8, batch_size=8),
    "logic": dict(task="logic", max_vectors=3, max_gates=3, cell="lstm", hidden=8, batch_size=4),
    "addition": dict(task="addition", max_numbers=3, max_digits=2, cell="lstm", hidden=8, batch_size=4),
    "sort": dict(task="sort", max_length=4, cell="lstm", hidden=8, batch_size=4),
}


def small_run(tmp_path, name, backend="numpy", task="parity", **options):
    """Train a small run into tmp_path/name and return (summary, log records)."""
    opts = {**SMALL[task], "iterations": 6, "eval_every": 3, "eval_size": 16, "log_every": 2,
            "lr": 1e-2, "out": str(tmp_path / name), **options}
    summary = loop.run(opts, BACKENDS[backend], progress=False)
    return summary, loop.read_log(tmp_path / name / "log.jsonl")


def without_time(records):
    return [{k: v for k, v in r.items() if k not in TIME_FIELDS} for r in records]


# ---------------------------------------------------------------------------------------------
# Options and defaults
# ---------------------------------------------------------------------------------------------


def test_paper_defaults_per_task():
    parity = loop.make_config({"task": "parity"}, NumpyBackend)
    assert (parity["cell"], parity["hidden"], parity["batch_size"], parity["task_options"]["bits"]) == ("rnn", 128, 128, 64)
    for task, hidden, batch in (("logic", 128, 16), ("addition", 512, 32), ("sort", 512, 16)):
        c = loop.make_config({"task": task}, NumpyBackend)
        assert (c["cell"], c["hidden"], c["batch_size"]) == ("lstm", hidden, batch), task
    assert loop.make_config({"task": "addition"}, NumpyBackend)["max_ponder"] == 20
    c = loop.make_config({}, NumpyBackend)
    assert (c["lr"], c["epsilon"], c["max_ponder"], c["tau"], c["halting_bias"]) == (1e-4, 0.01, 100, 1e-3, 1.0)
    assert c["dtype"] == "float64" and loop.make_config({}, TorchBackend)["dtype"] == "float32"
    # given options win over the task's defaults
    c = loop.make_config({"task": "sort", "hidden": 32, "max_length": 5}, NumpyBackend)
    assert c["hidden"] == 32 and c["task_options"] == {"max_length": 5}


@pytest.mark.parametrize("options, words", [
    ({"task": "chess"}, "unknown task"),
    ({"task": "parity", "max_digits": 3}, "belongs to task 'addition'"),
    ({"task": "parity", "bits": 0}, "bits"),
    ({"cell": "gru"}, "unknown cell"),
    ({"hidden": 0}, "hidden"),
    ({"epsilon": 1.0}, "epsilon"),
    ({"lr": 0.0}, "lr"),
    ({"lr": 2.0}, "lr"),                  # Adam moves each weight by ~lr per step
    ({"checkpoint_every": -1}, "checkpoint_every"),
    ({"out": ""}, "out"),
    ({"tau": -1e-3}, "tau"),
    ({"iterations": 2.5}, "iterations"),
    ({"dtype": "float16"}, "dtype"),
    ({"no_act": True, "max_ponder": 5}, "no-act"),
    ({"colour": "blue"}, "unknown option"),
])
def test_bad_options_raise_value_error(options, words):
    with pytest.raises(ValueError, match=words):
        loop.make_config(options, NumpyBackend)


def test_cli_reports_bad_options_as_usage_errors(capsys, tmp_path):
    for argv in (["--task", "chess"], ["--bits", "4", "--task", "sort"], ["--device", "abacus"]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv + ["--out", str(tmp_path / "never")])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert "error:" in err and "Traceback" not in err
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize("skew, words", [
    ("1.5:13-16", "the fraction F must be in [0, 1]"),
    ("0.1:13-17", "HI must be at most bits = 16"),
    ("0.1:14-13", "LO must not exceed HI"),
    ("0.1:0-3", "LO must be an integer >= 1"),
    ("one tenth", "must read F:LO-HI"),
])
def test_cli_refuses_a_bad_skew_in_one_line(capsys, tmp_path, skew, words):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--backend", "numpy", "--bits", "16", "--skew", skew, "--out", str(tmp_path / "never")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "option 'skew'" in err and words in err
    assert "Traceback" not in err and not (tmp_path / "never").exists()


def test_cli_trains_on_skewed_parity_and_resumes(tmp_path, capsys):
    argv = ["--backend", "numpy", "--bits", "4", "--max-nonzero", "1", "--skew", "0.25:3-4", "--hidden", "4",
            "--batch-size", "4", "--iterations", "2", "--eval-size", "40", "--no-progress", "--out", str(tmp_path / "s")]
    summary = cli.main(argv)
    assert summary["config"]["task_options"] == {"bits": 4, "max_nonzero": 1, "skew": "0.25:3-4"}
    # the held-out set is skewed too: 1 non-zero bit, or 3 to 4 for about a quarter of it
    counts = {d["difficulty"]: d["count"] for d in summary["final_eval"]["by_difficulty"]}
    assert set(counts) == {1, 3, 4} and 5 <= counts[3] + counts[4] <= 17
    argv[argv.index("--iterations") + 1] = "4"
    assert cli.main(argv + ["--resume"])["iterations"] == 4
    capsys.readouterr()


def test_cli_runs_and_refuses_to_overwrite(tmp_path, capsys):
    argv = ["--backend", "numpy", "--task", "parity", "--bits", "3", "--hidden", "4", "--batch-size", "4", "--iterations", "2",
            "--eval-size", "8", "--no-progress", "--out", str(tmp_path / "cli")]
    summary = cli.main(argv)
    assert summary["iterations"] == 2 and "done: 2 iterations" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(argv)                  # the folder already holds a run
    assert "already holds a run" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# What a run writes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_log_and_summary_fields(tmp_path, backend):
    summary, log = small_run(tmp_path, "run", backend)
    train = [r for r in log if r["kind"] == "train"]
    evals = [r for r in log if r["kind"] == "eval"]
    assert [r["iteration"] for r in train] == [2, 4, 6]          # every --log-every
    assert [r["iteration"] for r in evals] == [0, 3, 6]          # at 0, every --eval-every, at the end
    for r in log:
        assert {"loss", "sequence_error", "mean_ponder", "max_N"} <= set(r)
        assert 0.0 <= r["sequence_error"] <= 1.0 and r["loss"] > 0
        assert 1.0 <= r["mean_ponder"] <= 101.0 and 1 <= r["max_N"] <= 100
        assert isinstance(r["max_N"], int)
    # the file holds the code's names: max_N the largest N, max_ponder only the cap in the config
    first = json.loads((tmp_path / "run" / "log.jsonl").read_text().splitlines()[0])
    assert "max_N" in first and "max_ponder" not in first
    assert all(set(TIME_FIELDS) <= set(r) for r in evals)
    final = summary["final_eval"]
    assert final["sequence_error"] == evals[-1]["sequence_error"]
    assert final["mean_ponder"] == evals[-1]["mean_ponder"]
    assert final["max_N"] == evals[-1]["max_N"] and "max_ponder" not in final
    # error and ponder per number of non-zero bits, over the 16 held-out sequences
    diff = final["by_difficulty"]
    assert sum(d["count"] for d in diff) == 16
    assert all(1 <= d["difficulty"] <= 6 and 0 <= d["error"] <= 1 and d["ponder"] >= 1 for d in diff)
    assert summary["time_s"] > 0 and summary["config"]["task_options"] == {"bits": 6}
    on_disk = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert on_disk["final_eval"] == final and on_disk["backend"] == backend
    assert checkpoints.read_summary(tmp_path / "run" / "summary.json")["final_eval"] == final
    assert (tmp_path / "run" / "checkpoint.npz").exists()


def test_sequence_error_is_the_fraction_of_sequences_with_a_mistake():
    tally = evaluation.Tally()
    wrong = np.array([[0, 1, 0], [0, 0, 0], [1, 1, 0], [0, 0, 0]], dtype=bool)
    mask = np.array([[1, 1, 1], [1, 1, 0], [1, 1, 1], [1, 0, 0]], dtype=float)
    rho = np.array([[2, 3, 1], [2, 2, 0], [1, 1, 1], [4, 0, 0]], dtype=float)
    N = np.array([[2, 3, 1], [2, 2, 0], [1, 1, 1], [4, 0, 0]])
    tally.add({"loss": 1.5, "wrong": wrong, "rho": rho, "N": N}, mask)
    fields = tally.fields()
    assert fields["sequence_error"] == 0.5                   # 2 of 4 sequences have a mistake
    assert fields["mean_ponder"] == pytest.approx(17 / 9)    # rho over the 9 steps of the sequences
    assert fields["max_N"] == 4 and fields["loss"] == 1.5


@pytest.mark.parametrize("task", ["logic", "addition", "sort"])
def test_every_task_trains_on_both_backends(tmp_path, task):
    for backend in BACKENDS:
        summary, log = small_run(tmp_path, backend + task, backend, task=task, iterations=2, eval_every=0)
        assert [r["iteration"] for r in log if r["kind"] == "eval"] == [0, 2]
        assert summary["final_eval"]["by_difficulty"]


# ---------------------------------------------------------------------------------------------
# Determinism and exact resume
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_same_seed_same_numbers(tmp_path, backend):
    _, a = small_run(tmp_path, "a", backend)
    _, b = small_run(tmp_path, "b", backend)
    _, c = small_run(tmp_path, "c", backend, seed=1)
    assert without_time(a) == without_time(b)
    assert without_time(a) != without_time(c)


def final_params(backend, out):
    state, meta = loop.load_checkpoint(out / "checkpoint.npz")
    return {k: v for k, v in state.items()}, meta


@pytest.mark.parametrize("backend, task", [("numpy", "parity"), ("torch", "parity"), ("torch", "addition")])
def test_resume_continues_exactly(tmp_path, backend, task):
    """N iterations straight == N/2, stop, --resume to N: same parameters, Adam state and log, bit for bit."""
    options = dict(iterations=8, eval_every=3, log_every=3)
    small_run(tmp_path, "straight", backend, task=task, **options)
    small_run(tmp_path, "halves", backend, task=task, **{**options, "iterations": 4})
    loop.run({"out": str(tmp_path / "halves"), "iterations": 8}, BACKENDS[backend], resume=True, progress=False)

    straight, meta_a = final_params(backend, tmp_path / "straight")
    halves, meta_b = final_params(backend, tmp_path / "halves")
    assert sorted(straight) == sorted(halves) and "adam_t" in straight
    for k in straight:
        assert np.array_equal(straight[k], halves[k]), k
    assert meta_a["iteration"] == meta_b["iteration"] == 8
    assert meta_a["data_rng"] == meta_b["data_rng"]
    log_a = loop.read_log(tmp_path / "straight" / "log.jsonl")
    log_b = loop.read_log(tmp_path / "halves" / "log.jsonl")
    # stopping at 4 added an eval record and a train record there (the end of the first half) and
    # cut that log window short, but changed no number: records at the same iteration are equal
    evals_a = {r["iteration"]: r for r in without_time(log_a) if r["kind"] == "eval"}
    evals_b = {r["iteration"]: r for r in without_time(log_b) if r["kind"] == "eval"}
    assert sorted(evals_a) == [0, 3, 6, 8] and sorted(evals_b) == [0, 3, 4, 6, 8]
    assert all(evals_a[i] == evals_b[i] for i in evals_a)
    train_a = {r["iteration"]: r for r in log_a if r["kind"] == "train"}
    train_b = {r["iteration"]: r for r in log_b if r["kind"] == "train"}
    assert sorted(train_a) == [3, 6, 8] and sorted(train_b) == [3, 4, 6, 8]
    assert train_a[3] == train_b[3] and train_a[8] == train_b[8]


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_killed_run_resumes_as_if_never_stopped(tmp_path, backend):
    """Killed at iteration 5, the last checkpoint is at 3 (mid log window): the whole log matches."""
    options = dict(iterations=8, eval_every=3, log_every=2)
    _, straight = small_run(tmp_path, "straight", backend, **options)
    killed = {**SMALL["parity"], "eval_size": 16, "lr": 1e-2, "out": str(tmp_path / "killed"), **options}
    with pytest.raises(Interrupted):
        loop.run(killed, crashing(BACKENDS[backend], after=4), progress=False)
    assert loop.read_log(tmp_path / "killed" / "log.jsonl")[-1]["iteration"] == 4   # logged past 3
    loop.run({"out": str(tmp_path / "killed")}, BACKENDS[backend], resume=True, progress=False)
    resumed = loop.read_log(tmp_path / "killed" / "log.jsonl")
    assert without_time(resumed) == without_time(straight)
    a, _ = final_params(backend, tmp_path / "straight")
    b, _ = final_params(backend, tmp_path / "killed")
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_resume_drops_log_records_past_the_checkpoint_and_checks_options(tmp_path):
    small_run(tmp_path, "run", iterations=4)
    log_path = tmp_path / "run" / "log.jsonl"
    with open(log_path, "a") as f:          # as if the run had gone on past its last checkpoint
        f.write(json.dumps({"kind": "train", "iteration": 5, "loss": 9.0}) + "\n")
    with pytest.raises(ValueError, match="hidden"):
        loop.run({"out": str(tmp_path / "run"), "iterations": 6, "hidden": 9}, NumpyBackend,
                     resume=True, progress=False)
    with pytest.raises(ValueError, match="numpy backend"):
        loop.run({"out": str(tmp_path / "run"), "iterations": 6}, TorchBackend, resume=True, progress=False)
    with pytest.raises(ValueError, match="nothing to resume"):
        loop.run({"out": str(tmp_path / "nowhere")}, NumpyBackend, resume=True, progress=False)
    loop.run({"out": str(tmp_path / "run"), "iterations": 6}, NumpyBackend, resume=True, progress=False)
    iterations = [r["iteration"] for r in loop.read_log(log_path)]
    assert iterations == sorted(iterations) and 9.0 not in [r["loss"] for r in loop.read_log(log_path)]


# ---------------------------------------------------------------------------------------------
# The two backends agree
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("task", ["parity", "logic", "addition", "sort"])
def test_torch_float64_step_matches_numpy(task):
    """Same seed -> same initial weights; then one float64 training step agrees to ~1e-10."""
    config = loop.make_config({**SMALL[task], "lr": 1e-2, "tau": 1e-2, "dtype": "float64",
                                    "device": "cpu"}, TorchBackend)
    np_model = NumpyBackend({k: v for k, v in config.items() if k != "device"})
    torch_model = TorchBackend(config)
    for k, v in np_model.params_numpy().items():
        assert np.array_equal(v, torch_model.params_numpy()[k]), k

    rng = np.random.default_rng(5)
    for _ in range(2):       # the second step also checks the Adam moments carried over
        x, y, mask = tasks.make_batch(task, rng, 6, **config["task_options"])
        a, b = np_model.train_step(x, y, mask), torch_model.train_step(x, y, mask)
        assert abs(a["loss"] - b["loss"]) < 1e-10
        assert np.array_equal(a["N"], b["N"]) and np.array_equal(a["wrong"], b["wrong"])
        np.testing.assert_allclose(a["rho"], b["rho"], rtol=0, atol=1e-10)
        for k, v in np_model.params_numpy().items():
            np.testing.assert_allclose(torch_model.params_numpy()[k], v, rtol=0, atol=1e-10, err_msg=k)
    a, b = np_model.evaluate(x, y, mask), torch_model.evaluate(x, y, mask)
    assert abs(a["loss"] - b["loss"]) < 1e-10 and np.array_equal(a["N"], b["N"])


# ---------------------------------------------------------------------------------------------
# The paper's baseline and a first sign of learning
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_no_act_takes_exactly_one_update_per_input(tmp_path, backend):
    summary, log = small_run(tmp_path, "noact", backend, task="logic", no_act=True)
    assert summary["config"]["max_ponder"] == 1
    assert all(r["max_N"] == 1 for r in log)
    # with M = 1: N = 1 and R = 1 at every step of every sequence, so rho = 2
    assert all(r["mean_ponder"] == 2.0 for r in log)
    assert all(d["ponder"] == 2.0 for d in summary["final_eval"]["by_difficulty"])


def test_ponder_by_difficulty_counts_only_steps_of_a_sequence(tmp_path):
    # an addition sequence of one number has no target, so it is not a sequence step and its
    # rho is 0: it must not pull the per-digit ponder below the no-ACT value of 2
    summary, _ = small_run(tmp_path, "noact", "torch", task="addition", no_act=True, eval_size=64)
    rows = summary["final_eval"]["by_difficulty"]
    assert rows and all(d["ponder"] == 2.0 for d in rows)


@pytest.mark.slow
def test_short_training_beats_chance_on_4_bit_parity(tmp_path):
    """4-bit parity, tanh RNN with 32 units: chance at the start, well below it after 300 steps.

    Seeds 0-5 all end between 0.4% and 6.4% held-out sequence error with these settings.
    """
    summary, log = small_run(tmp_path, "parity4", "numpy", bits=4, hidden=32, batch_size=32,
                             iterations=300, eval_every=150, eval_size=500, log_every=50)
    evals = [r for r in log if r["kind"] == "eval"]
    assert evals[0]["sequence_error"] > 0.35              # an untrained network guesses
    assert summary["final_eval"]["sequence_error"] < 0.15
    # the easy cases are learnt: one non-zero bit is read off directly
    assert summary["final_eval"]["by_difficulty"][0]["error"] < 0.05


def test_device_auto_keeps_a_single_run_on_the_cpu(monkeypatch):
    """Eager CUDA is slower than the CPU for one network: auto never picks it, even with a GPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    config = loop.make_config({"task": "parity", "bits": 3, "hidden": 4, "out": "unused"}, TorchBackend)
    assert config["device"] == "auto" and TorchBackend(config).device.type == "cpu"


def test_report_every_prints_plain_progress_lines(tmp_path, capsys):
    """Without a terminal (a sweep's workers), progress is a plain line every report_every seconds."""
    opts = {**SMALL["parity"], "iterations": 4, "eval_every": 0, "eval_size": 16, "lr": 1e-2,
            "out": str(tmp_path / "run")}
    loop.run(opts, NumpyBackend, progress=False, report_every=0.0)
    lines = [line for line in capsys.readouterr().out.splitlines() if "iteration" in line]
    assert [line.split("iteration ")[1].split(",")[0] for line in lines] == ["1/4", "2/4", "3/4", "4/4"]
    assert all("(run)" in line and " it/s, about " in line and line.endswith(" left") for line in lines)
