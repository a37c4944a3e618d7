"""How the sweep figures show τ: legend entries, line styles, colours, and the legend's place."""

import matplotlib.pyplot as plt
import numpy as np

from act_experiments.sweeps.reading import NO_ACT, tau_label

# What the x axis of a figure by difficulty counts, per task (act_experiments.data.tasks.difficulty).
DIFFICULTY_LABEL = {
    "parity": "number of non-zero bits",
    "logic": "number of gates in the input vector",
    "addition": "number of digits of the input number",
    "sort": "sequence length (numbers to sort)",
}


def series_label(key):
    """Legend entry of a key: 'no ACT' or 'τ = 1e-3'."""
    return NO_ACT if key == NO_ACT else f"τ = {tau_label(key)}"


def line_style(key):
    """Dashed for the baseline, solid for a τ."""
    return "--" if key == NO_ACT else "-"


def tau_colours(taus, cmap, start, change, baseline, spacing="log"):
    """{τ: colour} along a matplotlib colour map, and `baseline` for NO_ACT.

    The smallest τ gets cmap(start), the largest cmap(start + change), the others lie between:
    by log τ (spacing="log") or evenly by rank (spacing="rank"). A lone τ gets cmap(start).
    """
    taus = sorted(taus)
    if spacing == "log":
        logs = np.log10(taus) if taus else np.array([])
        span = float(logs.max() - logs.min()) if len(taus) > 1 else 1.0
        where = [start + change * (lt - logs.min()) / span for lt in logs]
    elif spacing == "rank":
        where = [start + change * (i / max(1, len(taus) - 1)) for i in range(len(taus))]
    else:
        raise ValueError(f"spacing must be 'log' or 'rank', got {spacing!r}")
    colours = plt.get_cmap(cmap)
    out = {t: colours(x) for t, x in zip(taus, where)}
    out[NO_ACT] = baseline
    return out


def legend_right(ax, fontsize=9):
    """The legend outside the axes, on the right."""
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=fontsize)
