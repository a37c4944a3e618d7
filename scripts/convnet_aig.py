"""ConvNet-AIG on the 8 x 8 digits: a sweep over target rates and seeds, and its figures.

    python scripts/convnet_aig.py                          # the committed sweep, into results/convnet_aig/
    python scripts/convnet_aig.py --plot-only              # redraw figures/convnet_aig_*.png from the CSVs
    python scripts/convnet_aig.py --seeds 0 --rates 0.5 --depths 6 --out /tmp/aig   # a small one

Trains, for every seed, a ConvNet-AIG with hard gates and one with soft gates at each target
rate, and a plain ResNet of each depth, all with act_experiments.experiments.convnet_aig.SETTINGS (the settings
of notebook 14's live runs), and writes into --out:

    runs.csv    one row per network (act_experiments.experiments.convnet_aig.run_one)
    usage.csv   per gated network, the fraction of each digit's test images executing each block
    sweep.json  the settings

A run already in runs.csv is not trained again, so a stopped sweep continues where it stopped;
different settings from those in sweep.json are refused. Then it draws
figures/convnet_aig_tradeoff.png (accuracy against computation) and figures/convnet_aig_usage.png
(digit x block heat maps, mean over the seeds) through act_experiments.figures.save_figure.
"""

import json
import sys
from pathlib import Path

import matplotlib
import numpy as np

from act_beyond import convnet_aig as aig
from act_experiments.experiments import convnet_aig as aig_runs
from act_experiments.plots import convnet_aig as aig_plots
from act_experiments import course
from act_experiments.figures import print_written, save_figure
from act_experiments.tables import read_csv, write_csv, write_json
from act_experiments.training.cli import OneLineParser

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "results" / "convnet_aig"
RATES = (0.2, 0.35, 0.5, 0.65, 0.8)
DEPTHS = (0, 1, 2, 3, 6)
SEEDS = (0, 1, 2)
RUN_COLUMNS = (["kind", "target_rate", "blocks", "seed", "accuracy", "executed", "computed", "accuracy_argmax",
                "executed_argmax"] + [f"rate_{l + 1}" for l in range(aig_runs.SETTINGS["blocks"])] + ["cpu_s"])
USAGE_COLUMNS = ["kind", "target_rate", "seed", "digit"] + [f"block_{l + 1}" for l in range(aig_runs.SETTINGS["blocks"])]


def numbers(text, kind, name, low, high):
    """'0.2,0.5' -> (0.2, 0.5), each checked to lie in [low, high]; a bad list exits in one line."""
    try:
        values = tuple(kind(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise SystemExit(f"convnet_aig.py: --{name} must be a comma-separated list of numbers, got {text!r}")
    if not values or not all(low <= v <= high for v in values):
        raise SystemExit(f"convnet_aig.py: --{name} values must lie in [{low}, {high}], got {text!r}")
    return values


def run_key(kind, target_rate, blocks, seed):
    return (kind, "" if kind == "static" else f"{float(target_rate):g}", str(int(blocks)), str(int(seed)))


def sweep(out, seeds, rates, depths, settings):
    """Train whatever of the sweep is missing from out/runs.csv; returns (runs, usage) rows."""
    out.mkdir(parents=True, exist_ok=True)
    config = {"settings": settings, "data": "sklearn.datasets.load_digits, split with seed 0, 25% test"}
    meta = out / "sweep.json"
    if meta.exists():
        if json.loads(meta.read_text())["settings"] != settings:
            raise SystemExit(f"convnet_aig.py: {meta} holds other settings ({json.loads(meta.read_text())['settings']}); "
                             f"use another --out")
    else:
        write_json(meta, config, indent=1)
    runs = read_csv(out / "runs.csv") if (out / "runs.csv").exists() else []
    usage = read_csv(out / "usage.csv") if (out / "usage.csv").exists() else []
    done = {run_key(r["kind"], r["target_rate"] or 0, r["blocks"], r["seed"]) for r in runs}
    plan = [("static", None, d, s) for s in seeds for d in depths]
    plan += [(k, t, aig_runs.SETTINGS["blocks"], s) for s in seeds for t in rates for k in ("hard", "soft")]
    todo = [p for p in plan if run_key(p[0], p[1] or 0, p[2], p[3]) not in done]
    print(f"{len(plan) - len(todo)} of {len(plan)} runs already in {out / 'runs.csv'}; training {len(todo)}",
          flush=True)
    data = aig.load_digits_split(seed=0)
    for i, (kind, rate, blocks, seed) in enumerate(todo, 1):
        row, table, _ = aig_runs.run_one(kind, seed, data, target_rate=rate, blocks=blocks, settings=settings)
        runs.append(row)
        if table is not None:
            usage += [{"kind": kind, "target_rate": rate, "seed": seed, "digit": c,
                       **{f"block_{l + 1}": float(table[c, l]) for l in range(table.shape[1])}}
                      for c in range(table.shape[0])]
        write_csv(out / "runs.csv", runs, RUN_COLUMNS, float_format=".6g")
        write_csv(out / "usage.csv", usage, USAGE_COLUMNS, float_format=".6g")
        what = f"t = {rate:g}" if kind != "static" else f"{blocks} blocks"
        print(f"[{i}/{len(todo)}] {kind:6s} {what:10s} seed {seed}: accuracy {row['accuracy']:.3f}, "
              f"computed {row['computed']:.3f} ({row['cpu_s']:.0f} s CPU)", flush=True)
    return read_csv(out / "runs.csv"), read_csv(out / "usage.csv")


def mean_usage(usage, kind, rate):
    """(digits, L) mean over seeds of the usage rows of one kind and target rate."""
    rows = [r for r in usage if r["kind"] == kind and float(r["target_rate"]) == rate]
    blocks = [k for k in USAGE_COLUMNS if k.startswith("block_")]
    seeds = sorted({r["seed"] for r in rows})
    tables = [np.array([[float(r[b]) for b in blocks] for r in sorted((r for r in rows if r["seed"] == s),
                                                                       key=lambda r: int(r["digit"]))])
              for s in seeds]
    return np.mean(tables, axis=0), len(seeds)


def figures(runs, usage, directory=None):
    """Draw and save the two figures; returns their paths."""
    import matplotlib.pyplot as plt
    seeds = len({r["seed"] for r in runs})
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    aig_plots.draw_tradeoff(ax, runs, title=f"8 x 8 digits, {aig_runs.SETTINGS['blocks']} residual blocks, "
                                      f"{seeds} seeds")
    paths = [save_figure(fig, "convnet_aig_tradeoff", directory)]
    plt.close(fig)
    rates = sorted({float(r["target_rate"]) for r in usage if r["kind"] == "hard"})
    if rates:
        fig, axes = plt.subplots(1, len(rates), figsize=(2.6 * len(rates) + 1, 4.2), sharey=True)
        axes = np.atleast_1d(axes)
        for ax, rate in zip(axes, rates):
            table, n = mean_usage(usage, "hard", rate)
            aig_plots.draw_usage(ax, table, title=f"t = {rate:g}", colorbar=False)
            if ax is not axes[0]:
                ax.set_ylabel("")
        fig.suptitle(f"hard gates: fraction of each digit's test images that execute each block "
                     f"(mean of {n} seeds)", fontsize=10)
        fig.tight_layout()
        paths.append(save_figure(fig, "convnet_aig_usage", directory))
        plt.close(fig)
    return paths


def main(argv=None):
    matplotlib.use("Agg")
    ap = OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="folder of runs.csv, usage.csv, sweep.json")
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--rates", default=",".join(map(str, RATES)), help="target rates of the gated networks")
    ap.add_argument("--depths", default=",".join(map(str, DEPTHS)), help="depths of the plain ResNets")
    ap.add_argument("--iterations", type=int, default=aig_runs.SETTINGS["iterations"],
                    help=f"training iterations per network (default {aig_runs.SETTINGS['iterations']}, the notebook's)")
    ap.add_argument("--plot-only", action="store_true", help="only redraw the figures from the CSVs")
    ap.add_argument("--figures", help="folder of the figures (default figures/)")
    args = ap.parse_args(argv)
    seeds = numbers(args.seeds, int, "seeds", 0, 2**31 - 1)
    rates = numbers(args.rates, float, "rates", 0.0, 1.0)
    depths = numbers(args.depths, int, "depths", 0, aig_runs.SETTINGS["blocks"])
    if args.iterations < 1:
        sys.exit(f"convnet_aig.py: --iterations must be >= 1, got {args.iterations}")
    course.torch_threads()             # one thread unless OMP_NUM_THREADS says otherwise: tiny convolutions
    out = Path(args.out)
    if args.plot_only:
        if not (out / "runs.csv").exists():
            sys.exit(f"convnet_aig.py: no runs.csv in {out}: run the sweep first")
        runs, usage = read_csv(out / "runs.csv"), read_csv(out / "usage.csv")
    else:
        runs, usage = sweep(out, seeds, rates, depths, dict(aig_runs.SETTINGS, iterations=args.iterations))
    aig_runs.print_summary(runs)
    print_written(figures(runs, usage, args.figures))


if __name__ == "__main__":
    main()
