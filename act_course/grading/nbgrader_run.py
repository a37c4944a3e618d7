"""Running nbgrader itself on a course folder, as scripts/student.py, scripts/course.py and
scripts/attacks.py do: the course's settings, one command, a cut-down course, and autograde's
scores read back from the gradebook.

The settings are scripts/nbgrader_config.py of the repository (``CONFIG``): these helpers serve a
checkout, not an installed copy of the course.
"""

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from act_experiments.files import ROOT

CONFIG = ROOT / "scripts" / "nbgrader_config.py"
ASSIGNMENT = "act"          # the one assignment of a course made by setup_course


def _path_with_venv():
    """PATH with this interpreter's folder first: nbgrader runs its database migrations through the
    `alembic` command, which lives beside the interpreter, so an unactivated venv works too."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


# `python -m nbgrader`, less a second: nbgrader imports nbformat, which imports jsonschema, which
# imports the IRI format check of rfc3987_syntax if it is installed, and that builds its grammar at
# import. Neither nbformat's schema nor nbgrader's names the "iri" format, so a command that goes
# without it reads and writes the same notebooks.
LAUNCH = ("import sys\nsys.modules['rfc3987_syntax'] = None\nsys.argv[0] = 'nbgrader'\n"
          "from nbgrader.apps.nbgraderapp import main\nmain()")


def nbgrader(course, *args):
    """Run one nbgrader command in the course folder ``course``; (returncode, last lines of output)."""
    env = dict(os.environ, PATH=_path_with_venv())
    done = subprocess.run([sys.executable, "-c", LAUNCH, *args, "--force"], cwd=course,
                          capture_output=True, text=True, env=env)
    return done.returncode, "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])


@functools.cache
def empty_gradebook():
    """The bytes of an empty gradebook.db, made once per process by nbgrader's own Gradebook. nbgrader
    makes the same file for every new course through a subprocess of alembic, two seconds or more;
    the suite and scripts/attacks.py set up a dozen courses."""
    from unittest import mock

    from nbgrader.api import Gradebook
    with tempfile.TemporaryDirectory(prefix="act-gradebook-") as folder, \
            mock.patch.dict(os.environ, PATH=_path_with_venv()):     # PATH as it was, afterwards
        path = Path(folder) / "gradebook.db"
        with Gradebook(f"sqlite:///{path}"):
            pass
        return path.read_bytes()


def setup_course(notebooks, course):
    """An empty nbgrader course folder with the course's config, an empty gradebook and ``notebooks``
    as one assignment."""
    shutil.rmtree(course, ignore_errors=True)
    source = course / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    shutil.copy(CONFIG, course / "nbgrader_config.py")
    (course / "gradebook.db").write_bytes(empty_gradebook())
    for path in notebooks:
        shutil.copy(path, source / path.name)
    return course


def cell_error(cell):
    """(exception name, message) of a code cell's error output, or None if it ran."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", ""), output.get("evalue", "")
    return None


def cell_stderr(cell):
    """What a code cell wrote to stderr ('' for nothing)."""
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stderr")


def autograde(course, submissions, assignment=ASSIGNMENT):
    """Hand in ``submissions`` ({student: [notebook paths]}) and grade them with nbgrader autograde.

    Returns {student: {notebook name: (autograded notebook, {grade_id: (score, max score)})}} for
    the cells nbgrader grades automatically (the check cells). Raises RuntimeError when nbgrader fails.
    """
    import nbformat
    from nbgrader.api import Gradebook

    for student, paths in submissions.items():
        folder = course / "submitted" / student / assignment
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for path in paths:
            shutil.copy(path, folder / path.name)
    code, tail = nbgrader(course, "autograde", assignment)
    if code != 0:
        raise RuntimeError(f"nbgrader autograde failed:\n{tail}")
    graded = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, paths in submissions.items():
            graded[student] = {}
            for path in paths:
                made = course / "autograded" / student / assignment / path.name
                if not made.is_file():
                    raise RuntimeError(f"nbgrader autograde wrote no {made.relative_to(course)}:\n{tail}")
                found = gradebook.find_submission_notebook(path.stem, assignment, student)
                scores = {grade.name: (grade.auto_score, grade.max_score) for grade in found.grades
                          if grade.cell.cell_type == "code"}
                graded[student][path.name] = (nbformat.read(made, as_version=4), scores)
    return graded
