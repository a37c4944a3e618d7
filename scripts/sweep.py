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
``python -m act_torch.train --help``). A sweep that is interrupted can be run again with the
same arguments: finished runs (those with a summary.json) are kept, the rest are started over.
"""

import argparse
import csv
import json
import multiprocessing as mp
import os
import platform
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True, help="sweep name: results/<name>/ and runs/sweeps/<name>/")
    ap.add_argument("--task", required=True, help="parity, logic, addition or sort")
    ap.add_argument("--taus", required=True, help="comma-separated time penalties, e.g. 1e-4,1e-3")
    ap.add_argument("--seeds", type=int, default=3, help="networks per tau (seeds 0..seeds-1)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the no-ACT runs")
    ap.add_argument("--workers", type=int, default=os.cpu_count(), help="parallel runs")
    ap.add_argument("--device", default="cpu", help="device for every run (cpu is fastest for small nets)")
    args, passthrough = ap.parse_known_args(argv)
    try:
        args.taus = [float(t) for t in args.taus.split(",") if t]
    except ValueError as e:
        ap.error(f"--taus: {e}")
    if not args.taus or args.seeds < 1 or args.workers < 1:
        ap.error("need at least one tau, one seed and one worker")
    return args, passthrough


def passthrough_options(tokens):
    """['--bits', '16', '--lr', '1e-3'] -> {'bits': 16, 'lr': 0.001}, parsed by the training CLI."""
    from act_torch.train import TorchBackend
    from act_numpy.training import build_parser
    return vars(build_parser(TorchBackend).parse_args(tokens))


def run_one(job):
    """One training run in a worker process; returns (run_id, summary path)."""
    import torch
    torch.set_num_threads(1)        # the pool provides the parallelism
    from act_numpy.training import run
    from act_torch.train import TorchBackend
    run_id, options = job
    summary = Path(options["out"]) / "summary.json"
    if not summary.exists():
        shutil.rmtree(options["out"], ignore_errors=True)
        run(options, TorchBackend, progress=False)
    return run_id, summary


def jobs_for(args, shared):
    jobs = []
    variants = [(tau, False) for tau in args.taus] + ([] if args.no_baseline else [(None, True)])
    for tau, no_act in variants:
        for seed in range(args.seeds):
            run_id = f"noact-seed{seed}" if no_act else f"tau{tau:g}-seed{seed}"
            options = dict(shared, task=args.task, seed=seed, device=args.device,
                           out=str(ROOT / "runs" / "sweeps" / args.name / run_id))
            if no_act:
                options["no_act"] = True
                options.pop("max_ponder", None)     # the baseline is the cap M = 1 by definition
            else:
                options["tau"] = tau
            jobs.append((run_id, options))
    return jobs


def write_csv(path, rows, columns):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})


def run_record(run_id, folder, metric):
    """One finished run as data: (row of runs.csv, rows of curves.csv, final evaluation).

    metric: the error measure the run reports ("sequence_error"; "bits_per_char" for text).
    """
    from act_numpy.training import read_log
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
    """Turn the runs' summaries and logs into the three CSV files."""
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
    for key in ("task", "seed", "tau", "no_act", "out", "resume", "device"):
        if key in shared:
            sys.exit(f"sweep.py sets --{key.replace('_', '-')} itself; leave it out")
    shared.setdefault("eval_size", 1000)
    jobs = jobs_for(args, shared)
    out_dir = ROOT / "results" / args.name
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"{len(jobs)} runs of {args.task} on {args.workers} workers -> {out_dir.relative_to(ROOT)}")
    start = time.perf_counter()
    ctx = mp.get_context("spawn")    # fresh interpreters: no shared torch thread pools
    with ctx.Pool(args.workers) as pool:
        for i, (run_id, _) in enumerate(pool.imap_unordered(run_one, jobs), 1):
            print(f"[{i}/{len(jobs)}] {run_id} done ({time.perf_counter() - start:.0f} s)", flush=True)
    wall = time.perf_counter() - start
    runs = collect(jobs, out_dir)
    meta = {"command": "python scripts/sweep.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "task": args.task, "taus": args.taus, "seeds": args.seeds, "baseline": not args.no_baseline,
            "shared_options": shared, "runs": len(runs), "workers": args.workers, "wall_time_s": round(wall, 1),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} "
                       f"{platform.python_version()}"}
    (out_dir / "sweep.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{len(runs)} runs in {wall:.0f} s; results in {out_dir.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
