"""The figure of each fixed-computation control: adaptivity or computation? (act_experiments.controls).

    plot_control(pair)    two panels, from results/<ACT sweep>/ and results/<control>/:
        left   held-out sequence error against updates per input N: the control's F (a line over
               its means, a dot per seed), every τ of the ACT sweep (a shade of blue each, a
               horizontal bar over the range of its mean N, ρ − 1 to ρ), and no ACT at N = 1
        right  error against the input's difficulty for ACT at τ*, the control at its F and no ACT
               (seeds pooled; the band spans the best and worst seed)

The same CSV files always give the same bytes (act_experiments.figures.save_figure).
"""

import matplotlib.pyplot as plt
import numpy as np

from act_experiments.controls import ladder
from act_experiments.results import NO_ACT, fixed_key, task_of
from act_experiments.sweep_stats import by_difficulty, difficulty_bins

DIFFICULTY_LABEL = {
    "parity": "number of non-zero bits",
    "logic": "number of gates in the input vector",
    "addition": "number of digits of the input number",
    "sort": "sequence length (numbers to sort)",
}
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
