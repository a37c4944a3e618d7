"""Adaptivity or computation? Each τ sweep beside its fixed-computation control, seed by seed.

A control sweep (``scripts/sweep.py --fixed-ponders``) trains the network of an ACT sweep with
its halting unit removed, F updates on every input, with the ACT sweep's settings and seeds: the
same seed gives the same initial weights, batches and held-out set, so the two are compared as
pairs. Updates are counted as N, not ρ = N + R: the control's N is F (its ρ = F + 1 would charge
it for a remainder it does not have); ACT's committed ρ puts its mean N between ρ − 1 and ρ.

    pair = load_pair("logic")                 # the ACT sweep, its control, τ* and F at equal compute
    d = paired(pair)                          # the claim's numbers: per-seed differences, mean, s.e.
    rows = ladder(pair)                       # error against updates, every group of both sweeps

``CONTROLS`` names the pairs the course committed, with the τ each notebook highlights and the F
that matches its computation (docs/<task>.md states each claim as it was written before its run).

``run(settings, out)`` trains a control (scripts/sweep.py's options as a dict, with fixed_ponders)
into the folder of sweeps ``out``, ``read(out)`` is ``load_pair`` of every control there, ``plot(data,
figures)`` draws each control's figure and ``main`` is scripts/plot_controls.py.
"""

import sys
from pathlib import Path
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from act_experiments import tables
from act_experiments.figures import plot_main, save_figures
from act_experiments.plots.style import DIFFICULTY_LABEL
from act_experiments.sweeps.experiment import run_into
from act_experiments.sweeps.reading import by_seed, fixed_key, load_sweep, NO_ACT, task_of
from act_experiments.sweeps.stats import by_difficulty, difficulty_bins, keys, mean_se


@dataclass(frozen=True)
class Control:
    """One ACT sweep and its control: the τ the claim is about and the F that matches its compute."""

    act: str           # the ACT sweep's folder under results/
    fixed: str         # its control's folder
    tau: float         # τ*: the ACT setting the task's notebook highlights
    F: int             # the control with about τ*'s mean number of updates


CONTROLS = {
    "parity": Control("parity16_seeds", "parity16_fixed", 1e-3, 3),
    "logic": Control("logic_gates10", "logic_gates10_fixed", 1e-3, 20),
    "addition": Control("addition_3digit", "addition_3digit_fixed", 0.1, 3),
    "sort": Control("sort_len8", "sort_len8_fixed", 1e-4, 3),
}


def load_pair(task, controls=CONTROLS, results=tables.RESULTS):
    """{"control": the Control, "act": the ACT sweep, "fixed": the control sweep} (reading.load_sweep),
    from the folder of sweeps ``results``."""
    if task not in controls:
        raise ValueError(f"task must be one of {sorted(controls)}, got {task!r}")
    c = controls[task]
    return {"control": c, "act": load_sweep(Path(results) / c.act), "fixed": load_sweep(Path(results) / c.fixed)}


def paired(pair, field="sequence_error", tau=None, F=None):
    """ACT at τ (default τ*) against the control with F updates (default the Control's), seed by seed.

    Returns {"seeds", "act", "fixed" (each run's field, in seed order), "differences" (ACT − fixed
    per seed: negative where ACT is better), "mean", "se" (standard error of the mean
    difference), "z" (mean / se; None when se is 0), "holds" (the claim: mean below −2 se)}.
    Raises ValueError when the two sweeps share no seed.
    """
    c = pair["control"]
    tau = c.tau if tau is None else tau
    F = c.F if F is None else F
    a, f = by_seed(pair["act"], tau, field), by_seed(pair["fixed"], fixed_key(F), field)
    seeds = sorted(a.keys() & f.keys())
    if not seeds:
        raise ValueError(f"{c.act} at tau {tau:g} and {c.fixed} at F = {F} share no seed")
    act_values, fixed_values = [a[s] for s in seeds], [f[s] for s in seeds]
    differences = [x - y for x, y in zip(act_values, fixed_values)]
    mean, se = mean_se(differences)
    return {"seeds": seeds, "act": act_values, "fixed": fixed_values, "differences": differences,
            "mean": mean, "se": se, "z": mean / se if se > 0 else None, "holds": mean < -2 * se}


def ladder(pair):
    """Error against updates for every group of both sweeps: the control's F, ACT's τs, no ACT.

    One dict per group: key, kind ("fixed", "act" or "no ACT"), updates_low and updates_high (the
    range of the mean N: F and F for the control, 1 and 1 for no ACT, ρ − 1 and ρ for ACT), the
    mean sequence error and its standard error, and each seed's (seed, error, ρ).
    """
    rows = []
    for sweep in (pair["act"], pair["fixed"]):
        for key in keys(sweep):
            runs = [r for r in sweep["runs"] if r["key"] == key]
            error, error_se = mean_se([r["sequence_error"] for r in runs])
            rho = float(np.mean([r["mean_ponder"] for r in runs]))
            if key == NO_ACT:
                kind, low, high = NO_ACT, 1.0, 1.0
            elif runs[0]["fixed_ponder"] is not None:
                kind, low = "fixed", float(runs[0]["fixed_ponder"])
                high = low
            else:
                kind, low, high = "act", rho - 1.0, rho
            rows.append({"key": key, "kind": kind, "updates_low": low, "updates_high": high, "rho": rho,
                         "error": error, "error_se": error_se,
                         "runs": [(r["seed"], r["sequence_error"], r["mean_ponder"]) for r in runs]})
    return rows


# ---------------------------------------------------------------------------------------------
# The figure
# ---------------------------------------------------------------------------------------------

ACT_COLOUR, FIXED_COLOUR, BASELINE_COLOUR = "tab:blue", "tab:orange", "0.4"
MAX_BINS = 8          # parity's 16 bit counts in 8 bins, as the parity figures do


def plot_control(pair):
    """The control's figure (see the module's docstring); returns the matplotlib figure."""
    c, task = pair["control"], task_of(pair["act"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    _updates_panel(left, pair)
    _difficulty_panel(right, pair, task)
    fig.suptitle(f"{task.capitalize()}: ACT ({c.act}) against the same network with a fixed number of "
                 f"updates ({c.fixed})", fontsize=10)
    fig.tight_layout()
    return fig


def _updates_panel(ax, pair):
    rows = ladder(pair)
    tau_star = pair["control"].tau
    fixed = [r for r in rows if r["kind"] == "fixed"]
    if fixed:
        F = [r["updates_low"] for r in fixed]
        ax.errorbar(F, [r["error"] for r in fixed], yerr=[r["error_se"] for r in fixed], color=FIXED_COLOUR,
                    marker="s", capsize=3, label="fixed F updates (mean ± s.e.)")
        for r in fixed:
            ax.scatter([r["updates_low"]] * len(r["runs"]), [e for _, e, _ in r["runs"]], s=10,
                       color=FIXED_COLOUR, alpha=0.5, linewidths=0)
    taus = sorted(r["key"] for r in rows if r["kind"] == "act")
    shades = plt.get_cmap("Blues")(np.linspace(0.45, 0.95, len(taus))) if taus else []
    for r in rows:
        if r["kind"] == "act":
            mid, half = (r["updates_low"] + r["updates_high"]) / 2, (r["updates_high"] - r["updates_low"]) / 2
            star = r["key"] == tau_star
            ax.errorbar([mid], [r["error"]], xerr=[[half], [half]], yerr=[r["error_se"]], fmt="o",
                        color=shades[taus.index(r["key"])], capsize=3, ms=7 if star else 5,
                        label=f"ACT τ = {r['key']:g}" + (" (the claim's)" if star else ""))
        elif r["kind"] == NO_ACT:
            ax.errorbar([1.0], [r["error"]], yerr=[r["error_se"]], fmt="x", color=BASELINE_COLOUR, ms=8,
                        capsize=3, label="no ACT (one update)")
    ax.set_xscale("log")
    ticks = sorted({1.0, *(r["updates_low"] for r in fixed)})
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("updates per input N (log scale; ACT's bar: its mean N lies between ρ − 1 and ρ)")
    ax.set_ylabel("sequence error rate (held-out)")
    top = max(max(e for _, e, _ in r["runs"]) for r in rows)
    ax.set_ylim(0, top * 1.15)                 # room for the labels above the highest point
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False, loc="best")


def _difficulty_panel(ax, pair, task):
    c = pair["control"]
    series = [(pair["act"], c.tau, f"ACT τ = {c.tau:g}", ACT_COLOUR, "-"),
              (pair["fixed"], fixed_key(c.F), f"fixed F = {c.F}", FIXED_COLOUR, "-"),
              (pair["act"], NO_ACT, "no ACT", BASELINE_COLOUR, "--")]
    values = [r["difficulty"] for s, *_ in series for r in s["difficulty"]]
    edges = difficulty_bins(values, MAX_BINS) if values else None
    for sweep, key, label, colour, style in series:
        x, mean, low, high = by_difficulty(sweep["difficulty"], key, "error", edges)
        if len(x):
            ax.plot(x, mean, style, marker="o", ms=3, color=colour, label=label)
            ax.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0)
    ax.set_xlabel(f"difficulty: {DIFFICULTY_LABEL.get(task, 'difficulty')}")
    ax.set_ylabel("error rate (held-out; band: best to worst seed)")
    ax.set_ylim(bottom=-0.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    if task in ("logic", "addition", "sort"):
        ax.set_xticks(np.unique(np.round(values)).astype(int) if values else [])


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

def describe(task, pair):
    """The paired numbers and the ladder, as lines of text."""
    c, d = pair["control"], paired(pair)
    lines = [f"{task}: ACT tau={c.tau:g} ({c.act}) against fixed F={c.F} ({c.fixed}), seeds {d['seeds']}",
             "  ACT   " + " ".join(f"{v:.3f}" for v in d["act"]),
             "  fixed " + " ".join(f"{v:.3f}" for v in d["fixed"]),
             f"  ACT - fixed: {d['mean']:+.3f} +- {d['se']:.3f} (s.e. of the paired difference); "
             f"claim (below by 2 s.e.) {'holds' if d['holds'] else 'fails'}"]
    for r in ladder(pair):
        lines.append(f"  {str(r['key']):>10}  N {r['updates_low']:5.2f}-{r['updates_high']:5.2f}  "
                     f"error {r['error']:.3f} +- {r['error_se']:.3f}")
    return "\n".join(lines)


SCRIPT = "scripts/plot_controls.py"
DESCRIPTION = 'Figures and paired numbers of the fixed-computation controls: adaptivity or computation?'


def run(settings, out):
    """Train a control, settings["name"], into the folder of sweeps ``out``: scripts/sweep.py's options
    as a dict, with fixed_ponders (act_experiments.sweeps.experiment.run_into); returns its folder."""
    return run_into(settings, out)


def read(out=tables.RESULTS, tasks=None):
    """{task: load_pair} of the tasks of CONTROLS (or of ``tasks``) whose control is in the folder of
    sweeps ``out``: every one, when ``tasks`` is not given, that is there."""
    if tasks is None:
        tasks = [t for t, c in CONTROLS.items() if (Path(out) / c.fixed / "runs.csv").exists()]
    return {task: load_pair(task, results=out) for task in tasks}


def plot(data, figures=None):
    """Draw each pair's figure as <figures or figures/>/control_<task>.png; returns the paths."""
    return save_figures({task: lambda _, pair=pair: plot_control(pair) for task, pair in data.items()}, None,
                        "control", figures)


def main(argv=None):
    """scripts/plot_controls.py: the paired numbers and the figure of each committed control
    (``plot_main``: every pair is read before any figure is written)."""
    def summary(pairs):
        for task, pair in pairs.items():
            print(describe(task, pair))

    return plot_main(argv, script=SCRIPT, description=DESCRIPTION,
                     what=f"tasks to draw, of {', '.join(CONTROLS)} (default: every task whose control is committed)",
                     read=lambda tasks: [read(tables.RESULTS, tasks or None)], summary=summary,
                     plot=lambda pairs, figures, prefix: plot(pairs, figures))


if __name__ == "__main__":
    sys.exit(main())
