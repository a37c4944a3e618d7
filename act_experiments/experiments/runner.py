"""Experiments of named entries, each trained once per seed, with one CSV row per evaluation.

The pitfall gallery (``scripts/pitfalls.py``) and the Universal Transformer's comparisons
(``scripts/universal_transformer.py``) are such experiments: a handful of entries (a bug, a fixed
depth, a value of τ), a few seeds, and every entry of one seed started from the same weights. This
module holds what they share: reading the results, training what is missing, and the ``run`` /
``plot`` command line.

An experiment ``name`` lives in two files of its results folder: ``<name>.csv``, one row per
evaluation of every (entry, seed), and ``<name>.json``, what ran (the settings, the seeds, the
entries, the command, the machine and the wall time). Nothing is lost when a run stops: each
(entry, seed) is added to the CSV in one atomic step when it finishes, and running the experiment
again trains only the pairs not yet there. A run with other settings is refused rather than mixed
in; ``force`` starts over.
"""

import csv
import json
import platform
import shlex
import sys
import time
from pathlib import Path

from act_experiments.figures import print_written
from act_experiments.tables import append_rows, number, write_csv, write_json
from act_experiments.training.cli import OneLineParser


def read(name, folder, text_columns, script):
    """(rows, meta) of experiment ``name`` in ``folder``.

    rows: one dict per CSV row, the ``text_columns`` as strings and every other field a number
    (None where empty); meta: the JSON record. Raises ValueError naming the script that writes
    them when either file is missing.
    """
    folder = Path(folder)
    csv_path, json_path = folder / f"{name}.csv", folder / f"{name}.json"
    if not csv_path.exists() or not json_path.exists():
        raise ValueError(f"no results for {name!r} in {folder}: run python {script} run {name}")
    with open(csv_path, newline="") as f:
        rows = [{k: (v if k in text_columns else number(v)) for k, v in row.items()} for row in csv.DictReader(f)]
    return rows, json.loads(json_path.read_text())


def final_rows(rows, key="entry"):
    """The last evaluation of every (row[key], seed), in the order the pairs first appear."""
    last = {}
    for r in rows:
        pair = (r[key], r["seed"])
        if pair not in last or r["iteration"] > last[pair]["iteration"]:
            last[pair] = r
    return list(last.values())


def _merged(old, new):
    """The entries of an earlier run and of this one: a list (in order, once each) or a dict."""
    if isinstance(new, dict):
        return {**(old or {}), **new}
    return list(dict.fromkeys([*(old or []), *new]))


def run_entries(name, meta, train, columns, out, *, entries_key, script, force=False, log=print):
    """Train every (entry, seed) of experiment ``name`` that ``out/<name>.csv`` does not hold yet.

    meta: the JSON record without the run's bookkeeping; it holds "seeds" (seeds 0..n-1) and under
    ``entries_key`` the entries to train (a list of names, or a dict from name to its options).
    train(entry, seed) -> (rows, line): the rows of one run, dicts keyed by ``columns`` (missing
    or None fields are written empty), and a line for ``log``. columns[0] names the entry.
    A folder that holds the experiment with anything in meta other than its entries is refused
    with ValueError, unless ``force``. Returns the CSV's path.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, json_path = out / f"{name}.csv", out / f"{name}.json"
    meta = json.loads(json.dumps(meta))         # as the JSON file will hold it (tuples become lists)
    done, previous_wall = set(), 0.0
    if csv_path.exists() and json_path.exists() and not force:
        old = json.loads(json_path.read_text())
        differ = sorted(k for k in meta if k != entries_key and old.get(k) != meta[k])
        if differ:
            raise ValueError(f"{json_path} holds other {', '.join(differ)}; use --force to start {name} over")
        with open(csv_path, newline="") as f:
            done = {(r[columns[0]], int(r["seed"])) for r in csv.DictReader(f)}
        meta[entries_key] = _merged(old.get(entries_key), meta[entries_key])
        previous_wall = old.get("wall_time_s") or 0.0
    else:
        write_csv(csv_path, [], columns)
    record = dict(meta, command=_command(script), machine=f"{platform.machine()}, CPython {platform.python_version()}",
                  wall_time_s=previous_wall)
    write_json(json_path, record)
    start = time.time()
    wanted = meta[entries_key] if isinstance(meta[entries_key], list) else list(meta[entries_key])
    for seed in range(meta["seeds"]):
        for entry in wanted:
            if (entry, seed) in done:
                continue
            rows, line = train(entry, seed)
            append_rows(csv_path, rows, columns)
            log(f"{name}: {line}")
    record["wall_time_s"] = round(previous_wall + time.time() - start, 1)
    write_json(json_path, record)
    return csv_path


def _command(script):
    """The command line that is running, when it is ``script``'s (None when called from Python)."""
    if Path(sys.argv[0]).name != Path(script).name:
        return None
    return f"python {script} " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def main(argv, *, script, description, experiments, entries_of, entry_option, run, plot, out, figures_help):
    """The ``run`` / ``plot`` command line of an experiment script; returns its exit status.

    experiments: the names ``run`` accepts; entries_of(experiment) -> the names ``entry_option``
    (``--pitfalls``, ``--entries``) accepts; run(experiment, seeds, iterations, entries, out,
    force) and plot(results, figures) -> paths do the work. Bad input and a refused run end with
    one line on stderr and a non-zero exit.
    """
    ap = OneLineParser(prog=script, description=description)
    sub = ap.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    r = sub.add_parser("run", help="train an experiment's entries")
    r.add_argument("experiment", choices=sorted(experiments))
    r.add_argument("--seeds", type=int, help="seeds 0..n-1 (default: the experiment's)")
    r.add_argument("--iterations", type=int, help="training iterations (default: the experiment's)")
    r.add_argument(entry_option, dest="entries", help="comma-separated entries (default: the experiment's)")
    r.add_argument("--out", default=str(out), help=f"results folder (default {out})")
    r.add_argument("--force", action="store_true", help="start the experiment over")
    p = sub.add_parser("plot", help=figures_help)
    p.add_argument("--results", default=str(out), help=f"results folder (default {out})")
    p.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    if args.command == "run":
        chosen = args.entries.split(",") if args.entries else None
        known = list(entries_of(args.experiment))
        unknown = [c for c in chosen or [] if c not in known]
        if unknown:
            ap.exit(2, f"{script}: error: unknown {entry_option} {unknown}; {args.experiment} knows {known}\n")
        for option, value in (("--seeds", args.seeds), ("--iterations", args.iterations)):
            if value is not None and value < 1:
                ap.exit(2, f"{script}: error: {option} must be >= 1, got {value}\n")
        try:
            run(args.experiment, args.seeds, args.iterations, chosen, args.out, args.force)
        except ValueError as err:
            ap.exit(1, f"{script}: error: {err}\n")
    else:
        if not Path(args.results).is_dir():
            ap.exit(1, f"{script}: error: --results {args.results} is not a folder\n")
        print_written(plot(args.results, args.figures))
    return 0
