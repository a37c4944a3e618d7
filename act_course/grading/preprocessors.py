"""nbgrader's side of act_course.grading.judge: the preprocessors of ``nbgrader autograde``.

scripts/nbgrader_config.py puts them around nbgrader's ``Execute``:

    JudgeAnswers, SealedExecute, WriteVerdicts, ErrorsScoreZero, IgnorePattern, ..., SaveAutoGrades, ...

``JudgeAnswers`` judges every judged check cell before the learner's kernel runs, and keeps the
verdicts in nbgrader's ``resources`` (memory of nbgrader's own process); ``SealedExecute`` runs
the notebook in a sealed kernel; ``WriteVerdicts`` replaces the judged cells' outputs by the
verdicts once the kernel has run, so that ``SaveAutoGrades`` scores the verdict: full points for
a report on stdout, none for an error. ``ErrorsScoreZero``: nbgrader scores a check cell by the
first output it meets, an ``execute_result`` it reads as partial credit before an error that
follows it; a check cell with an error (or stderr) anywhere in its outputs keeps that output
alone, so that it scores 0 whatever was published first.
"""

import os

import nbformat
from nbconvert.preprocessors import Preprocessor
from nbgrader.exchange.default import Exchange
from nbgrader.preprocessors import Execute
from traitlets import Bool, List, Unicode

from .registry import failed_all, judge_notebook, source_notebook
from .seal import kernel_line

KEY = "act_judge_verdicts"
EXEC_LINES = "--IPKernelApp.exec_lines="


def _name(resources):
    return resources.get("unique_key") or resources.get("metadata", {}).get("name", "")


class JudgeAnswers(Preprocessor):
    """Judge the answers of a submitted notebook, before nbgrader's Execute runs it."""

    enabled = Bool(True)        # nbconvert's preprocessors are off unless enabled

    def preprocess(self, nb, resources):
        name = _name(resources)
        try:
            resources[KEY] = judge_notebook(nb, name, source=self.source(resources, name))
        except Exception as err:                                # noqa: BLE001 (every judged check fails)
            self.log.error("the judge could not run on %s: %r", name, err)
            resources[KEY] = failed_all(nb, name, err)
        if resources[KEY]:
            self.log.info("judged %d check cells outside the kernel: %d passed", len(resources[KEY]),
                          sum(v.passed for v in resources[KEY].values()))
        return nb, resources


    def source(self, resources, name):
        """The course's own source of this notebook (a teacher may have edited it): its lesson
        cells and check cells are what the judge runs; None for the repository's."""
        assignment = resources.get("nbgrader", {}).get("assignment")
        course = self.config.CourseDirectory
        source = os.path.join(course.get("root", os.getcwd()), course.get("source_directory", "source"),
                              assignment or "", f"{name}.ipynb")
        return source_notebook(source) if assignment and os.path.isfile(source) else None


class WriteVerdicts(Preprocessor):
    """Replace each judged check cell's outputs by its verdict, after nbgrader's Execute."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        verdicts = resources.get(KEY, {})
        for cell in nb.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if cell.cell_type != "code" or grade_id not in verdicts:
                continue
            verdict = verdicts[grade_id]
            head = "Judged outside the notebook, on inputs drawn at grading time:\n"
            if verdict.passed:
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=head + verdict.text + "\n")]
            else:
                cell.outputs = [nbformat.v4.new_output("error", ename=verdict.ename, evalue=verdict.text,
                                                       traceback=[head + f"{verdict.ename}: {verdict.text}"])]
        return nb, resources


class ErrorsScoreZero(Preprocessor):
    """A graded code cell with an error output (or stderr) anywhere keeps that output alone, so that
    nbgrader, which reads the first output it meets, scores it 0 whatever was published before."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.cell_type != "code" or not meta.get("grade"):
                continue
            failed = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"] or \
                [o for o in cell.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stderr"]
            if failed:
                cell.outputs = [failed[0]]
        return nb, resources


class SealedExecute(Execute):
    """nbgrader's Execute, with the learner's kernel sealed before its first cell (``seal``).

    ``denied``: the course folder (scripts/nbgrader_config.py puts its own folder there);
    ``CourseDirectory.root`` and nbgrader's exchange are added, and the kernel's working folder
    (where autograde put this submission) is left open. The kernel runs ``seal.kernel_line``
    through IPython's ``exec_lines``, appended to the kernel's command line."""

    denied = List(Unicode(), help="folders a grading kernel may not read (the course folder)").tag(config=True)

    def preprocess(self, nb, resources, km=None):
        if os.name != "posix":          # the seal reads POSIX paths; docs/teaching.md says so
            self.log.warning("the grading kernel is not sealed: the seal needs a POSIX system")
            return super().preprocess(nb, resources, km=km)
        here = resources.get("metadata", {}).get("path") or os.getcwd()
        denied = list(self.denied) + [self.config.CourseDirectory.get("root", ""),
                                      self.config.Exchange.get("root", Exchange.class_traits()["root"].default())]
        line = kernel_line([p for p in denied if p], [os.path.abspath(here)])
        self.extra_arguments = [a for a in self.extra_arguments if not a.startswith(EXEC_LINES)] + [EXEC_LINES + line]
        return super().preprocess(nb, resources, km=km)
