"""What is graded, and where: every auto-graded check of every notebook, judged or self-check.

A check cell (nbgrader ``grade: true``, no solution) is *judged* when the judge decides it outside
the learner's kernel (``registry.JUDGED``, the checks ``registry.judged_ids`` finds); every other
check runs in the learner's kernel, a *self-check*. ``REASONS`` says, for each self-check, why it
still runs there, in one of the categories below, read from what the check cell reads:

- ``LIVE``: it reads the network trained live in the learner's kernel, which no other process has;
  such a check stays a self-check for the learner and carries no points (``checks`` refuses one
  that has some);
- ``VALUES``, ``COMMITTED``, ``MEASURED``: not yet judged. The answer is values worked out from the
  notebook's fixed numbers, read from the committed sweeps, or measured in the kernel with the
  course's training loop: a judge outside the kernel could decide it, and the table names it as a
  gap. (Every answer that is a function is judged: the judge calls it on inputs of its own.)

The names that follow a reason are read from the check cell: the answer functions it calls (those
defined in the notebook's solution cells with their body between the solution markers), then the
answers it hands to ``answered(...)``. ``table`` writes the markdown of docs/teaching.md's "What is
graded, and where", which tests/test_teaching_table.py holds to the notebooks.
"""

import ast
import json
import re

from .lesson import cell_role
from .registry import judged_ids

LIVE = "reads the network trained live in the learner's kernel"
VALUES = "not yet judged: its answer is values worked out from the notebook's fixed inputs"
COMMITTED = "not yet judged: its answer is values read from the committed sweeps in `results/`"
MEASURED = "not yet judged: its answer is values measured in the kernel with the course's training loop"

# why each self-check runs in the learner's kernel, keyed "<notebook number>/<grade_id>" (grade ids
# repeat from notebook to notebook); a tuple adds a note on what else the check reads
REASONS = {
    "05/ex3-check-b": (MEASURED, "the networks are untrained (`iterations=0`)"),
    "08/ex4-check": (LIVE, "`N` and `rho` come from section 4's run of the network trained in section 2"),
    "09/ex2-check": (LIVE, "it runs `model`, the network trained in section 2"),
    "09/ex4-check-b": (LIVE, "`rho` comes from section 3's run of the network trained in section 2"),
}

ANSWERED = re.compile(r"\banswered\(([^)]*)\)")


def _source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def number(path):
    """'01', '03b', '12': the notebook's number, as the course's tables write it."""
    return path.stem.split("_")[0]


def answer_functions(cells):
    """The functions a learner writes: top-level ``def``s of the solution cells whose body holds the
    solution markers (a function the notebook gives, beside the answer, is not one)."""
    names = set()
    for cell in cells:
        if cell["cell_type"] != "code" or cell_role(cell) != "solution":
            continue
        source = _source(cell)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and "### BEGIN SOLUTION" in (ast.get_source_segment(source, node) or ""):
                names.add(node.name)
    return names


def read_by(check, functions):
    """The answer functions the check calls, then the answers it hands to ``answered``, in order."""
    called = sorted((m.start(), name) for name in functions for m in [re.search(rf"\b{name}\(", check)] if m)
    given = [name.strip().split("=")[0].strip() for args in ANSWERED.findall(check) for name in args.split(",")]
    seen = []
    for name in [name for _, name in called] + given:
        if name and name not in seen:
            seen.append(name)
    return seen


def checks(notebooks):
    """[(notebook number, [(grade_id, points, answer, 'judged' or 'self-check', reason), ...])] for
    every check cell of ``notebooks``, in notebook order: ``answer`` the names the check reads
    (``read_by``), the reason '' for a judged check. Raises
    KeyError naming a self-check that ``REASONS`` lacks, and ValueError for a judged check that
    has one, for a reason, of one of these notebooks, whose check is not there, or for a check that
    reads the live network and carries points."""
    found, seen = [], set()
    for path in notebooks:
        nb = json.loads(path.read_text(encoding="utf-8"))
        judged = {grade_id for _, grade_id in judged_ids(nb, path.stem)}
        functions = answer_functions(nb["cells"])
        rows = []
        for cell in nb["cells"]:
            if cell["cell_type"] != "code" or cell_role(cell) != "check":
                continue
            meta = cell["metadata"]["nbgrader"]
            key = f"{number(path)}/{meta['grade_id']}"
            seen.add(key)
            answer = ", ".join(f"`{name}`" for name in read_by(_source(cell), functions))
            if meta["grade_id"] in judged:
                if key in REASONS:
                    raise ValueError(f"{key} is judged outside the kernel: REASONS should not give it a reason")
                rows.append((meta["grade_id"], meta["points"], answer, "judged", ""))
                continue
            if key not in REASONS:
                raise KeyError(f"{key} is a self-check without a reason: add it to REASONS")
            category, note = REASONS[key] if isinstance(REASONS[key], tuple) else (REASONS[key], "")
            if category == LIVE and meta["points"]:
                raise ValueError(f"{key} reads the network trained live in the learner's kernel: it carries no "
                                 f"points, not {meta['points']:g}")
            rows.append((meta["grade_id"], meta["points"], answer, "self-check", category + (f"; {note}" if note else "")))
        found.append((number(path), rows))
    read = {name for name, _ in found}
    stale = sorted(key for key in REASONS if key.split("/")[0] in read and key not in seen)
    if stale:
        raise ValueError(f"REASONS gives a reason for {stale[0]}, which is no check cell of its notebook")
    return found


def table(notebooks):
    """The markdown of "What is graded, and where": one row per check, the points per notebook, and
    one sentence of totals."""
    found = checks(notebooks)
    lines = ["| notebook | check | points | answer | graded | why it runs in the learner's kernel |",
             "|---|---|---|---|---|---|"]
    for name, rows in found:
        lines += [f"| {name} | `{grade_id}` | {points:g} | {answer or '-'} | {where} | {reason or '-'} |"
                  for grade_id, points, answer, where, reason in rows]
    lines += ["", "| notebook | judged outside the kernel | self-checks | of which not yet judged | total |",
              "|---|---|---|---|---|"]
    totals = [0, 0, 0]
    for name, rows in found:
        judged = sum(points for _, points, _, where, _ in rows if where == "judged")
        self_check = sum(points for _, points, _, where, _ in rows if where == "self-check")
        gap = sum(points for _, points, _, _, reason in rows if reason.startswith("not yet judged"))
        totals = [totals[0] + judged, totals[1] + self_check, totals[2] + gap]
        lines.append(f"| {name} | {judged:g} | {self_check:g} | {gap:g} | {judged + self_check:g} |")
    lines.append(f"| all | {totals[0]:g} | {totals[1]:g} | {totals[2]:g} | {totals[0] + totals[1]:g} |")
    live = sum(1 for _, rows in found for row in rows if row[4].startswith(LIVE))
    lines += ["", f"Of the {totals[0] + totals[1]:g} points of check cells, {totals[0]:g} are judged outside the "
                  f"kernel and {totals[2]:g} are not yet judged; the {live} checks that read the network trained "
                  f"live carry none."]
    return "\n".join(lines)
