"""Every notebook's install cell: the opened-alone lines (act_course.course.OPENED_ALONE) in a
code cell of their own, collapsed, just before the setup cell (scripts/notebook_setup.py).

A notebook opens on its title, its first paragraph and, as its first code cell, the install
cell: in JupyterLab its code is collapsed through the cell's own metadata
(``"jupyter": {"source_hidden": true}``, no extension needed) and reads as one line to click
open. The setup cell follows, the first code cell that is not the install cell: the notebook's
real imports and settings.

The lines are copied into each notebook, not imported: they run before the course is installed.
A notebook written before the install cell had its own cell, with the lines at the top of its
setup cell, is brought up to date: the lines move out into the install cell.
"""

import argparse
import json
from pathlib import Path

from act_course import NOTEBOOKS
from act_course.course import OPENED_ALONE

DESCRIPTION = ("Write every notebook's install cell (the opened-alone lines of act_course.course.OPENED_ALONE, "
               "collapsed, before the setup cell), or bring it up to date.")
FIRST, LAST = OPENED_ALONE.splitlines()[0], OPENED_ALONE.splitlines()[-1]
COLLAPSED = {"source_hidden": True}          # JupyterLab's cell metadata "jupyter": code collapsed
INSTALL_ID = "opened-alone"


def _text(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def is_install_cell(cell):
    """True for a code cell that starts with the opened-alone lines."""
    return cell.get("cell_type") == "code" and _text(cell).startswith(FIRST)


def install_cell(nb):
    """The notebook's install cell, or None: its first code cell, when that has the install cell's
    id (whatever the wording of its lines), or starts with the opened-alone lines and holds nothing
    else, or starts with them collapsed."""
    first = next((cell for cell in nb["cells"] if cell["cell_type"] == "code"), None)
    if first is None:
        return None
    if first.get("id") == INSTALL_ID:
        return first
    if not is_install_cell(first):
        return None
    if first.get("metadata", {}).get("jupyter", {}).get("source_hidden") or not without_opened_alone(_text(first)):
        return first
    return None


def setup_cell(nb):
    """The notebook's setup cell: its first code cell that is not the install cell."""
    return next(cell for cell in nb["cells"] if cell["cell_type"] == "code" and cell is not install_cell(nb))


def opening_cells(nb):
    """The cells a notebook's code needs first, in order: the install cell (if any) and the setup cell."""
    return [cell for cell in (install_cell(nb), setup_cell(nb)) if cell is not None]


def without_opened_alone(source):
    """A setup cell's source with an older copy of the opened-alone lines taken off its top."""
    lines = source.splitlines(keepends=True)
    if not (lines and lines[0].rstrip("\n") == FIRST):
        return source
    end = next((i for i, line in enumerate(lines) if line.rstrip("\n") == LAST), None)
    if end is None:
        raise ValueError(f"a setup cell starts with {FIRST!r} but has no line {LAST.strip()!r} after it: "
                         "move the older opened-alone lines out of it by hand")
    return "".join(lines[end + 1:]).lstrip("\n")


def with_install_cell(nb):
    """``nb`` (a notebook's JSON) with its install cell written and collapsed, before its setup
    cell, and the lines gone from the setup cell; changed in place and returned."""
    cells, install = nb["cells"], install_cell(nb)
    if install is None:
        setup = next(cell for cell in cells if cell["cell_type"] == "code")
        setup["source"] = without_opened_alone(_text(setup)).splitlines(keepends=True)
        ids = {cell.get("id") for cell in cells}
        install = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": []}
        if "id" in setup:
            install["id"] = INSTALL_ID if INSTALL_ID not in ids else f"{setup['id']}-{INSTALL_ID}"
        cells.insert(cells.index(setup), install)
    install["source"] = OPENED_ALONE.rstrip("\n").splitlines(keepends=True)
    install["metadata"].setdefault("jupyter", {}).update(COLLAPSED)
    return nb


def main(argv=None):
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a notebook differs")
    args = parser.parse_args(argv)
    differ = []
    for path in args.notebooks or NOTEBOOKS:
        before = path.read_text()
        after = json.dumps(with_install_cell(json.loads(before)), indent=1, ensure_ascii=False) + "\n"
        if after == before:
            continue
        differ.append(path.name)
        if not args.check:
            path.write_text(after)
    verb = "differ" if args.check else "updated"
    print(f"{len(differ)} notebooks {verb}" + (f": {', '.join(differ)}" if differ else ""))
    return 1 if args.check and differ else 0
