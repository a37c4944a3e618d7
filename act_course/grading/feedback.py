"""The feedback nbgrader writes for a learner: one HTML file per notebook that reads offline.

``nbgrader generate_feedback`` converts each autograded notebook with nbconvert's HTMLExporter
through nbgrader's "feedback" template, which loads MathJax 2 from a CDN and links the figures
that markdown cells show (``figures/x.png``); ``nbgrader release_feedback`` then hands the learner
the HTML file alone. ``OfflineFeedback`` (set in scripts/nbgrader_config.py) writes the same page
with the figures embedded as data URIs (nbconvert's ``embed_images``) and MathJax 3 inlined from
the copy that the pip package sphinx-mathjax-offline installs (the book uses the same copy): its
SVG build with every TeX extension, which needs no font files and nothing from the network. It
adds about 2.3 MB to each file.

The autograded notebook that feedback is made from carries every check cell as the source has it,
hidden tests restored, and an error's traceback quotes the line that raised it. ``WithoutHiddenTests``
(also set in scripts/nbgrader_config.py, before the page is written) takes the hidden tests out of
the page: each BEGIN/END HIDDEN TESTS region goes, as nbgrader's generate_assignment takes it out
of the release, and an error in a cell that held one keeps its last line alone, ``ename: evalue``
(which check failed, and why), never the code around it.
"""

import re
from importlib.metadata import PackageNotFoundError, distribution

from nbconvert.exporters import HTMLExporter
from nbgrader.preprocessors import ClearHiddenTests
from traitlets import Bool, default

MATHJAX_FILE = "sphinx-mathjax-offline/static/mathjax/tex-svg-full.js"
# what nbconvert's MathJax 2 settings ask for (templates/base/mathjax.html.j2), in MathJax 3's words
MATHJAX_SETTINGS = """window.MathJax = {
  tex: {inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]], displayMath: [["$$", "$$"], ["\\\\[", "\\\\]"]],
        processEscapes: true, processEnvironments: true, tags: "ams"},
  svg: {fontCache: "global"}
};"""
CDN_SCRIPT = re.compile(r'<script src="https?://[^"]*mathjax[^"]*">\s*</script>', flags=re.I)


def mathjax_script():
    """MathJax 3 with the notebook's settings, as inline ``<script>`` elements (a str).

    Raises ValueError naming the package when sphinx-mathjax-offline is not installed."""
    try:
        path = distribution("sphinx-mathjax-offline").locate_file(MATHJAX_FILE)
    except PackageNotFoundError:
        path = None
    if path is None or not path.is_file():
        raise ValueError("offline feedback needs MathJax from the package sphinx-mathjax-offline "
                         "(requirements.txt); install it in nbgrader's environment")
    code = path.read_text(encoding="utf-8").replace("</script", "<\\/script")
    return f"<script>{MATHJAX_SETTINGS}</script>\n<script>{code}</script>"


class OfflineFeedback(HTMLExporter):
    """nbconvert's HTMLExporter, figures embedded and MathJax inlined: a page that reads offline."""

    @default("embed_images")
    def _embed_images_default(self):
        return True

    offline_mathjax = Bool(True, help="inline MathJax 3 in place of the CDN's MathJax 2").tag(config=True)

    def from_notebook_node(self, nb, resources=None, **kw):
        output, resources = super().from_notebook_node(nb, resources, **kw)
        if self.offline_mathjax:
            script = mathjax_script()
            output = CDN_SCRIPT.sub(lambda _: script, output)
        return output, resources


class WithoutHiddenTests(ClearHiddenTests):
    """nbgrader's ClearHiddenTests for the feedback page: the hidden tests' source out of every
    check cell, and each error of a check cell that held them cut to ``ename: evalue``. Only the
    course's check cells (nbgrader's grade cells that are no answer) are touched: a learner's
    answer that happens to contain the delimiters is the learner's text, and stays as written."""

    def preprocess_cell(self, cell, resources, cell_index):
        grading = cell.get("metadata", {}).get("nbgrader", {})
        is_check = cell.cell_type == "code" and grading.get("grade") and not grading.get("solution")
        if not is_check:
            return cell, resources
        had_hidden = self.begin_test_delimeter in cell.source
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if had_hidden:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources
