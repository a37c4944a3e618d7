"""The notebooks under other math kernels, and how far their checks are from failing
(scripts/notebook_variants.py).

A notebook's live training runs are short, and their numbers depend on the machine: NumPy's
OpenBLAS, PyTorch's MKL and ATen's vectorised loops choose their kernels by CPU and by thread
count, and a training run amplifies the different rounding. A *variant* is a set of environment
variables that makes the libraries choose other kernels on the same machine (VARIANTS below), so
that one machine can try what another would do. ``--variant`` runs notebooks under nbval exactly
as ``make test`` does, in that variant (CI runs every notebook once more this way).

``--measure`` runs each notebook once per (seed, variant) of a grid (every seed natively, then
each other variant with one of the seeds: not the full product), with the live runs' seed set by
ACT_SEED and every check recorded rather than stopping the notebook
(act_course.course.check). It writes one row per check and run to ``--out``/checks.csv;
``--table`` turns that file into the table of docs/notebook_checks.md: per check, its threshold,
the smallest and largest value measured, and the smallest margin.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from act_course import NOTEBOOKS
from act_experiments.cli import OneLineParser, checked, number_list
from act_experiments.files import ROOT
from act_experiments.tables import read_csv, write_csv
from act_numpy.checks import check_int

DESCRIPTION = "Run the notebooks under other math kernels, or measure how far their checks are from failing."
# the flags of `make test` (Makefile, NBVAL)
NBVAL = ["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=300"]

ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
TWO_THREADS = {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}
# Each variant changes the kernels of all three libraries at once. MKL_CBWR fixes MKL's code path
# (PyTorch's matrix products), ATEN_CPU_CAPABILITY PyTorch's elementwise loops ("default" is the
# unvectorised one), OPENBLAS_CORETYPE NumPy's BLAS kernels (Prescott: the oldest x86-64 ones).
VARIANTS = {
    "native": {},
    "threads1": dict(ONE_THREAD),
    "threads2": dict(TWO_THREADS),
    "compatible": {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "Prescott",
                   **ONE_THREAD},
    "avx": {"MKL_CBWR": "AVX", "ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "Sandybridge", **TWO_THREADS},
    "avx2": {"MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2", "OPENBLAS_CORETYPE": "Haswell", **TWO_THREADS},
}
SEEDS = (0, 1, 2)
# the other variants of the grid, each with one seed (an index into the grid's seeds)
GRID_EXTRA = (("compatible", 0), ("compatible", 1), ("avx", 2), ("avx2", 0), ("threads2", 1), ("threads1", 2))
COLUMNS = ["notebook", "claim", "op", "bound", "seed", "variant", "value", "margin", "holds"]


def grid(seeds=SEEDS, extra=GRID_EXTRA):
    """The (variant, seed) pairs of a measurement: every seed natively, then the extra pairs."""
    return [("native", s) for s in seeds] + [(v, seeds[i % len(seeds)]) for v, i in extra]


def variant_env(variant, seed=None, check_log=None):
    """The environment of one notebook run: this process's, with the variant's variables set."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {sorted(VARIANTS)}")
    env = dict(os.environ)        # ACT_SEED stays, unless a seed is given here
    for key in ("ACT_CHECK_LOG", "ACT_CHECK_MODE", "ACT_SAVE_FIGURES"):
        env.pop(key, None)
    env.update(VARIANTS[variant])
    if seed is not None:
        env["ACT_SEED"] = str(seed)
    if check_log is not None:
        env.update(ACT_CHECK_LOG=str(check_log), ACT_CHECK_MODE="record")
    return env


def run_nbval(notebooks, env, quiet=True):
    """pytest --nbval-lax on the notebooks in the given environment; returns (exit code, output)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *NBVAL, *map(str, notebooks)]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=quiet, text=True)
    return done.returncode, (done.stdout or "") + (done.stderr or "")


def measure_one(notebook, variant, seed):
    """Run one notebook in one (variant, seed); returns its check rows and the pytest exit code."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "checks.jsonl"
        start = time.perf_counter()
        code, output = run_nbval([notebook], variant_env(variant, seed, log))
        wall = time.perf_counter() - start
        records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    rows = [{"notebook": notebook.stem, "claim": r["claim"], "op": r["op"], "bound": r["bound"], "seed": seed,
             "variant": variant, "value": r["value"], "margin": r["margin"], "holds": int(r["holds"])}
            for r in records]
    tail = output.strip().splitlines()[-1] if output.strip() else ""
    return rows, code, wall, tail


def measure(notebooks, pairs, out, jobs):
    """Every notebook in every (variant, seed) pair; writes out/checks.csv.

    Runs whose PyTorch has one thread go ``jobs`` at a time (native included: the notebooks set
    one thread, and NumPy's BLAS does little there); runs of a variant with more threads go alone, since
    two thread pools spinning on the same cores slow each other down many times over.
    """
    tasks = [(nb, v, s) for nb in notebooks for v, s in pairs]
    alone = [t for t in tasks if int(VARIANTS[t[1]].get("OMP_NUM_THREADS", "1")) > 1]
    shared = [t for t in tasks if t not in alone]
    rows, problems = [], []

    def results():
        with ThreadPoolExecutor(jobs) as pool:
            yield from zip(shared, pool.map(lambda t: measure_one(*t), shared))
        for t in alone:
            yield t, measure_one(*t)

    for (nb, v, s), (found, code, wall, tail) in results():
        print(f"{nb.stem:22s} {v:10s} seed {s}: {len(found)} checks, "
              f"{sum(1 - r['holds'] for r in found)} failed, pytest exit {code} ({wall:.0f} s) {tail}",
              flush=True)
        for r in found:
            if not r["holds"]:
                print(f"    failed: {r['claim']}: {r['value']:.4g} is not {r['op']} {r['bound']:.4g}", flush=True)
        rows += found
        if code != 0 and all(r["holds"] for r in found):
            problems.append(f"{nb.stem} {v} seed {s}: {tail}")
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "checks.csv", rows, COLUMNS)
    for p in problems:
        print("a cell other than a check failed:", p)
    return rows


def table(rows):
    """Markdown: one line per check with its threshold, the range measured and the smallest margin."""
    groups = {}
    for r in rows:
        groups.setdefault((r["notebook"], r["claim"], r["op"], float(r["bound"])), []).append(r)
    lines = ["| notebook | check | threshold | runs | smallest value | largest value | smallest margin | held |",
             "|---|---|---|---|---|---|---|---|"]
    for (nb, claim, op, bound), rs in groups.items():
        values = [float(r["value"]) for r in rs]
        margins = [float(r["margin"]) for r in rs]
        held = sum(int(r["holds"]) for r in rs)
        lines.append(f"| {nb} | {claim} | {op} {bound:.4g} | {len(rs)} | {min(values):.4g} | {max(values):.4g} "
                     f"| {min(margins):.4g} | {held}/{len(rs)} |")
    return "\n".join(lines)


def main(argv=None):
    ap = OneLineParser(description=DESCRIPTION)
    ap.add_argument("notebooks", nargs="*", help="notebooks to run (default: all of notebooks/)")
    ap.add_argument("--variant", choices=sorted(VARIANTS), help="run the notebooks under nbval in this variant")
    ap.add_argument("--measure", action="store_true", help="measure every check over the grid of seeds x variants")
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="seeds of the grid (default 0,1,2)")
    ap.add_argument("--jobs", type=int, default=2, help="notebook runs at a time when measuring (default 2)")
    ap.add_argument("--out", default=str(ROOT / "results" / "notebook_checks"), help="folder of checks.csv")
    ap.add_argument("--table", metavar="CSV", help="print the markdown table of a checks.csv")
    args = ap.parse_args(argv)
    if sum(map(bool, (args.variant, args.measure, args.table))) != 1:
        ap.error("give exactly one of --variant, --measure, --table")
    if args.table:
        if not Path(args.table).is_file():
            ap.error(f"--table: no such file {args.table}")
        print(table(read_csv(args.table)))
        return 0
    notebooks = [Path(n).resolve() for n in args.notebooks] or NOTEBOOKS
    missing = [str(n) for n in notebooks if not n.is_file()]
    if missing:
        ap.error(f"no such notebook: {', '.join(missing)}")
    if args.variant:
        print(f"notebooks under variant {args.variant}: "
              + (" ".join(f"{k}={v}" for k, v in VARIANTS[args.variant].items()) or "(nothing set)"), flush=True)
        code, _ = run_nbval(notebooks, variant_env(args.variant), quiet=False)
        return code
    seeds = checked(ap, number_list, args.seeds, "--seeds", check_int, 0)
    checked(ap, check_int, "--jobs", args.jobs)
    rows = measure(notebooks, grid(seeds), Path(args.out), args.jobs)
    print(table(rows))
    return 0 if all(int(r["holds"]) for r in rows) else 1

