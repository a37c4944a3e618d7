"""The sweep engine (act_experiments.sweeps, behind scripts/sweep.py and scripts/characters.py):
options checked first, settings kept, a lock, damaged runs redone, populations equal to pools.

The sweeps here have one tiny run each and write under tmp_path (passed to the scripts' main as
its root); the few that train start one worker process.
"""

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import torch

from act_experiments.training import loop

from act_experiments.sweeps import launch as sweep
from act_experiments.sweeps import workers

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


class characters:
    """scripts/characters.py: the sweep with --task characters and its analysis."""

    @staticmethod
    def main(argv, root=None):
        sweep.main(argv, script="characters.py", task="characters", root=root)

TINY = ["--task", "parity", "--bits", "3", "--hidden", "4", "--batch-size", "4", "--iterations", "4",
        "--eval-every", "2", "--eval-size", "8", "--taus", "1e-2", "--seeds", "1", "--no-baseline",
        "--workers", "1", "--backend", "torch"]
CSVS = ("runs.csv", "difficulty.csv", "curves.csv")


def run_sweep(capsys, root, *args, script=sweep):
    """Call the script's main, writing runs/ and results/ under root; returns (exit status, stderr)."""
    try:
        script.main(list(args), root=root)
        status = 0
    except SystemExit as exit_info:
        status = exit_info.code
    return status, capsys.readouterr().err


def assert_one_line(status, err, expected_status, *words):
    err = err.strip()
    assert status == expected_status, (status, err)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)


def csvs(results):
    return {name: (results / name).read_bytes() for name in CSVS}


@pytest.mark.parametrize("extra, words", [
    (["--lr", "1e308"], ["lr"]),
    (["--taus", "-1"], ["tau"]),
    (["--hidden", "0"], ["hidden"]),
    (["--out", "elsewhere"], ["--out"]),
    (["--name", "../up"], ["--name"]),
])
def test_bad_options_stop_before_any_worker_and_write_nothing(tmp_path, capsys, extra, words):
    status, err = run_sweep(capsys, tmp_path, "--name", "bad", *TINY, *extra)
    assert_one_line(status, err, 2, *words)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_rerun_keeps_the_runs_and_refuses_other_settings(tmp_path, capsys):
    assert run_sweep(capsys, tmp_path, "--name", "s", *TINY)[0] == 0
    folder, results = tmp_path / "runs" / "sweeps" / "s", tmp_path / "results" / "s"
    stored = json.loads((folder / sweep.CONFIG_FILE).read_text())
    assert stored["taus"] == [0.01] and stored["runs"]["tau0.01-seed0"]["hidden"] == 4
    assert "device" not in stored["runs"]["tau0.01-seed0"]         # scheduling is not a setting
    first = csvs(results)

    # the same settings again: nothing is trained, the results come out byte for byte the same
    # (another --workers or --checkpoint-every is scheduling, not a setting)
    assert run_sweep(capsys, tmp_path, "--name", "s", *TINY, "--checkpoint-every", "5")[0] == 0
    assert csvs(results) == first

    status, err = run_sweep(capsys, tmp_path, "--name", "s", *TINY, "--lr", "1e-3")
    assert_one_line(status, err, 2, "--lr 0.0001 before, 0.001 now", "--force")
    status, err = run_sweep(capsys, tmp_path, "--name", "s", *TINY, "--seeds", "2")
    assert_one_line(status, err, 2, "--seeds 1 before, 2 now")
    assert csvs(results) == first

    with open(folder / sweep.LOCK_FILE, "a") as lock:          # another sweep of this name is running
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        status, err = run_sweep(capsys, tmp_path, "--name", "s", *TINY)
        assert_one_line(status, err, 1, "another sweep named 's' is running")
    assert csvs(results) == first


@pytest.mark.slow
def test_damaged_runs_are_trained_again_to_the_same_numbers(tmp_path, capsys):
    assert run_sweep(capsys, tmp_path, "--name", "d", *TINY)[0] == 0
    run, results = tmp_path / "runs" / "sweeps" / "d" / "tau0.01-seed0", tmp_path / "results" / "d"
    first = csvs(results)

    # a truncated summary: resumed from its final checkpoint, which writes the summary again
    summary = run / "summary.json"
    summary.write_text(summary.read_text()[:40])
    assert run_sweep(capsys, tmp_path, "--name", "d", *TINY)[0] == 0
    assert csvs(results) == first

    # a garbled checkpoint and a truncated summary: trained again from the start
    (run / "checkpoint.npz").write_bytes(b"garbage")
    summary.write_text("{")
    assert run_sweep(capsys, tmp_path, "--name", "d", *TINY)[0] == 0
    again = csvs(results)
    assert again["curves.csv"] == first["curves.csv"] and again["difficulty.csv"] == first["difficulty.csv"]


@pytest.mark.slow
def test_force_deletes_the_old_runs_and_starts_over(tmp_path, capsys):
    assert run_sweep(capsys, tmp_path, "--name", "f", *TINY)[0] == 0
    folder = tmp_path / "runs" / "sweeps" / "f"
    (folder / "tau0.01-seed0" / "marker").write_text("old run")
    assert run_sweep(capsys, tmp_path, "--name", "f", *TINY, "--lr", "1e-3", "--force")[0] == 0
    assert not (folder / "tau0.01-seed0" / "marker").exists()
    assert json.loads((folder / sweep.CONFIG_FILE).read_text())["runs"]["tau0.01-seed0"]["lr"] == 1e-3
    summary = json.loads((folder / "tau0.01-seed0" / "summary.json").read_text())
    assert summary["config"]["lr"] == 1e-3


@pytest.mark.slow
def test_characters_sweep_refuses_a_changed_text(capsys, tmp_path):
    data = tmp_path / "tiny.txt"
    words = "the quick brown fox jumps over the lazy dog, then sleeps.\n"
    data.write_text(words * 60)
    args = ["--name", "c", "--taus", "1e-2", "--no-baseline", "--workers", "1", "--passage-chunks", "1", "--backend", "torch",
            "--data", str(data), "--seq-len", "8", "--hidden", "4", "--batch-size", "4", "--iterations", "2",
            "--eval-every", "0", "--eval-size", "4"]
    assert run_sweep(capsys, tmp_path, *args, script=characters)[0] == 0
    results = tmp_path / "results" / "c"
    assert sorted(p.name for p in results.iterdir()) == ["classes.csv", "curves.csv", "passage.csv", "runs.csv",
                                                         "sweep.json"]
    data.write_text(words.upper() * 60)
    status, err = run_sweep(capsys, tmp_path, *args, script=characters)
    assert_one_line(status, err, 2, "the text's content (sha256)")
    status, err = run_sweep(capsys, tmp_path, *args, "--lr", "2", script=characters)
    assert_one_line(status, err, 2, "lr must be in")


@pytest.mark.parametrize("extra, words", [
    (["--lr", "1e308"], ["lr"]),
    (["--out", "x"], ["--out"]),
    pytest.param(["--device", "cuda"], ["CUDA is not available"],
                 marks=pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")),
])
@pytest.mark.slow
def test_sweep_cli_refuses_bad_options_in_one_line(extra, words):
    """The real script, in its own process: it stops before it writes anything."""
    name = f"test-refused-{uuid.uuid4().hex[:8]}"
    result = subprocess.run([sys.executable, str(SCRIPTS / "sweep.py"), "--name", name, *TINY, *extra],
                            capture_output=True, text=True, timeout=300)
    assert_one_line(result.returncode, result.stderr, 2, *words)
    for folder in (sweep.ROOT / "runs" / "sweeps" / name, sweep.ROOT / "results" / name):
        assert not folder.exists()


def sweep_process(tmp_path, name, args, lines):
    """Start a sweep in its own process (runs and results under tmp_path) and wait until the log
    of its run tau0.01-seed0 holds `lines` records. Returns (process, that run's folder)."""
    proc = subprocess.Popen([sys.executable, "-c", sweep_driver(tmp_path), "--name", name, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = tmp_path / "runs" / "sweeps" / name / "tau0.01-seed0"
    deadline = time.monotonic() + 120
    while not ((run / "log.jsonl").exists() and (run / "log.jsonl").read_bytes().count(b"\n") >= lines):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    return proc, run


def sweep_driver(tmp_path):
    """A Python program that runs the sweep engine with runs/ and results/ under tmp_path."""
    return (f"import sys; from act_experiments.sweeps import launch; from pathlib import Path; "
            f"launch.main(sys.argv[1:], root=Path({str(tmp_path)!r}))")


@pytest.mark.slow
def test_an_interrupted_sweep_stops_its_workers_with_a_checkpoint(tmp_path):
    """Ctrl-C to the sweep: one line, status 130, and each worker checkpoints where it stopped."""
    args = [*TINY, "--iterations", "10000000", "--eval-every", "0", "--log-every", "5", "--checkpoint-every", "60"]
    proc, run = sweep_process(tmp_path, "i", args, 5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert_one_line(proc.returncode, err, 130, "run the same command again")
    _, meta = loop.load_checkpoint(run / "checkpoint.npz")
    assert meta["iteration"] >= loop.read_log(run / "log.jsonl")[-1]["iteration"] >= 20
    assert not (tmp_path / "results" / "i").exists()


@pytest.mark.slow
def test_a_run_folder_from_other_settings_is_kept_and_stops_the_sweep_in_one_line(tmp_path, capsys):
    """A run folder left by an earlier sweep without sweep_config.json and made with other options is
    neither deleted nor mixed in: the sweep stops in one line and the folder stays as it was."""
    assert run_sweep(capsys, tmp_path, "--name", "old", *TINY)[0] == 0
    folder = tmp_path / "runs" / "sweeps" / "old"
    (folder / sweep.CONFIG_FILE).unlink()             # as a sweep from before the config file
    run = folder / "tau0.01-seed0"
    (run / "summary.json").unlink()                   # unfinished, so the sweep tries to continue it
    before = sorted(p.name for p in run.iterdir())
    other = list(TINY)
    other[TINY.index("--hidden") + 1] = "8"
    status, err = run_sweep(capsys, tmp_path, "--name", "old", *other)
    assert_one_line(status, err, 1, "a run stopped the sweep", "hidden")
    assert sorted(p.name for p in run.iterdir()) == before


def read_runs(results):
    import csv
    with open(results / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["torch", "numpy"])
def test_population_and_pool_engines_give_the_same_numbers(tmp_path, capsys, backend):
    """--engine changes only how runs are scheduled: runs.csv, curves and difficulty agree to rounding."""
    args = [*TINY, "--taus", "1e-3,1e-2", "--fixed-ponders", "3", "--seeds", "2", "--dtype", "float64",
            "--eval-every", "2"]
    args.remove("--no-baseline")
    args[args.index("--backend") + 1] = backend
    assert run_sweep(capsys, tmp_path, "--name", "pool", *args, "--engine", "pool")[0] == 0
    assert run_sweep(capsys, tmp_path, "--name", "pop", *args, "--engine", "population",
                     "--population-size", "4")[0] == 0
    pool, pop = read_runs(tmp_path / "results" / "pool"), read_runs(tmp_path / "results" / "pop")
    assert [r["run"] for r in pool] == [r["run"] for r in pop] and len(pop) == 8
    for a, b in zip(pool, pop):
        for key in a:
            if key == "train_time_s":
                continue
            if key in ("run", "tau", "act", "seed", "max_N", "iterations", "fixed_ponder", "random_of",
                       "iterations_to_98"):
                assert a[key] == b[key], (a["run"], key)
            else:
                assert float(a[key]) == pytest.approx(float(b[key]), rel=1e-9, abs=1e-12), (a["run"], key)
    meta = json.loads((tmp_path / "results" / "pop" / "sweep.json").read_text())
    assert meta["engine"] == "population" and meta["backend"] == backend
    # the engine is scheduling, not a setting: the other engine finishes the same sweep
    assert run_sweep(capsys, tmp_path, "--name", "pop", *args, "--engine", "pool")[0] == 0


@pytest.mark.parametrize("extra, words", [
    (["--population-size", "0"], ["--population-size"]),
    (["--engine", "fast"], ["--engine", "invalid choice"]),
    (["--backend", "jax"], ["--backend", "invalid choice"]),
    (["--device", "tpu"], ["device"]),
    (["--backend", "numpy", "--device", "cpu:0"], ["numpy backend runs on the CPU only"]),
    (["--passage-chunks", "2"], ["--passage-chunks"]),
    (["--kernels", "--engine", "pool"], ["--kernels", "--engine pool"]),
    (["--kernels", "--backend", "numpy"], ["--kernels", "--backend numpy"]),
])
def test_bad_engine_options_stop_in_one_line(tmp_path, capsys, extra, words):
    status, err = run_sweep(capsys, tmp_path, "--name", "bad", *TINY, *extra)
    assert_one_line(status, err, 2, *words)
    assert list(tmp_path.iterdir()) == []


def test_shards_are_even_in_the_sweeps_order_and_fit_in_memory(capsys):
    from act_experiments.training.backends import TorchBackend
    base = {"task": "parity", "bits": 3, "hidden": 4, "batch_size": 4, "device": "cpu"}
    jobs = [(f"r{i}", {**base, "seed": i, "out": f"r{i}"}) for i in range(7)]
    jobs.append(("wide", {**base, "hidden": 8, "seed": 0, "out": "wide"}))     # another shape: its own shard
    configs = [loop.make_config(o, TorchBackend) for _, o in jobs]
    plan = workers.plan_shards(jobs, configs, workers=2, free=1 << 40)
    assert [[j[0] for j in s] for s in plan] == [["r0", "r1", "r2", "r3"], ["r4", "r5", "r6"], ["wide"]]
    plan = workers.plan_shards(jobs, configs, workers=1, size=3, free=1 << 40)
    assert sorted(len(s) for s in plan) == [1, 2, 2, 3]      # seven runs in three even shards, and "wide"
    need = workers.member_bytes(configs[0])
    plan = workers.plan_shards(jobs[:7], configs[:7], workers=1, free=int(2.5 * need / 0.8))
    assert max(len(s) for s in plan) == 2                 # memory caps the default size
    with pytest.raises(SystemExit) as info:
        workers.plan_shards(jobs[:7], configs[:7], workers=1, size=5, free=int(2.5 * need / 0.8))
    assert info.value.code == 2
    assert_one_line(2, capsys.readouterr().err, 2, "--population-size 5", "GB")


def test_by_default_a_cpu_sweep_trains_numpy_populations(tmp_path, capsys):
    args = list(TINY)
    del args[args.index("--backend"):args.index("--backend") + 2]
    assert run_sweep(capsys, tmp_path, "--name", "default", *args, "--device", "auto")[0] == 0
    meta = json.loads((tmp_path / "results" / "default" / "sweep.json").read_text())
    assert (meta["engine"], meta["backend"], meta["device"]) == ("population", "numpy", "cpu")
    summary = json.loads((tmp_path / "runs" / "sweeps" / "default" / "tau0.01-seed0" / "summary.json").read_text())
    assert summary["backend"] == "numpy" and summary["config"]["dtype"] == "float32"


@pytest.mark.slow
def test_a_sweep_stopped_and_run_again_ends_with_the_numbers_of_one_that_never_stopped(tmp_path):
    """Ctrl-C in the middle of a population, then the same command: the results are those of a
    sweep that ran through (a long sweep can be carried through many short sessions)."""
    driver = sweep_driver(tmp_path)
    args = [*TINY, "--taus", "1e-3,1e-2", "--iterations", "800", "--eval-every", "400", "--log-every", "5",
            "--dtype", "float64"]
    subprocess.run([sys.executable, "-c", driver, "--name", "through", *args], check=True, capture_output=True)
    proc, run = sweep_process(tmp_path, "stopped", args, 20)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    _, meta = loop.load_checkpoint(run / "checkpoint.npz")
    assert 0 < meta["iteration"] < 800
    subprocess.run([sys.executable, "-c", driver, "--name", "stopped", *args], check=True, capture_output=True)
    through, stopped = read_runs(tmp_path / "results" / "through"), read_runs(tmp_path / "results" / "stopped")
    for a, b in zip(through, stopped):
        assert {k: v for k, v in a.items() if k != "train_time_s"} == {k: v for k, v in b.items() if k != "train_time_s"}


def test_taus_that_name_the_same_runs_are_refused(tmp_path, capsys):
    status, err = run_sweep(capsys, tmp_path, "--name", "twice", *TINY, "--taus", "1e-3,0.001")
    assert_one_line(status, err, 2, "--taus", "give each tau once")
    assert list(tmp_path.iterdir()) == []


def worker_pids(pid):
    """The worker processes of the sweep process pid (its children that run Python, not the
    multiprocessing resource tracker)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(c) for c in children if b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the workers through /proc")
@pytest.mark.parametrize("signum, status, words", [(signal.SIGKILL, 1, "a worker process died"),
                                                    (signal.SIGTERM, 143, "run the same command again")])
@pytest.mark.slow
def test_a_worker_stopped_or_killed_on_its_own_ends_the_sweep_in_one_line(tmp_path, signum, status, words):
    """Not a hang: a worker killed (out of memory, say) or stopped alone ends the sweep, one line."""
    args = [*TINY, "--iterations", "10000000", "--eval-every", "0", "--log-every", "5"]
    proc, _ = sweep_process(tmp_path, "w", args, 5)
    workers = worker_pids(proc.pid)
    assert len(workers) == 1
    os.kill(workers[0], signum)
    _, err = proc.communicate(timeout=120)
    assert_one_line(proc.returncode, err, status, words)


@pytest.mark.slow
def test_a_numpy_worker_starts_without_pytorch():
    """PyTorch's import costs a NumPy sweep's every worker most of a second: the NumPy backend, its
    population and the loop load without it, and TorchBackend and TorchPopulation still import."""
    code = ("import sys\n"
            "from act_experiments.sweeps import workers\n"
            "from act_experiments.training import loop\n"
            "workers.backend_classes('numpy')\n"
            "print('torch' in sys.modules)\n"
            "from act_experiments.training.backends import BACKENDS, TorchBackend\n"
            "from act_experiments.training.populations import TorchPopulation\n"
            "print(BACKENDS['torch'] is TorchBackend, TorchPopulation.__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "TorchPopulation"]


@pytest.mark.slow
def test_first_seed_gives_fresh_seeds(tmp_path, capsys):
    """--first-seed 7 --seeds 2: runs of seeds 7 and 8, each the run that seed gives alone."""
    args = [a for a in TINY if a != "--no-baseline"]
    args[args.index("--seeds") + 1] = "2"
    status, err = run_sweep(capsys, tmp_path, "--name", "fresh", *args, "--first-seed", "7")
    assert status == 0, err
    runs = (tmp_path / "results" / "fresh" / "runs.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in runs[1:]] == ["tau0.01-seed7", "tau0.01-seed8", "noact-seed7",
                                                         "noact-seed8"]
    summary = json.loads((tmp_path / "runs" / "sweeps" / "fresh" / "tau0.01-seed8" / "summary.json").read_text())
    assert summary["config"]["seed"] == 8
    assert json.loads((tmp_path / "results" / "fresh" / "sweep.json").read_text())["first_seed"] == 7
    status, err = run_sweep(capsys, tmp_path, "--name", "negative", *args, "--first-seed", "-1")
    assert_one_line(status, err, 2, "--first-seed")


# ---------------------------------------------------------------------------------------------
# --kernels: the populations on the Triton kernels (tests/test_kernels.py trains a sweep on them)
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_kernels_without_cuda_are_refused_in_one_line_before_any_file():
    """The real script, in its own process and without Triton's interpreter: no CUDA device (or no
    Triton) stops it in one line, and nothing is written."""
    import importlib.util
    name = f"test-kernels-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, str(SCRIPTS / "sweep.py"), "--name", name, *TINY, "--kernels"],
                            capture_output=True, text=True, timeout=300, env=env)
    missing = "CUDA device" if importlib.util.find_spec("triton") else "requirements-kernels.txt"
    assert_one_line(result.returncode, result.stderr, 2, "--kernels", missing)
    for folder in (sweep.ROOT / "runs" / "sweeps" / name, sweep.ROOT / "results" / name):
        assert not folder.exists()


def test_kernels_are_a_setting_of_the_sweep():
    """--kernels is stored with the sweep's settings (only when given, so that a sweep stored
    before the option reads the same), and a rerun with or without it is refused by name."""
    def settings(*extra):
        args, tokens = sweep.parse_args(["--name", "k", *TINY, *extra])
        jobs = sweep.jobs_for(args, sweep.passthrough_options(tokens))
        return args, sweep.sweep_config(args, jobs, sweep.check_jobs(jobs))

    plain_args, plain = settings()
    args, fused = settings("--kernels")
    assert args.kernels and args.backend == "torch" and not plain_args.kernels
    assert fused["kernels"] is True and "kernels" not in plain
    assert sweep.differences(plain, plain) == ""
    assert sweep.differences(plain, fused) == "--kernels false before, true now"
    assert sweep.differences(fused, plain) == "--kernels true before, false now"
    # without --backend, --kernels picks the torch backend, as a CPU sweep otherwise picks NumPy's
    no_backend = [a for a in TINY if a not in ("--backend", "torch")]
    assert sweep.parse_args(["--name", "k", *no_backend, "--kernels"])[0].backend == "torch"


def test_kernels_reach_every_population_a_worker_builds(tmp_path, monkeypatch):
    """The worker of a --kernels sweep builds its populations as TorchPopulation(configs,
    kernels=True): the one place the engine's option is set (a stand-in records the call)."""
    from act_experiments.training import populations
    args, tokens = sweep.parse_args(["--name", "k", *TINY, "--taus", "1e-2,1e-1", "--kernels"])
    jobs = sweep.jobs_for(args, sweep.passthrough_options(tokens), root=tmp_path)
    built = []
    monkeypatch.setattr(populations, "TorchPopulation",
                        lambda configs, **options: built.append((len(configs), options)), raising=False)
    monkeypatch.setattr(loop, "train_population", lambda configs, backend, population, **_: population(configs))
    workers.run_shard(("population", "torch", jobs, args.kernels))
    workers.run_shard(("population", "torch", jobs, False))
    assert built == [(2, {"kernels": True}), (2, {})]
