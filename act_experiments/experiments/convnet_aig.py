"""ConvNet-AIG's sweep (notebook 14, scripts/convnet_aig.py): the training loop, one network trained and measured, the sweep.

    history = train(model, data, target_rate=0.5, seed=0)     # Adam, cosine learning rate
    row, usage, model = run_one("hard", seed=0, data=aig.load_digits_split(0), target_rate=0.6)
    runs, usage = run(out, seeds, rates, depths, SETTINGS)     # what out/runs.csv lacks (runner.run_plan)
    runs, usage = read()                                        # results/convnet_aig/
    plot(runs, usage)                                           # figures/convnet_aig_*.png
    main(["--plot-only"])                                       # scripts/convnet_aig.py

The model and its gates are ``act_beyond.convnet_aig``'s; here a network of the sweep is built,
trained and measured into a CSV row, rows are summarised over seeds, and the figures are drawn.
"""

import sys
import time
from pathlib import Path

import matplotlib
import numpy as np
import torch

from act_beyond import convnet_aig as aig
from act_experiments.cli import OneLineParser, checked, number_list
from act_experiments.experiments import runner
from act_experiments.figures import print_written, save_figure
from act_experiments.tables import RESULTS, numbers_in, read_csv
from act_experiments.threads import torch_threads
from act_numpy.checks import check_float, check_int


# the settings of the notebook's live runs and of the committed sweep (scripts/convnet_aig.py)
SETTINGS = dict(blocks=6, channels=8, convs=1, batch_size=64, lr=1e-2, iterations=400, rate_weight=2.0)


def train(model, data, *, target_rate=0.6, rate_weight=2.0, iterations=400, batch_size=128, lr=3e-3, seed=0,
          log_every=0):
    """Train ``model`` on data["x_train"], data["y_train"] with Adam, its learning rate falling from
    ``lr`` to 0 along a half cosine (torch's CosineAnnealingLR):

        loss = cross-entropy + rate_weight * target_rate_loss(z, target_rate)

    (no rate term for gates="none"). Batches are drawn without replacement, epoch by epoch, by a
    generator seeded with ``seed``; the Gumbel noise by a second one. Returns a list of records
    {iteration, loss, ce, rate_loss, executed} every ``log_every`` iterations and at the last one
    (executed: the batch's mean gate value).
    """
    check_int("iterations", iterations)
    check_int("batch_size", batch_size, 2)          # batch norm needs two images
    check_float("rate_weight", rate_weight, 0.0)
    check_float("target_rate", target_rate, 0.0, 1.0)
    x, y = data["x_train"], data["y_train"]
    batches = torch.Generator().manual_seed(seed)
    noise = torch.Generator().manual_seed(seed + 7919)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    # the learning rate falls along a half cosine to 0 at the last iteration: a short run then ends
    # at a settled point instead of wherever the last large step left it
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=iterations)
    model.train()
    order, at = torch.randperm(len(y), generator=batches), 0
    history = []
    for it in range(1, iterations + 1):
        if at + batch_size > len(y):
            order, at = torch.randperm(len(y), generator=batches), 0
        idx = order[at:at + batch_size]
        at += batch_size
        logits, z = model(x[idx], generator=noise)
        ce = torch.nn.functional.cross_entropy(logits, y[idx])
        rate = aig.target_rate_loss(z, target_rate) if model.gates != "none" and z.shape[1] else ce.new_zeros(())
        loss = ce + rate_weight * rate
        opt.zero_grad()
        loss.backward()
        opt.step()
        schedule.step()
        if (log_every and it % log_every == 0) or it == iterations:
            history.append({"iteration": it, "loss": loss.item(), "ce": ce.item(), "rate_loss": rate.item(),
                            "executed": z.mean().item() if z.shape[1] else 0.0,
                            "rates": z.mean(0).tolist()})          # per block: share of the batch running it
    model.eval()
    return history


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
    train(model, data, target_rate=target_rate if kind != "static" else 1.0, rate_weight=s["rate_weight"],
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


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/convnet_aig.py"
DESCRIPTION = 'ConvNet-AIG on the 8 x 8 digits: a sweep over target rates and seeds, and its figures.'
DEFAULT_OUT = RESULTS / "convnet_aig"
RATES = (0.2, 0.35, 0.5, 0.65, 0.8)
DEPTHS = (0, 1, 2, 3, 6)
SEEDS = (0, 1, 2)
RUN_COLUMNS = (["kind", "target_rate", "blocks", "seed", "accuracy", "executed", "computed", "accuracy_argmax",
                "executed_argmax"] + [f"rate_{l + 1}" for l in range(SETTINGS["blocks"])] + ["cpu_s"])
USAGE_COLUMNS = ["kind", "target_rate", "seed", "digit"] + [f"block_{l + 1}" for l in range(SETTINGS["blocks"])]


def run_key(kind, target_rate, blocks, seed):
    """The key of one network of the sweep, the same from its values and from its CSV strings:
    (kind, rate as %g, or '' for static, blocks, seed)."""
    return (kind, "" if kind == "static" else f"{float(target_rate):g}", str(int(blocks)), str(int(seed)))


def _unit_of(table, row):
    """The run_key of the network that wrote a row of runs.csv or usage.csv (only gated networks
    have usage rows, all of SETTINGS["blocks"] blocks)."""
    blocks = row["blocks"] if table == "runs.csv" else SETTINGS["blocks"]
    return run_key(row["kind"], row["target_rate"] or 0, blocks, row["seed"])


def run(settings, out, force=False, log=print):
    """Train whatever of the sweep out/runs.csv lacks; returns (runs, usage) rows, as ``read``.

    settings: "seeds", "rates" and "depths" (default SEEDS, RATES, DEPTHS) and any of the networks'
    SETTINGS (the others SETTINGS'), e.g. {"seeds": (0,), "iterations": 50}.

    The networks are the units of ``runner.run_plan``: for each seed a plain ResNet per depth,
    then a hard and a soft ConvNet-AIG per rate; each one's row is appended to runs.csv and its
    usage table to usage.csv when it is trained, and out/sweep.json records the settings. A
    stopped sweep continues where it stopped, more seeds, rates or depths add networks, and other
    settings are refused with ValueError unless ``force`` (which starts the sweep over).
    """
    settings = dict(settings)
    seeds, rates, depths = (tuple(settings.pop(k, default)) for k, default in
                            (("seeds", SEEDS), ("rates", RATES), ("depths", DEPTHS)))
    settings = {**SETTINGS, **settings}
    plan = [("static", None, d, s) for s in seeds for d in depths]
    plan += [(k, t, SETTINGS["blocks"], s) for s in seeds for t in rates for k in ("hard", "soft")]
    data = {}

    def train_one(unit):
        kind, rate, blocks, seed = unit
        if not data:
            data.update(aig.load_digits_split(seed=0))
        row, table, _ = run_one(kind, seed, data, target_rate=rate, blocks=blocks, settings=settings)
        usage = [] if table is None else [
            {"kind": kind, "target_rate": rate, "seed": seed, "digit": c,
             **{f"block_{l + 1}": float(table[c, l]) for l in range(table.shape[1])}} for c in range(table.shape[0])]
        what = f"t = {rate:g}" if kind != "static" else f"{blocks} blocks"
        return ({"runs.csv": [row], "usage.csv": usage},
                f"{kind:6s} {what:10s} seed {seed}: accuracy {row['accuracy']:.3f}, computed {row['computed']:.3f} "
                f"({row['cpu_s']:.0f} s CPU)")

    meta = {"settings": settings, "data": "sklearn.datasets.load_digits, split with seed 0, 25% test"}
    runner.run_plan(out, plan, train_one, {"runs.csv": RUN_COLUMNS, "usage.csv": USAGE_COLUMNS}, meta,
                    key=lambda unit: run_key(*unit), unit_of=_unit_of, record="sweep.json", name="the sweep",
                    script=SCRIPT, force=force, float_format=".6g", count_as="runs", log=log)
    return read(out)


def read(out=DEFAULT_OUT):
    """(runs, usage): the rows of out/runs.csv and out/usage.csv as dicts of numbers, "kind" as
    text and None where a field is empty (a static network's target_rate and argmax columns)."""
    out = Path(out)
    return tuple([numbers_in(row, ("kind",)) for row in read_csv(out / name)] for name in ("runs.csv", "usage.csv"))


def mean_usage(usage, kind, rate):
    """(digits, L) mean over seeds of the usage rows of one kind and target rate."""
    rows = [r for r in usage if r["kind"] == kind and float(r["target_rate"]) == rate]
    blocks = [k for k in USAGE_COLUMNS if k.startswith("block_")]
    seeds = sorted({r["seed"] for r in rows})
    tables = [np.array([[float(r[b]) for b in blocks] for r in sorted((r for r in rows if r["seed"] == s),
                                                                       key=lambda r: int(r["digit"]))])
              for s in seeds]
    return np.mean(tables, axis=0), len(seeds)


def plot(data, figures=None):
    """Draw the two figures of ``read``'s (runs, usage) rows as <figures or figures/>/convnet_aig_*.png;
    returns their paths."""
    import matplotlib.pyplot as plt
    runs, usage = data
    seeds = len({r["seed"] for r in runs})
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    draw_tradeoff(ax, runs, title=f"8 x 8 digits, {SETTINGS['blocks']} residual blocks, "
                                      f"{seeds} seeds")
    paths = [save_figure(fig, "convnet_aig_tradeoff", figures)]
    plt.close(fig)
    rates = sorted({float(r["target_rate"]) for r in usage if r["kind"] == "hard"})
    if rates:
        fig, axes = plt.subplots(1, len(rates), figsize=(2.6 * len(rates) + 1, 4.2), sharey=True)
        axes = np.atleast_1d(axes)
        for ax, rate in zip(axes, rates):
            table, n = mean_usage(usage, "hard", rate)
            draw_usage(ax, table, title=f"t = {rate:g}", colorbar=False)
            if ax is not axes[0]:
                ax.set_ylabel("")
        fig.suptitle(f"hard gates: fraction of each digit's test images that execute each block "
                     f"(mean of {n} seeds)", fontsize=10)
        fig.tight_layout()
        paths.append(save_figure(fig, "convnet_aig_usage", figures))
        plt.close(fig)
    return paths


def main(argv=None):
    matplotlib.use("Agg")
    ap = OneLineParser(prog=SCRIPT, description=DESCRIPTION)
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="folder of runs.csv, usage.csv, sweep.json")
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--rates", default=",".join(map(str, RATES)), help="target rates of the gated networks")
    ap.add_argument("--depths", default=",".join(map(str, DEPTHS)), help="depths of the plain ResNets")
    ap.add_argument("--iterations", type=int, default=SETTINGS["iterations"],
                    help=f"training iterations per network (default {SETTINGS['iterations']}, the notebook's)")
    ap.add_argument("--force", action="store_true", help="start the sweep over, even with other settings")
    ap.add_argument("--plot-only", action="store_true", help="only redraw the figures from the CSVs")
    ap.add_argument("--figures", help="folder of the figures (default figures/)")
    args = ap.parse_args(argv)
    seeds = checked(ap, number_list, args.seeds, "--seeds", check_int, 0, 2**31 - 1)
    rates = checked(ap, number_list, args.rates, "--rates", check_float, 0.0, 1.0)
    depths = checked(ap, number_list, args.depths, "--depths", check_int, 0, SETTINGS["blocks"])
    checked(ap, check_int, "--iterations", args.iterations)
    try:
        runs, usage = _run_or_read(args, seeds, rates, depths)
    except ValueError as err:
        ap.exit(1, f"{ap.prog}: error: {err}\n")
    print_summary(runs)
    print_written(plot((runs, usage), args.figures))
    return 0


def _run_or_read(args, seeds, rates, depths):
    """main's work: (runs, usage) of the sweep trained, or read back for --plot-only. A refused
    sweep, or no sweep to read, raises ValueError."""
    torch_threads()                    # one thread unless OMP_NUM_THREADS says otherwise: tiny convolutions
    out = Path(args.out)
    if args.plot_only:
        if not (out / "runs.csv").exists():
            raise ValueError(f"no runs.csv in {out}: run the sweep first")
        return read(out)
    return run({"seeds": seeds, "rates": rates, "depths": depths, "iterations": args.iterations}, out,
               force=args.force, log=lambda line: print(line, flush=True))

if __name__ == "__main__":
    sys.exit(main())
