"""PonderNet against ACT: the figures of notebook 12 and scripts/pondernet.py, from the comparison's tables.

The tables are ``act_experiments.experiments.pondernet``' (read_comparison); here too what the figures pick
from them (by_knob, comparison_picks, attention_picks). matplotlib is imported when a figure is drawn.
"""

import numpy as np


def by_knob(rows, model, field):
    """{knob: [values over seeds, in seed order]} of one model's ``field`` in the runs table."""
    out = {}
    for row in sorted((r for r in rows if r["model"] == model), key=lambda r: (r["knob"], r["seed"])):
        out.setdefault(row["knob"], []).append(row[field])
    return out


def comparison_picks(tables):
    """(ACT's tau, PonderNet's beta) with the lowest mean in-range error over seeds (the smaller
    knob on a tie): the settings the per-count and curve figures show."""
    picks = []
    for model in ("act", "pondernet"):
        errors = by_knob(tables["runs"], model, "error_in")
        picks.append(min(errors, key=lambda knob: (float(np.mean(errors[knob])), knob)))
    return tuple(picks)


def attention_picks(tables, act_knob, pn_knob):
    """[(model, knob, seed)] for ACT at act_knob and PonderNet at pn_knob: each the seed with the
    lowest in-range error (the smaller seed on a tie)."""
    picks = []
    for model, knob in (("act", act_knob), ("pondernet", pn_knob)):
        rows = [r for r in tables["runs"] if r["model"] == model and r["knob"] == knob]
        best = min(rows, key=lambda r: (r["error_in"], r["seed"]))
        picks.append((model, knob, best["seed"]))
    return picks


MODEL_NAMES = {"act": "ACT", "pondernet": "PonderNet"}


MODEL_COLOURS = {"act": "tab:blue", "pondernet": "tab:orange"}


KNOB_SYMBOLS = {"act": "τ", "pondernet": "β"}


def attention_matrix(p, counts, bits):
    """Mean p per number of non-zero bits: p (B, N) over the steps, counts (B,) -> (bits, N),
    row c - 1 for count c (NaN where no row has that count)."""
    p, counts = np.asarray(p, dtype=np.float64), np.asarray(counts)
    out = np.full((bits, p.shape[1]), np.nan)
    for c in range(1, bits + 1):
        if np.any(counts == c):
            out[c - 1] = p[counts == c].mean(axis=0)
    return out


def draw_attention(ax, matrix, title, train_max=None, vmax=1.0):
    """A heat map of p over steps (x) for each number of non-zero bits (y); a dashed line marks
    the end of the training range when ``train_max`` is below the largest count. Returns the image."""
    bits, steps = matrix.shape
    image = ax.imshow(matrix, origin="lower", aspect="auto", cmap="viridis", vmin=0.0, vmax=vmax,
                      extent=(0.5, steps + 0.5, 0.5, bits + 0.5))
    if train_max is not None and train_max < bits:
        ax.axhline(train_max + 0.5, color="white", ls="--", lw=1.2)
        ax.text(steps + 0.3, train_max + 0.6, "unseen in training ↑", color="white", ha="right", va="bottom",
                fontsize=8)
    ax.set_xlabel("ponder step n")
    ax.set_ylabel("non-zero bits")
    ax.set_title(title, fontsize=10)
    return image


def _knob_label(model, knob):
    return f"{KNOB_SYMBOLS[model]} = {knob:g}"


def figure_errors(tables):
    """Final error per seed for every tau (ACT) and beta (PonderNet): in range and beyond it."""
    import matplotlib.pyplot as plt
    runs, meta = tables["runs"], tables["meta"]["settings"]
    sets = [("in", f"held out, 1..{meta['train_max']} non-zero bits (the training range)")]
    if meta["train_max"] < meta["bits"]:
        sets.append(("out", f"extrapolation, {meta['train_max'] + 1}..{meta['bits']} non-zero bits"))
    fig, axes = plt.subplots(1, len(sets), figsize=(5.2 * len(sets), 3.6), squeeze=False)
    for ax, (name, title) in zip(axes[0], sets):
        ticks, labels, x = [], [], 0
        for model in ("act", "pondernet"):
            for knob, values in by_knob(runs, model, f"error_{name}").items():
                ax.scatter(np.full(len(values), x) + np.linspace(-0.12, 0.12, len(values)), values, s=22,
                           color=MODEL_COLOURS[model], alpha=0.8, zorder=3)
                ax.hlines(np.mean(values), x - 0.3, x + 0.3, color="black", lw=1.5, zorder=4)
                ticks.append(x)
                labels.append(f"{MODEL_NAMES[model]}\n{_knob_label(model, knob)}")
                x += 1
            x += 0.6
        ax.axhline(0.5, color="crimson", ls=":", lw=1, label="chance")
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylim(-0.02, 0.75)
        ax.set_ylabel("error (dots: seeds, bar: mean)")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(frameon=False, fontsize=8, loc="upper left")
    fig.suptitle(f"{meta['bits']}-bit parity, tanh RNN H={meta['hidden']}, {meta['iterations']} iterations, "
                 f"{len(meta['seeds'])} seeds", fontsize=10)
    fig.tight_layout()
    return fig


def figure_counts(tables, act_knob, pn_knob):
    """Error and steps per number of non-zero bits, ACT at one tau beside PonderNet at one beta
    (thin lines: seeds; thick: their mean); the training range shaded."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    fig, (ax_e, ax_s) = plt.subplots(1, 2, figsize=(10.5, 3.6))
    for model, knob in (("act", act_knob), ("pondernet", pn_knob)):
        rows = [r for r in tables["counts"] if r["model"] == model and r["knob"] == knob]
        seeds = sorted({r["seed"] for r in rows})
        counts = sorted({r["count"] for r in rows})
        for field, ax in (("error", ax_e), ("steps", ax_s)):
            table = np.array([[next(r[field] for r in rows if r["seed"] == s and r["count"] == c) for c in counts]
                              for s in seeds])
            for line in table:
                ax.plot(counts, line, color=MODEL_COLOURS[model], alpha=0.25, lw=1)
            ax.plot(counts, table.mean(axis=0), color=MODEL_COLOURS[model], lw=2.2, marker="o",
                    label=f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}")
    for ax in (ax_e, ax_s):
        ax.axvspan(0.5, meta["train_max"] + 0.5, color="grey", alpha=0.12, lw=0, label="training range")
        ax.set_xlabel("non-zero bits")
        ax.set_xticks(range(1, meta["bits"] + 1))
        ax.grid(alpha=0.3)
    ax_e.axhline(0.5, color="crimson", ls=":", lw=1)
    ax_e.set_ylim(-0.02, 1.02)
    ax_e.set_ylabel("error")
    ax_s.set_ylabel("updates used (ACT: N; PonderNet: sampled n)")
    ax_e.legend(frameon=False, fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def figure_attention(tables, picks):
    """Heat maps of the mean p over steps per number of non-zero bits, one per trained network:
    picks, a list of (model, knob, seed)."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    matrices = []
    for model, knob, seed in picks:
        matrix = np.full((meta["bits"], meta["max_steps"]), np.nan)
        for r in tables["attention"]:
            if (r["model"], r["knob"], r["seed"]) == (model, knob, seed):
                matrix[r["count"] - 1, r["step"] - 1] = r["p"]
        matrices.append(matrix)
    # show the steps that get attention (mean p above 0.005 somewhere), and at least five
    used = max(int(np.flatnonzero(np.nanmax(m, axis=0) > 0.005).max(initial=0)) + 2 for m in matrices)
    steps = min(meta["max_steps"], max(5, used))
    fig, axes = plt.subplots(1, len(picks), figsize=(4.6 * len(picks), 3.4), squeeze=False)
    for ax, (model, knob, seed), matrix in zip(axes[0], picks, matrices):
        image = draw_attention(ax, matrix[:, :steps], f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}, seed {seed}",
                               train_max=meta["train_max"])
    if steps < meta["max_steps"]:
        fig.text(0.01, 0.0, f"steps {steps + 1}..{meta['max_steps']} get less than 0.005 of the attention and are "
                 "not drawn", fontsize=8)
    fig.colorbar(image, ax=axes[0].tolist(), label="mean p (attention on step n)", shrink=0.9)
    return fig


def figure_curves(tables):
    """Held-out error against iterations, one panel per penalty: the i-th tau of ACT beside the
    i-th beta of PonderNet, one line per seed, in range (solid) and beyond it (dashed)."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    beyond = meta["train_max"] < meta["bits"]
    pairs = list(zip(sorted(set(meta["taus"])), sorted(set(meta["betas"]))))
    fig, axes = plt.subplots(1, len(pairs), figsize=(3.6 * len(pairs), 3.3), sharey=True, squeeze=False)
    for ax, knobs in zip(axes[0], pairs):
        for model, knob in zip(("act", "pondernet"), knobs):
            rows = [r for r in tables["curves"] if r["model"] == model and r["knob"] == knob]
            for i, seed in enumerate(sorted({r["seed"] for r in rows})):
                mine = sorted((r for r in rows if r["seed"] == seed), key=lambda r: r["iteration"])
                its = [r["iteration"] for r in mine]
                label = f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}" if i == 0 else None
                ax.plot(its, [r["error_in"] for r in mine], color=MODEL_COLOURS[model], lw=1.2, label=label)
                if beyond:
                    ax.plot(its, [r["error_out"] for r in mine], color=MODEL_COLOURS[model], lw=1.2, ls="--")
        ax.axhline(0.5, color="crimson", ls=":", lw=1)
        ax.set_xlabel("iteration")
        ax.set_ylim(-0.02, 0.8)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8, loc="upper right")
    axes[0][0].set_ylabel("error (solid: in range, dashed: beyond)" if beyond else "held-out error")
    fig.suptitle(f"{meta['bits']}-bit parity, trained on 1..{meta['train_max']} non-zero bits: one line per seed",
                 fontsize=10)
    fig.tight_layout()
    return fig
