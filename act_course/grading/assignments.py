"""The course's assignments, one per session of docs/teaching.md's plan (``ASSIGNMENTS``), and the
ready nbgrader course built from them (scripts/course.py, `make course`).

``build`` run again on an existing course rewrites nbgrader_config.py, the course's own files in
source/, and release/, and keeps everything else: gradebook.db (students, submissions, grades),
submitted/, autograded/, feedback/, and every file of source/ that the teacher edited or added.
An edit is detected against ``MADE``, the hashes of what the last build wrote (of a notebook's
cells, not its formatting); edited and added files are kept and named in one line, and release/ is
generated from them. A source the teacher deleted comes back; to rename a notebook or drop one from
an assignment, change ``ASSIGNMENTS``. ``--fresh`` deletes the whole folder first.

The folder it writes is an nbgrader course (docs/teaching.md, section 4, gives the commands from
there on):

    nbgrader_config.py           the course's settings (scripts/nbgrader_config.py): course id,
                                 a per-cell limit that fits the live cells on a loaded machine
    source/<assignment>/         the notebooks of each session, with the figures they show in
                                 figures/ beside them, and their links rewritten to work there
    release/<assignment>/        what `nbgrader generate_assignment` made of them: ready for
                                 `nbgrader release_assignment`
    gradebook.db                 nbgrader's database, with the assignments in it

The assignments follow the six-session plan and the two sessions beyond the paper (ASSIGNMENTS
below); each notebook is in the session whose work between sessions uses its exercises. Inside
the course a notebook's "Next" link leads to the next notebook in the folder of its own
assignment (`../session2/02_binary_flag.ipynb`), which is where a learner's fetched copies sit
side by side; a figure link `../figures/x.png` becomes `figures/x.png`; a link to the README,
which a learner does not have, becomes its plain text.
"""

import argparse
import hashlib
import json
import re
import shutil
from pathlib import Path

from act_course.grading.nbgrader_run import CONFIG, nbgrader
from act_experiments.files import ROOT

DESCRIPTION = "Build a ready nbgrader course: one assignment per session of docs/teaching.md's plan."

# docs/teaching.md, section 3: six sessions, then two beyond the paper
ASSIGNMENTS = {
    "session1": ["01_forward_pass"],
    "session2": ["02_binary_flag"],
    "session3": ["03_backprop_remainder", "03b_write_your_own_act", "04_numpy_vs_torch"],
    "session4": ["05_parity", "10_time_penalty"],
    "session5": ["06_logic", "07_addition"],
    "session6": ["08_sort", "09_characters"],
    "beyond1": ["11_pitfalls", "12_attention_pondernet"],
    "beyond2": ["13_universal_transformer", "14_convnet_aig", "15_when_adapting_pays"],
}
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def assignment_of():
    return {name: assignment for assignment, names in ASSIGNMENTS.items() for name in names}


def relink(text, assignment, figures):
    """A markdown cell's text with its links rewritten for the course folder; figures it shows
    are added to the set ``figures``."""
    where = assignment_of()

    def one(match):
        bang, label, target = match.groups()
        path, _, anchor = target.partition("#")
        if path.startswith("../figures/"):
            figures.add(path[len("../figures/"):])
            return f"{bang}[{label}](figures/{path[len('../figures/'):]}{'#' + anchor if anchor else ''})"
        if path.endswith(".ipynb") and "/" not in path and Path(path).stem in where:
            home = where[Path(path).stem]
            if home != assignment:
                return f"[{label}](../{home}/{path}{'#' + anchor if anchor else ''})"
            return match.group(0)
        if path.startswith("../"):       # the README and other files of the repository: not in the course
            return label
        return match.group(0)

    return LINK.sub(one, text)


KEPT = ("gradebook.db", "submitted", "autograded", "feedback")    # what a rebuild leaves alone
MADE = ".made_by_course.json"     # in the course folder: source/ path -> sha256 of what build wrote


def digest(data, name=""):
    """sha256 of a file's bytes; for a notebook (``name`` ending .ipynb), of what makes it the
    assignment: each cell's type, source and nbgrader metadata (points, grade ids). Opening and
    saving a notebook in JupyterLab (outputs, other metadata, formatting) is no edit."""
    if name.endswith(".ipynb"):
        try:
            cells = json.loads(data).get("cells", [])
            data = json.dumps([(c.get("cell_type"), "".join(c.get("source", "")), c.get("metadata", {}).get("nbgrader"))
                               for c in cells], sort_keys=True).encode("utf-8")
        except (ValueError, AttributeError):
            pass
    return hashlib.sha256(data).hexdigest()


FIGURE_LINK = re.compile(r"\]\(figures/([^)#\s]+)")


class Sources:
    """The files build writes into source/, each written only where the teacher has not edited it.

    A file is the teacher's when it differs from what the last build wrote (``MADE``), or when
    it is there but the last build left no record of it (a course built before the record was
    kept, or a file of the teacher's own); ``kept`` names them. ``added`` names the files of
    source/ that no build wrote (a notebook or data file of the teacher's). A file the teacher
    deleted is written again: deleting is how to take the repository's version back."""

    def __init__(self, out):
        self.out = out
        record = out / MADE
        self.before = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
        self.made, self.kept, self.added = {}, [], []

    def write(self, path, data):
        """Write ``data`` (bytes) at ``path`` under out/source, unless the teacher's file is there;
        True if written, False if kept."""
        name = path.relative_to(self.out).as_posix()
        if path.is_file():
            now = digest(path.read_bytes(), name)
            if now != self.before.get(name) and now != digest(data, name):
                self.kept.append(name)
                return False
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.made[name] = digest(data, name)
        return True

    def close(self, complete=True):
        """Record what was written (a kept file stays out of the record, so it stays kept) and name
        the teacher's added files. When the build went through (``complete``), also delete what the
        last build wrote and this one did not (a notebook moved to another assignment, a figure no
        longer shown), unless edited since."""
        if complete:
            for name, before in self.before.items():
                path = self.out / name
                if name not in self.made and path.is_file() and digest(path.read_bytes(), name) == before:
                    path.unlink()
        source = self.out / "source"
        ours = set(self.made) | set(self.kept)
        self.added = sorted(name for name in (p.relative_to(self.out).as_posix() for p in source.rglob("*")
                                              if p.is_file()) if name not in ours) if source.is_dir() else []
        (self.out / MADE).write_text(json.dumps(self.made, indent=1, sort_keys=True) + "\n", encoding="utf-8")

    def line(self):
        """The one line that names the teacher's files, or None when there are none."""
        if not (self.kept or self.added):
            return None
        parts = [f"{name} (edited)" for name in self.kept] + [f"{name} (added)" for name in self.added]
        return (f"kept {len(parts)} source file(s) of yours, generated as they are: {', '.join(parts)} "
                "(delete an edited one to take the repository's again; --fresh starts the course again)")


def build(out, generate=True, fresh=False):
    """Write the course into ``out`` (see the module's docstring); returns the source files kept
    because the teacher edited them (``Sources.kept``)."""
    notebooks = {path.stem: path for path in (ROOT / "notebooks").glob("*.ipynb")}
    planned = [name for names in ASSIGNMENTS.values() for name in names]
    unplanned = sorted(set(notebooks) - set(planned))
    missing = sorted(set(planned) - set(notebooks))
    if unplanned or missing:
        raise SystemExit(f"course.py: notebooks without an assignment {unplanned}, "
                         f"assignments naming no notebook {missing}: update ASSIGNMENTS")
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(out / "release", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(CONFIG, out / "nbgrader_config.py")
    sources, complete = Sources(out), False
    try:
        for assignment, names in ASSIGNMENTS.items():
            _build_assignment(sources, out, assignment, [notebooks[name] for name in names], generate)
        complete = True
    finally:
        sources.close(complete)
    if sources.line():
        print(sources.line())
    print(f"the course: {out} (nbgrader_config.py, source/, release/, gradebook.db)")
    return sources.kept


def _build_assignment(sources, out, assignment, paths, generate):
    """One assignment's notebooks and figures into source/, then nbgrader's release of it."""
    folder = out / "source" / assignment
    figures = set()
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                text = relink("".join(cell["source"]), assignment, figures)
                cell["source"] = text.splitlines(keepends=True)
        target = folder / path.name
        if not sources.write(target, (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")):
            # the teacher's notebook is kept: the figures it shows are the ones to keep beside it
            figures |= set(FIGURE_LINK.findall(target.read_text(encoding="utf-8")))
    for figure in sorted(figures):
        if (ROOT / "figures" / figure).is_file():
            sources.write(folder / "figures" / figure, (ROOT / "figures" / figure).read_bytes())
    code, tail = nbgrader(out, "generate_assignment", assignment) if generate else (0, "")
    if code != 0:
        raise SystemExit(f"course.py: nbgrader generate_assignment {assignment} failed:\n{tail}")
    print(f"{assignment}: {', '.join(path.stem for path in paths)}; {len(figures)} figures")


def main(argv=None):
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "course")
    parser.add_argument("--fresh", action="store_true",
                        help="delete the course folder first, gradebook and grades included")
    args = parser.parse_args(argv)
    kept = [name for name in KEPT if (args.out / name).exists()] if not args.fresh else []
    build(args.out.resolve(), fresh=args.fresh)
    if kept:
        print(f"kept from before: {', '.join(kept)} (--fresh starts again)")
    return 0

