"""Saving figures so that re-running the course gives byte-identical PNGs.

Every figure the course shows lives in ``figures/`` at the repository root and goes through
``save_figure``: fixed dpi, no software stamp, no timestamps. The plotting scripts write there
whenever they run (``plot_main`` is their common command line). A notebook shows its figures inline and writes them through
``notebook_figure`` only when asked (``ACT_SAVE_FIGURES=1``, as ``make figures`` sets it), so
running the course leaves the committed figures untouched. ``save_figures`` draws and saves a
set of figures under one prefix, as the plotting scripts do.
"""

import os
import sys
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt

from act_experiments.cli import OneLineParser
from act_experiments.files import ROOT

FIGURE_DIR = ROOT / "figures"
DPI = 100


def save_figure(fig, name, directory=None):
    """Save a matplotlib figure as ``<directory or figures/>/<name>.png`` and return the path."""
    if not name or "/" in name or name.endswith(".png"):
        raise ValueError(f"figure name must be a bare name without extension, got {name!r}")
    folder = Path(directory) if directory is not None else FIGURE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    # metadata Software=None drops matplotlib's version stamp, so the bytes depend on the picture only
    fig.savefig(path, dpi=DPI, metadata={"Software": None}, bbox_inches="tight")
    return path


def notebook_figure(fig, name, directory=None):
    """Save a notebook's figure as ``<directory or figures/>/<name>.png`` when ACT_SAVE_FIGURES=1,
    else do nothing.

    Returns the path written, or None. A live run's figure differs from machine to machine, so
    only an explicit ``make figures`` replaces the committed one.
    """
    if os.environ.get("ACT_SAVE_FIGURES") != "1":
        return None
    return save_figure(fig, name, directory)


def save_figures(figures, data, prefix, directory=None):
    """Draw each figure of `figures` ({name: draw(data) -> fig}), save it as <prefix>_<name>.png
    with save_figure and close it; returns the paths."""
    paths = []
    for name, draw in figures.items():
        fig = draw(data)
        paths.append(save_figure(fig, f"{prefix}_{name}", directory=directory))
        plt.close(fig)
    return paths


def print_written(paths):
    """Print 'wrote <path>' for each path, relative to the repository when it lies inside."""
    for path in paths:
        print("wrote", path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def plot_main(argv, *, script, description, what, read, summary, plot, prefix=False):
    """The command line of every plot script; returns 0.

        plot_<name>.py [SWEEP ...] [--figures DIR] [--prefix P]

    SWEEP: what to draw, each a sweep's name under results/ or a folder (``what`` is its --help
    line; some experiments also take a task's name); none: the experiment's own default.
    read(sweeps) -> [data, ...], one item per thing to draw, raising OSError, KeyError or ValueError
    when one cannot be drawn, which ends the script with one line, "<script>: <error>", and status 1,
    before any figure is written; summary(data) prints an item's numbers; plot(data, figures,
    prefix) -> the paths written, printed as 'wrote <path>'. prefix: whether the figures' file
    names take --prefix (a single sweep's figures); with it, one SWEEP at most.
    """
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(prog=Path(script).name, description=description)     # errors in one line
    ap.add_argument("sweeps", nargs="*", metavar="SWEEP", help=what)
    ap.add_argument("--figures", help="output folder (default figures/)")
    if prefix:
        ap.add_argument("--prefix", help="figure file names <prefix>_*.png (default: the experiment's)")
    args = ap.parse_args(argv)
    sweeps = args.sweeps
    chosen = getattr(args, "prefix", None)
    if chosen is not None and len(sweeps) > 1:
        ap.error("--prefix names the figures of one sweep: give one SWEEP with it")
    try:
        items = read(sweeps)
    except (OSError, KeyError, ValueError) as err:
        sys.exit(f"{Path(script).name}: {err}")
    for data in items:
        summary(data)
    for data in items:
        print_written(plot(data, args.figures, chosen))
    return 0
