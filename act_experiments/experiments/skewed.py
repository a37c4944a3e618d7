"""When adapting should pay: skewed parity, where most inputs are easy and a few are very hard.

Sixteen-bit parity with ``--max-nonzero 2 --skew 0.1:13-16``: nine inputs in ten have one or two
non-zero bits and one in ten has 13 to 16, so a fixed schedule must pay for the hardest input on
every input. docs/parity.md states the claims as they were committed before the sweeps:

    skewed_parity16          no ACT (the rung F = 1), fixed F ∈ {2, 3, 5}, ACT at every τ of TAUS
    skewed_parity16_random   per seed and τ, the network without its halting unit and N drawn per
                             input from that ACT network's measured N distribution

    data = load()
    ladder = claim(data, "ladder")     # {τ: ACT against the fixed ladder read at its own mean N}
    random = claim(data, "random")     # {τ: ACT against the random schedule of its N}
    rank = spearman(data)              # {τ: does N rise with the number of non-zero bits?}

Claims 1 and 2 test each τ with measured.paired_test (one-sided paired t-test and sign test over
the seeds), then correct both p-values with Holm's method over the τ tested. A claim holds for a
τ when both corrected p-values are below ALPHA and the mean difference is −THRESHOLD or below; it
is refuted when the mean difference is 0 or above, and otherwise it is not shown. Claim 3 holds
for a τ when the Spearman correlation between the number of non-zero bits and the mean N at that
number is positive on at least SPEARMAN_SEEDS seeds and its mean over the seeds is SPEARMAN_MEAN
or more.

``run(settings, out)`` trains a sweep into the folder of sweeps ``out`` (scripts/sweep.py's options as
a dict), ``read(out)`` is ``load`` of the two there, ``plot(data, figures)`` draws
figures/skewed_parity.png and ``main`` is scripts/plot_skewed.py.
"""

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats as scipy_stats

from act_experiments import tables
from act_experiments.experiments.measured import (ACT_COLOUR, RANDOM_COLOUR, draw_ladder, fixed_ladder, ladder_at,
                                                  paired_test, quoted, signed)
from act_experiments.figures import plot_main, save_figure
from act_experiments.sweeps.experiment import run_into
from act_experiments.sweeps.reading import by_seed, load_sweep, random_key
from act_experiments.sweeps.stats import mean_se, taus

SWEEPS = ("skewed_parity16", "skewed_parity16_random")
TAUS = (3e-4, 1e-3, 3e-3, 1e-2)       # the τ the claims name, corrected together with Holm's method
ALPHA = 0.05                          # one-sided, after Holm's correction
THRESHOLD = 0.01                      # the smallest difference in sequence error that counts
SPEARMAN_SEEDS = 7                    # of 8: a one-sided sign test gives p = 0.035
SPEARMAN_MEAN = 0.5
TABLES = ("difficulty", "curves", "N_counts")


def load(act=SWEEPS[0], random=SWEEPS[1], results=tables.RESULTS):
    """{"act": the sweep of ACT, the ladder and no ACT, "random": the random schedules} from results/
    (or ``results``; or folders), each with its difficulty, curves and N_counts tables."""
    return {"act": load_sweep(Path(results) / act, tables=TABLES),
            "random": load_sweep(Path(results) / random, tables=TABLES)}


def holm(pvalues):
    """Holm's step-down correction of m p-values, in their order: the i-th smallest is multiplied
    by m − i + 1, then made no smaller than the corrected ones before it and capped at 1."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1 or p.size == 0 or np.any((p < 0) | (p > 1)):
        raise ValueError(f"pvalues must be a non-empty list of numbers in [0, 1], got {pvalues!r}")
    order = np.argsort(p, kind="stable")
    scaled = p[order] * (p.size - np.arange(p.size))
    corrected = np.empty_like(p)
    corrected[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return corrected.tolist()


def _other(data, against, tau):
    """{seed: the error ACT at τ is compared with}: the ladder read at that seed's measured mean N
    (seeds outside the ladder are left out), or the random schedule of its N."""
    if against == "random":
        return by_seed(data["random"], random_key(tau))
    if against == "ladder":
        rungs, N = fixed_ladder(data["act"]), by_seed(data["act"], tau, "mean_N")
        read = {s: ladder_at(rungs, s, n) for s, n in N.items()}
        return {s: e for s, e in read.items() if e is not None}
    raise ValueError(f"against must be 'random' or 'ladder', got {against!r}")


def compare(data, against, tau):
    """ACT at τ against ``against`` ("ladder" or "random"), paired by seed: paired_test's dict
    (its verdict uncorrected) with "seeds", "act" and "other" (each seed's sequence error)."""
    act, other = by_seed(data["act"], tau), _other(data, against, tau)
    seeds = sorted(act.keys() & other.keys())
    if len(seeds) < 2:
        raise ValueError(f"ACT at τ = {tau:g} and the {against} share {len(seeds)} seed(s); the test needs 2")
    result = paired_test([act[s] for s in seeds], [other[s] for s in seeds], threshold=THRESHOLD)
    return {"seeds": seeds, "act": [act[s] for s in seeds], "other": [other[s] for s in seeds], **result}


def claim(data, against, tau_list=TAUS):
    """Claim 1 (``against="ladder"``) or 2 (``"random"``) at every τ: {τ: compare's dict with
    "t_holm" and "sign_holm" (the p-values corrected over the τ) and "verdict" decided on them}."""
    tests = {tau: compare(data, against, tau) for tau in tau_list}
    t_holm = holm([v["t_p"] for v in tests.values()])
    sign_holm = holm([v["sign_p"] for v in tests.values()])
    for (tau, v), t, s in zip(tests.items(), t_holm, sign_holm):
        passed = t < ALPHA and s < ALPHA and v["mean"] <= -THRESHOLD
        v.update(t_holm=t, sign_holm=s,
                 verdict="holds" if passed else "refuted" if v["mean"] >= 0 else "not shown")
    return tests


def N_by_bits(data, tau, seed):
    """(numbers of non-zero bits, the mean N at each) of ACT at τ for one seed, from difficulty.csv."""
    rows = sorted((r["difficulty"], r["N"]) for r in data["act"]["difficulty"]
                  if r["key"] == tau and r["seed"] == seed)
    return np.array([b for b, _ in rows]), np.array([n for _, n in rows])


def spearman(data, tau_list=TAUS):
    """Claim 3 at every τ: {τ: {"seeds", "rho" (each seed's Spearman correlation of N with the number
    of non-zero bits), "positive" (how many are above 0), "mean", "verdict" ("holds" or "does not
    hold")}}."""
    out = {}
    for tau in tau_list:
        seeds = sorted(by_seed(data["act"], tau))
        rho = [float(scipy_stats.spearmanr(*N_by_bits(data, tau, s)).statistic) for s in seeds]
        positive, mean = int(np.sum(np.array(rho) > 0)), float(np.mean(rho))
        holds = positive >= SPEARMAN_SEEDS and mean >= SPEARMAN_MEAN
        out[tau] = {"seeds": seeds, "rho": rho, "positive": positive, "mean": mean,
                    "verdict": "holds" if holds else "does not hold"}
    return out


def easy_and_hard(sweep, hardest_easy=2):
    """{key: {"easy": (error, N), "hard": (error, N)}} of every network kind of a sweep: the held-out
    error and mean N over all its seeds' inputs with at most ``hardest_easy`` non-zero bits, and over
    the rest (difficulty.csv, each row weighted by its count of inputs)."""
    sums = {}
    for r in sweep["difficulty"]:
        group = "easy" if r["difficulty"] <= hardest_easy else "hard"
        total = sums.setdefault(r["key"], {}).setdefault(group, [0.0, 0.0, 0])
        total[0] += r["error"] * r["count"]
        total[1] += r["N"] * r["count"]
        total[2] += r["count"]
    return {key: {g: (e / n, N / n) for g, (e, N, n) in groups.items()} for key, groups in sums.items()}


def markdown_tables(data):
    """docs/parity.md's tables of the two sweeps, as lines of Markdown: every seed's error for the
    ladder, ACT (with its measured N) and the random schedules, claims 1 and 2 per τ with their
    Holm-corrected p-values, and claim 3's correlations (tests/test_text_facts.py holds the text
    to them)."""
    act, seeds = data["act"], sorted(by_seed(data["act"], TAUS[0]))
    head = "| network | " + " | ".join(str(s) for s in seeds)
    lines = [head + " | mean ± s.e. |", "|---|" + "---|" * (len(seeds) + 1)]
    for F, errors in fixed_ladder(act).items():
        mean, se = mean_se(list(errors.values()))
        lines.append(f"| {'no ACT (F = 1)' if F == 1 else f'F = {F}'} | "
                     + " | ".join(f"{errors[s]:.3f}" for s in seeds) + f" | {mean:.3f} ± {se:.3f} |")
    lines += ["", head + " |", "|---|" + "---|" * len(seeds)]
    for tau in TAUS:
        error, N, drawn = by_seed(act, tau), by_seed(act, tau, "mean_N"), by_seed(data["random"], random_key(tau))
        lines.append(f"| ACT τ = {tau:g} | " + " | ".join(f"{error[s]:.3f} ({N[s]:.2f})" for s in seeds) + " |")
        lines.append("| its random schedule | " + " | ".join(f"{drawn[s]:.3f}" for s in seeds) + " |")
    for against in ("ladder", "random"):
        lines += ["", "| τ | ACT − other | 95% interval | t-test p (Holm) | ACT lower | sign test p (Holm) | verdict |",
                  "|---|---|---|---|---|---|---|"]
        for tau, v in claim(data, against).items():
            q, (lo, hi) = quoted(v), v["interval"]
            lines.append(f"| {tau:g} | {q['difference']} | {signed(lo)} to {signed(hi)} | "
                         f"{v['t_p']:.2g} ({v['t_holm']:.2g}) | {q['sign']} | {v['sign_p']:.2g} ({v['sign_holm']:.2g}) | "
                         f"{v['verdict']} |")
    lines += ["", "| τ | " + " | ".join(str(s) for s in seeds) + " | positive | mean | verdict |",
              "|---|" + "---|" * (len(seeds) + 3)]
    for tau, r in spearman(data).items():
        lines.append(f"| {tau:g} | " + " | ".join(signed(x, "+.2f") for x in r["rho"])
                     + f" | {r['positive']} of {len(r['seeds'])} | {signed(r['mean'], '+.2f')} | {r['verdict']} |")
    return lines


# ---------------------------------------------------------------------------------------------
# The figure
# ---------------------------------------------------------------------------------------------

TAU_MARKERS = ("o", "D", "v", "P")


def plot_skewed(data):
    """Two panels: each network's error against its measured updates per input (the ladder and no
    ACT, ACT at every τ, the random schedules), and ACT's mean N by the number of non-zero bits."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.4))
    draw_ladder(left, data["act"], "no ACT (F = 1) and fixed F (mean ± s.e.)")
    for tau, marker in zip(taus(data["act"]), TAU_MARKERS):
        for sweep, key, colour, name in ((data["act"], tau, ACT_COLOUR, f"ACT τ = {tau:g}"),
                                         (data["random"], random_key(tau), RANDOM_COLOUR, "its random schedule")):
            runs = [r for r in sweep["runs"] if r["key"] == key]
            left.scatter([r["mean_N"] for r in runs], [r["sequence_error"] for r in runs], marker=marker,
                         s=22, color=colour, alpha=0.8, label=name if runs else None, zorder=3)
        seeds = sorted(by_seed(data["act"], tau))
        bits = N_by_bits(data, tau, seeds[0])[0]
        N = np.array([N_by_bits(data, tau, s)[1] for s in seeds])
        right.errorbar(np.arange(len(bits)), N.mean(axis=0), yerr=N.std(axis=0), marker=marker, capsize=2,
                       label=f"ACT τ = {tau:g} (mean ± s.d. over seeds)")
    left.set_xlabel("updates per input N, measured on the held-out set")
    left.set_ylabel("sequence error rate (held-out), one point per seed")
    left.grid(alpha=0.3)
    left.legend(fontsize=7, frameon=False, ncol=2)
    right.set_xticks(np.arange(len(bits)), [str(int(b)) for b in bits])
    right.set_xlabel("non-zero bits in the input (90% have 1 or 2, 10% have 13 to 16)")
    right.set_ylabel("mean number of updates N")
    right.grid(alpha=0.3)
    right.legend(fontsize=7, frameon=False)
    fig.suptitle("Skewed parity, 16 bits: ACT against fixed updates and against a random schedule of its own N",
                 fontsize=10)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, describe
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/plot_skewed.py"
DESCRIPTION = "When adapting should pay: skewed parity against the fixed ladder and a random schedule"


def run(settings, out):
    """Train one of the two sweeps, settings["name"], into the folder of sweeps ``out``: scripts/sweep.py's
    options as a dict (docs/parity.md's commands; act_experiments.sweeps.experiment.run_into)."""
    return run_into(settings, out)


def read(out=tables.RESULTS, names=SWEEPS):
    """The two sweeps ``names`` (ACT, random) of the folder of sweeps ``out`` (load)."""
    return load(*names, results=out)


def plot(data, figures=None):
    """Draw figures/skewed_parity.png (or in ``figures``); returns [its path]."""
    fig = plot_skewed(data)
    path = save_figure(fig, "skewed_parity", directory=figures)
    plt.close(fig)
    return [path]


def describe(data, against=("ladder", "random")):
    """The three registered claims at every τ, every seed shown, as lines of text (``against``: the
    comparisons of claims 1 and 2 to describe, "ladder" alone while the random sweep is not committed)."""
    lines = [f"skewed parity ({data['act']['name']}, {data['random']['name']})",
             "  no ACT and the fixed ladder, per seed: " + "; ".join(
                 f"F={F}: " + " ".join(f"{e:.3f}" for _, e in sorted(errors.items()))
                 for F, errors in fixed_ladder(data["act"]).items())]
    for other in against:
        for tau, v in claim(data, other).items():
            q = quoted(v)
            lines.append(f"  tau={tau:g} against the {other}: ACT - other {q['difference']} ({q['interval']}); "
                         f"t-test p = {v['t_p']:.2g} (Holm {v['t_holm']:.2g}), ACT lower on {q['sign']} "
                         f"(sign test p = {v['sign_p']:.2g}, Holm {v['sign_holm']:.2g}): {v['verdict']}")
            lines.append("    ACT " + " ".join(f"{a:.3f}" for a in v["act"]) + " | other "
                         + " ".join(f"{o:.3f}" for o in v["other"]))
    for tau, r in spearman(data).items():
        lines.append(f"  tau={tau:g} N by non-zero bits: Spearman " + " ".join(f"{x:+.2f}" for x in r["rho"])
                     + f", positive on {r['positive']} of {len(r['seeds'])}, mean {r['mean']:+.2f}: {r['verdict']}")
    return "\n".join(lines)


def main(argv=None):
    """scripts/plot_skewed.py: the claims, every seed, and the figure."""
    def read_two(sweeps):
        if sweeps and len(sweeps) != 2:
            raise ValueError(f"give the two sweeps, ACT and random, or none; got {len(sweeps)}")
        return [read(tables.RESULTS, tuple(sweeps) or SWEEPS)]

    return plot_main(argv, script=SCRIPT, description=DESCRIPTION,
                     what=f"the two sweeps, ACT and random, under results/ or folders (default: {' '.join(SWEEPS)})",
                     read=read_two, summary=lambda data: print(describe(data)),
                     plot=lambda data, figures, prefix: plot(data, figures))


if __name__ == "__main__":
    sys.exit(main())
