"""One resumable pattern for the experiments beyond the paper: a plan of units, each trained once.

    record = run_plan(out, plan, train, tables, meta, unit_of=..., record="sweep.json", ...)
    run_entries(name, meta, train, columns, out, entries_key="pitfalls", ...)   # entries x seeds
    rows, meta = read(name, folder, text_columns, script);  final_rows(rows);  summarise(rows, columns)
    main(argv, ...)                                                              # run / plot

An experiment is a *plan* of units (an (entry, seed) of the pitfall gallery, a (kind, rate,
blocks, seed) of ConvNet-AIG's sweep, a chunk of PonderNet's comparison); ``train(unit)`` returns
the unit's rows for each of the experiment's tables, and each table is a CSV file of the results
folder that grows by whole units: a unit's rows are appended in one atomic step when it finishes.
A JSON record beside them holds what ran: the settings, the command, the machine and the wall
time, summed over the calls. Nothing is lost when a run stops: running the experiment again reads
back which units the CSV holds and trains only the others; a run with other settings is refused
rather than mixed in, and ``force`` starts over. ``run_entries`` is the case of named entries x
seeds (scripts/pitfalls.py, scripts/universal_transformer.py), with ``read``, ``final_rows`` and
``summarise`` (mean, lowest and highest over the seeds) and the ``run`` / ``plot`` command line
``main``.
"""

import json
import platform
import shlex
import sys
import time
from pathlib import Path

from act_experiments.cli import OneLineParser, checked
from act_experiments.figures import print_written
from act_experiments.tables import append_rows, numbers_in, read_csv, write_csv, write_json
from act_numpy.checks import check_int

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
    rows = [numbers_in(row, text_columns) for row in read_csv(csv_path)]
    return rows, json.loads(json_path.read_text())


def final_rows(rows, key="entry"):
    """The last evaluation of every (row[key], seed), in the order the pairs first appear."""
    last = {}
    for r in rows:
        pair = (r[key], r["seed"])
        if pair not in last or r["iteration"] > last[pair]["iteration"]:
            last[pair] = r
    return list(last.values())


def spread(values):
    """(mean, lowest, highest) of a non-empty list of numbers."""
    return (sum(values) / len(values), min(values), max(values))


def summarise(rows, columns, key="entry"):
    """{row[key]: {column: (mean, lowest, highest), ..., "seeds": n}} over the final rows of each
    entry's seeds (``final_rows``), entries in the order of the rows; a column that none of an
    entry's final rows holds (None or absent) is left out of its summary."""
    ends = final_rows(rows, key)
    out = {}
    for entry in dict.fromkeys(r[key] for r in ends):
        mine = [r for r in ends if r[key] == entry]
        summary = {}
        for c in columns:
            values = [r[c] for r in mine if r.get(c) is not None]
            if values:
                summary[c] = spread(values)
        summary["seeds"] = len(mine)
        out[entry] = summary
    return out


def _merged(old, new):
    """The entries of an earlier run and of this one: a list (in order, once each) or a dict."""
    if isinstance(new, dict):
        return {**(old or {}), **new}
    return list(dict.fromkeys([*(old or []), *new]))


def _resume(out, tables, record_path, meta, unit_of, merge, name):
    """The keys of the units the tables of an earlier run hold, and its record; meta gains the
    merged entries. Other settings: ValueError, before anything is written. Rows of a unit that
    did not reach the first table (a stop between two appends) are dropped from the others."""
    old = json.loads(record_path.read_text())
    differ = sorted(k for k in meta if k not in merge and old.get(k) != meta[k])
    if differ:
        raise ValueError(f"{record_path} holds other {', '.join(differ)}; use --force to start {name} over")
    first, *others = tables
    done = {unit_of(first, row) for row in read_csv(out / first)}
    for table in others:
        path = out / table
        rows = read_csv(path) if path.exists() else []
        kept = [row for row in rows if unit_of(table, row) in done]
        if not path.exists() or len(kept) < len(rows):
            write_csv(path, kept, tables[table])      # strings as read: the same bytes
    for k in merge:
        meta[k] = _merged(old.get(k), meta[k])
    return done, old


def run_plan(out, plan, train, tables, meta, *, unit_of, key=None, record, name, script, merge=(), force=False,
             reset=None, float_format=None, count_as=None, log=print):
    """Train every unit of ``plan`` that the tables in ``out`` do not hold yet; returns the record.

    plan: the units in training order, or plan(meta) -> them when they depend on the merged
    entries. key(unit) -> a hashable key (default: the unit itself). train(unit) -> (rows, line):
    rows {table: list of dicts keyed by its columns} (a missing table or field is written empty),
    line a string for ``log``. tables: {file name in out: columns}; the first says which units are
    done: unit_of(table, row) -> the key of the unit that wrote ``row``, a dict of strings read back
    from ``table``. A unit's rows go to the other tables first and to the first one last, so a unit
    counts as done only once all its rows are written. Floats are written with ``float_format``.

    meta: the JSON record ``out/<record>`` without its bookkeeping (command, machine, wall_time_s,
    which are added); the keys in ``merge`` hold entries that a rerun adds to (a list or a dict),
    every other key must equal the earlier run's. An earlier run (its record and first table) with
    other values is refused with ValueError naming them, unless ``force``; keys an experiment added
    to its record are kept. Starting anew (no earlier run, or ``force``), ``reset()`` is called
    first, when given (a refusal there writes nothing either). count_as: a plural noun ("runs"):
    log how many units are done already and number each unit's line. ``name``: how the refusal
    names the experiment. The wall time is summed over the calls and written after every unit.
    """
    out = Path(out)
    meta = json.loads(json.dumps(meta))         # as the JSON file will hold it (tuples become lists)
    names = list(tables)
    record_path, first = out / record, out / names[0]
    done, old = set(), {}
    if record_path.exists() and first.exists() and not force:
        done, old = _resume(out, tables, record_path, meta, unit_of, merge, name)
    else:
        if reset is not None:
            reset()
        out.mkdir(parents=True, exist_ok=True)
        for table, columns in tables.items():
            write_csv(out / table, [], columns)
    written = {**old, **meta, "command": _command(script),
               "machine": f"{platform.machine()}, CPython {platform.python_version()}",
               "wall_time_s": old.get("wall_time_s") or 0.0}
    write_json(record_path, written)
    key = key or (lambda unit: unit)
    units = plan(meta) if callable(plan) else plan
    todo = [unit for unit in units if key(unit) not in done]
    if count_as:
        log(f"{len(units) - len(todo)} of {len(units)} {count_as} already in {first}; training {len(todo)}")
    start, before = time.time(), written["wall_time_s"]
    for i, unit in enumerate(todo, 1):
        rows, line = train(unit)
        for table in names[1:] + names[:1]:
            if rows.get(table):
                append_rows(out / table, rows[table], tables[table], float_format)
        written["wall_time_s"] = round(before + time.time() - start, 1)
        write_json(record_path, written)
        log(f"[{i}/{len(todo)}] {line}" if count_as else line)
    return written


def settings_of(spec, iterations=None):
    """A copy of an experiment's settings (spec["settings"]), with ``iterations`` in place of its own
    when given (the command line's --iterations)."""
    settings = dict(spec["settings"])
    if iterations is not None:
        settings["iterations"] = iterations
    return settings


def run_entries(name, meta, train, columns, out, *, entries_key, script, force=False, log=print):
    """Train every (entry, seed) of experiment ``name`` that ``out/<name>.csv`` does not hold yet.

    meta: the JSON record without the run's bookkeeping; it holds "seeds" (seeds 0..n-1) and under
    ``entries_key`` the entries to train (a list of names, or a dict from name to its options).
    train(entry, seed) -> (rows, line): the rows of one run, dicts keyed by ``columns`` (missing
    or None fields are written empty), and a line for ``log``. columns[0] names the entry.
    A folder that holds the experiment with anything in meta other than its entries is refused
    with ValueError, unless ``force``. Returns the CSV's path. ``run_plan`` with units (entry,
    seed), seed by seed, the entries of earlier runs kept.
    """
    def plan(merged):
        return [(entry, seed) for seed in range(merged["seeds"]) for entry in merged[entries_key]]

    def train_unit(unit):
        rows, line = train(*unit)
        return {f"{name}.csv": rows}, f"{name}: {line}"

    run_plan(out, plan, train_unit, {f"{name}.csv": columns}, meta, record=f"{name}.json",
             unit_of=lambda table, row: (row[columns[0]], int(row["seed"])), merge=(entries_key,), name=name,
             script=script, force=force, log=log)
    return Path(out) / f"{name}.csv"


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
            if value is not None:
                checked(ap, check_int, option, value)
        try:
            run(args.experiment, args.seeds, args.iterations, chosen, args.out, args.force)
        except ValueError as err:
            ap.exit(1, f"{script}: error: {err}\n")
    else:
        if not Path(args.results).is_dir():
            ap.exit(1, f"{script}: error: --results {args.results} is not a folder\n")
        print_written(plot(args.results, args.figures))
    return 0
