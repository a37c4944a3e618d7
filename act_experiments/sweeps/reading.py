"""Reading the committed sweeps: a folder under results/ as plain Python data.

A τ sweep of parity, logic, addition or sort (scripts/sweep.py) leaves in results/<name>/:

    runs.csv        one row per run: its τ (empty for no ACT), act (1 or 0), seed and final
                    held-out numbers (sequence error, mean ponder ρ, ...)
    difficulty.csv  per run and difficulty: count, error and mean ponder
    curves.csv      per run and evaluation: iteration, sequence error, mean ponder
    sweep.json      the command, the settings every run shared, the machine

A characters sweep (scripts/characters.py) has the same runs.csv and sweep.json beside its own
tables (curves.csv, classes.csv, passage.csv). ``load_sweep`` reads any of them. Every row of
every table carries its run's

    "key"   the τ, NO_ACT for the no-ACT baseline, or fixed_key(F) for the fixed-computation
            control with F updates per input: what the tables and figures group by
    "tau"   the τ, or None for the baseline and the control
    "act"   whether the run used ACT
    "seed"  the run's seed
    "fixed_ponder"  F for the control, else None (runs.csv files from before it have no column)
    "random_of"     for the random-schedule control, the τ of the ACT runs whose numbers of
                    updates it draws (key random_key(τ)), else None

Sweeps written since N was measured also give each run "mean_N" and "mean_R" (None in older
files), difficulty rows an "N", and the table N_counts (``load_sweep(name, tables=(...,
"N_counts"))``): how many held-out steps took each number of updates. Sweeps written since
iterations to solve were counted give each run "iterations_to_98": the first evaluation whose
sequence error is at most 0.02 (act_experiments.sweeps.writing.iterations_to_98), None when
none was and in older files.

and its other fields as numbers (None where empty); "max_N" is the largest N(t) of the final
evaluation (a runs.csv written before the files took the code's names calls it max_ponder, and is
read through ``training.checkpoints.upgrade_record``). ``find_sweep`` and
``find_sweeps`` say which folders hold a sweep; ``tau_label`` is how a key is written in tables
and on axes.
"""

import json
from pathlib import Path

from act_experiments.data.tasks import ALL_TASKS, DEFAULTS, TASKS
from act_experiments.tables import RESULTS, number, numbers_in, read_csv
from act_experiments.training.checkpoints import upgrade_record
from act_experiments.training.config import COMMON_DEFAULTS, TASK_DEFAULTS

NO_ACT = "no ACT"                          # the key of the baseline runs (a τ key is a float)
TAU_TABLES = ("difficulty", "curves")      # a τ sweep's tables beside runs.csv
TEXT_FIELDS = ("run", "class")             # the fields that stay text


def fixed_key(F):
    """The key of the fixed-computation runs with F updates per input: 'fixed 3'."""
    return f"fixed {F}"


def random_key(tau):
    """The key of the random-schedule runs that draw the numbers of updates of ACT at τ: 'random 0.001'."""
    return f"random {tau:g}"


def by_seed(sweep, key, field="sequence_error"):
    """{seed: field} of the runs of a loaded sweep under ``key`` (a τ, fixed_key(F), random_key(τ)
    or NO_ACT)."""
    return {r["seed"]: r[field] for r in sweep["runs"] if r["key"] == key}


def _fields(row, skip=()):
    """A CSV row's fields as numbers (TEXT_FIELDS as text), named as the code names them (an older
    runs.csv's max_ponder, the largest N(t), is max_N: upgrade_record)."""
    return upgrade_record(numbers_in({k: v for k, v in row.items() if k not in skip}, TEXT_FIELDS))


def sweep_folder(name_or_path, results=RESULTS):
    """The folder of a sweep: `name_or_path` itself when it is a folder, else results/<name>."""
    folder = Path(name_or_path)
    return folder if folder.is_dir() else Path(results) / str(name_or_path)


def load_sweep(name_or_path, tables=TAU_TABLES):
    """Read one sweep folder (see the module's docstring for what its rows carry).

    Returns {"name": the folder's name, "folder", "meta": sweep.json ({} if absent), "runs": the
    rows of runs.csv, and for each name in `tables` the rows of <name>.csv}. Raises
    FileNotFoundError when the folder has no runs.csv, ValueError on a field that is no number.
    """
    folder = sweep_folder(name_or_path)
    if not (folder / "runs.csv").is_file():
        raise FileNotFoundError(f"no sweep results in {folder} (expected the runs.csv a sweep writes)")
    meta_path = folder / "sweep.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    runs = {}
    for row in read_csv(folder / "runs.csv"):
        act = row["act"] == "1"
        tau = float(row["tau"]) if act else None
        fixed = number(row.get("fixed_ponder", ""))        # older runs.csv files have no such column
        random_of = number(row.get("random_of", ""))
        key = (tau if act else fixed_key(fixed) if fixed is not None
               else random_key(random_of) if random_of is not None else NO_ACT)
        runs[row["run"]] = {"run": row["run"], "key": key, "tau": tau, "act": act, "seed": int(row["seed"]),
                            **_fields(row, skip=("run", "tau", "act", "seed")), "fixed_ponder": fixed,
                            "random_of": random_of, "mean_N": number(row.get("mean_N", "")),
                            "mean_R": number(row.get("mean_R", "")),
                            "iterations_to_98": number(row.get("iterations_to_98", ""))}

    def tagged(rows):
        out = []
        for row in rows:
            run = runs[row["run"]]
            out.append({**{k: run[k] for k in ("run", "key", "tau", "act", "seed")}, **_fields(row, skip=("run",))})
        return out

    sweep = {"name": folder.name, "folder": folder, "meta": meta, "runs": list(runs.values())}
    for table in tables:
        sweep[table] = tagged(read_csv(folder / f"{table}.csv"))
    return sweep


def N_distribution(name_or_path, run):
    """How often ``run`` of a sweep took N = 1, 2, ..., its largest N on its held-out set, as a list
    of counts (N_counts.csv); what --random-ponder takes. ValueError when the run is not there."""
    folder = sweep_folder(name_or_path)
    counts = {int(r["N"]): int(r["count"]) for r in read_csv(folder / "N_counts.csv") if r["run"] == run}
    if not counts:
        raise ValueError(f"{folder.name}/N_counts.csv has no run {run}")
    return [counts.get(N, 0) for N in range(1, max(counts) + 1)]


def load_task_sweep(task, name_or_path):
    """load_sweep for the figures of one task: ValueError when the folder holds another task's sweep."""
    sweep = load_sweep(name_or_path)
    if task_of(sweep) != task:
        raise ValueError(f"results/{sweep['name']} holds a {task_of(sweep)} sweep, not {task}")
    return sweep


def shared_options(task, meta):
    """The options every run of a sweep of ``task`` shared: sweep.json's "shared_options" (``meta``
    is that file, {} when absent), over the defaults a run takes for what the command did not set
    (act_experiments.training.config's common and per-task settings, the task's options)."""
    return {**COMMON_DEFAULTS, **TASK_DEFAULTS[task], **DEFAULTS[task], **meta.get("shared_options", {})}


def task_of(sweep):
    """The sweep's task: from sweep.json, else from the folder's name (parity16 -> parity)."""
    name = sweep["name"]
    return sweep["meta"].get("task") or next((t for t in ALL_TASKS if name.startswith(t)), name)


def find_sweep(names, results=RESULTS, missing=None):
    """The folder of the first of `names` under `results` that holds a runs.csv.

    Raises FileNotFoundError with the message `missing` (or a generic one) when none does.
    """
    for name in names:
        folder = Path(results) / name
        if (folder / "runs.csv").exists():
            return folder
    raise FileNotFoundError(missing or f"none of {', '.join(names)} under {results} has a runs.csv")


def find_sweeps(results=RESULTS, verbose=True):
    """Every readable τ sweep under `results`, loaded, ordered by task (tasks.TASKS) and then name.

    A folder counts when it holds runs.csv with a sequence error (the characters sweep measures
    bits per character instead), difficulty.csv and curves.csv, and at least one ACT run. The
    other τ sweeps are skipped, each with a line saying why when `verbose`; folders of other
    experiments (no sweep.json, or a runs.csv without a tau column: the pitfalls, PonderNet,
    ConvNet-AIG) and the sweeps that hold a control (fixed or random schedules, with or without τ
    beside them) are passed over in silence.
    """
    def skip(folder, why):
        if verbose:
            print(f"skipped results/{folder.name}: {why}")

    sweeps = []
    for folder in sorted(Path(results).glob("*/")) if Path(results).is_dir() else []:
        if not (folder / "runs.csv").exists():
            if (folder / "sweep.json").exists():
                skip(folder, "no runs.csv (missing, or a sweep still running)")
            continue
        with open(folder / "runs.csv") as f:
            header = f.readline().strip().split(",")
        if "tau" not in header:
            continue
        if "sequence_error" not in header:
            skip(folder, "not a sequence-error sweep")
            continue
        try:
            sweep = load_sweep(folder)
        except (OSError, KeyError, ValueError) as err:
            skip(folder, f"unreadable ({err!r})")
            continue
        controls = any(r["fixed_ponder"] or r["random_of"] for r in sweep["runs"])
        if not any(r["act"] for r in sweep["runs"]):
            if not controls:
                skip(folder, "no ACT runs")
            # else a fixed-computation control, read beside the ACT sweep it pairs with
            continue
        if controls:
            continue        # τ beside a control: read with it (experiments.controls, measured, parity64)
        sweeps.append(sweep)

    def order(sweep):
        task = task_of(sweep)
        return (TASKS.index(task) if task in TASKS else len(TASKS), sweep["name"])

    return sorted(sweeps, key=order)


def tau_label(key):
    """A key as tables and axes write it: NO_ACT and fixed_key(F) as they are, a τ as a short
    power of ten (0.001 -> '1e-3', 0.0003 -> '3e-4')."""
    if isinstance(key, str):
        return key
    mantissa, exponent = f"{key:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"
