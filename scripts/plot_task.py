"""Figures of the logic and addition experiments (Graves 2016, sections 3.2 and 3.3) from a tau sweep.

    python scripts/plot_task.py logic                 # the largest committed logic sweep
    python scripts/plot_task.py addition              # the same for addition
    python scripts/plot_task.py logic --sweep logic_small --figures /tmp/figs

Reads what scripts/sweep.py wrote into results/<sweep>/ (runs.csv, difficulty.csv, curves.csv,
sweep.json) and saves four figures through act_numpy.figures.save_figure, so the PNGs have no
timestamp and the same CSV files always give the same bytes:

    <task>_error_per_tau.png     final held-out sequence error per tau: the mean over seeds as a
                                 bar, the standard error as a whisker, every seed as a dot, and
                                 the no-ACT baseline as the last bar
    <task>_error_vs_ponder.png   one point per run (final mean ponder, final error) and the
                                 mean of each tau as a large marker
    <task>_difficulty.png        mean ponder and step error against the difficulty of an input
                                 step: logic, the number of gates in the vector; addition, the
                                 number of digits of the number
    <task>_learning_curves.png   held-out sequence error and mean ponder during training

Which sweep is drawn: SWEEPS below lists, per task, the folders to try in order. The first
that holds a runs.csv wins, so the full sweep (results/logic/, results/addition/) is shown
once it is committed and the reduced CPU sweep (results/<task>_small/) until then.
"""

import argparse
import csv
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from act_numpy.figures import save_figure  # noqa: E402

# The sweeps to show, best first: the full-size sweep, then the reduced CPU sweep.
SWEEPS = {
    "logic": ("logic", "logic_small"),
    "addition": ("addition", "addition_small"),
}

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"

# What the x axis of the difficulty figure counts, per task (act_numpy.tasks.difficulty).
DIFFICULTY_LABEL = {
    "logic": "number of gates in the input vector",
    "addition": "number of digits of the input number",
}
TASK_TITLE = {"logic": "Logic", "addition": "Addition"}
BASELINE = "no ACT"
BASELINE_COLOR = "0.4"


# ---------------------------------------------------------------------------------------------
# Reading a sweep
# ---------------------------------------------------------------------------------------------


def find_sweep(task, results=RESULTS):
    """The folder of the sweep to show for `task`: the first name in SWEEPS[task] with a runs.csv."""
    for name in SWEEPS[task]:
        folder = Path(results) / name
        if (folder / "runs.csv").exists():
            return folder
    raise FileNotFoundError(f"none of results/{{{','.join(SWEEPS[task])}}}/runs.csv exists: "
                            f"run scripts/sweep.py --task {task} first")


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _float(text):
    return None if text in ("", None) else float(text)


def load(folder):
    """A sweep folder as plain Python data.

    Returns {"name", "meta", "runs", "difficulty", "curves"}. Each run is a dict with "key" (its
    tau, or BASELINE for the no-ACT runs), "seed" and the numbers of runs.csv as floats; the
    difficulty and curve rows carry the "key" and "seed" of their run.
    """
    folder = Path(folder)
    meta = json.loads((folder / "sweep.json").read_text()) if (folder / "sweep.json").exists() else {}
    runs = {}
    for r in _rows(folder / "runs.csv"):
        numbers = {k: _float(v) for k, v in r.items() if k not in ("run", "tau", "act", "seed")}
        key = float(r["tau"]) if r["act"] == "1" else BASELINE
        runs[r["run"]] = {"run": r["run"], "key": key, "seed": int(r["seed"]), **numbers}

    def attach(rows):
        return [{"key": runs[r["run"]]["key"], "seed": runs[r["run"]]["seed"],
                 **{k: _float(v) for k, v in r.items() if k != "run"}} for r in rows]

    return {"name": folder.name, "meta": meta, "runs": list(runs.values()),
            "difficulty": attach(_rows(folder / "difficulty.csv")),
            "curves": attach(_rows(folder / "curves.csv"))}


def task_of(sweep):
    return sweep["meta"].get("task") or sweep["name"].split("_")[0]


def taus(sweep):
    """The sweep's tau values in ascending order."""
    return sorted({r["key"] for r in sweep["runs"] if r["key"] != BASELINE})


def keys(sweep):
    """Tau values in ascending order, then BASELINE if the sweep has no-ACT runs."""
    has_baseline = any(r["key"] == BASELINE for r in sweep["runs"])
    return taus(sweep) + ([BASELINE] if has_baseline else [])


def describe(sweep):
    """One line with the size of the runs, for figure titles."""
    meta, task = sweep["meta"], task_of(sweep)
    o = meta.get("shared_options", {})
    if task == "logic":
        size = f"≤{o.get('max_vectors', 10)} vectors of ≤{o.get('max_gates', 10)} gates"
    else:
        size = f"≤{o.get('max_numbers', 5)} numbers of ≤{o.get('max_digits', 5)} digits"
    default_h, default_b = {"logic": (128, 16), "addition": (512, 32)}[task]
    iterations = int(max(r["iterations"] for r in sweep["runs"]))
    return (f"{size}, LSTM H={o.get('hidden', default_h)}, batch {o.get('batch_size', default_b)}, "
            f"lr {o.get('lr', 1e-4):g}, {iterations} iterations, {meta.get('seeds', '?')} seeds "
            f"[results/{sweep['name']}]")


# ---------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------


def mean_se(values):
    """Mean and standard error of the mean (standard error 0 for a single value)."""
    v = np.asarray(values, dtype=np.float64)
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0
    return float(v.mean()), se


def grouped(sweep, field):
    """{key: list of the runs' values of `field`} for every tau and the baseline."""
    return {k: [r[field] for r in sweep["runs"] if r["key"] == k] for k in keys(sweep)}


def table(sweep):
    """Per tau and the baseline: (label, runs, error mean, error s.e., best error, ponder mean, ponder s.e.)."""
    errors, ponders = grouped(sweep, "sequence_error"), grouped(sweep, "mean_ponder")
    out = []
    for k in keys(sweep):
        e, e_se = mean_se(errors[k])
        p, p_se = mean_se(ponders[k])
        out.append((label(k), len(errors[k]), e, e_se, min(errors[k]), p, p_se))
    return out


def reference_error(sweep):
    """(value, label) of the sequence error a network with no skill gets.

    Logic: guessing each bit, a sequence of L vectors (L uniform on 1..max_vectors) is right
    with probability 2^-L. Addition: guessing a six-digit sum is as good as always wrong, but a
    sequence of one number has no target and can never be wrong, so the ceiling is 1 - 1/max_numbers.
    """
    o = sweep["meta"].get("shared_options", {})
    if task_of(sweep) == "logic":
        V = o.get("max_vectors", 10)
        value = 1.0 - float(np.mean(0.5 ** np.arange(1, V + 1)))
        return value, f"chance ({value:.2f})"
    value = 1.0 - 1.0 / o.get("max_numbers", 5)
    return value, f"every sum wrong ({value:.2f})"


def by_difficulty(sweep, key, field):
    """(difficulties, pooled mean, lowest seed, highest seed) of `field` for the runs of `key`.

    The pooled mean weights every seed's value by the number of held-out steps it stands for.
    """
    rows = [r for r in sweep["difficulty"] if r["key"] == key and r[field] is not None]
    ds = sorted({int(r["difficulty"]) for r in rows})
    pooled, low, high = [], [], []
    for d in ds:
        at = [r for r in rows if int(r["difficulty"]) == d]
        w = np.array([r["count"] for r in at])
        v = np.array([r[field] for r in at])
        pooled.append(float((w * v).sum() / w.sum()))
        low.append(float(v.min()))
        high.append(float(v.max()))
    return np.array(ds), np.array(pooled), np.array(low), np.array(high)


# ---------------------------------------------------------------------------------------------
# Drawing helpers
# ---------------------------------------------------------------------------------------------


def label(key):
    """'no ACT' or tau written compactly: 1e-3, 3e-4, 0.01 -> 1e-2."""
    if key == BASELINE:
        return BASELINE
    mantissa, exponent = f"{key:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def colors(sweep):
    """A colour per key: tau from light (small) to dark (large) on a log scale; grey for no ACT."""
    ts = taus(sweep)
    cmap = plt.get_cmap("plasma")
    logs = np.log10(ts) if ts else np.array([])
    span = (logs.max() - logs.min()) if len(ts) > 1 else 1.0
    out = {t: cmap(0.78 - 0.68 * (lt - logs.min()) / span) for t, lt in zip(ts, logs)}
    out[BASELINE] = BASELINE_COLOR
    return out


def _reference_line(ax, sweep):
    value, text = reference_error(sweep)
    ax.axhline(value, color="crimson", ls="--", lw=1, label=text)


# ---------------------------------------------------------------------------------------------
# The four figures
# ---------------------------------------------------------------------------------------------


def plot_error_per_tau(sweep):
    task, col = task_of(sweep), colors(sweep)
    errors = grouped(sweep, "sequence_error")
    ks = keys(sweep)
    fig, ax = plt.subplots(figsize=(8, 4.3))
    for i, k in enumerate(ks):
        m, se = mean_se(errors[k])
        ax.bar(i, m, width=0.65, color=col[k], alpha=0.85, yerr=se, capsize=4, ecolor="black")
        dx = np.linspace(-0.15, 0.15, len(errors[k])) if len(errors[k]) > 1 else np.zeros(1)
        ax.scatter(i + dx, errors[k], s=16, color="black", zorder=3, linewidths=0)
    _reference_line(ax, sweep)
    ax.set_xticks(range(len(ks)), [label(k) for k in ks])
    ax.set_xlabel("time penalty τ")
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(0, max(max(max(v) for v in errors.values()), reference_error(sweep)[0]) + 0.08)
    ax.legend(loc="upper center", frameon=False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{TASK_TITLE[task]}: sequence error per τ (bar: mean, whisker: standard error, "
                 f"dot: one seed)\n{describe(sweep)}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_error_vs_ponder(sweep):
    task, col = task_of(sweep), colors(sweep)
    fig, ax = plt.subplots(figsize=(7.8, 4.8))
    for k in keys(sweep):
        runs = [r for r in sweep["runs"] if r["key"] == k]
        x = np.array([r["mean_ponder"] for r in runs])
        y = np.array([r["sequence_error"] for r in runs])
        marker = "X" if k == BASELINE else "o"
        ax.scatter(x, y, s=22, marker=marker, color=col[k], alpha=0.6, linewidths=0, zorder=2)
        ax.scatter(x.mean(), y.mean(), s=170, marker=marker, color=col[k], edgecolors="black", zorder=3,
                   label=BASELINE if k == BASELINE else f"τ = {label(k)}")
    _reference_line(ax, sweep)
    ax.set_xlabel("mean ponder ρ per input step (held-out)")
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(bottom=-0.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)
    ax.set_title(f"{TASK_TITLE[task]}: error vs ponder (small: one run, large: mean per τ)\n"
                 f"{describe(sweep)}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_difficulty(sweep):
    task, col = task_of(sweep), colors(sweep)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    for k in keys(sweep):
        name = BASELINE if k == BASELINE else f"τ = {label(k)}"
        style = "--" if k == BASELINE else "-"
        for ax, field in ((top, "ponder"), (bottom, "error")):
            d, m, lo, hi = by_difficulty(sweep, k, field)
            if d.size == 0:
                continue
            ax.plot(d, m, style, marker="o", ms=4, color=col[k], label=name)
            ax.fill_between(d, lo, hi, color=col[k], alpha=0.12, linewidth=0)
    top.set_ylabel("mean ponder ρ")
    bottom.set_ylabel("error rate per input step")
    if task == "logic":
        bottom.axhline(0.5, color="crimson", ls="--", lw=1, label="chance (0.5)")
    bottom.set_xlabel(f"difficulty: {DIFFICULTY_LABEL[task]}")
    bottom.set_ylim(bottom=-0.02)
    d_all = sorted({int(r["difficulty"]) for r in sweep["difficulty"]})
    bottom.set_xticks(d_all)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    top.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)
    bottom.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)
    top.set_title(f"{TASK_TITLE[task]}: ponder and error vs difficulty (line: seeds pooled, "
                  f"band: lowest to highest seed)\n{describe(sweep)}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_learning_curves(sweep):
    task, col = task_of(sweep), colors(sweep)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    for k in keys(sweep):
        rows = [r for r in sweep["curves"] if r["key"] == k]
        seeds = sorted({r["seed"] for r in rows})
        its = sorted({int(r["iteration"]) for r in rows})
        style = "--" if k == BASELINE else "-"
        for ax, field in ((top, "sequence_error"), (bottom, "mean_ponder")):
            grid = np.full((len(seeds), len(its)), np.nan)
            for r in rows:
                grid[seeds.index(r["seed"]), its.index(int(r["iteration"]))] = r[field]
            for line in grid:
                ax.plot(its, line, style, color=col[k], lw=0.7, alpha=0.35)
            ax.plot(its, np.nanmean(grid, axis=0), style, color=col[k], lw=2,
                    label=BASELINE if k == BASELINE else f"τ = {label(k)}")
    _reference_line(top, sweep)
    top.set_ylabel("sequence error rate (held-out)")
    top.set_ylim(bottom=-0.02)
    bottom.set_ylabel("mean ponder ρ (held-out)")
    bottom.set_xlabel("training iteration")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    top.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=9)
    top.set_title(f"{TASK_TITLE[task]}: learning curves (thick: mean over seeds, thin: one seed)\n"
                  f"{describe(sweep)}", fontsize=9)
    fig.tight_layout()
    return fig


FIGURES = {
    "error_per_tau": plot_error_per_tau,
    "error_vs_ponder": plot_error_vs_ponder,
    "difficulty": plot_difficulty,
    "learning_curves": plot_learning_curves,
}


def save_all(sweep, directory=None):
    """Draw the four figures of the sweep's task and save them as <task>_<figure>.png."""
    paths = []
    for suffix, draw in FIGURES.items():
        fig = draw(sweep)
        paths.append(save_figure(fig, f"{task_of(sweep)}_{suffix}", directory=directory))
        plt.close(fig)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("task", choices=sorted(SWEEPS), help="logic or addition")
    ap.add_argument("--sweep", help="results/<sweep>/ to draw (default: the first of SWEEPS[task] present)")
    ap.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    folder = RESULTS / args.sweep if args.sweep else find_sweep(args.task)
    sweep = load(folder)
    if task_of(sweep) != args.task:
        ap.error(f"{folder} holds a {task_of(sweep)} sweep, not {args.task}")
    print(describe(sweep))
    print(f"{'tau':>7} {'runs':>4} {'error':>7} {'s.e.':>6} {'best':>6} {'ponder':>7} {'s.e.':>5}")
    for name, n, e, e_se, best, p, p_se in table(sweep):
        print(f"{name:>7} {n:4d} {e:7.3f} {e_se:6.3f} {best:6.3f} {p:7.2f} {p_se:5.2f}")
    for path in save_all(sweep, args.figures):
        print("wrote", path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
