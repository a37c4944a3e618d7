"""Notebook 05's τ explorer: pick a τ of a committed τ sweep and see every seed's error and ponder
against the difficulty of the input, with the no-ACT baseline for reference.

The numbers are the sweep's own, read from its committed CSVs by act_experiments.sweeps.reading
(difficulty.csv per run, runs.csv per run) and pooled by act_experiments.sweeps.stats; the figure
only filters them by the τ chosen in its select, in the browser (JupyterLab or the book, no kernel
needed). Data: one row per ACT run and difficulty (τ as its label, seed, difficulty, error,
ponder), the baseline's error per difficulty pooled over its seeds, and one line per τ that sums
up its runs.
"""

from act_experiments.plots.vega import VegaFigure
from act_experiments.sweeps import stats
from act_experiments.sweeps.reading import NO_ACT, tau_label

DIGITS = 4
PANEL = {"width": 220, "height": 180}       # two side by side and a legend fit the book's column


def _round(x):
    return None if x is None else round(float(x), DIGITS)


def seed_rows(sweep):
    """One dict per ACT run and difficulty of `sweep` (reading.load_sweep's dict, with its
    "difficulty" table): tau (its label, '1e-3'), seed, difficulty, error, ponder, count."""
    if not sweep.get("difficulty"):
        raise ValueError(f"sweep {sweep.get('name')!r} has no difficulty table (difficulty.csv)")
    return [{"tau": tau_label(r["key"]), "seed": int(r["seed"]), "difficulty": int(r["difficulty"]),
             "error": _round(r["error"]), "ponder": _round(r["ponder"]), "count": int(r["count"])}
            for r in sweep["difficulty"] if r["act"]]


def baseline_rows(sweep):
    """The no-ACT runs' error per difficulty, seeds pooled (stats.by_difficulty); [] without them."""
    difficulty, error, low, high = stats.by_difficulty(sweep["difficulty"], NO_ACT, "error")
    return [{"difficulty": float(d), "error": _round(e), "low": _round(lo), "high": _round(hi)}
            for d, e, lo, hi in zip(difficulty, error, low, high)]


def tau_lines(sweep):
    """One dict per τ: tau (its label) and text, a line with its runs' mean held-out error and mean
    ponder (runs.csv, stats.per_group) and how many of them end below 5% error."""
    errors, ponders = stats.per_group(sweep, "sequence_error"), stats.per_group(sweep, "mean_ponder")
    lines = []
    for tau in stats.taus(sweep):
        mean, se, values = errors[tau]
        lines.append({"tau": tau_label(tau), "text": (
            f"τ = {tau_label(tau)}: {len(values)} seeds, error {mean:.3f} ± {se:.3f} (from {min(values):.3f} "
            f"to {max(values):.3f}, {sum(v < 0.05 for v in values)} below 0.05), mean ρ {ponders[tau][0]:.2f}")})
    return lines


def _panel(alt, runs, field, title, scale, x_title):
    lines = runs.mark_line(point=True, strokeWidth=1.5).encode(
        x=alt.X("difficulty:Q", title=x_title, axis=alt.Axis(tickMinStep=1)),
        y=alt.Y(f"{field}:Q", title=None, scale=scale),
        color=alt.Color("seed:N", title="seed", legend=alt.Legend(orient="right")),
        tooltip=["seed:N", "difficulty:Q", alt.Tooltip(f"{field}:Q", format=".3f"), "count:Q"])
    return lines.properties(title=title, **PANEL)


def tau_explorer(sweep, start=None, difficulty_title="number of non-zero bits"):
    """The explorer of one sweep (reading.load_sweep's dict) as a VegaFigure: a select over its τ
    (starting at `start`, a τ of the sweep, default the smallest), each seed's error and ponder
    against difficulty, the no-ACT error pooled over its seeds (dashed), and the τ's summary line."""
    import altair as alt
    taus = stats.taus(sweep)
    if not taus:
        raise ValueError(f"sweep {sweep.get('name')!r} has no ACT runs")
    start = taus[0] if start is None else start
    if start not in taus:
        raise ValueError(f"start must be one of the sweep's τ {[tau_label(t) for t in taus]}, got {start!r}")
    tau = alt.param(name="tau", value=tau_label(start),
                    bind=alt.binding_select(options=[tau_label(t) for t in taus], name="time penalty τ "))
    chosen = alt.datum.tau == tau
    runs = alt.Chart(alt.Data(name="runs")).transform_filter(chosen)
    error = _panel(alt, runs, "error", "held-out error, one line per seed", alt.Scale(domain=[0, 1]),
                   difficulty_title)
    baseline = alt.Chart(alt.Data(name="baseline")).mark_line(color="#777", strokeDash=[5, 4]).encode(
        x="difficulty:Q", y="error:Q", tooltip=[alt.Tooltip("error:Q", title="no ACT", format=".3f")])
    top = max(r["ponder"] for r in seed_rows(sweep))
    ponder = _panel(alt, runs, "ponder", "mean ponder ρ = N + R", alt.Scale(domain=[1, top + 0.5], nice=False),
                    difficulty_title)
    line = alt.Chart(alt.Data(name="lines")).transform_filter(chosen).mark_text(
        align="left", fontSize=12).encode(x=alt.value(0), y=alt.value(10), text="text:N").properties(
        width=2 * PANEL["width"] + 60, height=20, view=alt.ViewBackground(stroke=None))
    chart = alt.vconcat(line, alt.hconcat(alt.layer(error, baseline), ponder)).add_params(tau).properties(
        title=alt.Title(f"results/{sweep['name']}; dashed: the runs without ACT, seeds pooled",
                        fontSize=12, fontWeight="normal", anchor="start"))
    spec = chart.to_dict()           # checked against Vega-Lite's schema, then the data (quicker)
    spec["datasets"] = {"runs": seed_rows(sweep), "baseline": baseline_rows(sweep), "lines": tau_lines(sweep)}
    return VegaFigure(spec, "tau", text="\n".join(line["text"] for line in tau_lines(sweep)))
