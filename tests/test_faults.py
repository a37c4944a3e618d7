"""Faults in the training loop and its CLI: nothing lost, nothing mixed up, one line per refusal.

Signals, kills and damaged files are tried on real processes (``python scripts/train.py`` with
``--backend numpy`` and ``--backend torch``): a stopped or killed run resumes to exactly the numbers of a run
that never stopped. The runs are tiny (4-bit parity, 8 units, batches of 8).
"""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from act_experiments import files
from act_experiments.training import loop, runs
from act_experiments.training.cli import main as train_main

from act_experiments.training.backends import NumpyBackend, TorchBackend
from conftest import Interrupted, crashing

BACKENDS = {"numpy": NumpyBackend, "torch": TorchBackend}
TRAIN = Path(__file__).resolve().parent.parent / "scripts" / "train.py"
TIME_FIELDS = ("time_s", "train_time_s")
TINY = dict(task="parity", bits=4, cell="rnn", hidden=8, batch_size=8, eval_size=16, lr=1e-2)
TINY_ARGS = ["--task", "parity", "--bits", "4", "--hidden", "8", "--batch-size", "8", "--eval-size", "16",
             "--lr", "1e-2", "--no-progress"]


def cli(backend, *args, cwd=None, wait=True):
    """Run ``python scripts/train.py --backend <backend> args`` (Popen if not wait, else the finished process)."""
    command = [sys.executable, str(TRAIN), "--backend", backend, *map(str, args)]
    if not wait:
        return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def assert_one_line_error(result, *words, status=2):
    """A refusal: the exit status, one line on stderr holding the words, no traceback."""
    err = result.stderr.strip()
    assert result.returncode == status, (result.returncode, result.stderr)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)


def without_time(records):
    return [{k: v for k, v in r.items() if k not in TIME_FIELDS} for r in records]


def assert_close(a, b, rel=1e-12, where="record"):
    """Equal structures, floats equal within rel (relative)."""
    if isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=rel, abs_tol=0.0), (where, a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), (where, a.keys() ^ b.keys())
        for k in a:
            assert_close(a[k], b[k], rel, f"{where}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, rel, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


def assert_same_run(a, b, rel=1e-12):
    """Two run folders hold the same numbers: log, final evaluation and final parameters."""
    assert_close(without_time(loop.read_log(a / "log.jsonl")),
                 without_time(loop.read_log(b / "log.jsonl")), rel, "log")
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    assert_close(sa["final_eval"], sb["final_eval"], rel, "final_eval")
    assert sa["iterations"] == sb["iterations"]
    (pa, ma), (pb, mb) = loop.load_checkpoint(a / "checkpoint.npz"), loop.load_checkpoint(b / "checkpoint.npz")
    assert ma["iteration"] == mb["iteration"] and ma["data_rng"] == mb["data_rng"]
    assert sorted(pa) == sorted(pb)
    for k in pa:
        np.testing.assert_allclose(pa[k], pb[k], rtol=rel, atol=0, err_msg=k)


def wait_for_training(proc, out, records, timeout=120):
    """Wait until the run's log holds this many records (the process must still be running)."""
    log, deadline = out / "log.jsonl", time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if log.exists() and log.read_bytes().count(b"\n") >= records:
            return
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"no {records} log records after {timeout} s")


def signalling(backend, at, signum):
    """A backend class that sends itself ``signum`` during its training step number ``at``."""
    class Signalling(backend):
        calls = 0

        def train_step(self, x, y, mask):
            Signalling.calls += 1
            if Signalling.calls == at:
                os.kill(os.getpid(), signum)
            return super().train_step(x, y, mask)
    return Signalling


# ---------------------------------------------------------------------------------------------
# Checkpoints by time change no number
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_checkpoints_by_time_change_no_number(tmp_path, backend):
    """Checkpoints after every iteration or every minute: the same log and parameters; a crash
    between evaluations resumes from the last time checkpoint (mid log window) exactly."""
    options = {**TINY, "iterations": 10, "eval_every": 0, "log_every": 3}
    loop.run({**options, "out": str(tmp_path / "minute")}, BACKENDS[backend], progress=False)
    loop.run({**options, "checkpoint_every": 0, "out": str(tmp_path / "each")}, BACKENDS[backend], progress=False)
    assert_same_run(tmp_path / "minute", tmp_path / "each", rel=0)

    crash = {**options, "checkpoint_every": 0, "out": str(tmp_path / "crash")}
    with pytest.raises(Interrupted):
        loop.run(crash, crashing(BACKENDS[backend], after=4), progress=False)
    _, meta = loop.load_checkpoint(tmp_path / "crash" / "checkpoint.npz")
    assert meta["iteration"] == 4 and meta["window"]["batches"] == 1   # one step into a 3-step window
    # the interval may change on resume, and changes nothing
    loop.run({"out": str(tmp_path / "crash"), "checkpoint_every": 60}, BACKENDS[backend],
                 resume=True, progress=False)
    assert_same_run(tmp_path / "minute", tmp_path / "crash", rel=0)


def test_a_run_killed_before_any_evaluation_resumes_from_its_start(tmp_path):
    """--eval-every 0 and no time checkpoint yet: the checkpoint written at the start is enough."""
    options = {**TINY, "iterations": 8, "eval_every": 0, "log_every": 2}
    loop.run({**options, "out": str(tmp_path / "straight")}, NumpyBackend, progress=False)
    with pytest.raises(Interrupted):
        loop.run({**options, "out": str(tmp_path / "killed")}, crashing(NumpyBackend, after=5), progress=False)
    _, meta = loop.load_checkpoint(tmp_path / "killed" / "checkpoint.npz")
    assert meta["iteration"] == 0 and loop.read_log(tmp_path / "killed" / "log.jsonl")[-1]["iteration"] == 4
    loop.run({"out": str(tmp_path / "killed")}, NumpyBackend, resume=True, progress=False)
    assert_same_run(tmp_path / "straight", tmp_path / "killed", rel=0)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_finishes_the_iteration_and_checkpoints(tmp_path, signum):
    options = {**TINY, "iterations": 9, "eval_every": 0, "log_every": 2}
    loop.run({**options, "out": str(tmp_path / "straight")}, NumpyBackend, progress=False)
    previous = signal.getsignal(signum)
    with pytest.raises(loop.Stopped) as stop:
        loop.run({**options, "out": str(tmp_path / "stopped")}, signalling(NumpyBackend, 5, signum),
                     progress=False)
    assert signal.getsignal(signum) is previous           # the handlers are put back
    assert (stop.value.iteration, stop.value.exit_code) == (5, 128 + signum)
    assert isinstance(stop.value, KeyboardInterrupt)      # `except Exception` lets it through
    _, meta = loop.load_checkpoint(tmp_path / "stopped" / "checkpoint.npz")
    assert meta["iteration"] == 5 and not (tmp_path / "stopped" / "summary.json").exists()
    loop.run({"out": str(tmp_path / "stopped")}, NumpyBackend, resume=True, progress=False)
    assert_same_run(tmp_path / "straight", tmp_path / "stopped", rel=0)


# ---------------------------------------------------------------------------------------------
# Real processes: SIGINT, SIGTERM, SIGKILL
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend, signum", [("numpy", signal.SIGINT), ("numpy", signal.SIGTERM),
                                             ("torch", signal.SIGINT)])
@pytest.mark.slow
def test_cli_stopped_by_a_signal_resumes_exactly(tmp_path, backend, signum):
    out = tmp_path / "stopped"
    args = [*TINY_ARGS, "--eval-every", "0", "--log-every", "7", "--checkpoint-every", "0.02"]
    proc = cli(backend, *args, "--iterations", 10**7, "--out", out, wait=False)
    wait_for_training(proc, out, records=6)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"--out {out} --resume" in err and signal.Signals(signum).name in err
    _, meta = loop.load_checkpoint(out / "checkpoint.npz")
    assert loop.read_log(out / "log.jsonl")[-1]["iteration"] <= meta["iteration"]   # nothing logged past it

    total = meta["iteration"] + 30
    resumed = cli(backend, "--out", out, "--resume", "--iterations", total, "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    straight = cli(backend, *args, "--checkpoint-every", 60, "--iterations", total, "--out", tmp_path / "straight")
    assert straight.returncode == 0, straight.stderr
    assert_same_run(tmp_path / "straight", out)


@pytest.mark.slow
def test_cli_killed_resumes_from_its_last_checkpoint(tmp_path):
    """SIGKILL: no handler runs; the last time checkpoint (usually behind the log) is enough."""
    out = tmp_path / "killed"
    args = [*TINY_ARGS, "--eval-every", "0", "--log-every", "3", "--checkpoint-every", "0.05"]
    proc = cli("numpy", *args, "--iterations", 10**7, "--out", out, wait=False)
    wait_for_training(proc, out, records=60)
    proc.kill()
    proc.communicate(timeout=60)
    _, meta = loop.load_checkpoint(out / "checkpoint.npz")
    assert meta["iteration"] > 0
    total = max(meta["iteration"], loop.read_log(out / "log.jsonl")[-1]["iteration"]) + 30
    resumed = cli("numpy", "--out", out, "--resume", "--iterations", total, "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    straight = cli("numpy", *args, "--iterations", total, "--out", tmp_path / "straight")
    assert straight.returncode == 0, straight.stderr
    assert_same_run(tmp_path / "straight", out)


# ---------------------------------------------------------------------------------------------
# Damaged, partial and foreign run folders
# ---------------------------------------------------------------------------------------------


def small_cli_run(tmp_path, name="run", iterations=6):
    out = tmp_path / name
    result = cli("numpy", *TINY_ARGS, "--iterations", iterations, "--eval-every", 3, "--log-every", 2, "--out", out)
    assert result.returncode == 0, result.stderr
    return out


def garble(path):
    path.write_bytes(b"\x00garbage\xff" * 50)


def cut_in_half(path):
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def garble_a_line(path):
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = b'{"kind": "train", "iter\n'
    path.write_bytes(b"".join(lines))


@pytest.mark.parametrize("name, damage", [("checkpoint.npz", garble), ("checkpoint.npz", cut_in_half),
                                          ("log.jsonl", garble_a_line), ("log.jsonl", cut_in_half)])
@pytest.mark.slow
def test_resume_refuses_a_damaged_file_in_one_line(tmp_path, name, damage):
    out = small_cli_run(tmp_path)
    damage(out / name)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    result = cli("numpy", "--out", out, "--resume", "--iterations", 8, "--no-progress")
    assert_one_line_error(result, str(out / name), "damaged")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before     # nothing touched


@pytest.mark.slow
def test_a_run_stopped_before_its_first_checkpoint(tmp_path):
    """Killed while writing its first checkpoint: --resume says to start again; starting again works."""
    out = tmp_path / "early"
    out.mkdir()
    (out / "checkpoint.npz.tmp").write_bytes(b"half a checkpoint")
    assert_one_line_error(cli("numpy", "--out", out, "--resume"), "nothing to resume", "without --resume")
    result = cli("numpy", *TINY_ARGS, "--iterations", 2, "--out", out)
    assert result.returncode == 0, result.stderr

    # a log without a checkpoint (a run from an older version, or a deleted checkpoint)
    (out / "checkpoint.npz").unlink()
    assert_one_line_error(cli("numpy", *TINY_ARGS, "--out", out), "no checkpoint", "delete the folder")
    assert_one_line_error(cli("numpy", "--out", out, "--resume"), "nothing to resume")


def test_a_fresh_run_into_a_stopped_run_is_told_to_resume(tmp_path):
    with pytest.raises(Interrupted):
        loop.run({**TINY, "iterations": 8, "eval_every": 0, "out": str(tmp_path / "run")},
                     crashing(NumpyBackend, after=3), progress=False)
    before = (tmp_path / "run" / "log.jsonl").read_bytes()
    result = cli("numpy", *TINY_ARGS, "--iterations", 8, "--out", tmp_path / "run")
    assert_one_line_error(result, "already holds a run", "pass --resume")
    assert (tmp_path / "run" / "log.jsonl").read_bytes() == before


@pytest.mark.slow
def test_resume_refuses_a_changed_text(tmp_path):
    """The checkpoint keeps the sha256 of the --data file: a changed file is refused, the same one resumes."""
    data = tmp_path / "tiny.txt"
    words = "the quick brown fox jumps over the lazy dog, then sleeps.\n"
    data.write_text(words * 60)
    out = tmp_path / "chars"
    args = ["--task", "characters", "--data", data, "--seq-len", 8, "--hidden", 4, "--batch-size", 4,
            "--eval-size", 4, "--eval-every", 0, "--no-progress", "--out", out]
    assert cli("numpy", *args, "--iterations", 2).returncode == 0
    data.write_text(words.upper() * 60)                        # same name, same size, other bytes
    assert_one_line_error(cli("numpy", "--out", out, "--resume", "--iterations", 4), str(data), "changed")
    data.write_text(words * 60)
    resumed = cli("numpy", "--out", out, "--resume", "--iterations", 4, "--no-progress")
    assert resumed.returncode == 0, resumed.stderr


# ---------------------------------------------------------------------------------------------
# Files are replaced in one step
# ---------------------------------------------------------------------------------------------


def test_atomic_write_leaves_the_old_file_when_it_fails(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with files.atomic_write(path) as f:
            f.write("half of the new")
            raise KeyboardInterrupt
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]
    with files.atomic_write(path) as f:
        f.write("new")
    assert path.read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


def test_a_kill_while_resuming_leaves_the_log_whole(tmp_path, monkeypatch):
    """Resuming cuts the log back to the checkpoint: killed at that moment, the log is still whole."""
    options = {**TINY, "iterations": 8, "eval_every": 3, "log_every": 2}
    loop.run({**options, "out": str(tmp_path / "straight")}, NumpyBackend, progress=False)
    with pytest.raises(Interrupted):
        loop.run({**options, "out": str(tmp_path / "run")}, crashing(NumpyBackend, after=4), progress=False)
    log = tmp_path / "run" / "log.jsonl"
    before = log.read_bytes()

    def killed(src, dst):
        raise KeyboardInterrupt
    monkeypatch.setattr(files.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        loop.run({"out": str(tmp_path / "run")}, NumpyBackend, resume=True, progress=False)
    assert log.read_bytes() == before and not (tmp_path / "run" / "log.jsonl.tmp").exists()
    monkeypatch.undo()
    loop.run({"out": str(tmp_path / "run")}, NumpyBackend, resume=True, progress=False)
    assert_same_run(tmp_path / "straight", tmp_path / "run", rel=0)


def test_the_summary_is_replaced_in_one_step(tmp_path, monkeypatch):
    out = tmp_path / "run"
    loop.run({**TINY, "iterations": 2, "out": str(out)}, NumpyBackend, progress=False)
    before = (out / "summary.json").read_text()

    def broken_write_json(path, data, indent=2):
        # the summary's writer, failing half way through its file
        with files.atomic_write(path) as f:
            f.write('{"backend": "num')
            raise OSError("disk full")
    monkeypatch.setattr(runs, "write_json", broken_write_json)      # the run writes its summary
    with pytest.raises(OSError):
        loop.run({"out": str(out), "iterations": 4}, NumpyBackend, resume=True, progress=False)
    assert (out / "summary.json").read_text() == before


# ---------------------------------------------------------------------------------------------
# Bad input on the command line: one line, a non-zero exit, nothing written
# ---------------------------------------------------------------------------------------------


def test_cli_refuses_an_out_folder_under_a_file(tmp_path):
    (tmp_path / "somefile").write_text("mine")
    result = cli("numpy", *TINY_ARGS, "--out", tmp_path / "somefile" / "run")
    assert_one_line_error(result, "somefile")
    assert (tmp_path / "somefile").read_text() == "mine"
    assert_one_line_error(cli("numpy", *TINY_ARGS, "--out", tmp_path / "somefile"), "somefile")


def test_cli_refuses_an_empty_out(tmp_path):
    assert_one_line_error(cli("numpy", *TINY_ARGS, "--out", "", cwd=tmp_path), "out")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("lr", ["1e308", "2", "0", "nan", "-1e-3"])
def test_cli_refuses_a_learning_rate_adam_cannot_use(tmp_path, lr):
    assert_one_line_error(cli("numpy", *TINY_ARGS, "--lr", lr, "--out", tmp_path / "run"), "lr")
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:1"])
def test_cli_refuses_cuda_without_cuda(tmp_path, device):
    result = cli("torch", *TINY_ARGS, "--device", device, "--out", tmp_path / "run")
    assert_one_line_error(result, device, "CUDA is not available")
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cli_refuses_a_cuda_device_beyond_the_count(tmp_path):
    device = f"cuda:{torch.cuda.device_count()}"
    result = cli("torch", *TINY_ARGS, "--device", device, "--out", tmp_path / "run")
    assert_one_line_error(result, device, "CUDA device")
    assert not (tmp_path / "run").exists()


class NaNBackend(NumpyBackend):
    """A backend whose third step returns a NaN loss (as a diverging run would)."""
    calls = 0

    def train_step(self, x, y, mask):
        NaNBackend.calls += 1
        stats = super().train_step(x, y, mask)
        return {**stats, "loss": float("nan")} if NaNBackend.calls == 3 else stats


def test_a_diverged_run_stops_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        train_main(["--backend", "numpy", *TINY_ARGS, "--iterations", "5", "--out", str(tmp_path / "run")],
                   backends={"numpy": NaNBackend})
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 1 and len(err.splitlines()) == 1
    assert "diverged at iteration 3" in err and "--lr" in err
