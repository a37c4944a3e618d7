"""Saving figures so that re-running the course gives byte-identical PNGs.

Every figure the course shows lives in ``figures/`` at the repository root and goes through
``save_figure``: fixed dpi, no software stamp, no timestamps.
"""

from pathlib import Path

FIGURE_DIR = Path(__file__).resolve().parent.parent / "figures"
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
