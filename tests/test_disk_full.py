"""A write that fails (a full disk, a read-only file system, no permission) ends a run in one line.

Every file a run or a sweep writes goes through ``act_experiments.files.atomic_write`` or
``act_experiments.training.checkpoints.open_log``, so a disk that fails is simulated there:
``FailingDisk`` hands out files whose writes fail with the OSError of a full disk, a read-only
file system or a denied permission, at the site under test. The ends of the line are real processes on a real limit: the operating
system's file size limit (RLIMIT_FSIZE) makes a log too long to write, in the training command
and in a sweep's worker. In every case: exit status 1, one line on stderr naming the file, the
reason and the iteration of the last intact checkpoint; that checkpoint loads, no temporary file
is left, and the run resumed from it ends with the numbers of a run that never stopped.
"""

import builtins
import contextlib
import errno
import json
import os
import resource
import subprocess
import sys

import pytest

from act_experiments import files
from act_experiments.training import checkpoints, loop
from act_experiments.training.cli import main as train_main

from act_experiments.sweeps import launch
from act_experiments.training.backends import NumpyBackend
from conftest import Interrupted, crashing
from test_faults import TINY, TINY_ARGS, TRAIN, assert_same_run
from test_sweep import TINY as SWEEP_TINY, read_runs, sweep_driver

REASONS = {errno.ENOSPC: "No space left on device", errno.EROFS: "Read-only file system",
           errno.EACCES: "Permission denied"}
# a run that evaluates (and checkpoints) every 4 iterations and logs every 2
RUN_ARGS = ["--backend", "numpy", *TINY_ARGS, "--iterations", "12", "--eval-every", "4", "--log-every", "2"]


class FailingDisk:
    """Files named ``name`` (or its temporary twin, name + ".tmp") fail once ``room`` bytes have been
    written to them in all: a write that does not fit writes what fits and raises the OSError
    ``code``. On a read-only file system or without permission, opening such a file for writing
    fails as well once the room is spent (a full disk still creates empty files)."""

    def __init__(self, name, code, room=0):
        self.name, self.code, self.room = name, code, room

    def fail(self):
        raise OSError(self.code, os.strerror(self.code))

    def open(self, path, mode="r", **kwargs):
        f = builtins.open(path, mode, **kwargs)
        if not os.path.basename(path).startswith(self.name) or not set(mode) & set("wa"):
            return f
        if self.room <= 0 and self.code != errno.ENOSPC:
            f.close()
            self.fail()
        return _Failing(f, self)


class _Failing:
    """A file on a FailingDisk: its writes take from the disk's room."""

    def __init__(self, f, disk):
        self._f, self._disk = f, disk

    def write(self, data):
        size = len(data.encode() if isinstance(data, str) else data)
        if size > self._disk.room:
            fits = max(self._disk.room, 0)
            self._f.write(data[:fits])
            self._disk.room = 0
            self._disk.fail()
        self._disk.room -= size
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


@contextlib.contextmanager
def failing(name, code, room=0):
    """While the block runs, the files named ``name`` fail as FailingDisk says."""
    with pytest.MonkeyPatch.context() as patch:
        disk = FailingDisk(name, code, room)
        for module in (files, checkpoints):
            patch.setattr(module, "open", disk.open, raising=False)
        yield


def train_cli(capsys, argv):
    """Run the training command in this process; returns (exit status, stderr)."""
    try:
        train_main(argv)
        status = 0
    except SystemExit as exit_info:
        status = exit_info.code
    return status, capsys.readouterr().err


def assert_one_line(status, err, *words):
    err = err.strip()
    assert status == 1, (status, err)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)


def no_temporary_files(folder):
    return not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def straight_run(tmp_path, args=RUN_ARGS):
    """The same run without a fault, to hold a resumed one to."""
    out = tmp_path / "straight"
    train_main([*args, "--out", str(out)])
    return out


# ---------------------------------------------------------------------------------------------
# Each write site of a run, each reason
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(REASONS))
@pytest.mark.parametrize("name, room", [("checkpoint.npz", 2.5), ("log.jsonl", 0.5), ("summary.json", 0)])
def test_a_failed_write_ends_the_run_in_one_line_and_it_resumes_exactly(tmp_path, capsys, name, room, code):
    """The checkpoint (the third fails), the log (half of it fits) or the summary cannot be written."""
    straight = straight_run(tmp_path)
    capsys.readouterr()
    # room: in checkpoints, in halves of the log, or nothing
    size = (straight / name).stat().st_size
    out = tmp_path / "run"
    with failing(name, code, room=int(room * size)):
        status, err = train_cli(capsys, [*RUN_ARGS, "--out", str(out)])
    _, meta = loop.load_checkpoint(out / "checkpoint.npz")      # intact
    assert_one_line(status, err, f"cannot write {out / name}", REASONS[code],
                    f"iteration {meta['iteration']}", "--backend numpy", "--resume")
    # the third checkpoint fails (the second, at 4, stands); the log fails between two; the summary at the end
    assert {"checkpoint.npz": meta["iteration"] == 4, "log.jsonl": 0 < meta["iteration"] < 12,
            "summary.json": meta["iteration"] == 12}[name]
    assert no_temporary_files(tmp_path)

    train_main(["--backend", "numpy", "--out", str(out), "--resume", "--no-progress"])
    assert_same_run(straight, out, rel=0)


def test_the_first_checkpoint_failing_leaves_nothing_to_resume(tmp_path, capsys):
    """No checkpoint was written: the line says to start again, and starting again works."""
    out = tmp_path / "run"
    with failing("checkpoint.npz", errno.ENOSPC):
        status, err = train_cli(capsys, [*RUN_ARGS, "--out", str(out)])
    assert_one_line(status, err, f"cannot write {out / 'checkpoint.npz'}", "No space left", "start the run again")
    assert "iteration" not in err and list(out.iterdir()) == []

    train_main([*RUN_ARGS, "--out", str(out)])
    assert_same_run(straight_run(tmp_path), out, rel=0)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_resume_in_a_full_folder_ends_in_one_line(tmp_path, capsys, code):
    """A run killed past its checkpoint: resuming cuts its log back first, and that write fails.
    The log stays as it was, and a resume once the disk has room continues exactly."""
    options = {**TINY, "iterations": 12, "eval_every": 4, "log_every": 2}
    with pytest.raises(Interrupted):
        loop.run({**options, "out": str(tmp_path / "run")}, crashing(NumpyBackend, after=6), progress=False)
    out, before = tmp_path / "run", (tmp_path / "run" / "log.jsonl").read_bytes()
    with failing("log.jsonl", code):
        status, err = train_cli(capsys, ["--backend", "numpy", "--out", str(out), "--resume", "--no-progress"])
    assert_one_line(status, err, f"cannot write {out / 'log.jsonl'}", REASONS[code], "iteration 4")
    assert (out / "log.jsonl").read_bytes() == before and no_temporary_files(out)

    train_main(["--backend", "numpy", "--out", str(out), "--resume", "--no-progress"])
    assert_same_run(straight_run(tmp_path), out, rel=0)


def test_a_population_names_the_run_whose_file_failed(tmp_path):
    """In a population the error names the member's file and that member's last checkpoint."""
    from act_experiments.training.populations import NumpyPopulation
    options = {**TINY, "iterations": 8, "eval_every": 4, "log_every": 2}
    configs = [loop.make_config({**options, "seed": s, "out": str(tmp_path / f"s{s}")}, NumpyBackend)
               for s in (0, 1)]
    with failing("checkpoint.npz", errno.ENOSPC, room=30_000), pytest.raises(checkpoints.WriteFailed) as failed:
        loop.train_population(configs, NumpyBackend, NumpyPopulation, progress=False)
    path, iteration = failed.value.path, failed.value.checkpoint
    assert path.name == "checkpoint.npz" and path.parent in (tmp_path / "s0", tmp_path / "s1")
    assert loop.load_checkpoint(path)[1]["iteration"] == iteration
    assert no_temporary_files(tmp_path)


# ---------------------------------------------------------------------------------------------
# A sweep's own files
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sweep_config.json", "runs.csv", "curves.csv", "sweep.json"])
def test_a_sweep_file_that_cannot_be_written_ends_the_sweep_in_one_line(tmp_path, capsys, name):
    """Its settings or its results: one line, the old file stands, and the same command finishes."""
    args = ["--name", "full", *SWEEP_TINY]
    launch.main(args, root=tmp_path)
    results = tmp_path / "results" / "full"
    before = {p.name: p.read_bytes() for p in results.iterdir()}
    capsys.readouterr()
    with failing(name, errno.ENOSPC), pytest.raises(SystemExit) as exit_info:
        launch.main(args, root=tmp_path)
    err = capsys.readouterr().err
    assert_one_line(exit_info.value.code, err, f"{name} (No space left on device)", "run the same command again")
    assert no_temporary_files(tmp_path)
    assert {p.name: p.read_bytes() for p in results.iterdir()} == before

    launch.main(args, root=tmp_path)
    for csv in ("runs.csv", "difficulty.csv", "curves.csv"):
        assert (results / csv).read_bytes() == before[csv]


# ---------------------------------------------------------------------------------------------
# Real processes on a real limit: a file may not grow past 16 KiB
# ---------------------------------------------------------------------------------------------

LIMIT = 16 << 10       # a tiny run's checkpoint fits (about 12 KB); its log of 200 records does not


def limited():
    # in the child, before it runs Python: files past LIMIT cannot be written (EFBIG); Python
    # ignores SIGXFSZ, so the write fails instead of killing the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


LONG = ["--iterations", "200", "--eval-every", "50", "--log-every", "1"]


@pytest.mark.slow
def test_the_command_line_on_a_file_size_limit(tmp_path):
    out = tmp_path / "run"
    command = [sys.executable, str(TRAIN), "--backend", "numpy", *TINY_ARGS, *LONG]
    result = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True, timeout=300,
                            preexec_fn=limited)
    _, meta = loop.load_checkpoint(out / "checkpoint.npz")
    assert 0 < meta["iteration"] < 200
    assert_one_line(result.returncode, result.stderr, f"cannot write {out / 'log.jsonl'}", "File too large",
                    f"iteration {meta['iteration']}")
    assert no_temporary_files(out)

    resumed = subprocess.run([*command, "--out", str(out), "--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    straight = subprocess.run([*command, "--out", str(tmp_path / "straight")], capture_output=True, text=True,
                              timeout=300)
    assert straight.returncode == 0, straight.stderr
    assert_same_run(tmp_path / "straight", out, rel=0)


@pytest.mark.slow
def test_a_sweep_worker_on_a_file_size_limit(tmp_path):
    """The worker's run cannot grow its log: the sweep ends in one line, and the same command
    continues from the run's checkpoint to the numbers of a sweep that never stopped."""
    driver = sweep_driver(tmp_path)
    args = [*SWEEP_TINY, *LONG]
    through = subprocess.run([sys.executable, "-c", driver, "--name", "through", *args], capture_output=True,
                             text=True, timeout=300)
    assert through.returncode == 0, through.stderr
    result = subprocess.run([sys.executable, "-c", driver, "--name", "limited", *args], capture_output=True,
                            text=True, timeout=300, preexec_fn=limited)
    run = tmp_path / "runs" / "sweeps" / "limited" / "tau0.01-seed0"
    _, meta = loop.load_checkpoint(run / "checkpoint.npz")
    assert 0 < meta["iteration"] < 200
    assert_one_line(result.returncode, result.stderr, f"cannot write {run / 'log.jsonl'}", "File too large",
                    f"iteration {meta['iteration']}", "run the same command again")
    assert no_temporary_files(tmp_path)

    again = subprocess.run([sys.executable, "-c", driver, "--name", "limited", *args], capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    a, b = (read_runs(tmp_path / "results" / name) for name in ("through", "limited"))
    assert [{k: v for k, v in r.items() if k != "train_time_s"} for r in a] == \
           [{k: v for k, v in r.items() if k != "train_time_s"} for r in b]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["iterations"] == 200
