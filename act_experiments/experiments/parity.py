"""The parity sweep (Graves 2016, section 3.1): what scripts/plot_parity.py prints and draws, and
the numbers notebook 05 sets beside the paper's.

Four figures, <prefix>_*.png (prefix "parity" by default):

    error_per_tau     sequence error per τ: mean over seeds as bars, standard error as whiskers,
                      each seed as a dot, the no-ACT bar beside
    error_vs_ponder   every run as a point (final mean ponder, final error), the mean of each τ
                      as a large marker; ponder on a log axis when it spans more than a factor of 4
    difficulty        ponder and error against the number of non-zero bits, for a few τ values
                      and no ACT
    learning_curves   held-out error and ponder during training (ponder on a log axis, as above);
                      in sweeps that count it, a dot where each run first reached 98% right
                      (iterations_to_98) and a dotted line at error 0.02

All four are act_experiments.plots.tau_sweep's figures, the ones every τ sweep has, given
parity's colours, titles and chance line (0.5). The sweep shown by default is the largest parity
sweep under results/ (``largest_sweep``).

``run(settings, out)`` trains a parity sweep into ``out`` (scripts/sweep.py's options as a dict),
``read(out)`` reads one, ``plot(data, figures)`` draws FIGURES and ``main`` is scripts/plot_parity.py.
"""

import json
import sys
from pathlib import Path

import numpy as np

from act_experiments import tables
from act_experiments.plots import tau_sweep
from act_experiments.plots.style import tau_colours
from act_experiments.sweeps import reading
from act_experiments.sweeps.experiment import sweep_experiment
from act_experiments.sweeps.reading import NO_ACT, tau_label
from act_experiments.sweeps.stats import baseline_errors, by_difficulty, difficulty_bins, keys, mean_se, table, taus


BASELINE_COLOUR = "0.35"
CHANCE = 0.5
CHANCE_LINE = (CHANCE, "chance (0.5)")     # (value, label) of tau_sweep.reference_line

# The paper's parity results (section 3.1), as docs/parity.md quotes them.
PAPER = {"no_act_error": 0.40, "act_tau_max": 0.03, "act_error_below": 0.05}


# ---------------------------------------------------------------------------------------------
# Which sweep, and its size
# ---------------------------------------------------------------------------------------------


# the fewest τ of a sweep that section 5 of notebook 05 and plot_parity's figures show: a τ sweep, not
# a control (parity16_fixed, parity16_measured) nor the paper's size split into three sweeps of a
# few τ each (parity64_*, docs/parity.md)
MIN_TAUS = 4


def sweep_size(folder):
    """(bits, runs x iterations) of a τ sweep's folder, for choosing the largest; None if unreadable
    or if it has fewer than MIN_TAUS τ."""
    try:
        meta = json.loads((Path(folder) / "sweep.json").read_text())
        if len(meta.get("taus", [])) < MIN_TAUS:
            return None
        o = reading.shared_options("parity", meta)
        return o["bits"], meta["runs"] * o["iterations"]
    except (OSError, KeyError, ValueError):
        return None


def largest_sweep(results_dir=tables.RESULTS):
    """Name of the parity sweep under `results_dir` with the most bits (then the most training)."""
    found = []
    for folder in sorted(Path(results_dir).glob("parity*")):
        size = sweep_size(folder) if (folder / "runs.csv").exists() else None
        if size is not None:
            found.append((size, folder.name))
    if not found:
        raise FileNotFoundError(f"no parity sweep in {results_dir}: run scripts/sweep.py first")
    return max(found)[1]


def describe(sweep):
    """One line naming the sweep's size, used in every figure's title."""
    meta = sweep["meta"]
    o = reading.shared_options("parity", meta)
    iterations = int(max(r["iterations"] for r in sweep["runs"]))
    return (f"{o['bits']}-bit parity, tanh RNN H={o['hidden']}, batch {o['batch_size']}, lr {o['lr']:g}, "
            f"{iterations} iterations, {meta.get('seeds', '?')} seeds x {len(taus(sweep))} tau + no ACT")


# ---------------------------------------------------------------------------------------------
# The sweep beside the paper
# ---------------------------------------------------------------------------------------------


def summary_table(sweep):
    """Rows of (tau, runs, mean error, s.e., runs below 5% error, mean ponder, s.e.) per τ and no ACT."""
    return [(NO_ACT if r["key"] == NO_ACT else f"{r['key']:g}", r["seeds"], r["error"], r["error_se"],
             sum(v < 0.05 for v in r["errors"]), r["ponder"], r["ponder_se"]) for r in table(sweep)]


def solved_table(sweep):
    """Rows of (tau, [iterations_to_98 of each run, seed order; None: never]) per key, or [] when
    no run reached 98% right (as in sweeps written before the count existed)."""
    if all(r.get("iterations_to_98") is None for r in sweep["runs"]):
        return []
    return [(tau_label(k), [r["iterations_to_98"] for r in sorted(sweep["runs"], key=lambda r: r["seed"])
                            if r["key"] == k]) for k in keys(sweep)]


def print_summary(sweep):
    """The sweep's name and size, summary_table(), solved_table() when it has rows, and
    paper_comparison(), as the script prints them."""
    print(f"{sweep['name']}: {describe(sweep)}")
    print(f"{'tau':>8} {'runs':>4} {'error':>7} {'s.e.':>6} {'<5%':>4} {'ponder':>7} {'s.e.':>6}")
    for label, n, e, se, good, p, pse in summary_table(sweep):
        print(f"{label:>8} {n:4d} {e:7.3f} {se:6.3f} {good:4d} {p:7.2f} {pse:6.2f}")
    rows = solved_table(sweep)
    if rows:
        print("\niterations to 98% right (first evaluation with sequence error <= 0.02; -: never), seed by seed:")
        for label, values in rows:
            print(f"{label:>8} " + ", ".join("-" if v is None else str(v) for v in values))
    print()
    for c in paper_comparison(sweep):
        print(f"{c['claim']}: paper {c['paper']}; here {c['here']} -> {'agrees' if c['agrees'] else 'differs'}")


def ponder_fit(sweep, key):
    """Least-squares line through the mean ponder per difficulty of the runs of `key` (the curve
    of the difficulty figure: seeds pooled, weighted by count): (slope per bit, intercept, R^2)."""
    d = np.array(sorted({r["difficulty"] for r in sweep["difficulty"] if r["key"] == key}))
    edges = np.append(d - 0.5, d[-1] + 0.5)
    x, v, _, _ = by_difficulty(sweep["difficulty"], key, "ponder", edges)
    slope, intercept = np.polyfit(x, v, 1)
    total = ((v - v.mean()) ** 2).sum()
    r2 = 1.0 - ((v - (slope * x + intercept)) ** 2).sum() / total if total > 0 else 0.0
    return float(slope), float(intercept), float(r2)


def run_rises(sweep, key, span):
    """For each run of `key`: does a line through its own ponder per difficulty rise by at
    least half an update over `span` bits? A list of booleans, one per run (seed order)."""
    out = []
    for run in sorted({r["run"] for r in sweep["difficulty"] if r["key"] == key}):
        rows = [r for r in sweep["difficulty"] if r["run"] == run]
        slope = np.polyfit([r["difficulty"] for r in rows], [r["ponder"] for r in rows], 1)[0]
        out.append(bool(slope * span >= 0.5))
    return out


def paper_comparison(sweep):
    """The paper's parity claims beside this sweep's numbers.

    Returns a list of dicts {"claim", "paper", "here", "agrees"}, one per claim:
    - no-ACT error near 0.40 (taken as 0.3..0.5);
    - mean error of the ACT runs with tau <= 0.03 below 0.05;
    - those ACT runs clearly below the baseline (mean error lower by more than 0.1);
    - ponder rising about linearly with the number of bits at an intermediate tau: every tau
      but the smallest and the largest is checked, and the claim holds if, for one of them,
      the seed-averaged curve rises by at least half an update over the range of bits with
      R^2 >= 0.8 and at least half of its runs rise that much on their own (a mean carried by
      one seed does not count).
    """
    out = []
    base = baseline_errors(sweep)
    if base:
        m, se = mean_se(base)
        out.append({"claim": "no ACT: sequence error", "paper": "about 0.40 (chance 0.5)",
                    "here": f"{m:.3f} ± {se:.3f} ({len(base)} runs)", "agrees": 0.3 <= m <= 0.5})
    low = [r["sequence_error"] for r in sweep["runs"] if r["act"] and r["tau"] <= PAPER["act_tau_max"] + 1e-12]
    if low:
        m, se = mean_se(low)
        good = sum(v < PAPER["act_error_below"] for v in low)
        out.append({"claim": "ACT, tau <= 0.03: mean sequence error", "paper": "below 0.05",
                    "here": f"{m:.3f} ± {se:.3f} ({good} of {len(low)} runs below 0.05)",
                    "agrees": m < PAPER["act_error_below"]})
    if base and low:
        gap = mean_se(base)[0] - mean_se(low)[0]
        out.append({"claim": "ACT (tau <= 0.03) vs no ACT", "paper": "far lower error with ACT",
                    "here": f"no ACT minus ACT: {gap:+.3f}", "agrees": gap > 0.1})
    ts = taus(sweep)
    middle = ts[1:-1] if len(ts) >= 3 else ts
    if middle:
        parts, agrees = [], False
        for t in middle:
            slope, _, r2 = ponder_fit(sweep, t)
            d = [r["difficulty"] for r in sweep["difficulty"] if r["key"] == t]
            span = max(d) - min(d)
            rising = run_rises(sweep, t, span)
            parts.append(f"tau {tau_label(t)}: seed mean {slope * span:+.2f} from the fewest to the most bits "
                         f"(R² {r2:.2f}), {sum(rising)} of {len(rising)} runs rise by 0.5 or more on their own")
            agrees |= slope * span >= 0.5 and r2 >= 0.8 and 2 * sum(rising) >= len(rising)
        out.append({"claim": "ponder vs bits at intermediate tau", "paper": "grows about linearly",
                    "here": "; ".join(parts), "agrees": agrees})
    return out


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def colours(sweep):
    """A colour per key: τ from light (small) to dark (large) along log τ; grey for no ACT."""
    return tau_colours(taus(sweep), "viridis", 0.9, -0.85, BASELINE_COLOUR)


def pick_taus(ts, wanted=4):
    """Up to `wanted` of the τ values `ts`, spread evenly over the sweep's range on a log scale."""
    if len(ts) <= wanted:
        return list(ts)
    idx = np.unique(np.rint(np.linspace(0, len(ts) - 1, wanted)).astype(int))
    return [ts[i] for i in idx]


def _title(sweep, what):
    return f"Parity: {what}\n{describe(sweep)}"


def plot_error_per_tau(sweep):
    return tau_sweep.plot_error_per_tau(
        sweep, colours(sweep), reference=CHANCE_LINE, legend={"loc": "upper left", "frameon": False},
        title=_title(sweep, "sequence error per τ (bar: mean, whisker: standard error, dot: one seed)"))


def plot_error_vs_ponder(sweep):
    return tau_sweep.plot_error_vs_ponder(
        sweep, colours(sweep), reference=CHANCE_LINE, log_ponder=True,
        xlabel="mean ponder ρ = N + R per input (held-out)",
        title=_title(sweep, "error vs ponder (small: one run, large: mean per τ)"))


def plot_difficulty(sweep, wanted=4):
    """Ponder (top) and error (bottom) against the number of non-zero bits, seeds pooled
    (ponder: the range over seeds shaded), for a few τ values (pick_taus) and no ACT."""
    edges = difficulty_bins([r["difficulty"] for r in sweep["difficulty"]], max_bins=16)
    return tau_sweep.plot_difficulty(
        sweep, colours(sweep), f"Parity: ponder and error vs difficulty (top, shaded: range over seeds)\n"
        f"{describe(sweep)}", "difficulty: number of non-zero input bits", None,
        "mean ponder ρ per input step\n(no ACT: 2 by definition)", "sequence error rate (held-out)",
        error_ylim="fit", reference=lambda ax: tau_sweep.reference_line(ax, CHANCE_LINE),
        shown=pick_taus(taus(sweep), wanted) + [NO_ACT], edges=edges)


def plot_learning_curves(sweep):
    return tau_sweep.plot_learning_curves(
        sweep, colours(sweep), reference=CHANCE_LINE, log_ponder=True, mark_solved=True,
        title=_title(sweep, "learning curves (thick: mean over seeds, thin: one seed)"))


FIGURES = {
    "error_per_tau": plot_error_per_tau,
    "error_vs_ponder": plot_error_vs_ponder,
    "difficulty": plot_difficulty,
    "learning_curves": plot_learning_curves,
}


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/plot_parity.py"
DESCRIPTION = "Draw the paper's parity figures (Graves 2016, section 3.1) from a saved tau sweep."

# run(settings, out) trains a parity sweep into out/ (settings: scripts/sweep.py's options as a dict),
# read(out=None) reads one (default: the largest parity sweep), plot(data, figures=None, prefix=None)
# draws FIGURES as <prefix or parity>_*.png, main(argv=None) is scripts/plot_parity.py
# (act_experiments.sweeps.experiment.sweep_experiment)
run, read, plot, main = sweep_experiment(lambda out: reading.load_task_sweep("parity", out), FIGURES,
                                         prefix="parity", default=largest_sweep, summary=print_summary,
                                         script=SCRIPT, description=DESCRIPTION)


if __name__ == "__main__":
    sys.exit(main())
