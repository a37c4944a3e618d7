"""What unfinished sweeps have learned so far, read from their runs' logs, as files to commit (scripts/sweep_progress.py).

    python scripts/sweep_progress.py parity_paper_lr3e-4 parity_paper_lr1e-3 parity_paper_lr3e-3 \
        --out results/parity_paper_calibration [--window 1000]

A sweep writes results/<name>/ only when every run has finished (scripts/sweep.py). A sweep
stopped long before that, such as a first stretch of a long GPU sweep, still has each run's
log in runs/sweeps/<name>/<run>/log.jsonl. This script turns those logs into

    <out>/progress.csv   per sweep, run and window of --window iterations: the mean training
                         sequence error and ponder of the batches logged in it (kind "train"),
                         and the held-out evaluations (kind "eval") at their own iteration
    <out>/progress.json  per sweep: the learning rate, the iterations asked for and reached

and prints, per sweep and τ, the latest window's mean training error. Nothing is trained.
"""

import json
import sys
from pathlib import Path

from act_experiments.cli import OneLineParser, checked
from act_experiments.sweeps.launch import run_folder
from act_experiments.tables import write_csv, write_json
from act_experiments.training.checkpoints import read_log
from act_experiments.training.config import uses_act
from act_numpy.checks import check_int


DESCRIPTION = "What unfinished sweeps have learned so far, read from their runs' logs, as files to commit."
COLUMNS = ["sweep", "run", "tau", "act", "seed", "lr", "kind", "iteration", "batches",
           "sequence_error", "mean_ponder"]


def run_rows(sweep, run_id, config, log, window):
    """progress.csv's rows of one run: one per window of training batches, one per evaluation."""
    act = uses_act(config)
    same = dict(sweep=sweep, run=run_id, tau=config["tau"] if act else None,
                act=int(act), seed=config["seed"], lr=config["lr"])
    rows, windows = [], {}
    for record in log:
        if record["kind"] == "eval":
            rows.append(dict(same, kind="eval", iteration=record["iteration"], batches=None,
                             sequence_error=record["sequence_error"], mean_ponder=record["mean_ponder"]))
        elif record["kind"] == "train":
            # window w holds the batches logged at iterations (w - window, w]
            end = -(-record["iteration"] // window) * window
            windows.setdefault(end, []).append(record)
    for end, batch in sorted(windows.items()):
        rows.append(dict(same, kind="train", iteration=end, batches=len(batch),
                         sequence_error=sum(r["sequence_error"] for r in batch) / len(batch),
                         mean_ponder=sum(r["mean_ponder"] for r in batch) / len(batch)))
    return rows


def sweep_rows(name, window, root=None):
    """(progress rows, summary) of one sweep's folder under <root>/runs/sweeps/ (root: the checkout
    by default)."""
    folder = run_folder(name, root)
    config_path = folder / "sweep_config.json"
    if not config_path.is_file():
        raise ValueError(f"{config_path} not found: is {name!r} a sweep that has started?")
    configs = json.loads(config_path.read_text())["runs"]
    rows, reached = [], []
    for run_id, config in configs.items():
        log_path = folder / run_id / "log.jsonl"
        log = read_log(log_path) if log_path.is_file() else []
        rows += run_rows(name, run_id, config, log, window)
        reached.append(max((r["iteration"] for r in log), default=0))
    first = next(iter(configs.values()))
    summary = dict(runs=len(configs), lr=first["lr"], iterations=first["iterations"],
                   reached_min=min(reached), reached_max=max(reached))
    return rows, summary


def main(argv=None, root=None):
    """Entry point of scripts/sweep_progress.py; root: the folder whose runs/sweeps/ holds the sweeps,
    if not the checkout (a Path). --out is taken as given, not under root."""
    ap = OneLineParser(description=DESCRIPTION)
    ap.add_argument("sweeps", nargs="+", help="names under runs/sweeps/")
    ap.add_argument("--out", required=True, help="folder for progress.csv and progress.json")
    ap.add_argument("--window", type=int, default=1000, help="iterations per training window (default 1000)")
    args = ap.parse_args(argv)
    checked(ap, check_int, "--window", args.window)
    rows, summaries = [], {}
    try:
        for name in args.sweeps:
            sweep, summaries[name] = sweep_rows(name, args.window, root)
            rows += sweep
    except (ValueError, OSError) as err:
        ap.error(str(err))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "progress.csv", rows, COLUMNS)
    write_json(out / "progress.json", summaries)
    for name, s in summaries.items():
        print(f"{name}: lr {s['lr']:g}, {s['runs']} runs at {s['reached_min']}-{s['reached_max']} "
              f"of {s['iterations']} iterations")
        last = {}
        for r in rows:
            if r["sweep"] == name and r["kind"] == "train":
                last.setdefault(r["tau"], {})[r["run"]] = r
        for tau, runs in last.items():
            errors = [r["sequence_error"] for r in runs.values()]
            label = "no ACT" if tau is None else f"tau {tau:g}"
            print(f"  {label:>12}: latest window's training error {sum(errors) / len(errors):.3f} "
                  f"({len(errors)} runs)")
    print(f"wrote {out / 'progress.csv'} and {out / 'progress.json'}")


if __name__ == "__main__":
    sys.exit(main())
