"""What a sweep commits: its runs' summaries and logs as CSV files and JSON, each written in one step.

    runs.csv        one row per run (``run_record``); a sequence-error sweep's last column is
                    iterations_to_98 (``iterations_to_98``), empty when never reached
    difficulty.csv  one row per run and difficulty: count, error, mean ρ and mean N
    N_counts.csv    one row per run and number of updates N: how many held-out steps took N
    curves.csv      one row per run and evaluation
    weights.npz     with --save-weights: the final parameters of every ACT run, float16
    sweep.json      the command, the settings, the wall time and the machine (``machine``)

The characters task writes its own files beside these (``act_experiments.sweeps.per_byte``).
"""

import csv
import io
import os
import platform
import sys
from pathlib import Path

import numpy as np

from act_experiments.cli import OneLineParser
from act_experiments.files import atomic_write
from act_experiments.training.checkpoints import load_checkpoint, read_log, read_summary, upgrade_record
from act_experiments.training.config import upgrade, uses_act
from act_experiments.tables import read_csv, write_csv

# Fojo et al. (2018) count a task as solved once 98% of the held-out sequences come out right.
SOLVED_ERROR = 0.02


def iterations_to_98(evals):
    """The iteration of the first of ``evals`` (a run's evaluation records in order, each with
    "iteration" and "sequence_error") whose sequence error is at most SOLVED_ERROR, or None when
    none is: the iterations to solve, as Fojo et al. measure them."""
    return next((r["iteration"] for r in evals if r["sequence_error"] <= SOLVED_ERROR), None)


def run_record(run_id, folder, metric, random_of=None):
    """One finished run as data: (row of runs.csv, rows of curves.csv, final evaluation).

    metric: the error measure the run reports ("sequence_error"; "bits_per_char" for text).
    random_of: for a random-schedule run, the τ of the ACT runs whose numbers of updates it
    draws. The measured mean N and mean R are empty for runs written before they were measured.
    A sequence-error run's row ends with its iterations_to_98, from the evaluations of its log.
    """
    s = read_summary(Path(folder) / "summary.json")
    cfg, ev = upgrade(s["config"]), s["final_eval"]
    act = uses_act(cfg)
    row = {"run": run_id, "tau": cfg["tau"] if act else None, "act": int(act), "seed": cfg["seed"],
           metric: ev[metric], "mean_ponder": ev["mean_ponder"], "max_N": ev["max_N"],
           "loss": ev["loss"], "iterations": s["iterations"], "train_time_s": round(s["train_time_s"], 2),
           "fixed_ponder": cfg["fixed_ponder"], "mean_N": ev.get("mean_N"), "mean_R": ev.get("mean_R"),
           "random_of": random_of}
    curves = [{"run": run_id, "iteration": r["iteration"], metric: r[metric], "mean_ponder": r["mean_ponder"]}
              for r in read_log(Path(folder) / "log.jsonl") if r["kind"] == "eval"]
    if metric == "sequence_error":
        # the last column, so that every column before it keeps its place in older files
        row["iterations_to_98"] = iterations_to_98(curves)
    return row, curves, ev


def write_runs(path, runs):
    """runs.csv from run_record's rows."""
    write_csv(path, runs, list(runs[0]))


def upgrade_runs_csv(folder):
    """Rewrite the runs.csv of a sweep's results ``folder`` written before the files took the code's
    names (its largest N(t) was max_ponder: ``upgrade_record``), every cell as it was; returns
    whether the header changed. scripts/upgrade_results.py runs it on the folders it is given."""
    path = Path(folder) / "runs.csv"
    with open(path, newline="") as f:
        header = next(csv.reader(f))
    columns = list(upgrade_record(dict.fromkeys(header)))
    if columns != header:
        write_csv(path, [upgrade_record(row) for row in read_csv(path)], columns)
    return columns != header


def collect(jobs, out_dir, random_of=None, save_weights=False):
    """Turn the runs' summaries and logs into the CSV files; returns the rows of runs.csv.

    random_of: {run id: τ} of the random-schedule runs (run_record). save_weights: also write
    weights.npz (``write_weights``).
    """
    random_of = random_of or {}
    out_dir.mkdir(parents=True, exist_ok=True)
    runs, difficulty, curves, counts = [], [], [], []
    for run_id, options in jobs:
        row, run_curves, ev = run_record(run_id, options["out"], "sequence_error", random_of.get(run_id))
        runs.append(row)
        curves += run_curves
        difficulty += [{"run": run_id, **d} for d in ev["by_difficulty"]]
        counts += [{"run": run_id, "N": N, "count": c} for N, c in ev.get("N_counts", [])]
    write_runs(out_dir / "runs.csv", runs)
    write_csv(out_dir / "difficulty.csv", difficulty, ["run", "difficulty", "count", "error", "ponder", "N"])
    write_csv(out_dir / "N_counts.csv", counts, ["run", "N", "count"])
    write_csv(out_dir / "curves.csv", curves, ["run", "iteration", "sequence_error", "mean_ponder"])
    if save_weights:
        write_weights(out_dir / "weights.npz", [(run_id, options["out"]) for (run_id, options), row
                                                 in zip(jobs, runs) if row["act"]])
    return runs


def write_weights(path, runs):
    """The final parameters of ``runs`` ((run id, folder) pairs, each folder holding a finished
    run's checkpoint.npz) in one compressed file, float16, under "<run id>/<parameter>": small
    enough to commit, so that a notebook can load a trained network and probe it
    (``load_weights``)."""
    arrays = {}
    for run_id, folder in runs:
        state, _ = load_checkpoint(Path(folder) / "checkpoint.npz")
        arrays.update({f"{run_id}/{k[len('param/'):]}": v.astype(np.float16)
                       for k, v in state.items() if k.startswith("param/")})
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    with atomic_write(path, "wb") as f:
        f.write(buffer.getvalue())


def load_weights(path):
    """weights.npz as {run id: {parameter name: float64 array}}."""
    with np.load(path) as data:
        runs = {}
        for key in data.files:
            run_id, name = key.split("/", 1)
            runs.setdefault(run_id, {})[name] = data[key].astype(np.float64)
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


UPGRADE_DESCRIPTION = ("Rewrite sweeps' runs.csv written before the files took the code's names "
                       "(max_ponder, the largest N(t), becomes max_N).")


def upgrade_main(argv=None):
    """scripts/upgrade_results.py: ``upgrade_runs_csv`` on every results folder given."""
    ap = OneLineParser(description=UPGRADE_DESCRIPTION)
    ap.add_argument("folders", nargs="+", help="sweep results folders, e.g. results/skewed_parity16")
    args = ap.parse_args(argv)
    for folder in args.folders:
        if not (Path(folder) / "runs.csv").is_file():
            ap.error(f"{folder} holds no runs.csv")
        print(f"{folder}: {'rewritten' if upgrade_runs_csv(folder) else 'already in the code names'}")
    return 0
