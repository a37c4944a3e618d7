"""The opened-alone lines (act_course.course.OPENED_ALONE) at the top of every notebook's
setup cell (scripts/notebook_setup.py).

The setup cell is a notebook's first code cell. The lines are copied into each notebook, not
imported: they run before the course is installed.
"""

import argparse
import json
from pathlib import Path

from act_course import NOTEBOOKS
from act_course.course import OPENED_ALONE

DESCRIPTION = ("Write the opened-alone lines (act_course.course.OPENED_ALONE) at the top of every notebook's "
               "setup cell, or bring them up to date there.")
FIRST, LAST = OPENED_ALONE.splitlines()[0], OPENED_ALONE.splitlines()[-1]


def setup_cell(nb):
    """The notebook's first code cell."""
    return next(cell for cell in nb["cells"] if cell["cell_type"] == "code")


def with_opened_alone(source):
    """A setup cell's source with OPENED_ALONE at its top, replacing an older copy of it."""
    lines = source.splitlines(keepends=True)
    if lines and lines[0].rstrip("\n") == FIRST:
        end = next(i for i, line in enumerate(lines) if line.rstrip("\n") == LAST)
        rest = "".join(lines[end + 1:]).lstrip("\n")
    else:
        rest = source
    return OPENED_ALONE + "\n" + rest


def main(argv=None):
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a notebook differs")
    args = parser.parse_args(argv)
    differ = []
    for path in args.notebooks or NOTEBOOKS:
        nb = json.loads(path.read_text())
        cell = setup_cell(nb)
        source = "".join(cell["source"])
        wanted = with_opened_alone(source)
        if wanted == source:
            continue
        differ.append(path.name)
        if not args.check:
            cell["source"] = wanted.splitlines(keepends=True)
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    verb = "differ" if args.check else "updated"
    print(f"{len(differ)} notebooks {verb}" + (f": {', '.join(differ)}" if differ else ""))
    return 1 if args.check and differ else 0

