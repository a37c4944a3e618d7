"""Saving figures so that re-running the course gives byte-identical PNGs.

Every figure the course shows lives in ``figures/`` at the repository root and goes through
``save_figure``: fixed dpi, no software stamp, no timestamps. The plotting scripts write there
whenever they run (``draw_main`` is their common command line). A notebook shows its figures inline and writes them through
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


def notebook_figure(fig, name):
    """Save a notebook's figure as ``figures/<name>.png`` when ACT_SAVE_FIGURES=1, else do nothing.

    Returns the path written, or None. A live run's figure differs from machine to machine, so
    only an explicit ``make figures`` replaces the committed one.
    """
    if os.environ.get("ACT_SAVE_FIGURES") != "1":
        return None
    return save_figure(fig, name)


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


def draw_main(argv, *, script, description, arguments, read, summary, plot):
    """The command line of a script that draws an experiment's figures from its results; returns 0.

    arguments(ap): adds the options that choose the results (``--figures``, the output folder, is
    added after them); read(args) -> the results, raising OSError, KeyError or ValueError when they
    cannot be drawn, which ends the script with one line, "<script>: <error>", and status 1, before
    any figure is written; summary(results) prints their numbers; plot(results, args) -> the paths
    written, printed as 'wrote <path>'.
    """
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(description=description)     # errors in one line
    arguments(ap)
    ap.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    try:
        results = read(args)
    except (OSError, KeyError, ValueError) as err:
        sys.exit(f"{Path(script).name}: {err}")
    summary(results)
    print_written(plot(results, args))
    return 0
