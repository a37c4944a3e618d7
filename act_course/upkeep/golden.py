"""Golden outputs (scripts/golden.py): every committed experiment's command at its shortest settings,
recorded in one checkout and compared with another's, to hold a refactor to.

``record`` runs each command of ``commands()`` in this checkout (sweeps under names ``golden_*``,
which it deletes from results/ and runs/ afterwards; every experiment of the registry into
runs/golden/) and copies the CSVs each one writes into ``OUT/<entry>/``. The committed sweeps run in
float32 and in float64 with ``--iterations 50 --eval-every 25``; every experiment of
act_experiments.experiments.registry runs at its smallest settings (``golden_smallest_<name>``), the
sizes the contract test (tests/test_experiment_contract.py) runs. The entries of the hand list the
registry replaced (``RETIRED``) are named, not counted, when a recording before holds them.

``compare`` reads the two folders' CSVs cell by cell, time columns excluded (a column renamed since
the recording before is read under its new name after: ``RENAMED``), and prints one line per
entry: byte-identical, equal within the tolerance (relative 1e-9 for float64 entries, 1e-4 for
the others), or the largest difference and where it is. Exit status 1 if any entry is outside
its tolerance or missing.
"""

import argparse
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

from act_experiments.experiments.registry import EXPERIMENTS
from act_experiments.files import ROOT
from act_experiments.tables import read_csv

DESCRIPTION = "Golden outputs: every committed experiment's command at its shortest settings, to hold a refactor to."
SHORT = ["--iterations", "50", "--eval-every", "25", "--workers", "1", "--force"]
# The sweeps whose runs a population trains can also run one by one in PyTorch (--engine pool): one
# sweep per task checks that path too.
POOL_TOO = ("parity8", "logic_small", "addition_small", "sort_small", "characters_small")
TIME_COLUMNS = ("time_s", "train_time_s", "seconds", "wall_s", "cpu_s")
# The columns the files renamed when they took the code's names (issue 39), {name before: name
# after}: a recording from before is compared under the new name where the old one is missing
# after, or empty there while filled before (PonderNet's ponder_<set> held E[n] on its own rows).
RENAMED = {"max_ponder": "max_N", "ponder": "mean_N", "max_steps": "max_ponder",
           **{f"ponder_d{k}": f"mean_N_d{k}" for k in range(6)},
           **{f"ponder_{s}": f"expected_steps_{s}" for s in ("in", "out")}}


# entries of the hand list recorded before the registry replaced it (issue 39): one seed of each
# experiment beyond the paper at 50 iterations; a recording that holds them compares the rest
RETIRED = ("golden_pitfalls_", "golden_ut_", "golden_pondernet", "golden_convnet_aig")


def sweep_command(name):
    """The committed sweep's command (results/<name>/sweep.json) as an argument list, its script first."""
    command = json.loads((ROOT / "results" / name / "sweep.json").read_text())["command"].split()
    assert command[0] == "python", command
    args = command[1:]
    keep, skip = [], False
    for token in args:                         # drop the options SHORT sets
        if skip:
            skip = False
            continue
        if token in ("--iterations", "--eval-every", "--workers", "--name", "--device", "--population-size"):
            skip = True
            continue
        keep.append(token)
    return keep


def commands():
    """{entry: (argument list, folder its CSVs land in, float64?)}, relative to the checkout."""
    out = {}
    sweeps = sorted(p.parent.name for p in (ROOT / "results").glob("*/sweep.json")
                    if "command" in json.loads(p.read_text()) and json.loads(p.read_text())["command"])
    for name in sweeps:
        base = sweep_command(name)
        engines = [("population", [])] + ([("pool", ["--engine", "pool", "--backend", "torch"])]
                                          if name in POOL_TOO else [])
        for engine, extra in engines:
            for dtype in ("float32", "float64"):
                entry = f"golden_{name}_{engine}_{dtype}"
                out[entry] = (base[:1] + ["--name", entry] + base[1:] + SHORT + extra + ["--dtype", dtype],
                              f"results/{entry}", dtype == "float64")
    for name, entry in EXPERIMENTS.items():
        # the registry's smallest settings, the contract test's, under runs/golden/<name>/ (a sweep's
        # folder is <root>/results/<name>; an experiment that reads a folder of sweeps writes one into it)
        results = f"runs/golden/{name}/results"
        folder = results if entry.folder == "results" else f"{results}/{name}"
        tables = f"{results}/{entry.smallest['name']}" if entry.folder == "results" else folder
        out[f"golden_smallest_{name}"] = (["-m", "act_experiments.experiments.registry", name, folder], tables, False)
    return out


def record(dest, only=None):
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for entry, (args, folder, _) in commands().items():
        if only and not any(o in entry for o in only):
            continue
        print(entry, flush=True)
        done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"  failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        target = dest / entry
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        for f in sorted((ROOT / folder).glob("*.csv")):
            shutil.copy(f, target / f.name)
        if folder.startswith("results/golden_"):
            shutil.rmtree(ROOT / folder, ignore_errors=True)
            shutil.rmtree(ROOT / "runs" / "sweeps" / Path(folder).name, ignore_errors=True)
            shutil.rmtree(ROOT / "runs" / "pondernet" / Path(folder).name, ignore_errors=True)  # its checkpoints
            for figure in (ROOT / "figures").glob(f"pondernet_{Path(folder).name}_*.png"):
                figure.unlink()              # scripts/pondernet.py draws its run's figures too
    shutil.rmtree(ROOT / "runs" / "golden", ignore_errors=True)


def _differ(a, b):
    """The relative difference of two cells (inf where two non-numbers differ)."""
    if a == b:
        return 0.0
    try:
        x, y = float(a), float(b)
    except ValueError:
        return math.inf
    if math.isnan(x) and math.isnan(y):
        return 0.0
    return abs(x - y) / max(abs(x), abs(y), 1e-12)


def _column_after(col, x, y):
    """The column of the row after (``y``) that holds what ``col`` holds in the row before (``x``)."""
    new = RENAMED.get(col)
    if new in y and (col not in y or (y[col] == "" and x[col] != "")):
        return new
    return col


def compare(before, after):
    before, after = Path(before), Path(after)
    bad = 0
    for entry in sorted(p.name for p in before.iterdir()):
        rel = 1e-9 if entry.endswith("float64") else 1e-4
        b, a = before / entry, after / entry
        if not a.is_dir():
            if entry.startswith(RETIRED):
                print(f"{entry}: retired (the registry's golden_smallest_* entries replaced it)")
                continue
            print(f"{entry}: missing after"); bad += 1
            continue
        worst, where, identical = 0.0, "", True
        for f in sorted(b.glob("*.csv")):
            g = a / f.name
            if not g.exists():
                worst, where = math.inf, f"{f.name} missing"
                break
            rb, ra = read_csv(f), read_csv(g)
            if len(rb) != len(ra):
                worst, where = math.inf, f"{f.name}: {len(rb)} rows against {len(ra)}"
                break
            for i, (x, y) in enumerate(zip(rb, ra)):
                for col in x:
                    if col in TIME_COLUMNS or col.endswith("time_s"):
                        continue
                    other = _column_after(col, x, y)
                    d = _differ(x[col], y.get(other))
                    identical &= d == 0.0
                    if d > worst:
                        worst, where = d, f"{f.name} row {i} {col}: {x[col]} against {other} {y.get(other)}"
        if worst > rel:
            bad += 1
        verdict = ("identical" if identical else f"within {rel:g} (largest {worst:.2g}, {where})"
                   if worst <= rel else f"DIFFERS: {worst:.3g} at {where}")
        print(f"{entry}: {verdict}")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(prog="golden.py", description=DESCRIPTION)
    sub = ap.add_subparsers(dest="action", required=True)
    r = sub.add_parser("record")
    r.add_argument("out")
    r.add_argument("--only", help="comma-separated parts of entry names to record")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    args = ap.parse_args(argv)
    if args.action == "record":
        record(args.out, args.only.split(",") if args.only else None)
        return 0
    return 1 if compare(args.before, args.after) else 0

