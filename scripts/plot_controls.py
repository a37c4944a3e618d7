"""Figures and paired numbers of the fixed-computation controls: adaptivity or computation?

    python scripts/plot_controls.py                  # every task whose control is committed
    python scripts/plot_controls.py logic parity     # only these

For each task, reads the ACT sweep and its control (act_experiments.experiments.controls.CONTROLS) from
results/, prints the claim's paired numbers (ACT at τ* against the control at equal compute, seed
by seed) and the ladder of error against updates, and saves figures/control_<task>.png.
"""

import sys

import matplotlib
import matplotlib.pyplot as plt

from act_experiments.experiments import controls
from act_experiments.training.cli import OneLineParser
from act_experiments.figures import print_written, save_figure
from act_experiments.experiments.controls import plot_control
from act_experiments.tables import RESULTS


def describe(task, pair):
    """The paired numbers and the ladder, as lines of text."""
    c, d = pair["control"], controls.paired(pair)
    lines = [f"{task}: ACT tau={c.tau:g} ({c.act}) against fixed F={c.F} ({c.fixed}), seeds {d['seeds']}",
             "  ACT   " + " ".join(f"{v:.3f}" for v in d["act"]),
             "  fixed " + " ".join(f"{v:.3f}" for v in d["fixed"]),
             f"  ACT - fixed: {d['mean']:+.3f} +- {d['se']:.3f} (s.e. of the paired difference); "
             f"claim (below by 2 s.e.) {'holds' if d['holds'] else 'fails'}"]
    for r in controls.ladder(pair):
        lines.append(f"  {str(r['key']):>10}  N {r['updates_low']:5.2f}-{r['updates_high']:5.2f}  "
                     f"error {r['error']:.3f} +- {r['error_se']:.3f}")
    return "\n".join(lines)


def main(argv=None):
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(prog="plot_controls.py", description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="*", help=f"tasks to draw, of {', '.join(controls.CONTROLS)} (default: "
                                             "every task whose control is committed)")
    ap.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    unknown = [t for t in args.tasks if t not in controls.CONTROLS]
    if unknown:
        ap.error(f"unknown task {unknown[0]!r}; expected some of {', '.join(controls.CONTROLS)}")
    tasks = args.tasks or [t for t, c in controls.CONTROLS.items()
                           if (RESULTS / c.fixed / "runs.csv").exists()]
    for task in tasks:
        try:
            pair = controls.load_pair(task)
        except (OSError, KeyError, ValueError) as err:
            sys.exit(f"plot_controls.py: {err}")
        print(describe(task, pair))
        fig = plot_control(pair)
        print_written([save_figure(fig, f"control_{task}", directory=args.figures)])
        plt.close(fig)


if __name__ == "__main__":
    main()
