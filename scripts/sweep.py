"""Run a tau sweep of ACT training runs (plus the no-ACT baseline) and save its results as data.

    python scripts/sweep.py --name parity16 --task parity --bits 16 --hidden 128 --lr 1e-3 \\
        --iterations 3000 --taus 1e-4,1e-3,1e-2,1e-1 --seeds 3 --workers 2

Every (tau, seed) pair, and each seed with --no-act, is one call of the PyTorch training loop
(act_torch.train), run in a pool of worker processes with one thread each. Runs are written to
runs/sweeps/<name>/ (not committed); the sweep's results go to results/<name>/ (committed):

    runs.csv        one row per run: tau (empty for no ACT), act, seed, final held-out sequence
                    error, mean and max ponder, loss, iterations, training seconds
    difficulty.csv  one row per run and difficulty: count, error, ponder (held-out set)
    curves.csv      one row per run and evaluation: iteration, sequence error, mean ponder
    sweep.json      the command, the shared options, wall time and the machine it ran on

Extra options after the sweep's own are passed to every run unchanged (see
``python -m act_torch.train --help``); every run's options are checked before any worker starts,
and the results are written (each file in one step) only once every run has finished.

Nothing is lost or mixed up between runs of the script:

- A sweep that is stopped (Ctrl-C, SIGTERM, a crash) continues when run again with the same
  arguments: finished runs are kept, the others resume from their last checkpoint (a run whose
  summary, log or checkpoint is damaged counts as unfinished; one with nothing to resume from
  starts over).
- runs/sweeps/<name>/sweep_config.json keeps what the sweep computes: the task, taus, seeds,
  baseline and every run's full config (not how it is scheduled: --workers, --device and
  --checkpoint-every may change). Running the sweep again with other settings is refused with
  a message naming them; --force deletes the sweep's old runs and starts over.
- runs/sweeps/<name>/sweep.lock is locked while a sweep runs, so two sweeps of one name cannot
  run at the same time.
"""

import csv
import fcntl
import json
import multiprocessing as mp
import os
import platform
import shutil
import signal
import sys
import time
from pathlib import Path

from act_experiments import training

ROOT = Path(__file__).resolve().parent.parent
CONFIG_FILE, LOCK_FILE = "sweep_config.json", "sweep.lock"
# how a run is carried out rather than what it computes: free to change between two sweeps
SCHEDULING = ("out", "device", "checkpoint_every")
# options the sweep sets for each run itself
SET_BY_SWEEP = ("task", "seed", "tau", "no_act", "out", "resume", "device")


def parse_args(argv=None):
    ap = training.OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True, help="sweep name: results/<name>/ and runs/sweeps/<name>/")
    ap.add_argument("--task", required=True, help="parity, logic, addition or sort")
    ap.add_argument("--taus", required=True, help="comma-separated time penalties, e.g. 1e-4,1e-3")
    ap.add_argument("--seeds", type=int, default=3, help="networks per tau (seeds 0..seeds-1)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the no-ACT runs")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="parallel runs")
    ap.add_argument("--device", default="cpu", help="device for every run (cpu is fastest for small nets)")
    ap.add_argument("--force", action="store_true",
                    help="delete every earlier run of a sweep of this name, finished or not, and start over")
    args, passthrough = ap.parse_known_args(argv)
    try:
        args.taus = [float(t) for t in args.taus.split(",") if t]
    except ValueError as e:
        ap.error(f"--taus: {e}")
    if not args.taus or args.seeds < 1 or args.workers < 1:
        ap.error("need at least one tau, one seed and one worker")
    check_name(ap, args.name)
    return args, passthrough


def check_name(parser, name):
    """A sweep's name becomes a folder under runs/sweeps/ and results/: refuse anything else."""
    if name in ("", ".", "..") or "/" in name or os.sep in name:
        parser.error(f"--name must be a plain folder name, got {name!r}")


def fail(script, message, status=2):
    """End the script with one line on stderr, no traceback (status 2: options refused)."""
    print(f"{script}: error: {message}", file=sys.stderr)
    sys.exit(status)


def passthrough_options(tokens, script="sweep.py"):
    """['--bits', '16', '--lr', '1e-3'] -> {'bits': 16, 'lr': 0.001}, parsed by the training CLI.

    Options the sweep sets for each run itself are refused (one line, exit status 2).
    """
    from act_torch.train import TorchBackend
    shared = vars(training.build_parser(TorchBackend, prog=script).parse_args(tokens))
    for key in SET_BY_SWEEP:
        if key in shared:
            fail(script, f"{script} sets --{key.replace('_', '-')} itself; leave it out")
    return shared


def check_jobs(jobs, script="sweep.py"):
    """Every job's full run config (training.make_config), or one line and exit status 2 if any is refused."""
    from act_torch.train import TorchBackend
    try:
        return [training.make_config(options, TorchBackend) for _, options in jobs]
    except ValueError as err:
        fail(script, str(err))


def finished(folder):
    """Whether a run folder holds a whole finished run: its summary, log and checkpoint all read back."""
    folder = Path(folder)
    try:
        summary = json.loads((folder / "summary.json").read_text())
        training.read_log(folder / "log.jsonl")
        training.load_checkpoint(folder / "checkpoint.npz")
        return isinstance(summary, dict) and {"final_eval", "config", "iterations"} <= set(summary)
    except (OSError, ValueError):
        return False


def run_one(job):
    """One training run in a worker process: resumed from its checkpoint, or started over if there is
    none or it is damaged. Returns (run_id, summary path)."""
    import torch
    torch.set_num_threads(1)        # the pool provides the parallelism
    from act_torch.train import TorchBackend
    run_id, options = job
    try:
        config = None
        if (Path(options["out"]) / "checkpoint.npz").exists():
            try:
                # any other refusal (e.g. a run folder from an earlier sweep with other options)
                # goes up and stops the sweep, and the folder is kept
                config, checkpoint = training.prepare(options, TorchBackend, resume=True)
            except training.Damaged:
                pass
        if config is None:
            # nothing to resume, or a damaged checkpoint or log: start the run over
            shutil.rmtree(options["out"], ignore_errors=True)
            config, checkpoint = training.prepare(options, TorchBackend)
        training.train(config, TorchBackend, checkpoint=checkpoint, progress=False)
    except training.Stopped as stop:
        sys.exit(stop.exit_code)    # the checkpoint is written: end this worker quietly
    return run_id, Path(options["out"]) / "summary.json"


def _ignore_sigint():
    # Ctrl-C reaches every process of the terminal: the workers leave it to the parent, which
    # stops them with SIGTERM (they finish their iteration and write a checkpoint)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _sigterm_to_interrupt(signum, frame):
    # a SIGTERM to the sweep (a job scheduler, `kill`) ends it the way Ctrl-C does
    raise KeyboardInterrupt(signum)


def run_pool(jobs, workers, script="sweep.py"):
    """Train the unfinished jobs in a pool of worker processes; returns how many were trained.

    Ctrl-C or SIGTERM ends the sweep in one line (exit 130 or 143): each worker finishes its
    iteration and writes a checkpoint, so the same command continues where it stopped.
    """
    todo = [job for job in jobs if not finished(job[1]["out"])]
    if not todo:
        return 0
    start = time.perf_counter()
    previous = signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    try:
        ctx = mp.get_context("spawn")    # fresh interpreters: no shared torch thread pools
        with ctx.Pool(min(workers, len(todo)), initializer=_ignore_sigint) as pool:
            for i, (run_id, _) in enumerate(pool.imap_unordered(run_one, todo), 1):
                print(f"[{i}/{len(todo)}] {run_id} done ({time.perf_counter() - start:.0f} s)", flush=True)
    except (training.Diverged, ValueError) as err:
        # a run that diverged, or a run folder that cannot be continued: one line, the other runs'
        # checkpoints stay
        fail(script, f"a run stopped the sweep: {err}", 1)
    except KeyboardInterrupt as err:
        # leaving the with block terminated the pool: each worker got SIGTERM and checkpointed
        signum = err.args[0] if err.args else signal.SIGINT
        fail(script, "interrupted: run the same command again to continue (finished runs are kept, "
                     "the others resume from their last checkpoint)", 128 + signum)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return len(todo)


def sweep_config(args, jobs, configs):
    """What a sweep computes, as stored in runs/sweeps/<name>/sweep_config.json: task, taus, seeds,
    baseline, the text's sha256 (None for the synthetic tasks) and every run's config without
    the SCHEDULING options."""
    runs = {run_id: {k: v for k, v in c.items() if k not in SCHEDULING} for (run_id, _), c in zip(jobs, configs)}
    config = {"task": args.task, "taus": args.taus, "seeds": args.seeds, "baseline": not args.no_baseline,
              "data_sha256": training.data_sha256(configs[0]), "runs": runs}
    return json.loads(json.dumps(config))     # as it reads back from the file


def differences(old, new):
    """The settings that differ between two sweep configs, as text: "--lr 0.001 before, 0.01 now"."""
    names = {"task": "--task", "taus": "--taus", "seeds": "--seeds", "baseline": "the baseline (--no-baseline)"}
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
    write_json(path, config)
    return lock


def run_folder(name):
    """Where a sweep's runs live: runs/sweeps/<name>/ (not committed)."""
    return ROOT / "runs" / "sweeps" / name


def jobs_for(args, shared):
    """(run_id, options) of every run of the sweep: each tau and seed, then each baseline seed."""
    jobs = []
    variants = [(tau, False) for tau in args.taus] + ([] if args.no_baseline else [(None, True)])
    for tau, no_act in variants:
        for seed in range(args.seeds):
            run_id = f"noact-seed{seed}" if no_act else f"tau{tau:g}-seed{seed}"
            options = dict(shared, task=args.task, seed=seed, device=args.device,
                           out=str(run_folder(args.name) / run_id))
            if no_act:
                options["no_act"] = True
                options.pop("max_ponder", None)     # the baseline is the cap M = 1 by definition
            else:
                options["tau"] = tau
            jobs.append((run_id, options))
    return jobs


def write_csv(path, rows, columns):
    """Write rows (dicts) as a CSV file with these columns, in one step (None as an empty cell)."""
    with training.atomic_write(path) as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})


def write_json(path, data):
    """Write data as indented JSON in one step."""
    with training.atomic_write(path) as f:
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
              for r in training.read_log(Path(folder) / "log.jsonl") if r["kind"] == "eval"]
    return row, curves, ev


def collect(jobs, out_dir):
    """Turn the runs' summaries and logs into the three CSV files."""
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


def main(argv=None):
    args, tokens = parse_args(argv)
    shared = passthrough_options(tokens)
    shared.setdefault("eval_size", 1000)
    jobs = jobs_for(args, shared)
    configs = check_jobs(jobs)
    with open_sweep(run_folder(args.name), sweep_config(args, jobs, configs), args.force):
        out_dir = ROOT / "results" / args.name
        print(f"{len(jobs)} runs of {args.task} on {args.workers} workers -> {out_dir.relative_to(ROOT)}")
        start = time.perf_counter()
        run_pool(jobs, args.workers)
        wall = time.perf_counter() - start
        runs = collect(jobs, out_dir)
        meta = {"command": "python scripts/sweep.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                "task": args.task, "taus": args.taus, "seeds": args.seeds, "baseline": not args.no_baseline,
                "shared_options": shared, "runs": len(runs), "workers": args.workers,
                "wall_time_s": round(wall, 1),
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} "
                           f"{platform.python_version()}"}
        write_json(out_dir / "sweep.json", meta)
    print(f"{len(runs)} runs in {wall:.0f} s; results in {out_dir.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
