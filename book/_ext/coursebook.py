r"""What the book adds to Sphinx: the course map, nbval's skips, exercises a reader can try first,
a collapsed setup cell, MathJax on every page, tagged cases, one copy of each script, and the
explorers' JavaScript.

nbval's skips: a code cell marked `# NBVAL_SKIP` (or tagged nbval-skip) is one that `make test`
does not run, a long optional run; the book does not run it either (myst-nb sees it tagged
skip-execution, in memory only) and shows its code without output.

Exercises a reader can try first: the book runs the source notebooks, solutions included, and
shows an exercise's task, hint and visible checks as they are, but

- a solution cell (nbgrader's solution, not graded) sits collapsed behind "Show solution", its
  output too, without its `### BEGIN SOLUTION` / `### END SOLUTION` lines;
- a written answer's model answer (the part of the cell between those markers) sits behind the
  same toggle, below the question, and the markers never reach the page (as headings they would
  join the page's contents);
- a check cell's hidden tests, `### BEGIN HIDDEN TESTS` to `### END HIDDEN TESTS`, are taken out
  before the book runs the notebook: nbgrader runs them when it grades, and nbval in `make test`.

The install cell, the notebook's first code cell (it installs the course where it is missing;
act_course.upkeep.setup_cells), is collapsed behind "Show the install cell", and the setup cell
after it (the imports and settings the notebook uses) behind "Show the setup cell", its output
left open.

All of this happens to the text myst-nb reads, in memory; the notebooks are not changed.

MathJax on every page: Sphinx loads it only on pages with an equation of their own, but the
sidebar shows every chapter's title on every page, and one title has math in it (notebook 02's
$x_t + \delta_{n,1}$), which would show as raw TeX on the pages without equations.

Tagged cases: Sphinx wraps a displayed equation that contains `\\` in `\begin{split}`, and
MathJax refuses a `\tag` inside split. The notebooks write `$$ ... \begin{cases} a \\ b
\end{cases} \tag{6} $$`, where the line break belongs to the cases and the tag to the equation,
as Jupyter shows it; such an equation is passed to MathJax as written (with its tag moved after a
split only where a line break stands outside every environment).

One copy of each script: sphinx-thebe's inline settings (`const THEBE_JS_URL = ...`) reach the
page twice, once as registered with no file name (None) and once as re-read with an empty one,
and the second `const` is a JavaScript error on every page. Thebe itself is off (no launch button).

The explorers' JavaScript: an explorer (act_experiments.plots.vega) is a Vega-Lite figure whose
sliders work in the browser, without a kernel. The book starts its kernels with ACT_BOOK=1, and
there the figures' output is text/html, which myst-nb shows (it does not know Vega-Lite's own
mimetype, which JupyterLab gets): a <div class="act-explorer"> and a call to vega-embed. vega-embed,
Vega and Vega-Lite are vl-convert's offline bundle, written into the build as
_static/act_explorers/vega-embed.js and loaded only by the pages that hold an explorer: nothing
comes from a CDN.

The course map on the book's first page is read from the notebooks themselves:

    ```{course-map} notebooks/0[5-9]*.ipynb notebooks/1*.ipynb
    ```

draws one card per notebook that the patterns match (relative to the book's source folder, the
repository root), in file-name order: the notebook's title and the italic one-line summary under
it, linking to its page. A notebook added to the course appears on the map without an edit here,
as it appears in the table of contents (book/_toc.yml globs the same patterns).
"""

import json
import os
import re
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

from act_course.upkeep import setup_cells
from act_experiments.plots import vega


def describe(path):
    """(title, summary) from a notebook's first markdown cell: its `# ` heading and `*...*` line."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
    lines = "".join(first["source"]).splitlines()
    title = next((l[2:].strip() for l in lines if l.startswith("# ")), Path(path).stem)
    summary = next((l.strip()[1:-1].strip() for l in lines
                    if re.fullmatch(r"\*[^*].*[^*]\*", l.strip())), "")
    return title, summary


class CourseMap(SphinxDirective):
    required_arguments = 1
    optional_arguments = 10
    has_content = False

    def run(self):
        srcdir = Path(self.env.srcdir)
        paths = []
        for pattern in self.arguments:
            matched = sorted(srcdir.glob(pattern))
            if not matched:
                raise self.error(f"course-map: no notebook matches {pattern!r}")
            paths += matched
        text = ["::::{grid} 1 2 2 2", ":gutter: 2", ""]
        for path in paths:
            self.env.note_dependency(str(path))
            title, summary = describe(path)
            docname = path.relative_to(srcdir).with_suffix("").as_posix()
            text += [f":::{{grid-item-card}} {title}", f":link: /{docname}", ":link-type: doc",
                     ":class-card: course-map-card", "", summary or " ", ":::", ""]
        text.append("::::")
        container = nodes.container(classes=["course-map"])
        self.state.nested_parse(StringList(text, source=self.get_source_info()[0]),
                                self.content_offset, container)
        return [container]


TOKEN = re.compile(r"\\begin\{[^}]*\}|\\end\{[^}]*\}|\\\\|\\tag\*?\{[^}]*\}|\\[A-Za-z]+|\\.")


def tagged_display(tex):
    """The TeX to hand MathJax for a displayed equation with a \\tag and a line break, or None."""
    if "\\tag" not in tex or "\\\\" not in tex or "\n\n" in tex.strip():
        return None                  # Sphinx's own wrapping is right (or it is not ours to fix)
    depth, top_level_break, tags = 0, False, []
    for token in TOKEN.finditer(tex):
        text = token.group()
        if text.startswith("\\begin{"):
            depth += 1
        elif text.startswith("\\end{"):
            depth -= 1
        elif text == "\\\\" and depth == 0:
            top_level_break = True
        elif text.startswith("\\tag") and depth == 0:
            tags.append(text)
    if len(tags) != 1:
        return None
    body = tex.replace(tags[0], "")
    if top_level_break:
        body = "\\begin{split}" + body + "\\end{split}"
    return "\\[" + body + tags[0] + "\\]"


def keep_tagged_cases(app, doctree):
    for node in doctree.findall(nodes.math_block):
        fixed = None if node.get("nowrap") else tagged_display(node.astext())
        if fixed is not None:
            node["nowrap"] = True
            node.children = [nodes.Text(fixed)]


def mathjax_everywhere(app, pagename, templatename, context, doctree):
    """Runs before sphinx.ext.mathjax's own handler (priority 500), which then adds MathJax."""
    app.env.get_domain("math").data["has_equations"][pagename] = True


def nbval_skips(cell):
    """True for a code cell that nbval skips: a `# NBVAL_SKIP` comment line, or the tag."""
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    tags = cell.get("metadata", {}).get("tags", [])
    return cell.get("cell_type") == "code" and ("nbval-skip" in tags or any(
        line.strip().lstrip("#").strip() == "NBVAL_SKIP"
        for line in source.splitlines() if line.strip().startswith("#")))


SOLUTION = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", flags=re.M)
HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*$.*?^[ \t]*### END HIDDEN TESTS[ \t]*(\n|\Z)",
                          flags=re.M | re.S)
MODEL_ANSWER = re.compile(r"^[ \t]*### BEGIN SOLUTION[ \t]*\n(.*?)^[ \t]*### END SOLUTION[ \t]*$", flags=re.M | re.S)
SHOW_SOLUTION = {"code_prompt_show": "Show solution", "code_prompt_hide": "Hide solution"}
SHOW_SETUP = {"code_prompt_show": "Show the setup cell", "code_prompt_hide": "Hide the setup cell"}
SHOW_INSTALL = {"code_prompt_show": "Show the install cell", "code_prompt_hide": "Hide the install cell"}


def _text(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _tag(cell, tag, prompts):
    metadata = cell.setdefault("metadata", {})
    tags = metadata.setdefault("tags", [])
    if tag not in tags:
        tags.append(tag)
    metadata.setdefault("mystnb", {}).update(prompts)


def for_the_book(cell, opening=None):
    """One notebook cell as the book shows it (changed in place): see the module's docstring.
    opening: "install" for the install cell, "setup" for the setup cell, else None."""
    grading = cell.get("metadata", {}).get("nbgrader", {})
    text = _text(cell)
    if cell.get("cell_type") == "code":
        if grading.get("solution") and not grading.get("grade"):
            cell["source"] = SOLUTION.sub("", text)
            _tag(cell, "hide-cell", SHOW_SOLUTION)
        elif grading.get("grade"):
            cell["source"] = HIDDEN_TESTS.sub("", text)
        elif opening is not None:
            _tag(cell, "hide-input", SHOW_INSTALL if opening == "install" else SHOW_SETUP)
    elif cell.get("cell_type") == "markdown" and grading.get("solution"):
        # a written answer: the question stays, the model answer goes behind the toggle
        cell["source"] = MODEL_ANSWER.sub(lambda m: "::::{toggle}\n" + m.group(1).strip("\n") + "\n::::",
                                          text)
    return cell


def prepare_notebook(app, docname, source):
    """source-read: the book's view of a notebook (see the module's docstring), and the cells nbval
    skips tagged skip-execution, in the text myst-nb will read."""
    if not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    nb = json.loads(source[0])
    has_code = any(cell.get("cell_type") == "code" for cell in nb.get("cells", []))
    install, setup = (setup_cells.install_cell(nb), setup_cells.setup_cell(nb)) if has_code else (None, None)
    for cell in nb.get("cells", []):
        for_the_book(cell, "install" if cell is install else "setup" if cell is setup else None)
        if nbval_skips(cell):
            tags = cell.setdefault("metadata", {}).setdefault("tags", [])
            if "skip-execution" not in tags:
                tags.append("skip-execution")
    source[0] = json.dumps(nb)


def one_copy_of_each_script(app, pagename, templatename, context, doctree):
    seen, scripts = set(), []
    for js in context.get("script_files", []):
        key = (js.filename or "", js.priority, tuple(sorted(js.attributes.items())))
        if key not in seen:
            seen.add(key)
            scripts.append(js)
    context["script_files"] = scripts


def no_download_button(app, config):
    """The theme's "download this page" button would link to _sources/, which the book leaves out
    (html_copy_source: false: the source notebooks carry the hidden tests), so it goes too."""
    config.html_theme_options["use_download_button"] = False


def explorer_script(app, pagename, templatename, context, doctree):
    """The explorers' JavaScript on the pages that show one (runs before one_copy_of_each_script)."""
    if f'class="{vega.MARKER}"' in context.get("body", ""):
        app.add_js_file(vega.BUNDLE_PATH)


def write_explorer_script(app, exception):
    """vl-convert's bundle of vega, vega-lite and vega-embed, as _static/act_explorers/vega-embed.js."""
    if exception is None and app.builder.format == "html":
        path = Path(app.outdir) / "_static" / vega.BUNDLE_PATH
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(vega.javascript_bundle(), encoding="utf-8")


def setup(app):
    os.environ[vega.BOOK_ENV] = "1"        # the kernels the book starts inherit it: explorers add HTML
    app.setup_extension("sphinx.ext.mathjax")
    app.connect("config-inited", no_download_button)
    app.add_directive("course-map", CourseMap)
    app.connect("source-read", prepare_notebook)
    app.connect("doctree-read", keep_tagged_cases)
    app.connect("html-page-context", mathjax_everywhere, priority=400)
    app.connect("html-page-context", explorer_script)
    app.connect("html-page-context", one_copy_of_each_script, priority=900)
    app.connect("build-finished", write_explorer_script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
