"""ConvNet-AIG's sweep (notebook 14, scripts/convnet_aig.py): one network trained and measured, and the sweep's summary.

    row, usage, model = run_one("hard", seed=0, data=aig.load_digits_split(0), target_rate=0.6)

The model, its gates and its training step are ``act_beyond.convnet_aig``'s; here a network of the
sweep is built, trained and measured into a CSV row, and rows are summarised over seeds.
"""

import time

import numpy as np

from act_beyond import convnet_aig as aig


# the settings of the notebook's live runs and of the committed sweep (scripts/convnet_aig.py)
SETTINGS = dict(blocks=6, channels=8, convs=1, batch_size=64, lr=1e-2, iterations=400, rate_weight=2.0)


def run_one(kind, seed, data, target_rate=None, blocks=None, settings=None):
    """Train and aig.evaluate one network of the sweep; returns (row, usage, model).

    kind: "hard" or "soft" (gated, at ``target_rate``) or "static" (a plain ResNet of ``blocks``
    blocks, default SETTINGS["blocks"]). The row holds kind, target_rate ('' for static),
    blocks, seed, accuracy, executed (mean gate value), computed (fraction of the gated network's
    block computations that run, relative to SETTINGS["blocks"] blocks), accuracy_argmax
    (soft gates made hard: open where the execute probability is above 1/2, '' otherwise),
    executed_argmax, rate_1 .. rate_L (the fraction of test images executing each block; soft:
    the mean gate value) and cpu_s. usage: (classes, L) from aig.class_block_usage, or None for
    static networks.
    """
    s = dict(SETTINGS, **(settings or {}))
    if kind not in ("hard", "soft", "static"):
        raise ValueError(f"kind must be 'hard', 'soft' or 'static', got {kind!r}")
    if kind != "static" and target_rate is None:
        raise ValueError("target_rate is needed for a gated network")
    depth = s["blocks"] if blocks is None else blocks
    start = time.process_time()
    model = aig.build("none" if kind == "static" else kind, blocks=depth, channels=s["channels"], seed=seed,
                  convs=s["convs"])
    aig.train(model, data, target_rate=target_rate if kind != "static" else 1.0, rate_weight=s["rate_weight"],
          iterations=s["iterations"], batch_size=s["batch_size"], lr=s["lr"], seed=seed)
    result = aig.evaluate(model, data["x_test"], data["y_test"])
    row = {"kind": kind, "target_rate": "" if kind == "static" else target_rate, "blocks": depth, "seed": seed,
           "accuracy": result["accuracy"], "executed": result["executed"],
           "computed": result["computed"] * depth / s["blocks"], "accuracy_argmax": "", "executed_argmax": ""}
    if kind == "soft":
        hard = aig.evaluate(model, data["x_test"], data["y_test"], mode="argmax")
        row.update(accuracy_argmax=hard["accuracy"], executed_argmax=hard["executed"])
    rates = result["z"].mean(axis=0) if depth else np.zeros(0)
    row.update({f"rate_{l + 1}": float(rates[l]) if l < depth else "" for l in range(s["blocks"])})
    row["cpu_s"] = time.process_time() - start
    usage = None if kind == "static" else aig.class_block_usage(result["z"], data["y_test"].numpy())
    return row, usage, model


def summarise(rows):
    """Mean and spread over seeds of run_one's rows (or the same rows read back from a CSV), per
    kind and target rate (per depth for static networks): a list of dicts with kind, key (the
    rate or depth), seeds, accuracy, accuracy_sd, accuracy_min, accuracy_max, computed, and for
    soft gates accuracy_argmax and executed_argmax. Sorted by kind, then key."""
    groups = {}
    for r in rows:
        key = float(r["target_rate"]) if r["kind"] != "static" else int(r["blocks"])
        groups.setdefault((r["kind"], key), []).append(r)
    out = []
    for (kind, key), group in sorted(groups.items()):
        acc = np.array([float(r["accuracy"]) for r in group])
        entry = {"kind": kind, "key": key, "seeds": len(group), "accuracy": acc.mean(), "accuracy_sd": acc.std(),
                 "accuracy_min": acc.min(), "accuracy_max": acc.max(),
                 "computed": float(np.mean([float(r["computed"]) for r in group]))}
        if kind == "soft":
            entry["accuracy_argmax"] = float(np.mean([float(r["accuracy_argmax"]) for r in group]))
            entry["executed_argmax"] = float(np.mean([float(r["executed_argmax"]) for r in group]))
        out.append(entry)
    return out


def print_summary(rows):
    """Print summarise(rows) as a table."""
    print(f"{'kind':7s} {'t / blocks':>10s} {'seeds':>5s} {'accuracy (mean, min-max)':>25s} {'computed':>9s}"
          f" {'argmax: accuracy':>17s} {'computed':>9s}")
    for e in summarise(rows):
        line = (f"{e['kind']:7s} {e['key']:>10g} {e['seeds']:5d} {e['accuracy']:11.3f} ({e['accuracy_min']:.3f}-"
                f"{e['accuracy_max']:.3f}) {e['computed']:9.3f}")
        if e["kind"] == "soft":
            line += f" {e['accuracy_argmax']:17.3f} {e['executed_argmax']:9.3f}"
        print(line)


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

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
