"""ACT against PonderNet on parity, several seeds and penalties, with an extrapolation test.

    python scripts/pondernet.py --name pondernet8_extrapolation --bits 8 --train-max 4
    python scripts/pondernet.py --name pondernet8 --bits 8 --train-max 8
    python scripts/pondernet.py --plot pondernet8_extrapolation      # redraw its figures only

Both models train on parity with 1..train-max non-zero bits (the task option max_nonzero): ACT
with one network per (tau, seed) through the course's population engine, PonderNet with one
network per (beta, seed) as one stacked population (act_experiments.experiments.pondernet.run_comparison has
the details). Each is measured every --chunk iterations on a held-out set of the training range
and, when train-max < bits, on one of train-max+1..bits non-zero bits (the extrapolation test).
The tables go to results/<name>/ (runs.csv, curves.csv, counts.csv, attention.csv,
comparison.json), the figures to figures/pondernet_<name>_*.png, the ACT run folders to
runs/pondernet/<name>/ (refused when they exist, unless --force).
"""

import shlex
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def floats(text):
    return tuple(float(v) for v in text.split(","))


def ints(text):
    return tuple(int(v) for v in text.split(","))


def build_parser():
    from act_experiments.experiments.pondernet import COMPARISON_DEFAULTS as D
    from act_experiments.training.cli import OneLineParser        # errors in one line, exit status 2
    p = OneLineParser(prog="python scripts/pondernet.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--name", help="results/<name>/ (required unless --plot)")
    p.add_argument("--plot", metavar="NAME", help="only redraw the figures of results/NAME/")
    p.add_argument("--bits", type=int, default=D["bits"])
    p.add_argument("--train-max", type=int, help="train on 1..train-max non-zero bits (default: bits // 2)")
    p.add_argument("--hidden", type=int, default=D["hidden"])
    p.add_argument("--batch-size", type=int, default=D["batch_size"])
    p.add_argument("--lr", type=float, default=D["lr"])
    p.add_argument("--iterations", type=int, default=D["iterations"])
    p.add_argument("--chunk", type=int, default=D["chunk"], help="iterations between measurements")
    p.add_argument("--seeds", type=ints, default=D["seeds"], help="comma-separated, e.g. 0,1,2,3")
    p.add_argument("--taus", type=floats, default=D["taus"], help="ACT's time penalties, comma-separated")
    p.add_argument("--betas", type=floats, default=D["betas"], help="PonderNet's KL weights, comma-separated")
    p.add_argument("--lambda-p", type=float, default=D["lambda_p"], help="PonderNet's geometric prior")
    p.add_argument("--max-steps", type=int, default=D["max_steps"], help="step limit of both (ACT's cap M)")
    p.add_argument("--eval-size", type=int, default=D["eval_size"])
    p.add_argument("--force", action="store_true", help="delete runs/pondernet/<name>/ first")
    return p


def draw(name):
    """Draw the figures of results/<name>/ into figures/; returns the paths."""
    import matplotlib
    matplotlib.use("Agg")
    from act_experiments.experiments import pondernet as pondernet_runs
    from act_experiments.plots import pondernet as pondernet_plots
    from act_experiments.figures import save_figures
    tables = pondernet_runs.read_comparison(ROOT / "results" / name)
    s = tables["meta"]["settings"]
    act_knob, pn_knob = pondernet_runs.comparison_picks(tables)
    figures = {
        "errors": pondernet_plots.figure_errors,
        "counts": lambda t: pondernet_plots.figure_counts(t, act_knob, pn_knob),
        "attention": lambda t: pondernet_plots.figure_attention(t, pondernet_runs.attention_picks(t, act_knob, pn_knob)),
        "curves": pondernet_plots.figure_curves,
    }
    if s["train_max"] == s["bits"]:
        figures.pop("counts")        # no extrapolation: the error per count says little more
    return save_figures(figures, tables, f"pondernet_{name}")


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.plot:
            for path in draw(args.plot):
                print("wrote", path.relative_to(ROOT))
            return 0
        if not args.name or "/" in args.name:
            raise ValueError("--name must name a folder under results/ (no '/')")
        from act_experiments.experiments import pondernet as pondernet_runs
        settings = {"bits": args.bits, "train_max": args.train_max if args.train_max is not None else args.bits // 2,
                    "hidden": args.hidden, "batch_size": args.batch_size, "lr": args.lr,
                    "iterations": args.iterations, "chunk": args.chunk, "seeds": args.seeds, "taus": args.taus,
                    "betas": args.betas, "lambda_p": args.lambda_p, "max_steps": args.max_steps,
                    "eval_size": args.eval_size}
        work = ROOT / "runs" / "pondernet" / args.name
        if work.exists():
            if not args.force:
                raise ValueError(f"{work.relative_to(ROOT)} exists: pass --force to delete it and start over")
            shutil.rmtree(work)
        import torch
        torch.set_num_threads(1)
        start = time.perf_counter()
        tables = pondernet_runs.run_comparison(settings, work=work, progress=lambda line: print(line, flush=True))
        tables["meta"]["command"] = "python scripts/pondernet.py " + shlex.join(sys.argv[1:] if argv is None else argv)
        tables["meta"]["wall_time_s"] = round(time.perf_counter() - start, 1)
        pondernet_runs.write_comparison(tables, ROOT / "results" / args.name)
        print(f"wrote results/{args.name}/")
        for path in draw(args.name):
            print("wrote", path.relative_to(ROOT))
    except (ValueError, FileNotFoundError) as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
