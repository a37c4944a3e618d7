"""What a sweep commits: its runs' summaries and logs as CSV files and JSON, each written in one step.

    runs.csv        one row per run (``run_record``)
    difficulty.csv  one row per run and difficulty
    curves.csv      one row per run and evaluation
    sweep.json      the command, the settings, the wall time and the machine (``machine``)

The characters task writes its own files beside these (``act_experiments.sweeps.per_byte``).
"""

import os
import platform
import sys
from pathlib import Path

from act_experiments.training.checkpoints import read_log, read_summary, to_file
from act_experiments.training.config import upgrade, uses_act
from act_experiments.tables import write_csv


def run_record(run_id, folder, metric):
    """One finished run as data: (row of runs.csv, rows of curves.csv, final evaluation), fields
    named as the code names them (max_N; ``write_runs`` gives runs.csv the files' names).

    metric: the error measure the run reports ("sequence_error"; "bits_per_char" for text).
    """
    s = read_summary(Path(folder) / "summary.json")
    cfg, ev = upgrade(s["config"]), s["final_eval"]
    act = uses_act(cfg)
    row = {"run": run_id, "tau": cfg["tau"] if act else None, "act": int(act), "seed": cfg["seed"],
           metric: ev[metric], "mean_ponder": ev["mean_ponder"], "max_N": ev["max_N"],
           "loss": ev["loss"], "iterations": s["iterations"], "train_time_s": round(s["train_time_s"], 2),
           "fixed_ponder": cfg["fixed_ponder"]}
    curves = [{"run": run_id, "iteration": r["iteration"], metric: r[metric], "mean_ponder": r["mean_ponder"]}
              for r in read_log(Path(folder) / "log.jsonl") if r["kind"] == "eval"]
    return row, curves, ev


def write_runs(path, runs):
    """runs.csv from run_record's rows, with the names the files use (max_N is max_ponder there)."""
    write_csv(path, [to_file(r) for r in runs], list(to_file(runs[0])))


def collect(jobs, out_dir):
    """Turn the runs' summaries and logs into the three CSV files; returns the rows of runs.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    runs, difficulty, curves = [], [], []
    for run_id, options in jobs:
        row, run_curves, ev = run_record(run_id, options["out"], "sequence_error")
        runs.append(row)
        curves += run_curves
        difficulty += [{"run": run_id, **d} for d in ev["by_difficulty"]]
    write_runs(out_dir / "runs.csv", runs)
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
