"""The character-prediction sweep (Graves 2016, section 3.5): what scripts/plot_characters.py
prints and draws, and what notebook 09 quotes.

The sweep is what scripts/characters.py writes: runs.csv and sweep.json as every sweep has, and
curves.csv, classes.csv and passage.csv (act_experiments.sweeps.per_byte says what they hold). Four
figures, characters_*.png:

    bpc       held-out bits per character per τ beside the no-ACT baseline and the unigram and
              bigram baselines of the text; mean ponder per τ
    curves    held-out bits per character and mean ponder during training, per run
    classes   mean ponder per kind of input byte (letters, spaces, commas, ...), per τ
    passage   the ponder rho_t of every byte of a fixed held-out passage (the paper's Figure 23),
              for the ACT run whose τ is nearest the paper's 6e-3 among those whose ponder
              stayed below the cap M

Runs are told apart by "tau" here, None for the no-ACT baseline.

``run(settings, out)`` trains a characters sweep and its per-byte analysis into ``out``
(scripts/characters.py's options as a dict), ``read(out)`` reads a sweep, ``plot(data, figures)``
draws FIGURES and ``main`` is scripts/plot_characters.py.
"""

import math
import sys
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from act_experiments import tables
from act_experiments.data import text
from act_experiments.plots.style import line_style, series_label, tau_colours
from act_experiments.sweeps import launch, reading
from act_experiments.sweeps.experiment import sweep_experiment
from act_experiments.sweeps.stats import taus


LARGE, SMALL = tables.RESULTS / "characters", tables.RESULTS / "characters_small"
TABLES = ("curves", "classes", "passage")
PAPER_TAU = 6e-3            # the tau of the paper's Wikipedia ponder figure


def default_results():
    """results/characters when it holds a finished sweep, else results/characters_small."""
    return LARGE if (LARGE / "sweep.json").exists() else SMALL


def load(folder=None):
    """A characters sweep (default: default_results()) as reading.load_sweep reads it, with its
    tables curves, classes and passage."""
    return reading.load_sweep(Path(folder) if folder is not None else default_results(), tables=TABLES)


def label(tau):
    """The legend and titles of these figures: series_label of the run's key, 'no ACT' for the
    baseline (tau None here) and 'τ = 6e-3' for a τ, as every sweep figure writes them."""
    return series_label(reading.NO_ACT if tau is None else tau)


def table(res):
    """One row per tau (ascending, then no ACT): seeds, bits/char mean/min/max, mean ponder, largest N."""
    out = []
    for tau in taus(res) + [None]:
        rows = [r for r in res["runs"] if r["tau"] == tau]
        if not rows:
            continue
        bpc = np.array([r["bits_per_char"] for r in rows])
        out.append({"tau": tau, "seeds": len(rows), "bits_per_char": float(bpc.mean()),
                    "min": float(bpc.min()), "max": float(bpc.max()),
                    "ponder": float(np.mean([r["mean_ponder"] for r in rows])),
                    "max_N": int(max(r["max_N"] for r in rows))})
    return out


def print_summary(res):
    """The sweep's size and one line per tau: bits per character, mean ponder, most updates."""
    print(f"{res['name']}: {len(res['runs'])} runs, {res['runs'][0]['iterations']} iterations each")
    for t in table(res):
        print(f"{label(t['tau']):>10s}: {t['bits_per_char']:.3f} bits/char (min {t['min']:.3f}, max {t['max']:.3f}, "
              f"{t['seeds']} seeds), mean ponder {t['ponder']:.2f}, max N {t['max_N']}")


def passage_of(res, run):
    """(codes (C, T), rho (C, T), N (C, T), bits (C, T)) of one run's passage, cut into C chunks of T bytes."""
    rows = [r for r in res["passage"] if r["run"] == run]
    C, T = 1 + max(r["chunk"] for r in rows), 1 + max(r["position"] for r in rows)
    out = {name: np.zeros((C, T)) for name in ("byte", "rho", "N", "bits")}
    for r in rows:
        for name in out:
            out[name][r["chunk"], r["position"]] = r[name]
    return out["byte"].astype(np.int64), out["rho"], out["N"].astype(np.int64), out["bits"]


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def plot_bpc(res):
    """Bits per character (left) and mean ponder (right) per tau; no ACT and n-gram baselines."""
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(11, 4))
    ts = taus(res)
    for tau in ts:
        rows = [r for r in res["runs"] if r["tau"] == tau]
        ax_b.plot([tau] * len(rows), [r["bits_per_char"] for r in rows], "o", color="tab:blue", alpha=0.6)
        ax_p.plot([tau] * len(rows), [r["mean_ponder"] for r in rows], "o", color="tab:blue", alpha=0.6)
    means = [t for t in table(res) if t["tau"] is not None]
    ax_b.plot([t["tau"] for t in means], [t["bits_per_char"] for t in means], "-", color="tab:blue", label="ACT")
    ax_p.plot([t["tau"] for t in means], [t["ponder"] for t in means], "-", color="tab:blue", label="ACT")
    base = [r["bits_per_char"] for r in res["runs"] if r["tau"] is None]
    if base:
        ax_b.axhline(np.mean(base), color="black", ls="--", label="no ACT (one update per byte)")
        if len(base) > 1:
            ax_b.axhspan(min(base), max(base), color="black", alpha=0.1)
    corpus = res["meta"].get("corpus", {})
    for key, name, style in (("bigram_bits", "bigram counts", ":"), ("unigram_bits", "unigram counts", "-.")):
        if key in corpus:
            ax_b.axhline(corpus[key], color="grey", ls=style, label=f"{name} ({corpus[key]:.2f})")
    ax_p.axhline(2.0, color="black", ls="--", label="one update per byte (ρ = 2)")
    for ax in (ax_b, ax_p):
        ax.set_xscale("log")
        ax.set_xlabel("time penalty τ")
        ax.legend(fontsize=8, loc="center right")
    ax_b.set_ylabel("held-out bits per character")
    ax_p.set_ylabel("mean ponder ρ per byte")
    it = res["runs"][0]["iterations"]
    ax_b.set_title(f"bits/char after {it} iterations ({res['name']})")
    ax_p.set_title("ponder per byte")
    fig.tight_layout()
    return fig


def plot_curves(res):
    """Held-out bits per character and mean ponder against iterations, one line per run."""
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(11, 4))
    colours = tau_colours(taus(res), "viridis", 0.0, 0.9, "black", spacing="rank")
    for r in res["runs"]:
        pts = sorted((c["iteration"], c["bits_per_char"], c["mean_ponder"]) for c in res["curves"] if c["run"] == r["run"])
        it, bpc, pon = map(np.array, zip(*pts))
        lab = label(r["tau"]) if r["seed"] == 0 else None
        ax_b.plot(it, bpc, line_style(r["key"]), color=colours[r["key"]], label=lab)
        ax_p.plot(it, pon, line_style(r["key"]), color=colours[r["key"]], label=lab)
    ax_b.set_ylabel("held-out bits per character")
    ax_p.set_ylabel("held-out mean ponder ρ")
    ax_p.set_yscale("log")
    ax_p.yaxis.set_major_locator(matplotlib.ticker.FixedLocator([2, 3, 5, 10, 20, 50, 100]))
    ax_p.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax_p.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    for ax in (ax_b, ax_p):
        ax.set_xlabel("iteration")
        ax.legend(fontsize=8)
    ax_b.set_ylim(top=min(8.2, ax_b.get_ylim()[1]))
    fig.tight_layout()
    return fig


def class_means(res, tau, by="read", min_count=20):
    """[(class, count, mean ponder, mean bits)] for one tau (None: no ACT), seeds pooled.

    by="read": classes of the byte just read at step t (whose rho_t it is); by="target": classes
    of the byte predicted at step t. Classes seen fewer than min_count times per seed are left out.
    """
    prefix = "" if by == "read" else "target_"
    out = []
    for name in text.DETAIL_CLASSES:
        rows = [c for c in res["classes"] if c["tau"] == tau and c["class"] == name and c[prefix + "count"]]
        n = sum(c[prefix + "count"] for c in rows)
        if rows and n >= min_count * len(rows):
            out.append((name, n, sum(c[prefix + "count"] * c[prefix + "ponder"] for c in rows) / n,
                        sum(c[prefix + "count"] * c[prefix + "bits"] for c in rows) / n))
    return out


def plot_classes(res):
    """Mean ponder per kind of byte, one panel per tau (the scale of ponder differs with tau):
    grouped by the byte just read (the step's own input) and by the byte it has to predict."""
    ts = taus(res)
    fig, axes = plt.subplots(1, len(ts), figsize=(4.2 * len(ts), 4.4), squeeze=False)
    for ax, tau in zip(axes[0], ts):
        read, target = class_means(res, tau, "read"), dict((r[0], r) for r in class_means(res, tau, "target"))
        names = [r[0] for r in read]
        pos = np.arange(len(read))
        ax.bar(pos - 0.2, [r[2] for r in read], 0.4, color="tab:orange", label="byte just read")
        ax.bar(pos + 0.2, [target[n][2] if n in target else np.nan for n in names], 0.4, color="tab:blue",
               label="byte to predict")
        overall = sum(r[1] * r[2] for r in read) / sum(r[1] for r in read)
        ax.axhline(overall, color="black", lw=0.8, ls="--", label=f"all bytes {overall:.2f}")
        ax.set_xticks(pos, [f"{r[0]} ({r[1]})" for r in read], rotation=60, ha="right", fontsize=8)
        values = [r[2] for r in read] + [target[n][2] for n in names if n in target]
        low, high = min(values), max(values)
        ax.set_ylim(low - 0.15 * (high - low) - 1e-3, high + 0.1 * (high - low) + 1e-3)
        ax.set_title(label(tau))
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("mean ponder ρ")
    fig.suptitle("where does the network ponder? held-out bytes by class (count in brackets; "
                 "the first step of each chunk left out)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_passage(codes, rho, title="", width=80, cmap="YlOrRd"):
    """The paper's Figure 23: a passage with the ponder of every byte, as a line above the text
    and as the colour behind each character.

    codes, rho: (C, T), one row per chunk. The chunks are consecutive pieces of the text, each
    its own sequence (the state is reset at its start, marked by a red bar); they are laid end
    to end and wrapped into lines of ``width`` characters.
    """
    codes, rho = np.atleast_2d(codes), np.atleast_2d(rho)
    C, T = codes.shape
    flat_codes, flat_rho = codes.ravel(), rho.ravel()
    total = C * T
    width = min(width, total)
    lines = [np.arange(i, min(i + width, total)) for i in range(0, total, width)]
    lo, hi = float(flat_rho.min()), float(flat_rho.max())
    hi = hi if hi > lo + 1e-6 else lo + 1e-6
    norm = matplotlib.colors.Normalize(lo, hi)
    colours = plt.get_cmap(cmap)
    fig, axes = plt.subplots(len(lines), 1, figsize=(0.12 * width + 1.2, 0.75 * len(lines) + 0.5), squeeze=False)
    for ax, idx in zip(axes[:, 0], lines):
        r = flat_rho[idx]
        ax.imshow(r[None, :], extent=(-0.5, len(idx) - 0.5, 0, 1), cmap=colours, norm=norm, aspect="auto")
        for j, c in enumerate(text.show(flat_codes[idx])):
            ax.text(j, 0.5, c, ha="center", va="center", family="monospace", fontsize=9)
        ax.plot(np.arange(len(idx)), 1.1 + 0.85 * (r - lo) / (hi - lo), color="tab:red", lw=1)
        for j, i in enumerate(idx):
            if i % T == 0:
                ax.axvline(j - 0.5, ymin=0, ymax=1.0, color="red", lw=2.5)
        ax.set_xlim(-0.5, width - 0.5)
        ax.set_ylim(0, 2.0)
        ax.set_yticks([])
        ax.set_xticks([])
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    fig.subplots_adjust(hspace=0.25, right=0.9)
    bar = fig.add_axes([0.915, 0.15, 0.012, 0.7])
    fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=colours), cax=bar, label="ponder ρ")
    axes[0, 0].set_title(title, fontsize=10, loc="left")
    return fig


def pinned(res, run):
    """Whether a run's ponder reached the cap M somewhere in its final evaluation."""
    M = reading.shared_options("characters", res["meta"])["max_ponder"]      # the cap M
    r = next(r for r in res["runs"] if r["run"] == run)
    return r["tau"] is not None and r["max_N"] >= M


def pick_passage_run(res, tau=PAPER_TAU):
    """The ACT run for the passage figure: among the runs whose ponder never reached the cap M
    (a run pinned at the cap ponders the same everywhere), the one whose tau is nearest ``tau``
    on a log scale, seed 0 first. With every run pinned, the nearest of all."""
    act = [r for r in res["runs"] if r["tau"] is not None]
    free = [r for r in act if not pinned(res, r["run"])] or act
    return min(free, key=lambda r: (abs(math.log(r["tau"] / tau)), r["seed"]))["run"]


def plot_passage_run(res, run=None):
    run = run or pick_passage_run(res)
    codes, rho, N, _ = passage_of(res, run)
    tau = next(r["tau"] for r in res["runs"] if r["run"] == run)
    title = (f"{label(tau)}, {res['name']}: mean ρ {rho.mean():.2f}, {N.min()} to {N.max()} updates per byte; "
             f"red bars: a new chunk (state reset)")
    return plot_passage(codes, rho, title)


FIGURES = {
    "bpc": plot_bpc,
    "curves": plot_curves,
    "classes": plot_classes,
    "passage": plot_passage_run,
}


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/plot_characters.py"
DESCRIPTION = 'Figures of a character-prediction sweep written by scripts/characters.py (Graves 2016, section 3.5).'

# run(settings, out) is scripts/characters.py: a characters sweep and its per-byte analysis into out/
# (act_experiments.sweeps.per_byte); read(out=None) reads one (default: default_results()) with its
# tables curves, classes and passage; plot(data, figures=None, prefix=None) draws FIGURES as
# <prefix or characters>_*.png; main(argv=None) is scripts/plot_characters.py
run, read, plot, main = sweep_experiment(load, FIGURES, prefix="characters", default=default_results,
                                         summary=print_summary, script=SCRIPT, description=DESCRIPTION,
                                         task="characters")


def sweep_main(argv=None):
    """scripts/characters.py: a characters sweep and its per-byte analysis from the command line,
    ``argv`` as scripts/sweep.py takes it, less --task (act_experiments.sweeps.launch)."""
    return launch.main(argv, script="characters.py", task="characters")


if __name__ == "__main__":
    sys.exit(main())
