"""The figure types every τ sweep has, drawn from a sweep as act_experiments.sweeps.reading reads it.

    plot_error_per_tau      held-out sequence error per τ: bar = mean over seeds, whisker =
                            standard error, dot = one seed, the no-ACT baseline as the last bar
    plot_error_vs_ponder    every run as a point (final mean ponder, final error), the mean of
                            each τ as a large one
    plot_difficulty         mean ponder and error against difficulty, one line per τ
    plot_learning_curves    held-out error and mean ponder during training; with ``mark_solved``,
                            each run's iterations_to_98 as a dot on its curve

The task modules (parity, logic_addition, sort) give them their colours, titles and reference
lines; parity, whose ponder spans more than a factor of 4, asks for a log ponder axis (``log_ponder``).
"""

import matplotlib.pyplot as plt
import matplotlib.ticker as ticker
import numpy as np

from act_experiments.sweeps.reading import NO_ACT, tau_label
from act_experiments.sweeps.stats import by_difficulty, keys, per_group
from act_experiments.sweeps.writing import SOLVED_ERROR
from act_experiments.plots.style import legend_right, line_style, series_label


def reference_line(ax, reference):
    """A dashed crimson line at `reference` = (value, label), e.g. chance; nothing for None."""
    if reference is not None:
        value, text = reference
        ax.axhline(value, color="crimson", ls="--", lw=1, label=text)


def ponder_axis(ax, which, values, name):
    """Put ponder on axis `which` ("x" or "y") of ax: a log scale with plain tick labels
    (1, 2, 5, 10, ...) when the positive `values` span more than a factor of 4, else linear
    (a log axis over a narrow range shows no ticks). Returns the axis label: `name`, saying
    "log scale" when the scale is log ("ρ (held-out)" -> "ρ (held-out; log scale)")."""
    values = [v for v in values if v is not None and v > 0]
    if not values or max(values) / min(values) <= 4:
        return name
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(ticker.NullFormatter())
    return f"{name[:-1]}; log scale)" if name.endswith(")") else f"{name} (log scale)"


def plot_error_per_tau(sweep, colours, title, reference=None, ylim=None, legend=None):
    """Held-out sequence error per key: bar = mean over seeds, whisker = standard error,
    dot = one seed, the no-ACT baseline as the last bar.

    `reference` is (value, label) of a reference_line; `ylim` the y limits (default: 0 to the
    highest of the dots and the reference, plus 0.08); `legend` the keyword arguments of
    ax.legend (default: upper center).
    """
    errors = per_group(sweep, "sequence_error")
    fig, ax = plt.subplots(figsize=(8, 4.3))
    for i, (k, (m, se, values)) in enumerate(errors.items()):
        ax.bar(i, m, width=0.65, color=colours[k], alpha=0.85, yerr=se, capsize=4, ecolor="black")
        jitter = np.linspace(-0.15, 0.15, len(values)) if len(values) > 1 else np.zeros(1)
        ax.scatter(i + jitter, values, s=16, color="black", linewidths=0, zorder=3)
    reference_line(ax, reference)
    ax.set_xticks(range(len(errors)), [tau_label(k) for k in errors])
    ax.set_xlabel("time penalty τ")
    ax.set_ylabel("sequence error rate (held-out)")
    if ylim is None:
        top = max(max(values) for _, _, values in errors.values())
        ylim = (0, max(top, reference[0] if reference else top) + 0.08)
    ax.set_ylim(*ylim)
    ax.legend(**(legend or {"loc": "upper center", "frameon": False}))
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def plot_error_vs_ponder(sweep, colours, title, xlabel="mean ponder ρ per input step (held-out)",
                         reference=None, point_size=22, log_ponder=False):
    """Every run as a small point (final mean ponder, final error), the mean of each key as a
    large one (an X for the baseline).

    `reference` is (value, label) of a reference_line; `log_ponder` puts the ponder on a log
    axis when the runs' ponders span more than a factor of 4 (ponder_axis).
    """
    fig, ax = plt.subplots(figsize=(7.8, 4.8))
    for k in keys(sweep):
        runs = [r for r in sweep["runs"] if r["key"] == k]
        x = np.array([r["mean_ponder"] for r in runs])
        y = np.array([r["sequence_error"] for r in runs])
        marker = "X" if k == NO_ACT else "o"
        ax.scatter(x, y, s=point_size, marker=marker, color=colours[k], alpha=0.6, linewidths=0, zorder=2)
        ax.scatter(x.mean(), y.mean(), s=170, marker=marker, color=colours[k], edgecolors="black", zorder=3,
                   label=series_label(k))
    reference_line(ax, reference)
    if log_ponder:
        xlabel = ponder_axis(ax, "x", [r["mean_ponder"] for r in sweep["runs"]], xlabel)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("sequence error rate (held-out)")
    ax.set_ylim(bottom=-0.02)
    ax.grid(alpha=0.3)
    legend_right(ax)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def plot_difficulty(sweep, colours, title, xlabel, xticks, ponder_label, error_label, error_ylim=(-0.02, None),
                    reference=None, shown=None, edges=None):
    """Mean ponder (top) and error (bottom) against difficulty, one line per key (seeds pooled).

    The ponder panel shades the range from the lowest to the highest seed; the error panel shows
    the means alone, since error bands of several τ overlap until none can be told apart (the
    seed spread figures show them). `xlabel` and `xticks` (None: matplotlib's) describe the
    difficulty axis, `ponder_label` and `error_label` the two y axes; `reference`, when given,
    is a function that draws a reference (e.g. chance) on the error axes. `shown`: the keys to
    draw (default every key); `edges`: difficulty bins (stats.difficulty_bins).
    """
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    highest_error = 0.0
    for k in keys(sweep) if shown is None else shown:
        name, style = series_label(k), line_style(k)
        for ax, field in ((top, "ponder"), (bottom, "error")):
            d, m, lo, hi = by_difficulty(sweep["difficulty"], k, field, edges)
            if d.size:
                ax.plot(d, m, style, marker="o", ms=4, color=colours[k], label=name)
                if field == "ponder":
                    ax.fill_between(d, lo, hi, color=colours[k], alpha=0.12, linewidth=0)
                else:
                    highest_error = max(highest_error, float(max(m)))
    if reference is not None:
        reference(bottom)
    top.set_ylabel(ponder_label)
    bottom.set_ylabel(error_label)
    bottom.set_xlabel(xlabel)
    if xticks is not None:
        bottom.set_xticks(xticks)
    if error_ylim == "fit":
        # room for every curve: a baseline can be far worse than chance on some difficulties
        error_ylim = (-0.02, min(1.02, max(0.7, highest_error + 0.05)))
    bottom.set_ylim(*error_ylim)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        legend_right(ax)
    top.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def mark_iterations_to_98(ax, sweep, colours):
    """On the error axes ``ax``: a dot where each run first reached 98% right (its
    "iterations_to_98", on its curve) and a dotted line at that error (writing.SOLVED_ERROR).
    Draws nothing when no run has reached it, so a figure of a sweep written before the count
    existed keeps its bytes."""
    solved = [r for r in sweep["runs"] if r.get("iterations_to_98") is not None]
    if not solved:
        return
    ax.axhline(SOLVED_ERROR, color="0.3", ls=":", lw=1, label=f"98% right (error {SOLVED_ERROR:g})")
    error_at = {(r["run"], int(r["iteration"])): r["sequence_error"] for r in sweep["curves"]}
    for r in solved:
        it = int(r["iterations_to_98"])
        ax.plot(it, error_at[(r["run"], it)], "o", ms=5, color=colours[r["key"]], mec="black", mew=0.6, zorder=4)


def plot_learning_curves(sweep, colours, title, reference=None, error_ylim=(-0.02, None), log_ponder=False,
                         mark_solved=False):
    """Held-out sequence error (top) and mean ponder (bottom) during training: a thin line per
    seed, a thick one for the mean over seeds.

    `reference` is (value, label) of a reference_line on the error axes; `log_ponder` puts the
    ponder on a log axis when the curves' ponders span more than a factor of 4 (ponder_axis);
    `mark_solved` marks each run's iterations_to_98 (mark_iterations_to_98).
    """
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.8, 7), sharex=True)
    for k in keys(sweep):
        rows = [r for r in sweep["curves"] if r["key"] == k]
        seeds = sorted({r["seed"] for r in rows})
        its = sorted({int(r["iteration"]) for r in rows})
        style = line_style(k)
        for ax, field in ((top, "sequence_error"), (bottom, "mean_ponder")):
            grid = np.full((len(seeds), len(its)), np.nan)
            for r in rows:
                grid[seeds.index(r["seed"]), its.index(int(r["iteration"]))] = r[field]
            for line in grid:
                ax.plot(its, line, style, color=colours[k], lw=0.7, alpha=0.35)
            ax.plot(its, np.nanmean(grid, axis=0), style, color=colours[k], lw=2, label=series_label(k))
    reference_line(top, reference)
    if mark_solved:
        mark_iterations_to_98(top, sweep, colours)
    top.set_ylabel("sequence error rate (held-out)")
    top.set_ylim(*error_ylim)
    ponder_label = "mean ponder ρ (held-out)"
    if log_ponder:
        ponder_label = ponder_axis(bottom, "y", [r["mean_ponder"] for r in sweep["curves"]], ponder_label)
    bottom.set_ylabel(ponder_label)
    bottom.set_xlabel("training iteration")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    legend_right(top)
    top.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig
