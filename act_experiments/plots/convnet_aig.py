"""ConvNet-AIG: the figures of notebook 14 and scripts/convnet_aig.py (accuracy against computation, block usage per class)."""

import numpy as np


def draw_tradeoff(ax, rows, title=None):
    """Accuracy against the fraction of block computations run, from run_one's rows (any seeds):
    every run as a small point, the mean per target rate (per depth for static networks) as a
    line; soft gates at 1.0 (every block computed) and, hollow, made hard by argmax."""
    def num(v):
        return float(v)

    def group(kind, key):
        out = {}
        for r in rows:
            if r["kind"] == kind:
                out.setdefault(num(r[key]), []).append(r)
        return dict(sorted(out.items()))

    styles = {"static": ("grey", "s", "plain ResNet, 0 to L blocks"),
              "hard": ("tab:blue", "o", "ConvNet-AIG, hard gates (one point per target rate t)"),
              "soft": ("tab:orange", "D", "soft gates: every block computed")}
    for kind, key in (("static", "blocks"), ("hard", "target_rate"), ("soft", "target_rate")):
        groups = group(kind, key)
        if not groups:
            continue
        colour, marker, label = styles[kind]
        xs = [np.mean([num(r["computed"]) for r in g]) for g in groups.values()]
        ys = [np.mean([num(r["accuracy"]) for r in g]) for g in groups.values()]
        for g in groups.values():
            ax.scatter([num(r["computed"]) for r in g], [num(r["accuracy"]) for r in g], s=10, color=colour,
                       alpha=0.35, marker=marker, lw=0)
        ax.plot(xs, ys, marker=marker, color=colour, label=label, ls="-" if kind != "soft" else "none")
        if kind == "hard":
            for (t, g), x, y in zip(groups.items(), xs, ys):
                ax.annotate(f"t = {t:g}", (x, y), xytext=(4, -12), textcoords="offset points", fontsize=8,
                            color=colour)
        if kind == "soft":
            xa = [np.mean([num(r["executed_argmax"]) for r in g]) for g in groups.values()]
            ya = [np.mean([num(r["accuracy_argmax"]) for r in g]) for g in groups.values()]
            ax.plot(xa, ya, marker=marker, color=colour, mfc="none", ls="none",
                    label="soft gates made hard after training (argmax)")
    ax.set_xlabel("fraction of the blocks' computation run (test images)")
    ax.set_ylabel("test accuracy")
    ax.set_xlim(-0.03, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    if title:
        ax.set_title(title, fontsize=10)


def draw_usage(ax, usage, title=None, colorbar=True):
    """Heat map of a (classes, L) usage table: the fraction of each class's test images that
    execute each block, with the numbers written in."""
    usage = np.asarray(usage, dtype=float)
    image = ax.imshow(usage, vmin=0, vmax=1, cmap="Blues", aspect="auto")
    for c in range(usage.shape[0]):
        for l in range(usage.shape[1]):
            v = usage[c, l]
            if np.isfinite(v):
                ax.text(l, c, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if v > 0.6 else "black")
    ax.set_xticks(range(usage.shape[1]), [str(l + 1) for l in range(usage.shape[1])])
    ax.set_yticks(range(usage.shape[0]), [str(c) for c in range(usage.shape[0])])
    ax.set_xlabel("block")
    ax.set_ylabel("digit")
    if title:
        ax.set_title(title, fontsize=10)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="fraction executing the block")
    return image
