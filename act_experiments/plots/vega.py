"""A Vega-Lite figure (Altair 5) shown by JupyterLab and by the book, the explorers' common ground.

Vega-Lite draws a figure in the browser from a spec and the data embedded in it, and its params
(a slider, a select) filter that data there, with no Python behind them: the same spec is
interactive in a notebook and in the static book. Two ways of showing it:

- JupyterLab renders ``application/vnd.vegalite.v5+json`` itself, with the Vega it bundles.
- The book (myst-nb) does not know that mimetype, so there the figure goes out as ``text/html``:
  a ``<div>`` and a few lines that hand the spec to vega-embed. vega-embed, Vega and Vega-Lite
  come from vl-convert's offline bundle, which the book serves from its own ``_static`` folder
  (``BUNDLE_PATH``; book/_ext/coursebook.py writes it and loads it on the pages that need it), so
  nothing is fetched from a CDN.

Each gets its own mimetype alone, the HTML when the book runs the notebook (``in_the_book``: the
book's extension sets ``ACT_BOOK=1`` for its kernels), the Vega-Lite spec everywhere else. Both
in one output would not do: JupyterLab ranks ``text/html`` (50) above Vega-Lite (57), so it would
show the HTML, which has no vega-embed to call there; and myst-nb warns about every mimetype it
does not know, which fails the book's build (``--warningiserror``).
"""

import hashlib
import json
import os

VEGALITE_MIME = "application/vnd.vegalite.v5+json"
HTML_MIME = "text/html"
BOOK_ENV = "ACT_BOOK"                       # "1" in the kernels the book starts
BUNDLE_PATH = "act_explorers/vega-embed.js"  # under the book's _static folder
MARKER = "act-explorer"                     # the class of every figure's <div> in the book
EMBED_OPTIONS = {"actions": False, "renderer": "svg"}   # no menu (its links lead off the machine)


def in_the_book():
    """True in a kernel that the book's build started (book/_ext/coursebook.py sets ACT_BOOK=1)."""
    return os.environ.get(BOOK_ENV) == "1"


def vegalite_version():
    """The Vega-Lite version Altair writes, as vl-convert names its bundles: '5.20'."""
    import altair as alt
    return ".".join(alt.VEGALITE_VERSION.split(".")[:2])


def javascript_bundle():
    """vega + vega-lite + vega-embed as one script (about 0.9 MB) that defines window.vegaEmbed,
    from vl-convert, offline; the book serves it as _static/BUNDLE_PATH. It is wrapped in a
    function, so that its many top-level names stay its own: a page's scripts share one global
    scope, and Sphinx's already declares `_`."""
    import vl_convert
    return "(function () {\n" + vl_convert.javascript_bundle(vl_version=vegalite_version()) + "\n})();\n"


def spec_of(chart):
    """The Vega-Lite spec (a dict) of an Altair chart, or the dict itself."""
    return chart if isinstance(chart, dict) else chart.to_dict()


def figure_html(spec, name):
    """The book's HTML for one spec: a <div class="act-explorer"> and an inline script that calls
    the window.vegaEmbed the page loaded from _static. No script is loaded from anywhere here."""
    text = json.dumps(spec, separators=(",", ":"), sort_keys=True)
    element = f"{MARKER}-{name}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"
    text = text.replace("</", "<\\/")       # a "</script>" inside the data must not end the script
    options = json.dumps(EMBED_OPTIONS)
    return (f'<div class="{MARKER}" id="{element}"></div>\n'
            '<script type="text/javascript">\n(function () {\n'
            f'  var where = document.getElementById("{element}");\n'
            f"  var spec = {text};\n"
            f"  if (window.vegaEmbed) {{ window.vegaEmbed(where, spec, {options}).catch(console.error); }}\n"
            '  else { where.textContent = "This figure needs vega-embed (the book serves it from _static)."; }\n'
            "})();\n</script>\n")


class VegaFigure:
    """One Vega-Lite figure for a notebook: the last line of a cell, or display(figure).

    chart: an Altair chart or its spec; name: a short word for the figure's element id in the book;
    text: what a plain-text frontend prints instead. ``mimebundle(html)`` gives (data, metadata):
    data holds the text, and the book's HTML when ``html`` is true (default: in_the_book()), else
    the Vega-Lite spec for JupyterLab.
    """

    def __init__(self, chart, name, text=""):
        self.spec = spec_of(chart)
        self.name = name
        self.text = text or f"<Vega-Lite figure {name}>"

    def mimebundle(self, html=None):
        html = in_the_book() if html is None else html
        if html:
            return {HTML_MIME: figure_html(self.spec, self.name), "text/plain": self.text}, {}
        return {VEGALITE_MIME: self.spec, "text/plain": self.text}, {VEGALITE_MIME: {"embed_options": EMBED_OPTIONS}}

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.mimebundle()

    def data_bytes(self):
        """Size in bytes of the spec as the page carries it (data included)."""
        return len(json.dumps(self.spec, separators=(",", ":")).encode())
