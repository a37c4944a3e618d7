"""When does adapting pay? Every task's frontier of error against measured updates, on one page.

A fixed schedule of F updates per input is one point (F, error). Between two such networks, any
mean number of updates can be had without adapting at all: run the F = 2 network on a random
fraction of the inputs and the F = 3 network on the rest, and the error and the mean N are the same
mixture of the two points. So the fixed networks reach every point on or above the **lower convex
hull** of their points, the frontier; a network shows that *adapting* pays only where it lies
below that frontier at its own measured mean N. The random schedule of ACT's own N (the measured
controls) tests the same from the other side: the same N distribution, given to inputs at random.

    controls = read()                  # every committed control: {name: control}
    gap = gaps(controls["parity"])     # each ACT network's error minus the frontier at its N
    plot(controls)                     # figures/frontier.png, one panel per control

A control is {"title", "sweeps" (what it reads), "ladder" ({F: {seed: error}}: the fixed networks,
no ACT as F = 1), "act" ({τ: [(seed, N, error)]}), "random" (the same for the random schedules, or
None when that sweep is not committed), "unit" (what N counts)}. The measured controls come from
act_experiments.experiments.measured (its MEASURED and fixed_ladder), skewed parity from
act_experiments.experiments.skewed, the pointer chains from the Universal Transformer's committed
``compute`` experiment (fixed depths against ACT; no random depths yet).

``run(settings, out)`` trains a control's sweep into the folder of sweeps ``out`` (scripts/sweep.py's
options as a dict), ``read(out)`` reads every control there, ``plot(data, figures)`` draws
figures/frontier.png and ``main`` is scripts/plot_frontier.py.
"""

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from act_experiments import tables
from act_experiments.experiments import measured, skewed
from act_experiments.experiments import universal_transformer as ut_experiment
from act_experiments.experiments.measured import ACT_COLOUR, FIXED_COLOUR, RANDOM_COLOUR, fixed_ladder
from act_experiments.figures import plot_main, save_figure
from act_experiments.sweeps.experiment import run_into
from act_experiments.sweeps.reading import load_sweep, random_key
from act_experiments.sweeps.stats import mean_se, taus

UPDATES = "updates per input N"


# ---------------------------------------------------------------------------------------------
# The frontier: a lower convex hull, and a point's distance below it
# ---------------------------------------------------------------------------------------------


def lower_hull(points):
    """The lower convex hull of (x, y) points: its vertices sorted by x, from the smallest x to the
    largest (Andrew's monotone chain). Of points that share an x, only the lowest can be on it."""
    pts = sorted({(float(x), float(y)) for x, y in points})
    hull = []
    for p in pts:
        if hull and hull[-1][0] == p[0]:
            continue                      # the same x, higher: sorted puts the lowest first
        # drop the last vertex while it does not lie strictly below the chord from the one before to p
        while len(hull) >= 2 and _cross(hull[-2], hull[-1], p) <= 0:
            hull.pop()
        hull.append(p)
    return hull


def _cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def hull_at(hull, x):
    """The frontier's value at x (the straight line between the vertices around it), or None when x
    lies outside the hull's range of x."""
    xs, ys = [p[0] for p in hull], [p[1] for p in hull]
    if not hull or not xs[0] <= x <= xs[-1]:
        return None
    return float(np.interp(x, xs, ys))


def below(point, hull, margin=0.0):
    """Whether the point (x, y) lies below the frontier at its x by at least ``margin`` (False when
    its x is outside the hull's range: no fixed network brackets it)."""
    at = hull_at(hull, point[0])
    return at is not None and point[1] <= at - margin


def ladder_hull(control):
    """The frontier of a control's fixed networks: the lower hull of each rung's mean error."""
    return lower_hull([(F, np.mean(list(errors.values()))) for F, errors in control["ladder"].items()])


def gaps(control):
    """{τ: [(seed, N, error, the frontier at N or None, error minus it or None)]} of a control's ACT
    networks against the frontier of its fixed networks' means."""
    hull = ladder_hull(control)
    out = {}
    for tau, points in control["act"].items():
        rows = []
        for seed, N, error in points:
            at = hull_at(hull, N)
            rows.append((seed, N, error, at, None if at is None else error - at))
        out[tau] = rows
    return out


# ---------------------------------------------------------------------------------------------
# Reading the committed controls
# ---------------------------------------------------------------------------------------------


def _points(sweep, key):
    return sorted((r["seed"], r["mean_N"], r["sequence_error"]) for r in sweep["runs"] if r["key"] == key)


def _committed(name, results=tables.RESULTS):
    return (Path(results) / name / "runs.csv").is_file()


def sweep_control(title, act_name, random_name, results=tables.RESULTS):
    """A control read from two τ sweeps under results/ (or ``results``): ACT and the fixed ladder in
    ``act_name``, the random schedules of every τ in ``random_name`` (None when that sweep is not committed)."""
    act = load_sweep(Path(results) / act_name, tables=())
    random = load_sweep(Path(results) / random_name, tables=()) if _committed(random_name, results) else None
    tau_list = taus(act)
    return {"title": title, "sweeps": [act_name] + ([random_name] if random else []), "unit": UPDATES,
            "missing": None if random else random_name,
            "ladder": fixed_ladder(act), "act": {tau: _points(act, tau) for tau in tau_list},
            "random": None if random is None else {tau: _points(random, random_key(tau)) for tau in tau_list}}


def chains_random(folder=ut_experiment.COMMITTED):
    """The final rows of the chains' random-depth control (docs/universal_transformer.md) in ``folder``,
    or None while it is not committed."""
    if not (Path(folder) / "random.csv").is_file():
        return None
    return ut_experiment.final_rows(ut_experiment.read_experiment("random", folder)[0])


def chains_control(folder=ut_experiment.COMMITTED):
    """The pointer chains (notebook 13) in ``folder``: fixed depths D as the ladder, ACT per τ, the
    sequence error (a row is wrong if any position is) against layer applications per position, and
    the random depths drawn from ACT τ = 0.01's own N once that control is committed."""
    rows, _ = ut_experiment.read_experiment("compute", folder)
    ends = ut_experiment.final_rows(rows)
    ladder, act = {}, {}
    for r in ends:
        if r["kind"] == "fixed":
            ladder.setdefault(r["depth"], {})[r["seed"]] = r["sequence_error"]
        elif r["kind"] == "act":
            act.setdefault(r["tau"], []).append((r["seed"], r["mean_N"], r["sequence_error"]))
    random = chains_random(folder)
    if random is not None:
        random = {0.01: sorted((r["seed"], r["mean_N"], r["sequence_error"]) for r in random if r["entry"] == "random depths")}
    return {"title": "pointer chains (Universal Transformer)", "sweeps": ["universal_transformer/compute.csv"]
            + (["universal_transformer/random.csv"] if random else []),
            "unit": "layer applications per position",
            "missing": None if random else "random depths (registered, not run)",
            "ladder": dict(sorted(ladder.items())), "act": {t: sorted(p) for t, p in sorted(act.items())},
            "random": random}


TITLES = {"parity": "parity, 16 bits", "addition": "addition, 3 digits", "logic": "logic, 10 gates",
          "sort": "sort, 8 numbers"}


def read(out=tables.RESULTS, skewed_sweeps=skewed.SWEEPS):
    """{name: control} of every control in the folder of sweeps ``out``, in the page's order: the
    measured controls whose ACT sweep is there, skewed parity when its ACT sweep is
    (``skewed_sweeps``), the chains when out/universal_transformer/ holds them."""
    controls = {}
    for task, m in measured.MEASURED.items():
        if _committed(m.act, out):
            controls[task] = sweep_control(TITLES[task], m.act, m.random, out)
    if _committed(skewed_sweeps[0], out):
        controls["skewed parity"] = sweep_control("skewed parity, 16 bits", *skewed_sweeps, out)
    if (Path(out) / "universal_transformer" / "compute.csv").is_file():
        controls["chains"] = chains_control(Path(out) / "universal_transformer")
    return controls


# ---------------------------------------------------------------------------------------------
# The figure and the summary
# ---------------------------------------------------------------------------------------------

MARKERS = ("o", "D", "v", "P")


def draw_control(ax, control):
    """One panel: the fixed networks (per seed, their means and the frontier of the means), ACT per
    τ and seed, and the random schedules where committed. N on a linear scale: the frontier's
    straight segments are the mixtures of two fixed networks."""
    ladder = control["ladder"]
    Fs = sorted(ladder)
    for F in Fs:
        ax.scatter([F] * len(ladder[F]), list(ladder[F].values()), s=10, color=FIXED_COLOUR, alpha=0.4, linewidths=0)
    means = [mean_se(list(ladder[F].values()))[0] for F in Fs]
    ax.plot(Fs, means, "s", color=FIXED_COLOUR, label="fixed F, mean (F = 1: no ACT)")
    hull = ladder_hull(control)
    ax.plot([p[0] for p in hull], [p[1] for p in hull], "--", color=FIXED_COLOUR, lw=1,
            label="frontier of the fixed means")
    for (tau, points), marker in zip(control["act"].items(), MARKERS):
        ax.scatter([p[1] for p in points], [p[2] for p in points], marker=marker, s=24, color=ACT_COLOUR,
                   alpha=0.8, zorder=3, label=f"ACT τ = {tau:g}")
        if control["random"] is not None and control["random"].get(tau):
            ax.scatter([p[1] for p in control["random"][tau]], [p[2] for p in control["random"][tau]],
                       marker=marker, s=24, color=RANDOM_COLOUR, alpha=0.8, zorder=3,
                       label=f"random schedule of τ = {tau:g}")
    ax.set_xticks(Fs, [f"{F:g}" for F in Fs])
    ax.set_xlabel(f"{control['unit']} (measured)", fontsize=8)
    ax.set_ylabel("sequence error (held-out)", fontsize=8)
    missing = f"\nnot committed: {control['missing']}" if control["missing"] else ""
    ax.set_title(control["title"] + missing, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, frameon=False)


def plot_frontiers(controls):
    """Every control's panel on one figure, three to a row."""
    n = len(controls)
    rows = (n + 2) // 3
    fig, axes = plt.subplots(rows, 3, figsize=(15, 4.3 * rows), squeeze=False)
    for ax, control in zip(axes.flat, controls.values()):
        draw_control(ax, control)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle("Error against measured computation: fixed networks (orange), ACT (blue), the random schedule "
                 "of ACT's own N (green); one point per seed", fontsize=10)
    fig.tight_layout()
    return fig


def describe(controls):
    """Per control: the fixed means, and each ACT network's error, N and distance from the frontier."""
    lines = []
    for name, control in controls.items():
        lines.append(f"{name} ({', '.join(control['sweeps'])})" +
                     (f"; not committed: {control['missing']}" if control["missing"] else ""))
        lines.append("  fixed means: " + ", ".join(f"F={F:g} {np.mean(list(e.values())):.3f}"
                                                     for F, e in control["ladder"].items()))
        for tau, rows in gaps(control).items():
            shown = [f"{N:.2f}/{error:.3f}/" + ("outside" if gap is None else f"{gap:+.3f}")
                     for _, N, error, _, gap in rows]
            lines.append(f"  ACT tau={tau:g}, N/error/minus the frontier per seed: " + " ".join(shown))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/plot_frontier.py"
DESCRIPTION = "When does adapting pay? Every committed control's error against measured updates, on one page"


def run(settings, out):
    """Train one of a control's sweeps, settings["name"], into the folder of sweeps ``out``: scripts/sweep.py's
    options as a dict (the commands in docs/; act_experiments.sweeps.experiment.run_into)."""
    return run_into(settings, out)


def plot(data, figures=None):
    """Draw figures/frontier.png (or in ``figures``); returns [its path]."""
    fig = plot_frontiers(data)
    path = save_figure(fig, "frontier", directory=figures)
    plt.close(fig)
    return [path]


def main(argv=None):
    """scripts/plot_frontier.py: every committed control's frontier, printed and drawn."""
    return plot_main(argv, script=SCRIPT, description=DESCRIPTION,
                     what="folders of sweeps to read the controls from (default: results/)",
                     read=lambda folders: [read(f) for f in folders] or [read()],
                     summary=lambda controls: print(describe(controls)),
                     plot=lambda controls, figures, prefix: plot(controls, figures))


if __name__ == "__main__":
    sys.exit(main())
