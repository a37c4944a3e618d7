"""What the time penalty tau does, across every committed sweep (Graves 2016, eq. 12 and section 3).

    python scripts/plot_time_penalty.py                  # every results/<sweep>/ with a runs.csv
    python scripts/plot_time_penalty.py --figures /tmp   # somewhere other than figures/

Each sweep written by scripts/sweep.py (parity*, logic*, addition*, sort*, whichever exist) adds
one line to each figure; the figures go through act_experiments.figures.save_figure:

    time_penalty_tradeoff.png         mean ponder (top) and mean sequence error (bottom) against
                                      tau, one line per sweep, its no-ACT error as a dashed line
    time_penalty_error_vs_ponder.png  one curve per sweep through its (mean ponder, mean error)
                                      points, ordered by tau: the price of each unit of ponder
    time_penalty_seed_spread.png      every seed's error against tau, one panel per sweep: how
                                      much the outcome of a tau depends on the seed

Sweeps that are missing, empty (still running) or unreadable are skipped with a message, so
the script and notebook 10 work with whatever results exist. Notebook 10 imports this file.
"""

import argparse
import sys
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep_figures as sf  # noqa: E402
from sweep_figures import NO_ACT, RESULTS, ROOT, label, load, mean_se, taus  # noqa: E402,F401  (one CSV reader for every task)

TASK_ORDER = ("parity", "logic", "addition", "sort")
TASK_COLOUR = {"parity": "tab:blue", "logic": "tab:orange", "addition": "tab:green", "sort": "tab:purple"}
LINE_STYLES = ("-", "--", "-.", ":")


# ---------------------------------------------------------------------------------------------
# Finding and summarising sweeps
# ---------------------------------------------------------------------------------------------


def task_of(sweep):
    """The sweep's task, from sweep.json, else from the folder name (parity16 -> parity)."""
    task = sweep["meta"].get("task")
    if task:
        return task
    name = sweep["name"]
    return next((t for t in TASK_ORDER if name.startswith(t)), name)


def find_sweeps(results=RESULTS, verbose=True):
    """Every readable sweep under `results`, ordered by task (TASK_ORDER) and then by name.

    A folder counts when it holds runs.csv, difficulty.csv and curves.csv and has at least one
    ACT run; anything else is skipped (with a message when verbose).
    """
    sweeps = []
    for folder in sorted(Path(results).glob("*/")) if Path(results).is_dir() else []:
        if not (folder / "runs.csv").exists():
            if verbose:
                print(f"skipped results/{folder.name}: no runs.csv (missing, or a sweep still running)")
            continue
        if "sequence_error" not in (folder / "runs.csv").open().readline():
            if verbose:   # the character runs measure bits per character, shown in notebook 09
                print(f"skipped results/{folder.name}: not a sequence-error sweep")
            continue
        try:
            sweep = load(folder)
        except (OSError, KeyError, ValueError) as err:
            if verbose:
                print(f"skipped results/{folder.name}: unreadable ({err!r})")
            continue
        if not any(r["key"] != NO_ACT for r in sweep["runs"]):
            if verbose:
                print(f"skipped results/{folder.name}: no ACT runs")
            continue
        sweeps.append(sweep)

    def order(s):
        t = task_of(s)
        return (TASK_ORDER.index(t) if t in TASK_ORDER else len(TASK_ORDER), s["name"])

    return sorted(sweeps, key=order)


def per_tau(sweep):
    """Per tau (ascending): a dict with tau, seeds, error mean/se/min/max/sd, ponder mean/se."""
    out = []
    for tau in taus(sweep):
        runs = [r for r in sweep["runs"] if r["key"] == tau]
        err = np.array([r["sequence_error"] for r in runs])
        pon = np.array([r["mean_ponder"] for r in runs])
        e, e_se = mean_se(err)
        p, p_se = mean_se(pon)
        out.append({"tau": tau, "seeds": len(runs), "error": e, "error_se": e_se, "error_min": float(err.min()),
                    "error_max": float(err.max()), "error_sd": float(err.std(ddof=1)) if err.size > 1 else 0.0,
                    "ponder": p, "ponder_se": p_se, "errors": err.tolist()})
    return out


def baseline(sweep):
    """(mean, standard error) of the no-ACT runs' error, or None without a baseline."""
    errs = sf.baseline_errors(sweep)
    return mean_se(errs) if errs else None


def summary(sweep):
    """One dict per sweep: task, name, size, best tau, ponder at both ends of the tau range."""
    rows = per_tau(sweep)
    best = min(rows, key=lambda r: r["error"])
    base = baseline(sweep)
    return {"task": task_of(sweep), "name": sweep["name"], "taus": [r["tau"] for r in rows],
            "seeds": max(r["seeds"] for r in rows), "iterations": int(max(r["iterations"] for r in sweep["runs"])),
            "best_tau": best["tau"], "best_error": best["error"], "no_act_error": base[0] if base else None,
            "ponder_low_tau": rows[0]["ponder"], "ponder_high_tau": rows[-1]["ponder"],
            "largest_seed_range": max(r["error_max"] - r["error_min"] for r in rows)}


def print_summary(sweeps):
    print(f"{'sweep':16s} {'task':9s} {'taus':>15s} {'seeds':>5s} {'iters':>6s} {'best tau':>8s} "
          f"{'error':>6s} {'no ACT':>6s} {'rho lo-tau':>10s} {'rho hi-tau':>10s} {'seed range':>10s}")
    for s in map(summary, sweeps):
        taus = f"{label(s['taus'][0])}..{label(s['taus'][-1])}"
        base = "-" if s["no_act_error"] is None else f"{s['no_act_error']:.3f}"
        print(f"{s['name']:16s} {s['task']:9s} {taus:>15s} {s['seeds']:5d} {s['iterations']:6d} "
              f"{label(s['best_tau']):>8s} {s['best_error']:6.3f} {base:>6s} {s['ponder_low_tau']:10.2f} "
              f"{s['ponder_high_tau']:10.2f} {s['largest_seed_range']:10.3f}")


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def styles(sweeps):
    """{sweep name: (colour, line style)}: the task's colour, a new line style per sweep of a task."""
    seen, out = {}, {}
    for s in sweeps:
        t = task_of(s)
        i = seen.get(t, 0)
        seen[t] = i + 1
        out[s["name"]] = (TASK_COLOUR.get(t, "0.3"), LINE_STYLES[i % len(LINE_STYLES)])
    return out


def _no_sweeps(ax):
    ax.text(0.5, 0.5, "no committed sweeps in results/", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def plot_tradeoff(sweeps):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8.2, 7.2), sharex=True)
    if not sweeps:
        _no_sweeps(top)
        _no_sweeps(bottom)
        return fig
    st = styles(sweeps)
    for s in sweeps:
        colour, ls = st[s["name"]]
        rows = per_tau(s)
        t = np.array([r["tau"] for r in rows])
        top.errorbar(t, [r["ponder"] for r in rows], yerr=[r["ponder_se"] for r in rows], ls=ls, marker="o",
                     ms=4, color=colour, capsize=2, label=s["name"])
        bottom.errorbar(t, [r["error"] for r in rows], yerr=[r["error_se"] for r in rows], ls=ls, marker="o",
                        ms=4, color=colour, capsize=2, label=s["name"])
        base = baseline(s)
        if base:
            bottom.axhline(base[0], color=colour, ls=(0, (2, 2)), lw=0.9, alpha=0.8)
    top.axhline(2.0, color="black", lw=0.8, alpha=0.5)
    top.annotate("ρ = 2: one update per step", (0.01, 2.0), xycoords=("axes fraction", "data"),
                 xytext=(0, 3), textcoords="offset points", fontsize=8)
    top.set_ylabel("mean ponder ρ per step")
    bottom.set_ylabel("sequence error rate (held-out)")
    bottom.set_xlabel("time penalty τ (log scale)")
    bottom.set_xscale("log")
    bottom.set_ylim(bottom=-0.02)
    for ax in (top, bottom):
        ax.grid(alpha=0.3, which="both")
        sf.legend_right(ax, fontsize=8)
    top.set_title("What τ does, every committed sweep (marker: mean over seeds, bar: standard error;\n"
                  "bottom, dotted: that sweep's no-ACT error)", fontsize=9)
    fig.tight_layout()
    return fig


def plot_error_vs_ponder(sweeps):
    fig, ax = plt.subplots(figsize=(8.2, 5))
    if not sweeps:
        _no_sweeps(ax)
        return fig
    st = styles(sweeps)
    for s in sweeps:
        colour, ls = st[s["name"]]
        rows = per_tau(s)
        x, y = [r["ponder"] for r in rows], [r["error"] for r in rows]
        ax.plot(x, y, ls=ls, marker="o", ms=4, color=colour, label=s["name"])
        for r in (rows[0], rows[-1]):
            ax.annotate(f"τ={label(r['tau'])}", (r["ponder"], r["error"]), xytext=(4, 4),
                        textcoords="offset points", fontsize=7, color=colour)
        base = baseline(s)
        if base:
            ax.scatter([2.0], [base[0]], marker="X", s=60, color=colour, edgecolors="black", zorder=3)
    ax.set_xlabel("mean ponder ρ per step (X: no ACT, at ρ = 2)")
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(bottom=-0.02)
    ax.grid(alpha=0.3)
    sf.legend_right(ax, fontsize=8)
    ax.set_title("Error against ponder, one curve per sweep through its τ means", fontsize=9)
    fig.tight_layout()
    return fig


def plot_seed_spread(sweeps):
    n = max(1, len(sweeps))
    cols = min(3, n)
    rows_n = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.3 * rows_n), squeeze=False)
    if not sweeps:
        _no_sweeps(axes[0, 0])
        return fig
    st = styles(sweeps)
    for ax, s in zip(axes.flat, sweeps):
        colour, _ = st[s["name"]]
        rows = per_tau(s)
        for i, r in enumerate(rows):
            ys = np.array(r["errors"])
            xs = np.full(ys.size, float(i)) + (np.linspace(-0.12, 0.12, ys.size) if ys.size > 1 else 0.0)
            ax.scatter(xs, ys, s=14, color=colour, alpha=0.8, linewidths=0)
            ax.plot([i - 0.25, i + 0.25], [r["error"]] * 2, color="black", lw=1.2)
        labels = [label(r["tau"]) for r in rows]
        base = sf.baseline_errors(s)
        if base:
            i = len(rows)
            xs = np.full(len(base), float(i)) + (np.linspace(-0.12, 0.12, len(base)) if len(base) > 1 else 0.0)
            ax.scatter(xs, base, s=14, marker="x", color="0.35")
            ax.plot([i - 0.25, i + 0.25], [np.mean(base)] * 2, color="black", lw=1.2)
            labels.append(NO_ACT)
        ax.set_xticks(range(len(labels)), labels, fontsize=7, rotation=45)
        ax.set_ylim(-0.03, 1.03)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"{s['name']} ({task_of(s)})", fontsize=9)
    for ax in list(axes.flat)[len(sweeps):]:
        ax.set_axis_off()
    axes[0, 0].set_ylabel("sequence error (dot: one seed, bar: mean)")
    fig.suptitle("How much a τ's outcome depends on the seed", fontsize=10)
    fig.tight_layout()
    return fig


FIGURES = {
    "tradeoff": plot_tradeoff,
    "error_vs_ponder": plot_error_vs_ponder,
    "seed_spread": plot_seed_spread,
}


def save_all(sweeps, directory=None):
    """Draw the three figures and save them as time_penalty_<name>.png; returns the paths."""
    return sf.save_figures(FIGURES, sweeps, "time_penalty", directory)


def main(argv=None):
    matplotlib.use("Agg")      # files only; set here, not at import, so a notebook keeps its inline backend
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(RESULTS), help="folder holding the sweeps (default results/)")
    ap.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    sweeps = find_sweeps(args.results)
    if sweeps:
        print_summary(sweeps)
    else:
        print("no committed sweeps found: the figures say so")
    sf.print_written(save_all(sweeps, args.figures))


if __name__ == "__main__":
    main()
