"""Results files: where the committed ones are, and CSV and JSON files read and written in one step.

``RESULTS`` is results/ in a clone of the repository, or the copy installed with the package.
``write_csv``, ``append_rows`` and ``write_json`` write through ``atomic_write``: a file holds all
that was written or what it held before, never a part.
"""

import csv
import io
import json
from pathlib import Path

from act_experiments.files import atomic_write


def committed_results(package=Path(__file__).resolve().parent):
    """Where the committed sweeps are: results/ in a clone of the repository, and the copy that
    travels inside the installed package (act_experiments/committed/, pyproject.toml) when the
    course was installed from a wheel, e.g. for a notebook opened on its own."""
    clone = package.parent / "results"
    return clone if clone.is_dir() else package / "committed"


RESULTS = committed_results()


def read_csv(path):
    """The rows of a CSV file, as dicts of strings."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _cell(value, float_format):
    return "" if value is None else format(value, float_format) if float_format and isinstance(value, float) else value


def write_csv(path, rows, columns=None, float_format=None):
    """Write rows (dicts) as a CSV file in one step: the columns given, or every key in the order
    they first appear; None (or a missing key) as an empty cell; floats with ``float_format``
    (e.g. ".6g") when given, else as Python prints them."""
    columns = list(dict.fromkeys(k for row in rows for k in row)) if columns is None else columns
    with atomic_write(path) as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        w.writerows([_cell(row.get(k), float_format) for k in columns] for row in rows)


def append_rows(path, rows, columns, float_format=None):
    """Add rows to an existing CSV file in one step: the file holds all of them or none. Cells as
    ``write_csv`` writes them."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([_cell(row.get(c), float_format) for c in columns]
                                                      for row in rows)
    old = Path(path).read_text()
    with atomic_write(path) as f:
        f.write(old + text.getvalue())


def write_json(path, data, indent=2):
    """Write data as indented JSON in one step."""
    with atomic_write(path) as f:
        f.write(json.dumps(data, indent=indent) + "\n")


def number(text):
    """A CSV field as a number: '' -> None, '300' -> 300, '0.25' or '1e-3' -> a float."""
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return float(text)


def numbers_in(row, text_columns=()):
    """A CSV row (a dict of strings, as ``read_csv`` gives) with every field a ``number``, except
    the ``text_columns``, which stay strings."""
    return {k: (v if k in text_columns else number(v)) for k, v in row.items()}

