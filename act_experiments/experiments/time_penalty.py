"""What the time penalty τ does across every committed sweep (Graves 2016, eq. 12 and section 3):
what scripts/plot_time_penalty.py prints and draws, and what notebook 10 quotes.

The summary table has a line for each readable τ sweep (act_experiments.sweeps.reading.find_sweeps:
parity*, logic*, addition*, sort*, whichever exist). The figures, time_penalty_*.png, show one
sweep per task, the one with the most training (headline), so that each stays readable:

    tradeoff          mean ponder (top) and mean sequence error (bottom) against τ, one line
                      per task, its no-ACT error as a dotted line
    error_vs_ponder   one curve per task through its (mean ponder, mean error) points, ordered
                      by τ: the price of each unit of ponder
    seed_spread       every seed's error against τ, one panel per task: how much the outcome of
                      a τ depends on the seed

With no sweep at all, each figure says so.

``run(settings, out)`` trains one more sweep (scripts/sweep.py's options as a dict, its name
among them) into the folder of sweeps ``out``, ``read(out)`` finds every sweep there, ``plot(data,
figures)`` draws FIGURES and ``main`` is scripts/plot_time_penalty.py.
"""

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from act_experiments import tables
from act_experiments.plots.style import legend_right
from act_experiments.sweeps import reading
from act_experiments.sweeps.experiment import sweep_experiment
from act_experiments.sweeps.reading import NO_ACT, task_of, tau_label
from act_experiments.sweeps.stats import baseline_errors, mean_se, table


TASK_COLOUR = {"parity": "tab:blue", "logic": "tab:orange", "addition": "tab:green", "sort": "tab:purple"}
LINE_STYLES = ("-", "--", "-.", ":")


def per_tau(sweep):
    """The rows of stats.table for the taus (ascending), without the baseline or any control."""
    return [r for r in table(sweep) if isinstance(r["key"], float)]


def baseline(sweep):
    """(mean, standard error) of the no-ACT runs' error, or None without a baseline."""
    errors = baseline_errors(sweep)
    return mean_se(errors) if errors else None


def summary(sweep):
    """One dict per sweep: task, name, size, best τ, ponder at both ends of the τ range."""
    rows = per_tau(sweep)
    best = min(rows, key=lambda r: r["error"])
    base = baseline(sweep)
    return {"task": task_of(sweep), "name": sweep["name"], "taus": [r["tau"] for r in rows],
            "seeds": max(r["seeds"] for r in rows), "iterations": int(max(r["iterations"] for r in sweep["runs"])),
            "best_tau": best["tau"], "best_error": best["error"], "no_act_error": base[0] if base else None,
            "ponder_low_tau": rows[0]["ponder"], "ponder_high_tau": rows[-1]["ponder"],
            "largest_seed_range": max(r["error_max"] - r["error_min"] for r in rows)}


def print_summary(sweeps):
    """A table with one line per sweep: its τ range, size, best τ and how ponder moves with τ."""
    print(f"{'sweep':16s} {'task':9s} {'taus':>15s} {'seeds':>5s} {'iters':>6s} {'best tau':>8s} "
          f"{'error':>6s} {'no ACT':>6s} {'rho lo-tau':>10s} {'rho hi-tau':>10s} {'seed range':>10s}")
    for s in map(summary, sweeps):
        taus = f"{tau_label(s['taus'][0])}..{tau_label(s['taus'][-1])}"
        base = "-" if s["no_act_error"] is None else f"{s['no_act_error']:.3f}"
        print(f"{s['name']:16s} {s['task']:9s} {taus:>15s} {s['seeds']:5d} {s['iterations']:6d} "
              f"{tau_label(s['best_tau']):>8s} {s['best_error']:6.3f} {base:>6s} {s['ponder_low_tau']:10.2f} "
              f"{s['ponder_high_tau']:10.2f} {s['largest_seed_range']:10.3f}")


def training(sweep):
    """Training iterations summed over a sweep's runs: how much evidence it holds."""
    return sum(int(r["iterations"]) for r in sweep["runs"])


def headline(sweeps):
    """One sweep per task, the one with the most training, in the order the tasks first appear."""
    best = {}
    for s in sweeps:
        t = task_of(s)
        if t not in best or training(s) > training(best[t]):
            best[t] = s
    return list(best.values())


def lines(sweeps):
    """(sweep, colour, line style, per_tau rows) for each sweep: the colour of its task, and a
    line style of its own among the sweeps of that task."""
    seen, out = {}, []
    for s in sweeps:
        t = task_of(s)
        i = seen.get(t, 0)
        seen[t] = i + 1
        out.append((s, TASK_COLOUR.get(t, "0.3"), LINE_STYLES[i % len(LINE_STYLES)], per_tau(s)))
    return out


def _no_sweeps(ax):
    ax.text(0.5, 0.5, "no committed sweeps in results/", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def _seed_dots(ax, i, errors, **style):
    """The errors of one group's seeds as dots around x = i, and their mean as a short bar."""
    xs = np.full(len(errors), float(i)) + (np.linspace(-0.12, 0.12, len(errors)) if len(errors) > 1 else 0.0)
    ax.scatter(xs, errors, s=14, **style)
    ax.plot([i - 0.25, i + 0.25], [np.mean(errors)] * 2, color="black", lw=1.2)


def plot_tradeoff(sweeps):
    sweeps = headline(sweeps)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8.2, 7.2), sharex=True)
    if not sweeps:
        _no_sweeps(top)
        _no_sweeps(bottom)
        return fig
    for s, colour, ls, rows in lines(sweeps):
        t = np.array([r["tau"] for r in rows])
        for ax, field in ((top, "ponder"), (bottom, "error")):
            ax.errorbar(t, [r[field] for r in rows], yerr=[r[f"{field}_se"] for r in rows], ls=ls, marker="o",
                        ms=4, color=colour, capsize=2, label=f"{task_of(s)} ({s['name']})")
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
        legend_right(ax, fontsize=8)
    top.set_title("What τ does, one sweep per task, the one with the most training (marker: mean over\n"
                  "seeds, bar: standard error; bottom, dotted: that sweep's no-ACT error)", fontsize=9)
    fig.tight_layout()
    return fig


def plot_error_vs_ponder(sweeps):
    sweeps = headline(sweeps)
    fig, ax = plt.subplots(figsize=(8.2, 5))
    if not sweeps:
        _no_sweeps(ax)
        return fig
    for s, colour, ls, rows in lines(sweeps):
        x, y = [r["ponder"] for r in rows], [r["error"] for r in rows]
        ax.plot(x, y, ls=ls, marker="o", ms=4, color=colour, label=f"{task_of(s)} ({s['name']})")
        for r in (rows[0], rows[-1]):
            ax.annotate(f"τ={tau_label(r['tau'])}", (r["ponder"], r["error"]), xytext=(4, 4),
                        textcoords="offset points", fontsize=7, color=colour)
        base = baseline(s)
        if base:
            ax.scatter([2.0], [base[0]], marker="X", s=60, color=colour, edgecolors="black", zorder=3)
    ax.set_xlabel("mean ponder ρ per step (X: no ACT, at ρ = 2)")
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(bottom=-0.02)
    ax.grid(alpha=0.3)
    legend_right(ax, fontsize=8)
    ax.set_title("Error against ponder, one curve per task through its τ means", fontsize=9)
    fig.tight_layout()
    return fig


def plot_seed_spread(sweeps):
    sweeps = headline(sweeps)
    n = max(1, len(sweeps))
    cols = min(3, n)
    rows_n = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.3 * rows_n), squeeze=False)
    if not sweeps:
        _no_sweeps(axes[0, 0])
        return fig
    for ax, (s, colour, _, rows) in zip(axes.flat, lines(sweeps)):
        for i, r in enumerate(rows):
            _seed_dots(ax, i, r["errors"], color=colour, alpha=0.8, linewidths=0)
        labels = [tau_label(r["tau"]) for r in rows]
        base = baseline_errors(s)
        if base:
            _seed_dots(ax, len(rows), base, marker="x", color="0.35")
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


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/plot_time_penalty.py"
DESCRIPTION = 'What the time penalty tau does, across every committed sweep (Graves 2016, eq. 12 and section 3).'


def load(out):
    """Every sweep in the folder ``out`` that these figures use (reading.find_sweeps); [] when there is
    none. ValueError when ``out`` is not a folder: a mistyped folder must not redraw the committed
    figures as "no sweeps"."""
    if not Path(out).is_dir():
        raise ValueError(f"{out} is not a folder")
    return reading.find_sweeps(out)


def print_all(sweeps):
    """print_summary, or a line saying that there is no sweep."""
    if sweeps:
        print_summary(sweeps)
    else:
        print("no committed sweeps found: the figures say so")


# run(settings, out) trains one more τ sweep, settings["name"], into the folder of sweeps out/;
# read(out=None) finds every sweep there (default results/); plot(data, figures=None, prefix=None)
# draws FIGURES as <prefix or time_penalty>_*.png; main(argv=None) is scripts/plot_time_penalty.py
run, read, plot, main = sweep_experiment(load, FIGURES, prefix="time_penalty", default=lambda: tables.RESULTS,
                                         summary=print_all, script=SCRIPT, description=DESCRIPTION, locate=Path,
                                         folder_of_sweeps=True)


if __name__ == "__main__":
    sys.exit(main())
