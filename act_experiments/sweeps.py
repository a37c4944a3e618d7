"""A tau sweep of ACT runs (plus the no-ACT baseline), trained as populations, saved as data.

    python scripts/sweep.py --name parity16 --task parity --bits 16 --hidden 128 --lr 1e-3 \\
        --iterations 3000 --taus 1e-4,1e-3,1e-2,1e-1 --seeds 3

The runs of a sweep are every (tau, seed) pair and, unless --no-baseline, each seed with
--no-act (the cap M = 1). Each run is the shared training loop (``training``) with its own run
folder: log, checkpoint, summary, exactly the files of ``python scripts/train.py``.

How the runs are scheduled (none of it changes what a run computes; the numbers agree to
rounding, and in float64 to about 1e-9 over a run. A population pads every member's ponder loop
to its slowest member's, which changes the order of some sums, so in float32 two schedules of one
run can drift apart over a long run, as two machines' BLAS kernels can):

- ``--engine population`` (the default): runs that share the shape of the computation are
  stacked into populations (``training.train_population``): K networks take each step as one
  program of batched products, which is faster per network than K separate runs. The runs are
  split into shards of at most ``--population-size`` members, in the order tau by tau (members
  that halt early wait for the slowest one, so a shard of one tau wastes least); by default the
  shards are as even as possible, one per worker, within the memory free for them.
- ``--engine pool``: one process per run (the behaviour before populations).
- ``--workers`` shards (or runs) train side by side in worker processes with one thread each.
- ``--backend numpy|torch`` chooses the backend that trains every run (part of the sweep's
  settings: the two backends agree only to rounding). Runs train in float32 unless --dtype says
  otherwise, whichever the backend. ``--device`` (torch only): auto takes CUDA when there
  is one and the engine is population (a single network is faster on the CPU), else the CPU.

A member's ``train_time_s`` is its share of its shard's training time: the shard's time
divided by its members. Runs are written to runs/sweeps/<name>/ (not committed); the sweep's
results go to results/<name>/ (committed):

    runs.csv        one row per run: tau (empty for no ACT), act, seed, final held-out sequence
                    error, mean and max ponder, loss, iterations, training seconds
    difficulty.csv  one row per run and difficulty: count, error, ponder (held-out set)
    curves.csv      one row per run and evaluation: iteration, sequence error, mean ponder
    sweep.json      the command, the shared options, engine, backend, wall time, machine

For the task characters, bits per character replace sequence error, and classes.csv and
passage.csv replace difficulty.csv (``act_experiments.characters``).

Extra options after the sweep's own are passed to every run unchanged (see ``python -m
scripts/train.py --help``); every run's options are checked before any worker starts, and the
results are written (each file in one step) only once every run has finished. Nothing is lost
or mixed up between runs of the script:

- A sweep that is stopped (Ctrl-C, SIGTERM, a crash) continues when run again with the same
  arguments: finished runs are kept, the others resume from their last checkpoint (a run whose
  summary, log or checkpoint is damaged counts as unfinished; one with nothing to resume from
  starts over). A shard's members checkpoint together, every --checkpoint-every seconds, at
  evaluations and on a signal, so a long sweep can be carried through many short sessions.
- runs/sweeps/<name>/sweep_config.json keeps what the sweep computes: task, taus, seeds,
  baseline, backend and every run's full config (not how it is scheduled: --engine, --workers,
  --population-size, --device and --checkpoint-every may change). Running the sweep again with
  other settings is refused with a message naming them; --force deletes its runs and starts over.
- runs/sweeps/<name>/sweep.lock is locked while a sweep runs, so two sweeps of one name cannot
  run at the same time.
"""

import csv
import fcntl
import json
import math
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
import os
import platform
import shutil
import signal
import sys
import time
from pathlib import Path

import numpy as np

from . import tasks, training
from .checkpoints import Damaged, WriteFailed, atomic_write, load_checkpoint, read_log
from .cli import OneLineParser, build_parser
from .config import data_sha256, make_config, model_sizes

ROOT = Path(__file__).resolve().parent.parent
CONFIG_FILE, LOCK_FILE = "sweep_config.json", "sweep.lock"
ENGINES, BACKENDS = ("population", "pool"), ("numpy", "torch")
# how a run is carried out rather than what it computes: free to change between two sweeps
SCHEDULING = ("out", "device", "checkpoint_every")
# options the sweep sets for each run itself
SET_BY_SWEEP = ("task", "seed", "tau", "no_act", "out", "resume", "device")
# the memory estimate of a network assumes this many ponder steps per input step (or M if less)
PONDER_GUESS = 10
# what a worker process starts with: one thread in every BLAS and OpenMP pool (the workers are
# the parallelism), and glibc's malloc told to keep 64 MiB of freed memory, which it otherwise
# hands back to the system and maps again page by page for every megabyte-sized temporary of a
# stacked product (docs/benchmarks_population.md: the NumPy population at parity's size). And
# no warning from the multiprocessing resource tracker, started with the workers, about the lock
# of a worker that was killed, which it cleans up: a sweep ends in one line
WORKER_ENV = {**{name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
              "MALLOC_TOP_PAD_": str(64 << 20), "PYTHONWARNINGS": "ignore:resource_tracker:UserWarning"}


def backend_classes(name):
    """(backend class, population class) of a backend by name."""
    if name == "torch":
        from .backends import TorchBackend
        from .populations import TorchPopulation
        return TorchBackend, TorchPopulation
    from .backends import NumpyBackend
    from .populations import NumpyPopulation
    return NumpyBackend, NumpyPopulation


def default_backend(device):
    """The faster backend for the device (docs/benchmarks_population.md): PyTorch on CUDA; NumPy on
    the CPU, where its populations of 16 took more network-steps per second than PyTorch's at
    logic's size and as many at parity's (with WORKER_ENV's malloc setting, which sweeps use)."""
    return "torch" if device.startswith("cuda") else "numpy"


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------


def parse_args(argv=None, script="sweep.py", task=None):
    """The sweep's own options and the tokens it passes on to every run.

    task: set for a script that runs one task only (characters.py); --task is then not taken.
    """
    ap = OneLineParser(prog=script, description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True, help="sweep name: results/<name>/ and runs/sweeps/<name>/")
    if task is None:
        ap.add_argument("--task", required=True, help=", ".join(tasks.ALL_TASKS))
    ap.add_argument("--taus", required=True, help="comma-separated time penalties, e.g. 1e-4,1e-3")
    ap.add_argument("--seeds", type=int, default=1 if task == "characters" else 3,
                    help="networks per tau (seeds 0..seeds-1)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the no-ACT runs")
    ap.add_argument("--engine", choices=ENGINES, default="population",
                    help="population: runs stacked into populations (default); pool: one process per run")
    ap.add_argument("--backend", choices=BACKENDS,
                    help="backend of every run (default: numpy on the CPU, torch on CUDA)")
    ap.add_argument("--population-size", type=int, metavar="K",
                    help="most members in one population (default: even shards, one per worker, within memory)")
    ap.add_argument("--workers", type=int, default=None,
                    help="shards or runs trained side by side (default: the CPU count; 1 on CUDA, one population per GPU)")
    ap.add_argument("--device", default="auto",
                    help="torch backend: auto (CUDA for populations when present, else CPU), cpu, cuda, cuda:N")
    ap.add_argument("--passage-chunks", type=int, default=None,
                    help="characters: chunks of held-out text in the ponder passage (default 4)")
    ap.add_argument("--force", action="store_true",
                    help="delete every earlier run of a sweep of this name, finished or not, and start over")
    args, passthrough = ap.parse_known_args(argv)
    if task is not None:
        args.task = task
    try:
        args.taus = [float(t) for t in args.taus.split(",") if t]
    except ValueError as e:
        ap.error(f"--taus: {e}")
    if not args.taus or args.seeds < 1 or (args.workers is not None and args.workers < 1):
        ap.error("need at least one tau, one seed and one worker")
    ids = [f"tau{t:g}" for t in args.taus]
    if len(set(ids)) < len(ids):
        ap.error(f"--taus: two values name the same runs ({', '.join(ids)}); give each tau once")
    if args.population_size is not None and args.population_size < 1:
        ap.error(f"--population-size must be at least 1, got {args.population_size}")
    if args.passage_chunks is not None and (args.task != "characters" or args.passage_chunks < 1):
        ap.error("--passage-chunks is for --task characters, and at least 1")
    if args.task == "characters" and args.passage_chunks is None:
        from .characters import PASSAGE_CHUNKS
        args.passage_chunks = PASSAGE_CHUNKS
    check_name(ap, args.name)
    args.device = resolve_device(ap, args)
    if args.backend is None:
        args.backend = default_backend(args.device)
    if args.backend == "numpy" and args.device != "cpu":
        ap.error(f"the numpy backend runs on the CPU only; --device {args.device} needs --backend torch")
    if args.workers is None:
        args.workers = 1 if args.device.startswith("cuda") else (os.cpu_count() or 1)
    return args, passthrough


def resolve_device(parser, args):
    """The device every run gets: auto becomes cuda or cpu; others are checked (one line if refused)."""
    if args.device == "auto":
        if args.backend == "numpy" or args.engine == "pool":
            return "cpu"
        import torch
        return "cuda" if torch.cuda.is_available() else "cpu"
    from .backends import TorchBackend
    try:
        TorchBackend.check_config({"device": args.device})
    except ValueError as err:
        parser.error(str(err))
    return args.device


def check_name(parser, name):
    """A sweep's name becomes a folder under runs/sweeps/ and results/: refuse anything else."""
    if name in ("", ".", "..") or "/" in name or os.sep in name:
        parser.error(f"--name must be a plain folder name, got {name!r}")


def fail(script, message, status=2):
    """End the script with one line on stderr, no traceback (status 2: options refused)."""
    print(f"{script}: error: {message}", file=sys.stderr)
    sys.exit(status)


def passthrough_options(tokens, backend="torch", script="sweep.py"):
    """['--bits', '16', '--lr', '1e-3'] -> {'bits': 16, 'lr': 0.001}, parsed by the training CLI.

    Options the sweep sets for each run itself are refused (one line, exit status 2).
    """
    backend_cls, _ = backend_classes(backend)
    shared = vars(build_parser(backend_cls, prog=script).parse_args(tokens))
    for key in SET_BY_SWEEP:
        if key in shared:
            fail(script, f"{script} sets --{key.replace('_', '-')} itself; leave it out")
    return shared


def jobs_for(args, shared):
    """(run_id, options) of every run of the sweep: each tau and seed, then each baseline seed."""
    jobs = []
    variants = [(tau, False) for tau in args.taus] + ([] if args.no_baseline else [(None, True)])
    for tau, no_act in variants:
        for seed in range(args.seeds):
            run_id = f"noact-seed{seed}" if no_act else f"tau{tau:g}-seed{seed}"
            options = dict(shared, task=args.task, seed=seed, out=str(run_folder(args.name) / run_id))
            if args.backend == "torch":
                options["device"] = args.device
            if no_act:
                options["no_act"] = True
                options.pop("max_ponder", None)     # the baseline is the cap M = 1 by definition
            else:
                options["tau"] = tau
            jobs.append((run_id, options))
    return jobs


def check_jobs(jobs, backend="torch", script="sweep.py"):
    """Every job's full run config (config.make_config), or one line and exit status 2 if any is refused."""
    backend_cls, _ = backend_classes(backend)
    try:
        return [make_config(options, backend_cls) for _, options in jobs]
    except ValueError as err:
        fail(script, str(err))


def run_folder(name):
    """Where a sweep's runs live: runs/sweeps/<name>/ (not committed)."""
    return ROOT / "runs" / "sweeps" / name


# ---------------------------------------------------------------------------------------------
# The sweep's settings and its lock
# ---------------------------------------------------------------------------------------------


def sweep_config(args, jobs, configs):
    """What a sweep computes, as stored in runs/sweeps/<name>/sweep_config.json: task, taus, seeds,
    baseline, backend, the text's sha256 (None for the synthetic tasks) and every run's config
    without the SCHEDULING options."""
    runs = {run_id: {k: v for k, v in c.items() if k not in SCHEDULING} for (run_id, _), c in zip(jobs, configs)}
    config = {"task": args.task, "taus": args.taus, "seeds": args.seeds, "baseline": not args.no_baseline,
              "backend": args.backend, "data_sha256": data_sha256(configs[0]), "runs": runs}
    return json.loads(json.dumps(config))     # as it reads back from the file


def differences(old, new):
    """The settings that differ between two sweep configs, as text: "--lr 0.001 before, 0.01 now"."""
    names = {"task": "--task", "taus": "--taus", "seeds": "--seeds", "baseline": "the baseline (--no-baseline)",
             "backend": "--backend"}
    # a sweep stored before backends could be chosen was trained by PyTorch
    old = {"backend": "torch", **old}
    diffs = [(names[k], old.get(k), new[k]) for k in names if old.get(k) != new[k]]
    changed = {}
    for run_id in sorted(new["runs"].keys() & old.get("runs", {}).keys()):
        flat_old, flat_new = (_flat(c["runs"][run_id]) for c in (old, new))
        for k in sorted(flat_old.keys() | flat_new.keys()):
            if flat_old.get(k) != flat_new.get(k):
                changed.setdefault(k, (flat_old.get(k), flat_new.get(k)))
    diffs += [("--" + k.replace("_", "-"), *values) for k, values in changed.items()]
    text = [f"{name} {_show(a)} before, {_show(b)} now" for name, a, b in diffs]
    if old.get("data_sha256") != new["data_sha256"]:
        text.append("the text's content (sha256) differs")
    return "; ".join(text)


def _flat(config):
    """A run's config with its task options at the top level (as on the command line)."""
    return {**{k: v for k, v in config.items() if k != "task_options"}, **config.get("task_options", {})}


def _show(value):
    """A setting as on the command line: taus as 1e-3,1e-2; others as JSON."""
    return ",".join(f"{v:g}" for v in value) if isinstance(value, list) else json.dumps(value)


def open_sweep(folder, config, force=False, script="sweep.py"):
    """Lock a sweep's run folder and check its stored config (or store it); returns the lock's file.

    The lock (fcntl.flock on sweep.lock) is held while the returned file stays open: use it in a
    with block around the whole sweep. Refusals are one line: a lock held by another sweep
    (status 1), or settings that differ from the stored ones (status 2; --force deletes the old
    runs). A folder from before sweep_config.json existed is taken as it is.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = open(folder / LOCK_FILE, "a")
    except OSError as err:
        fail(script, f"cannot use the run folder {folder}: {err.strerror or err}", 1)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        fail(script, f"another sweep named {folder.name!r} is running (it holds {folder / LOCK_FILE}); "
                     "wait for it to end or choose another --name", 1)
    path = folder / CONFIG_FILE
    if force:
        for entry in folder.iterdir():
            if entry.is_dir():
                shutil.rmtree(entry)
            elif entry.name != LOCK_FILE:
                entry.unlink()
    elif path.exists():
        try:
            old = json.loads(path.read_text())
            diff = differences(old, config)
        except (ValueError, AttributeError, KeyError, TypeError):
            lock.close()
            fail(script, f"{path} is damaged: pass --force to delete this sweep's runs and start over")
        if diff:
            lock.close()
            fail(script, f"{folder} holds a sweep with other settings ({diff}): run it with its own "
                         "settings, choose another --name, or pass --force to delete its runs and start over")
    try:
        write_json(path, config)
    except BaseException:
        lock.close()        # a full disk, say: the lock goes with the sweep that cannot start
        raise
    return lock


# ---------------------------------------------------------------------------------------------
# Shards: which runs train together
# ---------------------------------------------------------------------------------------------


def member_bytes(config):
    """About how many bytes one network of this config needs while it trains in a population:
    parameters, gradient and Adam's two moments, the batch, and what the backward keeps of every
    ponder step (states and gates), assuming PONDER_GUESS ponder steps per input (M if fewer).
    An estimate: a population keeps as many steps as its slowest member takes."""
    D, O, _, _ = model_sizes(config)
    H, B = config["hidden"], config["batch_size"]
    G = 4 * H if config["cell"] == "lstm" else H
    T = tasks.make_batch(config["task"], np.random.default_rng(0), 1, **config["task_options"])[0].shape[1]
    weights = (D + 1) * G + H * G + G + H + 1 + H * O + O
    steps = min(config["max_ponder"], PONDER_GUESS)
    activations = B * T * (D + O + steps * (3 * G + 4 * H))
    itemsize = 8 if config["dtype"] == "float64" else 4
    return itemsize * (4 * weights + activations)


def free_bytes(device):
    """Memory free for the shards: the GPU's free memory on CUDA, else the machine's free RAM (the
    pages no one uses now; the kernel's caches could give more)."""
    if device.startswith("cuda"):
        import torch
        return torch.cuda.mem_get_info(torch.device(device))[0]
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30            # no way to ask: assume a small machine's 8 GB


def plan_shards(todo, configs, workers, size=None, free=None, script="sweep.py"):
    """Split the unfinished runs into populations; returns a list of shards (lists of jobs).

    todo: the (run_id, options) of the runs to train, in the sweep's order (tau by tau);
    configs: their full configs. Runs share a shard only when they share the shape of the
    computation and their steps (training.SHARED_BY_POPULATION). size: the most members of a
    shard (None: even shards, one per worker). free: bytes free for the shards running at once
    (None: ask the machine). A shard that would not fit stops the sweep in one line.
    """
    groups = {}
    for job, config in zip(todo, configs):
        key = json.dumps({k: config.get(k) for k in training.SHARED_BY_POPULATION}, sort_keys=True)
        groups.setdefault(key, []).append((job, config))
    free = free_bytes(configs[0].get("device", "cpu")) if free is None else free
    side_by_side = max(1, min(workers, len(todo)))
    room = free * 0.8 / side_by_side               # leave a fifth for everything else
    shards = []
    for members in groups.values():
        need = max(member_bytes(config) for _, config in members)
        fits = int(room // need)
        if size is not None and size * need > room:
            fail(script, f"--population-size {size} needs about {size * need / 2**30:.1f} GB per shard, more "
                         f"than the {room / 2**30:.1f} GB free for each of {side_by_side} worker(s); choose a "
                         "smaller --population-size or fewer --workers")
        if fits < 1:
            fail(script, f"one network needs about {need / 2**30:.1f} GB, more than the {room / 2**30:.1f} GB "
                         f"free for each of {side_by_side} worker(s); use fewer --workers or a smaller model")
        cap = size if size is not None else min(fits, math.ceil(len(members) / side_by_side))
        count = math.ceil(len(members) / cap)
        # even shards in the sweep's order: sizes differ by at most one, and a tau's seeds stay together
        bounds = [round(i * len(members) / count) for i in range(count + 1)]
        shards += [[job for job, _ in members[a:b]] for a, b in zip(bounds, bounds[1:])]
    return shards


# ---------------------------------------------------------------------------------------------
# Workers
# ---------------------------------------------------------------------------------------------


def finished(folder):
    """Whether a run folder holds a whole finished run: its summary, log and checkpoint all read back."""
    folder = Path(folder)
    try:
        summary = json.loads((folder / "summary.json").read_text())
        read_log(folder / "log.jsonl")
        load_checkpoint(folder / "checkpoint.npz")
        return isinstance(summary, dict) and {"final_eval", "config", "iterations"} <= set(summary)
    except (OSError, ValueError):
        return False


def _prepare_run(options, backend_cls):
    """A run's (config, checkpoint): resumed from its checkpoint, or started over if there is none or
    it is damaged. Any other refusal (e.g. a run folder from an earlier sweep with other options)
    goes up and stops the sweep, and the folder is kept."""
    if (Path(options["out"]) / "checkpoint.npz").exists():
        try:
            return training.prepare(options, backend_cls, resume=True)
        except Damaged:
            pass
    shutil.rmtree(options["out"], ignore_errors=True)
    return training.prepare(options, backend_cls)


_STOPPED = []        # in a worker: the signal that stopped it; it then takes no more work


def run_shard(task):
    """Train one shard in a worker process: a population (engine population) or single runs (pool).

    task: (engine, backend name, jobs). Members that resume from different iterations train as
    one population per iteration, one after the other. Returns (the shard's run ids, None), or
    (run ids, signal number) when SIGTERM stopped the worker: its checkpoints are written, and
    it trains nothing more.
    """
    engine, backend, jobs = task
    run_ids = [run_id for run_id, _ in jobs]
    if _STOPPED:
        return run_ids, _STOPPED[0]
    if backend == "torch":
        import torch
        torch.set_num_threads(1)        # the workers provide the parallelism
        device = torch.device(jobs[0][1].get("device", "cpu"))
        if device.type == "cuda" and device.index is not None:
            torch.cuda.set_device(device)     # graphs capture on the current device: make it the runs' own
    backend_cls, population = backend_classes(backend)
    try:
        prepared = [_prepare_run(options, backend_cls) for _, options in jobs]
        if engine == "pool":
            for config, checkpoint in prepared:
                training.train(config, backend_cls, checkpoint=checkpoint, progress=False)
        else:
            by_start = {}
            for config, checkpoint in prepared:
                start = 0 if checkpoint is None else checkpoint[1]["iteration"]
                by_start.setdefault(start, []).append((config, checkpoint))
            for start in sorted(by_start):
                configs, checkpoints = zip(*by_start[start])
                training.train_population(configs, backend_cls, population, checkpoints=checkpoints,
                                          progress=False)
    except training.Stopped as stop:
        _STOPPED.append(stop.signum)    # the checkpoints are written
        return run_ids, stop.signum
    return run_ids, None


def _ignore_sigint():
    # Ctrl-C reaches every process of the terminal: the workers leave it to the parent, which
    # stops them with SIGTERM (they finish their iteration and write a checkpoint)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _sigterm_to_interrupt(signum, frame):
    # a SIGTERM to the sweep (a job scheduler, `kill`) ends it the way Ctrl-C does
    raise KeyboardInterrupt(signum)


def _stop_workers(pool, futures):
    """Ask every worker to stop (SIGTERM: each finishes its iteration and checkpoints) and wait
    until they have exited."""
    for future in futures:
        future.cancel()
    processes = list((getattr(pool, "_processes", None) or {}).values())    # the executor's workers
    for process in processes:
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)    # a stopped worker takes no more work: all exit


def run_shards(shards, workers, engine, backend, script="sweep.py"):
    """Train the shards in worker processes; returns how many runs were trained.

    Ctrl-C or SIGTERM ends the sweep in one line (exit 130 or 143): each worker finishes its
    iteration and writes its checkpoints, so the same command continues where it stopped. A
    worker stopped or killed on its own ends the sweep in one line too, never a hang.
    """
    if not shards:
        return 0
    runs = sum(len(s) for s in shards)
    start = time.perf_counter()
    previous = signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    saved_env = {k: os.environ.get(k) for k in WORKER_ENV}
    os.environ.update(WORKER_ENV)       # read by the workers' BLAS and malloc when they start
    try:
        ctx = mp.get_context("spawn")    # fresh interpreters: no shared thread pools
        with ProcessPoolExecutor(min(workers, len(shards)), mp_context=ctx, initializer=_ignore_sigint) as pool:
            futures = [pool.submit(run_shard, (engine, backend, shard)) for shard in shards]
            try:
                done = 0
                for future in as_completed(futures):
                    run_ids, signum = future.result()
                    if signum is not None:
                        raise KeyboardInterrupt(signum)      # a worker stopped by a signal of its own
                    done += len(run_ids)
                    what = run_ids[0] if len(run_ids) == 1 else f"{len(run_ids)} runs ({run_ids[0]} ... {run_ids[-1]})"
                    print(f"[{done}/{runs}] {what} done ({time.perf_counter() - start:.0f} s)", flush=True)
            except BaseException:
                _stop_workers(pool, futures)
                raise
    except BrokenProcessPool:
        fail(script, "a worker process died (killed, or out of memory?); run the same command again to "
                     "continue from the last checkpoints", 1)
    except (training.Diverged, ValueError) as err:
        # a run that diverged, or a run folder that cannot be continued: one line, the other runs'
        # checkpoints stay
        fail(script, f"a run stopped the sweep: {err}", 1)
    except WriteFailed as err:
        # a full disk, a read-only file system, no permission: the file and the run's last intact
        # checkpoint, from which the same command continues
        fail(script, f"a run stopped the sweep: {err}; make room or fix the permissions, then run the same "
                     "command again to continue", 1)
    except (RuntimeError, OSError, MemoryError) as err:
        # e.g. out of memory on the device, or a full disk: the checkpoints written so far stand
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        fail(script, f"a worker failed ({type(err).__name__}: {first}); fix the cause and run the same "
                     "command again to continue (or use a smaller --population-size)", 1)
    except KeyboardInterrupt as err:
        # every worker got SIGTERM, finished its iteration and checkpointed
        signum = err.args[0] if err.args else signal.SIGINT
        fail(script, "interrupted: run the same command again to continue (finished runs are kept, "
                     "the others resume from their last checkpoint)", 128 + signum)
    finally:
        signal.signal(signal.SIGTERM, previous)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return runs


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


def write_csv(path, rows, columns):
    """Write rows (dicts) as a CSV file with these columns, in one step (None as an empty cell)."""
    with atomic_write(path) as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})


def write_json(path, data):
    """Write data as indented JSON in one step."""
    with atomic_write(path) as f:
        f.write(json.dumps(data, indent=2) + "\n")


def run_record(run_id, folder, metric):
    """One finished run as data: (row of runs.csv, rows of curves.csv, final evaluation).

    metric: the error measure the run reports ("sequence_error"; "bits_per_char" for text).
    """
    s = json.loads((Path(folder) / "summary.json").read_text())
    cfg, ev = s["config"], s["final_eval"]
    act = not cfg["no_act"]
    row = {"run": run_id, "tau": cfg["tau"] if act else None, "act": int(act), "seed": cfg["seed"],
           metric: ev[metric], "mean_ponder": ev["mean_ponder"], "max_ponder": ev["max_ponder"],
           "loss": ev["loss"], "iterations": s["iterations"], "train_time_s": round(s["train_time_s"], 2)}
    curves = [{"run": run_id, "iteration": r["iteration"], metric: r[metric], "mean_ponder": r["mean_ponder"]}
              for r in read_log(Path(folder) / "log.jsonl") if r["kind"] == "eval"]
    return row, curves, ev


def collect(jobs, out_dir):
    """Turn the runs' summaries and logs into the three CSV files; returns the rows of runs.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    runs, difficulty, curves = [], [], []
    for run_id, options in jobs:
        row, run_curves, ev = run_record(run_id, options["out"], "sequence_error")
        runs.append(row)
        curves += run_curves
        difficulty += [{"run": run_id, **d} for d in ev["by_difficulty"]]
    write_csv(out_dir / "runs.csv", runs, list(runs[0]))
    write_csv(out_dir / "difficulty.csv", difficulty, ["run", "difficulty", "count", "error", "ponder"])
    write_csv(out_dir / "curves.csv", curves, ["run", "iteration", "sequence_error", "mean_ponder"])
    return runs


def machine():
    """The machine a sweep ran on, for sweep.json."""
    line = f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}"
    if "torch" in sys.modules:
        import torch
        line += f", torch {torch.__version__}"
        if torch.cuda.is_available():
            line += f", {torch.cuda.get_device_name(0)}"
    return line


def main(argv=None, script="sweep.py", task=None):
    """Entry point of scripts/sweep.py (and scripts/characters.py, with task="characters").

    Every failure ends in one line on stderr: 2 for options refused, 1 for a run or a file that
    stops the sweep, 130 or 143 after SIGINT or SIGTERM (see run_shards).
    """
    try:
        _sweep(argv, script, task)
    except WriteFailed as err:
        # the sweep's own files, its settings and its results: each is replaced in one step, so
        # the old one stands, and the runs are kept
        fail(script, f"{err}; make room or fix the permissions, then run the same command again "
                     "(finished runs are kept)", 1)


def _sweep(argv, script, task):
    """The sweep of main: check, train what is missing, write the results."""
    args, tokens = parse_args(argv, script, task)
    shared = passthrough_options(tokens, args.backend, script)
    if args.task != "characters":
        shared.setdefault("eval_size", 1000)
    # float32 whichever the backend: the speed a sweep needs, and one dtype for both backends
    shared.setdefault("dtype", "float32")
    jobs = jobs_for(args, shared)
    configs = check_jobs(jobs, args.backend, script)
    with open_sweep(run_folder(args.name), sweep_config(args, jobs, configs), args.force, script):
        out_dir = ROOT / "results" / args.name
        todo = [(job, config) for job, config in zip(jobs, configs) if not finished(job[1]["out"])]
        if args.engine == "pool":
            shards = [[job] for job, _ in todo]
        else:
            shards = plan_shards([j for j, _ in todo], [c for _, c in todo], args.workers,
                                 args.population_size, script=script) if todo else []
        sizes = sorted({len(s) for s in shards}) or [0]
        members = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
        plan = (f"{len(shards)} population(s) of {members}" if args.engine == "population"
                else f"{len(shards)} process(es)")
        print(f"{len(jobs)} runs of {args.task} ({len(todo)} to train: {plan}), {args.backend} on {args.device}, "
              f"{min(args.workers, max(1, len(shards)))} worker(s) -> {out_dir.relative_to(ROOT)}", flush=True)
        start = time.perf_counter()
        trained = run_shards(shards, args.workers, args.engine, args.backend, script)
        train_wall = time.perf_counter() - start
        if args.task == "characters":
            from . import characters
            import torch
            torch.set_num_threads(min(4, os.cpu_count() or 1))
            runs = characters.collect(jobs, out_dir, args.passage_chunks)
        else:
            runs = collect(jobs, out_dir)
        analysis = time.perf_counter() - start - train_wall
        old = out_dir / "sweep.json"
        if not trained and old.exists():
            # nothing was trained this time (only the results were written again): keep the times
            before = json.loads(old.read_text())
            train_wall = before.get("train_wall_time_s", before.get("wall_time_s", train_wall))
        meta = {"command": f"python scripts/{script} " + " ".join(argv if argv is not None else sys.argv[1:]),
                "task": args.task, "taus": args.taus, "seeds": args.seeds, "baseline": not args.no_baseline,
                "engine": args.engine, "backend": args.backend, "device": args.device,
                "shared_options": shared, "runs": len(runs), "workers": args.workers,
                "train_wall_time_s": round(train_wall, 1), "wall_time_s": round(train_wall + analysis, 1),
                "machine": machine()}
        if args.task == "characters":
            from . import characters
            meta.update(passage_chunks=args.passage_chunks, corpus=characters.corpus_facts(shared.get("data")),
                        analysis_time_s=round(analysis, 1))
        write_json(out_dir / "sweep.json", meta)
    if args.task == "characters":
        for r in runs:
            tau = "no ACT" if not r["act"] else f"tau {r['tau']:g}"
            print(f"{tau:>12s} seed {r['seed']}: {r['bits_per_char']:.3f} bits/char, mean ponder {r['mean_ponder']:.2f}")
    print(f"{len(runs)} runs in {train_wall + analysis:.0f} s; results in {out_dir.relative_to(ROOT)}")
