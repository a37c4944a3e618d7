"""Adaptivity or computation, measured: ACT against a random schedule of its own updates.

The measured controls (docs/<task>.md states each claim as it was committed before its sweeps):

    <act sweep>     ACT at τ* and the fixed ladder F, every run with its measured mean N and R,
                    N by difficulty and the counts of each N (N_counts.csv), and the ACT
                    networks' weights (weights.npz, for the shuffle probe: ``probe``)
    <random sweep>  the random schedule: per seed, the network without its halting unit and N
                    drawn per input step from the N distribution of that seed's ACT network

    m = load("parity")                         # the two sweeps, the probe, the claim's settings
    v = verdict(m)                             # ACT against its random schedule, paired by seed
    v = verdict(m, against="ladder")           # ACT against the fixed ladder read at its own mean N

The claim, the same for every task: ACT's sequence error is below the random schedule's. A
paired one-sided t-test and sign test over the seeds, α = 0.05; it holds when p < α and the mean
difference is at most −THRESHOLD, it is refuted when the mean difference is 0 or above, and
otherwise it is not shown (the 95% interval of the mean difference says how large a difference
the seeds could have missed).

``run(settings, out)`` trains a measured control's sweep into the folder of sweeps ``out``
(scripts/sweep.py's options as a dict, the commands in docs/<task>.md), ``read(out)`` is ``load`` of
every control there, ``plot(data, figures)`` draws figures/control_<task>_measured.png and ``main``
is scripts/plot_measured.py.
"""

import sys
from pathlib import Path
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats as scipy_stats

from act_experiments.sweeps import probe
from act_experiments import tables
from act_experiments.figures import plot_main, save_figures
from act_experiments.plots.style import DIFFICULTY_LABEL
from act_experiments.sweeps.experiment import run_into
from act_experiments.sweeps.reading import NO_ACT, by_seed, load_sweep, random_key, task_of
from act_experiments.sweeps.stats import by_difficulty, difficulty_bins, mean_se

ALPHA = 0.05          # one-sided, for the t-test and the sign test alike
THRESHOLD = 0.02      # the smallest difference in sequence error that counts


@dataclass(frozen=True)
class Measured:
    """One task's measured control: its two sweeps under results/ and the τ of the claim."""

    act: str          # ACT at τ* and the fixed ladder (with N_counts.csv and weights.npz)
    random: str       # the random schedule drawn from the act sweep's networks
    tau: float        # τ*


MEASURED = {
    "parity": Measured("parity16_measured", "parity16_measured_random", 1e-3),
    "addition": Measured("addition_3digit_measured", "addition_3digit_measured_random", 0.1),
    # logic's second τ, 1e-2, is tested on its own (verdict(m, tau=0.01))
    "logic": Measured("logic_gates10_measured", "logic_gates10_measured_random", 1e-3),
    "sort": Measured("sort_len8_measured", "sort_len8_measured_random", 1e-4),
}


def load(task, measured=MEASURED, results=tables.RESULTS):
    """{"measured": the Measured, "act", "random": the two sweeps (with N_counts), "probe": the
    committed probe rows of the act sweep (None when not yet run)}."""
    if task not in measured:
        raise ValueError(f"task must be one of {sorted(measured)}, got {task!r}")
    m = measured[task]
    tables = ("difficulty", "curves", "N_counts")
    act_sweep = load_sweep(Path(results) / m.act, tables=tables)
    try:
        probe_rows = probe.read(Path(results) / m.act)
    except FileNotFoundError:
        probe_rows = None
    return {"measured": m, "act": act_sweep, "random": load_sweep(Path(results) / m.random, tables=tables),
            "probe": probe_rows}


def fixed_ladder(sweep):
    """{F: {seed: error}} of the fixed-computation runs of a sweep, F ascending. A sweep's no-ACT
    networks, one update per input, are the rung F = 1 (a fixed run of F = 1 is the same network)."""
    rungs = sorted({r["fixed_ponder"] for r in sweep["runs"] if r["fixed_ponder"] is not None})
    ladder = {F: {r["seed"]: r["sequence_error"] for r in sweep["runs"] if r["fixed_ponder"] == F} for F in rungs}
    baseline = {r["seed"]: r["sequence_error"] for r in sweep["runs"] if r["key"] == NO_ACT}
    if baseline and 1 not in ladder:
        ladder = {1: baseline, **ladder}
    return ladder


def ladder_at(rungs, seed, N):
    """The fixed networks' error of ``seed`` at N updates: the straight line between the two rungs
    around N (rungs: fixed_ladder's), or None when N lies outside the ladder."""
    Fs = sorted(rungs)
    if not Fs[0] <= N <= Fs[-1]:
        return None
    errors = [rungs[F][seed] for F in Fs]
    return float(np.interp(N, Fs, errors))


def paired_test(act_values, other_values, threshold=THRESHOLD):
    """The registered test of ACT against another network, paired by seed (``threshold``: the
    smallest difference that counts, THRESHOLD unless a claim registered another).

    Returns {"differences" (ACT − other per seed), "mean", "se", "interval" (the 95% interval of
    the mean difference, t-based), "t_p" (one-sided paired t-test: ACT lower), "wins" (seeds where
    ACT is lower), "sign_p" (one-sided sign test over the seeds that differ), "verdict" ("holds",
    "refuted" or "not shown", as the module's docstring defines them)}.
    """
    a, b = np.asarray(act_values, dtype=np.float64), np.asarray(other_values, dtype=np.float64)
    d = a - b
    mean, se = mean_se(d)
    n = d.size
    if se > 0:
        t_p = float(scipy_stats.ttest_rel(a, b, alternative="less").pvalue)
        half = float(scipy_stats.t.ppf(0.975, n - 1) * se)
    else:
        t_p, half = (0.0 if mean < 0 else 1.0), 0.0
    wins, differ = int(np.sum(d < 0)), int(np.sum(d != 0))
    sign_p = float(scipy_stats.binomtest(wins, differ, 0.5, alternative="greater").pvalue) if differ else 1.0
    verdict = ("holds" if t_p < ALPHA and mean <= -threshold else "refuted" if mean >= 0 else "not shown")
    return {"differences": d.tolist(), "mean": mean, "se": se, "interval": (mean - half, mean + half),
            "t_p": t_p, "wins": wins, "sign_p": sign_p, "verdict": verdict}


def verdict(m, against="random", tau=None):
    """ACT at τ (default τ*) against its random schedule (``against="random"``) or against the
    fixed ladder read at its own measured mean N (``"ladder"``), seed by seed: paired_test's dict
    with "seeds", "act" and "other" (each seed's error)."""
    tau = m["measured"].tau if tau is None else tau
    act = by_seed(m["act"], tau)
    if against == "random":
        other = by_seed(m["random"], random_key(tau))
    elif against == "ladder":
        rungs, N = fixed_ladder(m["act"]), by_seed(m["act"], tau, "mean_N")
        other = {s: ladder_at(rungs, s, N[s]) for s in act}
        other = {s: e for s, e in other.items() if e is not None}
    else:
        raise ValueError(f"against must be 'random' or 'ladder', got {against!r}")
    seeds = sorted(act.keys() & other.keys())
    if not seeds:
        raise ValueError(f"{m['measured'].act}: no seed has both ACT at τ = {tau:g} and the {against} comparison")
    result = paired_test([act[s] for s in seeds], [other[s] for s in seeds])
    return {"seeds": seeds, "act": [act[s] for s in seeds], "other": [other[s] for s in seeds], **result}


VERDICT_TEXT = {"holds": "holds", "refuted": "is refuted", "not shown": "is not shown"}


def signed(x, fmt="+.3f"):
    """A number with its sign, minus as "−", as the course's text writes it."""
    return format(x, fmt).replace("-", "−")


def quoted(v):
    """A verdict's numbers as the course's text writes them (docs, notebooks; tests/test_text_facts.py
    holds the text to these): minus signs as "−", three decimals, p-values to two figures."""
    lo, hi = v["interval"]
    return {"difference": f"{signed(v['mean'])} ± {v['se']:.3f}",
            "interval": f"95% interval {signed(lo)} to {signed(hi)}",
            "t_p": f"p = {v['t_p']:.2g}", "sign": f"{v['wins']} of {len(v['seeds'])} seeds",
            "sign_p": f"p = {v['sign_p']:.2g}", "claim": f"The claim {VERDICT_TEXT[v['verdict']]}",
            "rows": [f"| {s} | {a:.3f} | {o:.3f} | {signed(d)} |"
                     for s, a, o, d in zip(v["seeds"], v["act"], v["other"], v["differences"])]}


def N_percentiles(sweep, run, q=(10, 90)):
    """The q-th percentiles of a run's per-step N on its held-out set, from N_counts.csv."""
    rows = sorted((r["N"], r["count"]) for r in sweep["N_counts"] if r["run"] == run)
    values, counts = np.array([v for v, _ in rows]), np.array([c for _, c in rows])
    cumulative = np.cumsum(counts) / counts.sum()
    return tuple(int(values[np.searchsorted(cumulative, p / 100.0)]) for p in q)


# ---------------------------------------------------------------------------------------------
# The figure
# ---------------------------------------------------------------------------------------------

ACT_COLOUR, FIXED_COLOUR, RANDOM_COLOUR = "tab:blue", "tab:orange", "tab:green"


def plot_measured(m):
    """Three panels: error against measured updates (the fixed ladder, ACT per seed with its 10th
    to 90th percentile of N, the random schedule per seed), then error and mean N against
    difficulty for ACT and its random schedule."""
    task, tau = task_of(m["act"]), m["measured"].tau
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.2))
    _updates_panel(left, m, tau)
    values = [r["difficulty"] for r in m["act"]["difficulty"]]
    edges = difficulty_bins(values, 8) if values else None
    series = [(m["act"], tau, f"ACT τ = {tau:g}", ACT_COLOUR), (m["random"], random_key(tau),
                                                               "random schedule of its N", RANDOM_COLOUR)]
    for ax, field, label in ((middle, "error", "error rate (held-out)"), (right, "N", "mean number of updates N")):
        for sweep, key, name, colour in series:
            x, mean, low, high = by_difficulty(sweep["difficulty"], key, field, edges)
            if len(x):
                ax.plot(x, mean, marker="o", ms=3, color=colour, label=name)
                ax.fill_between(x, low, high, color=colour, alpha=0.15, linewidth=0)
        ax.set_xlabel(f"difficulty: {DIFFICULTY_LABEL.get(task, 'difficulty')}")
        if task != "parity" and values:
            ax.set_xticks(np.unique(np.round(values)).astype(int))      # whole digits, gates, lengths
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
    fig.suptitle(f"{task.capitalize()}: ACT ({m['measured'].act}) against fixed updates and against a random "
                 f"schedule of its own N ({m['measured'].random}); bands: best to worst seed", fontsize=10)
    fig.tight_layout()
    return fig


def draw_ladder(ax, sweep, label):
    """The fixed ladder of ``sweep`` on ``ax``: its mean error per F with the standard error, and
    every seed's point; returns the Fs, ascending."""
    rungs = fixed_ladder(sweep)
    Fs = sorted(rungs)
    means = [mean_se(list(rungs[F].values())) for F in Fs]
    ax.errorbar(Fs, [v for v, _ in means], yerr=[s for _, s in means], color=FIXED_COLOUR, marker="s",
                capsize=3, label=label)
    for F in Fs:
        ax.scatter([F] * len(rungs[F]), list(rungs[F].values()), s=10, color=FIXED_COLOUR, alpha=0.5, linewidths=0)
    return Fs


def _updates_panel(ax, m, tau):
    Fs = draw_ladder(ax, m["act"], "fixed F updates (mean ± s.e.)")
    for sweep, key, colour, label in ((m["act"], tau, ACT_COLOUR, f"ACT τ = {tau:g} (bar: 10th-90th percentile of N)"),
                                      (m["random"], random_key(tau), RANDOM_COLOUR, "random schedule of its N")):
        runs = [r for r in sweep["runs"] if r["key"] == key]
        N = [r["mean_N"] for r in runs]
        error = [r["sequence_error"] for r in runs]
        if key == tau:
            bounds = [N_percentiles(sweep, r["run"]) for r in runs]
            xerr = [[max(n - lo, 0) for n, (lo, _) in zip(N, bounds)], [max(hi - n, 0) for n, (_, hi) in zip(N, bounds)]]
            ax.errorbar(N, error, xerr=xerr, fmt="o", color=colour, capsize=2, ms=5, alpha=0.8, label=label)
        else:
            ax.scatter(N, error, marker="^", color=colour, s=30, label=label, zorder=3)
    ax.set_xscale("log")
    ax.set_xticks(Fs, [f"{F:g}" for F in Fs])
    ax.minorticks_off()
    ax.set_xlabel("updates per input N, measured on the held-out set (log scale)")
    ax.set_ylabel("sequence error rate (held-out), one point per seed")
    ax.set_ylim(bottom=-0.02)
    ax.grid(alpha=0.3)
    # below the axes: the points fill the panel from chance to zero
    ax.legend(fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)


# ---------------------------------------------------------------------------------------------
# The experiment: read, plot, describe
# ---------------------------------------------------------------------------------------------


SCRIPT = "scripts/plot_measured.py"
DESCRIPTION = "The measured controls: ACT against a random schedule of its own updates, and the ladder at measured N"


def run(settings, out):
    """Train one of a measured control's sweeps, settings["name"], into the folder of sweeps ``out``:
    scripts/sweep.py's options as a dict (the ACT sweep with taus, fixed_ponders and save_weights,
    then its random_ponders sweep; act_experiments.sweeps.experiment.run_into); returns its folder."""
    return run_into(settings, out)


def read(out=tables.RESULTS, tasks=None):
    """{task: load} of the tasks of MEASURED (or of ``tasks``) whose two sweeps are in the folder of
    sweeps ``out``: every one, when ``tasks`` is not given (``committed``)."""
    return {task: load(task, results=out) for task in (committed(results=out) if tasks is None else tasks)}


def plot(data, figures=None):
    """Draw each control's figure as <figures or figures/>/control_<task>_measured.png; returns the paths."""
    return save_figures({f"{task}_measured": lambda _, m=m: plot_measured(m) for task, m in data.items()}, None,
                        "control", figures)


def describe(task, m):
    """The registered tests and the probe, as lines of text."""
    lines = [f"{task}: ACT tau={m['measured'].tau:g} ({m['measured'].act}), measured"]
    for against in ("random", "ladder"):
        v = verdict(m, against)
        q = quoted(v)
        lines.append(f"  against the {against}, seeds {v['seeds']}: ACT - other {q['difference']} ({q['interval']}); "
                     f"one-sided paired t-test {q['t_p']}; ACT lower on {q['sign']} (sign test {q['sign_p']}): "
                     f"{v['verdict']}")
    for r in m["probe"] or []:
        lines.append(f"  probe {r['run']}: mean N {r['mean_N']:.2f}, error {r['error']:.3f}, N shuffled "
                     f"{r['shuffled']:.3f}, N = {r['rounded_mean_N']} everywhere {r['at_mean']:.3f}")
    return "\n".join(lines)


def committed(measured=MEASURED, results=tables.RESULTS):
    """The tasks whose measured control is committed: both its sweeps under results/ (or ``results``)."""
    return [t for t, m in measured.items()
            if all((Path(results) / name / "runs.csv").exists() for name in (m.act, m.random))]


def main(argv=None):
    """scripts/plot_measured.py: the registered tests, the probe and the figure of each committed
    measured control (``plot_main``: every control is read before any figure is written)."""
    def summary(controls):
        for task, m in controls.items():
            print(describe(task, m))

    return plot_main(argv, script=SCRIPT, description=DESCRIPTION,
                     what=f"tasks to draw, of {', '.join(MEASURED)} (default: every one committed)",
                     read=lambda tasks: [read(tables.RESULTS, tasks or None)], summary=summary,
                     plot=lambda controls, figures, prefix: plot(controls, figures))


if __name__ == "__main__":
    sys.exit(main())
