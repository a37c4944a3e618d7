"""A sweep's runs at work: which runs train together (shards), and the worker processes that train them.

``plan_shards`` splits the unfinished runs of a sweep into populations of runs that share the
shape of the computation, within the memory free for them; ``run_shards`` trains the shards in
worker processes (``run_shard`` in each), and ends the sweep in one line when a worker stops, is
killed, or cannot write a file. How a sweep uses them: ``act_experiments.sweeps.launch``.
"""

import functools
import json
import math
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
import os
import shutil
import signal
import time
from pathlib import Path

import numpy as np

from act_experiments.cli import fail
from act_experiments.data import tasks
from act_experiments.training import loop
from act_experiments.training.checkpoints import Damaged, WriteFailed, load_checkpoint, read_log
from act_experiments.training.config import model_sizes

# seconds between a worker's progress lines (iterations, rate, time left): a sweep's output, read
# in a log without a terminal, shows every shard moving at least once a minute
REPORT_EVERY = 60.0
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


def backend_classes(name, kernels=False):
    """(backend class, population class) of a backend by name; kernels (torch only): the population
    class builds its populations on the Triton kernels, Population(kernels=True)."""
    if name == "torch":
        from act_experiments.training.backends import TorchBackend
        from act_experiments.training.populations import TorchPopulation
        return TorchBackend, functools.partial(TorchPopulation, kernels=True) if kernels else TorchPopulation
    from act_experiments.training.backends import NumpyBackend
    from act_experiments.training.populations import NumpyPopulation
    return NumpyBackend, NumpyPopulation




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
    computation and their steps (loop.SHARED_BY_POPULATION). size: the most members of a
    shard (None: even shards, one per worker). free: bytes free for the shards running at once
    (None: ask the machine). A shard that would not fit stops the sweep in one line.
    """
    groups = {}
    for job, config in zip(todo, configs):
        key = json.dumps({k: config.get(k) for k in loop.SHARED_BY_POPULATION}, sort_keys=True)
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
            return loop.prepare(options, backend_cls, resume=True)
        except Damaged:
            pass
    shutil.rmtree(options["out"], ignore_errors=True)
    return loop.prepare(options, backend_cls)


_STOPPED = []        # in a worker: the signal that stopped it; it then takes no more work


def run_shard(task):
    """Train one shard in a worker process: a population (engine population) or single runs (pool).

    task: (engine, backend name, jobs, kernels), kernels as backend_classes takes it. Members
    that resume from different iterations train as one population per iteration, one after the
    other. Returns (the shard's run ids, None), or (run ids, signal number) when SIGTERM stopped
    the worker: its checkpoints are written, and it trains nothing more.
    """
    engine, backend, jobs, kernels = task
    run_ids = [run_id for run_id, _ in jobs]
    if _STOPPED:
        return run_ids, _STOPPED[0]
    if backend == "torch":
        import torch
        torch.set_num_threads(1)        # the workers provide the parallelism
        device = torch.device(jobs[0][1].get("device", "cpu"))
        if device.type == "cuda" and device.index is not None:
            torch.cuda.set_device(device)     # graphs capture on the current device: make it the runs' own
    backend_cls, population = backend_classes(backend, kernels)
    try:
        prepared = [_prepare_run(options, backend_cls) for _, options in jobs]
        if engine == "pool":
            for config, checkpoint in prepared:
                loop.train(config, backend_cls, checkpoint=checkpoint, progress=False,
                               report_every=REPORT_EVERY)
        else:
            by_start = {}
            for config, checkpoint in prepared:
                start = 0 if checkpoint is None else checkpoint[1]["iteration"]
                by_start.setdefault(start, []).append((config, checkpoint))
            for start in sorted(by_start):
                configs, checkpoints = zip(*by_start[start])
                loop.train_population(configs, backend_cls, population, checkpoints=checkpoints,
                                          progress=False, report_every=REPORT_EVERY)
    except loop.Stopped as stop:
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


def run_shards(shards, workers, engine, backend, script="sweep.py", kernels=False):
    """Train the shards in worker processes; returns how many runs were trained. kernels: the
    populations on the Triton kernels (backend_classes).

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
            futures = [pool.submit(run_shard, (engine, backend, shard, kernels)) for shard in shards]
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
    except (loop.Diverged, ValueError) as err:
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
