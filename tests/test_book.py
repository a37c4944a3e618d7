"""The rendered edition (`make book`), read in a real headless browser.

Every page of build/book/ is opened in Debian's Chromium, driven by Playwright, from a server on
127.0.0.1 that serves the build and nothing else; any request that leaves the build (a CDN, a
font site) is refused and counted, so a page that needs the network fails here. Each page must
load without a console error or a failed request, show every figure (an img with a nonzero
natural size), have each of its equations typeset by MathJax, and link only to pages, files and
anchors that exist. The search box must find a word, the notebooks must carry their outputs, and
screenshots (kept in build/book/screenshots/) must not be blank. The same pages are also read
from file://, as someone who copied the folder would. A reader can try each exercise first: every
solution and model answer waits behind a "Show solution" toggle and opens on a click, no hidden
test and no nbgrader marker reaches the book, and the install and setup cells are collapsed.
The explorers (notebooks 01 and 05) redraw when their sliders and selects move, with vega-embed
served from the build, and add at most 1.5 MB to their pages.

This test reads the book that `make book` built; it builds nothing (executing the notebooks takes
minutes). It skips, saying why, where the build is missing or older than its sources, or where
Chromium is absent (`apt-get install chromium`). CI sets ACT_BOOK_REQUIRED=1, which turns each of
those skips into a failure. ACT_CHROMIUM names another Chromium binary.
"""

import functools
import html.parser
import http.server
import io
import os
import shutil
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "build" / "book"
HTML = BOOK / "_build" / "html"
SHOTS = BOOK / "screenshots"
SOURCES = ["notebooks", "docs", "book", "figures", "README.md"]   # what the book is built from
REQUIRED = os.environ.get("ACT_BOOK_REQUIRED") == "1"
# Flags for a Chromium that must not reach the network on its own; Playwright adds --headless and
# a fresh --user-data-dir for each launch.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--disable-dev-shm-usage"]
PAGE_TIMEOUT_MS = 60_000
FIRST_PAGE = "book/intro.html"     # where index.html leads


def _unavailable(reason):
    if REQUIRED:
        pytest.fail(f"{reason} (ACT_BOOK_REQUIRED=1)")
    pytest.skip(reason)


def _chromium():
    for candidate in (os.environ.get("ACT_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _newest_source():
    """(mtime, path) of the newest file the book is built from."""
    newest = (0.0, None)
    for name in SOURCES:
        path = ROOT / name
        files = [path] if path.is_file() else [
            p for p in path.rglob("*") if p.is_file()
            and not {".ipynb_checkpoints", "__pycache__"} & set(p.parts)]
        for f in files:
            newest = max(newest, (f.stat().st_mtime, f), key=lambda t: t[0])
    return newest


def _pages():
    """Every page of the book, less index.html (a redirect to the first page, tested apart)."""
    return sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
                  if not p.relative_to(HTML).parts[0].startswith("_")
                  and p.relative_to(HTML).as_posix() != "index.html")


class _Anchors(html.parser.HTMLParser):
    """The ids and names a page defines, and the hrefs and srcs it uses."""

    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])


@functools.lru_cache(maxsize=None)
def _parse(path):
    parser = _Anchors()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    return parser


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def book():
    stamp = BOOK / "built"            # `make book` dates it when its build began, and keeps it
    if not stamp.is_file() or not (HTML / "index.html").is_file():                # only on success
        _unavailable(f"no finished book in {HTML.relative_to(ROOT)}: `make book` builds it")
    newest, path = _newest_source()
    if newest > stamp.stat().st_mtime:
        _unavailable(f"the book in {HTML.relative_to(ROOT)} is older than {path.relative_to(ROOT)}: "
                     "run `make book` again")
    return HTML


@pytest.fixture(scope="module")
def server(book):
    handler = functools.partial(_Quiet, directory=str(book))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser(book):
    executable = _chromium()
    if executable is None:
        _unavailable("Chromium not found (apt-get install chromium, or set ACT_CHROMIUM)")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, headless=True,
                                      args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


class Visit:
    """One page opened in a fresh browser context, with everything that went wrong on it."""

    def __init__(self, browser, base, url, follows=None):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(PAGE_TIMEOUT_MS)
        self.problems, self.offsite = [], []
        self.context.route("**/*", self._only_the_book(base))
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(
            f"console error: {m.text} at {m.location.get('url')}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(
            f"request failed: {r.url} ({r.failure})"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(
            f"HTTP {r.status}: {r.url}"))
        response = self.page.goto(url, wait_until="load")
        if response is not None and response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {url}")
        if follows:                                   # a redirect page: wait for where it leads
            self.page.wait_for_url(f"**/{follows}", wait_until="load")
        self._settle()

    def _only_the_book(self, base):
        def handle(route):
            url = route.request.url
            if url.startswith(base) or url.startswith("data:") or url.startswith("blob:"):
                route.continue_()
            else:
                self.offsite.append(url)
                route.abort()
        return handle

    def _settle(self):
        """Load every image (lazy ones too) and wait for MathJax to finish typesetting."""
        self.page.evaluate("""async () => {
            const imgs = Array.from(document.images);
            imgs.forEach(img => { img.loading = "eager"; });
            await Promise.all(imgs.map(img => img.complete ? null :
                new Promise(done => { img.onload = img.onerror = done; })));
        }""")
        # MathJax is loaded with `defer`, so by the load event it has started if it ever will.
        self.page.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise "
                           "? MathJax.startup.promise.then(() => true) : false")
        self.page.evaluate("() => document.fonts.ready.then(() => true)")  # MathJax's fonts too

    def close(self):
        self.context.close()


def _link_problems(page_file, links):
    """Internal links of one page that lead nowhere: a missing file or a missing anchor."""
    problems = []
    for href in links:
        parts = urllib.parse.urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith("mailto:"):
            continue
        target = page_file if not parts.path else (page_file.parent / urllib.parse.unquote(parts.path))
        target = Path(os.path.normpath(target))
        if target.is_dir():
            target = target / "index.html"
        if HTML.resolve() not in target.resolve().parents:
            problems.append(f"{href}: outside the book")
        elif not target.is_file():
            problems.append(f"{href}: no file {target.relative_to(HTML)}")
        elif parts.fragment and target.suffix == ".html" and parts.fragment not in _parse(target).ids:
            problems.append(f"{href}: no anchor #{parts.fragment} in {target.relative_to(HTML)}")
    return problems


def _blank(png):
    """True when a screenshot is (nearly) one flat colour: nothing, or next to nothing, drawn."""
    import matplotlib.image
    import numpy as np
    grey = matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3].mean(axis=-1)
    inked = np.abs(grey - np.median(grey)) > 0.25          # pixels far from the background
    return grey.max() - grey.min() < 0.125 or inked.mean() < 0.005


@pytest.mark.slow
def test_a_failing_notebook_fails_the_build(tmp_path):
    """The book's own settings, on a one-notebook book whose third cell raises: no site.

    The second cell raises too, but it is marked NBVAL_SKIP, and the book skips what nbval skips.
    """
    import nbformat
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell("# A notebook that fails"),
                nbformat.v4.new_code_cell("print('first cell ran')"),
                nbformat.v4.new_code_cell("# NBVAL_SKIP\nraise RuntimeError('a skipped cell ran')"),
                nbformat.v4.new_code_cell("raise RuntimeError('this cell fails on purpose')"),
                nbformat.v4.new_code_cell("print('never reached')")]
    nbformat.write(nb, tmp_path / "fails.ipynb")
    (tmp_path / "toc.yml").write_text("format: jb-book\nroot: fails\n")
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    done = subprocess.run([str(jupyter_book), "build", str(tmp_path), "--config",
                           str(ROOT / "book" / "_config.yml"), "--toc", str(tmp_path / "toc.yml"),
                           "--path-output", str(tmp_path / "out"), "--warningiserror",
                           "--keep-going"], capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    assert "this cell fails on purpose" in output, output[-3000:]
    assert "a skipped cell ran" not in output, output[-3000:]
    assert not (tmp_path / "out" / "_build" / "html" / "fails.html").exists()


def test_the_book_has_every_chapter(book):
    pages = _pages()
    for name in ([f"notebooks/{p.stem}.html" for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
                 + [FIRST_PAGE, "docs/teaching.html", "search.html"]):
        assert name in pages, f"{name} is not in the book ({len(pages)} pages)"


def test_the_notebooks_carry_their_outputs(book):
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        text = (book / "notebooks" / f"{nb.stem}.html").read_text(encoding="utf-8")
        assert text.count('class="cell_output') >= 1, f"{nb.name}: no cell output in the book"


def test_the_course_map_links_every_notebook(book):
    links = _parse(book / FIRST_PAGE).links
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert any(f"notebooks/{nb.stem}.html" in href for href in links), \
            f"the course map does not link {nb.name}"


def test_no_internal_link_is_broken(book):
    problems = []
    for name in _pages():
        page_file = book / name
        problems += [f"{name}: {p}" for p in _link_problems(page_file, _parse(page_file).links)]
    assert not problems, "broken links:\n" + "\n".join(problems)


@pytest.mark.slow
def test_every_page_in_the_browser(book, server, browser):
    """Console, requests, figures and equations, page by page, served from 127.0.0.1."""
    problems, pages = [], _pages()
    equations = figures = 0
    for name in pages:
        visit = Visit(browser, server, server + name)
        try:
            state = visit.page.evaluate("""() => ({
                math: document.querySelectorAll('.math').length,
                typeset: Array.from(document.querySelectorAll('.math'))
                    .filter(m => m.querySelector('mjx-container')).length,
                mjx: document.querySelectorAll('mjx-container').length,
                texErrors: Array.from(document.querySelectorAll('mjx-merror'))
                    .map(e => e.getAttribute('data-mjx-error') || e.textContent).slice(0, 3),
                badImages: Array.from(document.images)
                    .filter(i => !(i.complete && i.naturalWidth > 0 && i.naturalHeight > 0))
                    .map(i => i.currentSrc || i.src),
                images: document.images.length,
            })""")
        finally:
            visit.close()
        equations += state["mjx"]
        figures += state["images"]
        problems += [f"{name}: {p}" for p in visit.problems]
        problems += [f"{name}: fetched from outside the book: {u}" for u in visit.offsite]
        problems += [f"{name}: image did not load: {u}" for u in state["badImages"]]
        if state["typeset"] < state["math"]:
            problems.append(f"{name}: {state['math'] - state['typeset']} of {state['math']} "
                            "equations not typeset by MathJax")
        problems += [f"{name}: TeX error: {e}" for e in state["texErrors"]]
    assert not problems, "\n".join(problems)
    print(f"{len(pages)} pages, {equations} equations typeset, {figures} images loaded")
    assert equations > 100 and figures > 30, (equations, figures)


@pytest.mark.slow
def test_pages_read_from_file_urls(book, browser):
    """A copied folder, opened from disk: the home page, a notebook and a doc, equations included."""
    problems = []
    for name in ["index.html", "notebooks/01_forward_pass.html", "docs/time_penalty.html"]:
        url = (book / name).as_uri()
        visit = Visit(browser, book.as_uri().rstrip("/") + "/", url,
                      follows=FIRST_PAGE if name == "index.html" else None)
        try:
            title = visit.page.title()
            mjx = visit.page.locator("mjx-container").count()
            images = visit.page.evaluate("() => Array.from(document.images).filter("
                                         "i => !(i.naturalWidth > 0)).map(i => i.src)")
        finally:
            visit.close()
        problems += [f"{name}: {p}" for p in visit.problems]
        problems += [f"{name}: fetched from outside the book: {u}" for u in visit.offsite]
        problems += [f"{name}: image did not load: {u}" for u in images]
        if mjx == 0:
            problems.append(f"{name}: no equation typeset")
        assert title, name
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_index_leads_to_the_first_page(book, server, browser):
    visit = Visit(browser, server, server + "index.html", follows=FIRST_PAGE)
    try:
        heading = visit.page.locator("h1").first.inner_text()
    finally:
        visit.close()
    assert not visit.problems and not visit.offsite, visit.problems + visit.offsite
    assert "Adaptive Computation Time" in heading, heading


@pytest.mark.slow
def test_the_search_box_finds_a_word(book, server, browser):
    visit = Visit(browser, server, server + "search.html?q=remainder")
    try:
        visit.page.wait_for_selector("#search-results ul.search li", timeout=PAGE_TIMEOUT_MS)
        hits = visit.page.locator("#search-results ul.search li a").evaluate_all(
            "links => links.map(a => a.getAttribute('href'))")
        search_box = visit.page.locator("input[name=q]").count()
    finally:
        visit.close()
    assert not visit.problems and not visit.offsite, visit.problems + visit.offsite
    assert search_box >= 1, "no search box"
    assert any("03_backprop_remainder" in h for h in hits), hits


@pytest.mark.slow
def test_screenshots_are_not_blank(book, server, browser):
    SHOTS.mkdir(exist_ok=True)
    for name in [FIRST_PAGE, "notebooks/01_forward_pass.html", "notebooks/05_parity.html"]:
        visit = Visit(browser, server, server + name)
        try:
            if name.startswith("notebooks/"):      # a displayed equation in view, and what follows
                visit.page.locator("main div.math").first.scroll_into_view_if_needed()
            png = visit.page.screenshot()
        finally:
            visit.close()
        shot = SHOTS / (name.replace("/", "_").replace(".html", ".png"))
        shot.write_bytes(png)
        assert not _blank(png), f"{name}: the screenshot ({shot.relative_to(ROOT)}) is blank"


# The pages with explorers (act_experiments.plots): how many figures each shows, and how many of
# them have controls (a slider or a select) that redraw the figure in the browser.
EXPLORERS = {"notebooks/01_forward_pass.html": (2, 1), "notebooks/05_parity.html": (1, 1)}
EXPLORER_SCRIPT = "_static/act_explorers/vega-embed.js"
EXPLORER_BUDGET = 1_500_000          # bytes an explorer page may weigh more than it would without


def _explorer_html(text):
    """The explorers' own HTML in a page: each <div class="act-explorer"> and the script after it."""
    import re
    return re.findall(r'<div class="act-explorer".*?</script>', text, flags=re.S)


def test_explorer_pages_stay_light(book):
    """vega-embed's bundle (loaded once per page) and the explorers' HTML (spec and data) add at
    most EXPLORER_BUDGET to a page; no other page loads the bundle."""
    bundle = (book / EXPLORER_SCRIPT).stat().st_size
    for name, (figures, _) in EXPLORERS.items():
        text = (book / name).read_text(encoding="utf-8")
        own = _explorer_html(text)
        assert len(own) == figures, f"{name}: {len(own)} explorers, expected {figures}"
        added = bundle + sum(len(piece.encode()) for piece in own)
        print(f"{name}: {len(text.encode())} bytes of HTML, {added} added by its explorers "
              f"({bundle} of them vega-embed's bundle)")
        assert added <= EXPLORER_BUDGET, f"{name}: the explorers add {added} bytes"
    for name in _pages():
        if name not in EXPLORERS:
            assert "act_explorers/" not in (book / name).read_text(encoding="utf-8"), name


@pytest.mark.slow
def test_explorers_move_in_the_browser_without_the_network(book, server, browser):
    """Each slider and select of each explorer, moved in Chromium, redraws its figure (the SVG
    changes); everything the page loads comes from the build, vega-embed from _static."""
    problems, moved = [], 0
    for name, (figures, interactive) in EXPLORERS.items():
        visit = Visit(browser, server, server + name)
        try:
            page = visit.page
            page.wait_for_function("n => document.querySelectorAll('.act-explorer svg.marks').length >= n",
                                   arg=figures, timeout=PAGE_TIMEOUT_MS)
            scripts = page.evaluate("() => Array.from(document.scripts).map(s => s.getAttribute('src'))"
                                    ".filter(s => s && s.includes('act_explorers/'))")
            if len(scripts) != 1 or "://" in scripts[0]:
                problems.append(f"{name}: vega-embed not loaded once from the build: {scripts}")
            with_controls = page.locator(".act-explorer:has(.vega-bind)")
            if with_controls.count() != interactive:
                problems.append(f"{name}: {with_controls.count()} explorers with controls, expected {interactive}")
            for k in range(with_controls.count()):
                found, count = move_every_control(f"{name}, explorer {k}", with_controls.nth(k))
                problems += found
                moved += count
        finally:
            visit.close()
        problems += [f"{name}: {p}" for p in visit.problems]
        problems += [f"{name}: fetched from outside the book: {u}" for u in visit.offsite]
    assert not problems, "\n".join(problems)
    assert moved >= 5, moved          # notebook 01: b, w, epsilon, M; notebook 05: tau


def move_every_control(name, explorer):
    """Move each slider and select of one Vega-Lite explorer in turn: (problems, controls moved)."""
    controls = explorer.locator(".vega-bindings input, .vega-bindings select")
    problems = [] if controls.count() else [f"{name}: no slider or select"]
    for c in range(controls.count()):
        problems += _move(name, explorer, controls.nth(c))
    return problems, controls.count()


def _move(name, explorer, control):
    """Set one control to another value, as a reader would, and wait for the figure to change."""
    label = control.evaluate("e => (e.closest('.vega-bind').querySelector('.vega-bind-name') || e).textContent.trim()")
    explorer.evaluate("e => { e.__before = e.querySelector('svg.marks').innerHTML; }")
    if control.evaluate("e => e.tagName") == "SELECT":
        options = control.evaluate("e => Array.from(e.options).map(o => o.value)")
        current = control.input_value()
        control.select_option([o for o in options if o != current][-1])
    else:
        control.evaluate("""e => {
            e.value = (e.value === e.min) ? e.max : e.min;
            e.dispatchEvent(new Event('input', {bubbles: true}));
            e.dispatchEvent(new Event('change', {bubbles: true}));
        }""")
    try:
        explorer.evaluate("e => new Promise((done, fail) => { const start = Date.now(); (function wait() {"
                          " if (e.querySelector('svg.marks').innerHTML !== e.__before) return done(true);"
                          " if (Date.now() - start > 10000) return fail(new Error('no redraw'));"
                          " setTimeout(wait, 50); })(); })")
    except Exception as err:                          # playwright's Error: the figure did not redraw
        return [f"{name}: moving '{label}' did not change the figure ({err})"]
    text = explorer.evaluate("e => Array.from(e.querySelectorAll('svg.marks text')).map(t => t.textContent).join('|')")
    if not text:
        return [f"{name}: after moving '{label}' the figure has no text marks"]
    print(f"{name}: moved '{label}': the figure redrew")
    return []


def _notebook_cells(path):
    import json
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _solutions(cells):
    """How many solution cells (code) and model answers (markdown) a notebook has."""
    grading = [c.get("metadata", {}).get("nbgrader", {}) for c in cells]
    return sum(1 for c, g in zip(cells, grading) if g.get("solution") and
               (c["cell_type"] == "markdown" or not g.get("grade")))


def _hidden_lines(cells):
    """Distinctive lines of a notebook's hidden tests: ones that appear nowhere else in it."""
    import re
    hidden, elsewhere = set(), []
    for cell in cells:
        text = "".join(cell["source"])
        blocks = re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", text, flags=re.S)
        for block in blocks:
            hidden |= {line.strip() for line in block.splitlines() if len(line.strip()) > 40}
        elsewhere.append(re.sub(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", "", text, flags=re.S))
    rest = "\n".join(elsewhere)
    return {line for line in hidden if line not in rest}


def test_the_book_view_of_an_exercise():
    """book/_ext/coursebook.py's changes to the cells, on cells made for the purpose."""
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        from coursebook import for_the_book
    finally:
        sys.path.pop(0)
    solution = for_the_book({"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade": False}},
                             "source": "x = None\n### BEGIN SOLUTION\nx = 3\n### END SOLUTION\n"})
    assert solution["source"] == "x = None\nx = 3\n" and "hide-cell" in solution["metadata"]["tags"]
    assert solution["metadata"]["mystnb"]["code_prompt_show"] == "Show solution"
    check = for_the_book({"cell_type": "code", "metadata": {"nbgrader": {"grade": True, "solution": False}},
                          "source": "assert x is not None\n### BEGIN HIDDEN TESTS\nassert x == 3\n### END HIDDEN TESTS"})
    assert check["source"] == "assert x is not None\n"
    answer = for_the_book({"cell_type": "markdown", "metadata": {"nbgrader": {"grade": True, "solution": True}},
                           "source": "**Why?**\n\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION"})
    assert answer["source"] == "**Why?**\n\n::::{toggle}\nBecause.\n::::"
    setup = for_the_book({"cell_type": "code", "metadata": {}, "source": "import numpy"}, "setup")
    assert "hide-input" in setup["metadata"]["tags"]
    assert setup["metadata"]["mystnb"]["code_prompt_show"] == "Show the setup cell"
    install = for_the_book({"cell_type": "code", "metadata": {}, "source": "import sys"}, "install")
    assert install["metadata"]["mystnb"]["code_prompt_show"] == "Show the install cell"
    lesson = for_the_book({"cell_type": "code", "metadata": {}, "source": "print(1)"})
    assert "tags" not in lesson["metadata"]


def test_no_hidden_test_or_marker_in_any_file_of_the_book(book):
    markers = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN SOLUTION", "END SOLUTION")
    hidden = {nb.stem: _hidden_lines(_notebook_cells(nb)) for nb in sorted((ROOT / "notebooks").glob("*.ipynb"))}
    assert any(hidden.values()), "no notebook has hidden tests to look for"
    problems = []
    for path in sorted(HTML.rglob("*")):
        if not path.is_file() or path.suffix not in (".html", ".js", ".ipynb", ".txt", ".md", ".json"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        problems += [f"{path.relative_to(HTML)}: {m}" for m in markers if m in text]
        for stem, lines in hidden.items():
            problems += [f"{path.relative_to(HTML)}: hidden test of {stem}: {line[:60]}"
                         for line in lines if line in text]
    assert not problems, "\n".join(problems[:20])


@pytest.mark.slow
def test_solutions_wait_behind_a_toggle_and_the_install_and_setup_cells_are_collapsed(book, server, browser):
    """Every notebook page in the browser: each solution and model answer hidden until its
    "Show solution" is clicked, no marker in the page's text, the install and setup cells' code hidden."""
    problems, opened = [], 0
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = _notebook_cells(nb)
        expected = _solutions(cells)
        visit = Visit(browser, server, server + f"notebooks/{nb.stem}.html")
        try:
            state = visit.page.evaluate("""() => {
                const shown = e => e.checkVisibility();
                const solutions = Array.from(document.querySelectorAll('details.hide'))
                    .filter(d => d.querySelector('summary').textContent.includes('Show solution'));
                const answers = Array.from(document.querySelectorAll('.toggle'));
                const answerToggles = Array.from(document.querySelectorAll('details.toggle-details'))
                    .filter(d => d.textContent.includes('Show solution') && d.querySelector('.toggle'));
                const setup = Array.from(document.querySelectorAll('details.hide'))
                    .filter(d => d.querySelector('summary').textContent.includes('Show the setup cell'));
                const install = Array.from(document.querySelectorAll('details.hide'))
                    .filter(d => d.querySelector('summary').textContent.includes('Show the install cell'));
                return {
                    solutions: solutions.length, answers: answers.length,
                    openSolutions: solutions.filter(d => d.open || shown(d.querySelector('.cell_input'))).length,
                    openAnswers: answers.filter(a => shown(a)).length,
                    answerToggles: answerToggles.length,
                    setup: setup.length, setupOpen: setup.filter(d => d.open || shown(d.querySelector('.cell_input'))).length,
                    install: install.length,
                    installOpen: install.filter(d => d.open || shown(d.querySelector('.cell_input'))).length,
                    text: document.body.innerText,
                };
            }""")
            if expected:
                visit.page.locator("details.hide summary", has_text="Show solution").first.click()
                visit.page.locator("details.toggle-details > summary").evaluate_all("ss => ss.forEach(s => s.click())")
                after = visit.page.evaluate("""() => ({
                    solution: Array.from(document.querySelectorAll('details.hide'))
                        .filter(d => d.querySelector('summary').textContent.includes('Hide solution'))
                        .filter(d => d.querySelector('.cell_input').checkVisibility()).length,
                    answers: Array.from(document.querySelectorAll('.toggle')).filter(a => a.checkVisibility()).length,
                })""")
                opened += after["solution"] + after["answers"]
                if after["solution"] != 1 or after["answers"] != state["answers"]:
                    problems.append(f"{nb.name}: a click did not open the solution ({after})")
        finally:
            visit.close()
        if state["solutions"] + state["answers"] != expected:
            problems.append(f"{nb.name}: {state['solutions']} solution toggles and {state['answers']} answer "
                            f"toggles for {expected} solutions and model answers")
        if state["openSolutions"] or state["openAnswers"]:
            problems.append(f"{nb.name}: {state['openSolutions']} solutions and {state['openAnswers']} model "
                            "answers are shown before their toggle is clicked")
        if state["answerToggles"] != state["answers"]:
            problems.append(f"{nb.name}: {state['answers']} model answers but {state['answerToggles']} 'Show solution' toggles")
        if state["setup"] != 1 or state["setupOpen"]:
            problems.append(f"{nb.name}: the setup cell is not collapsed behind 'Show the setup cell'")
        if state["install"] != 1 or state["installOpen"]:
            problems.append(f"{nb.name}: the install cell is not collapsed behind 'Show the install cell'")
        problems += [f"{nb.name}: the page shows {m!r}" for m in ("### BEGIN", "### END", "HIDDEN TESTS")
                     if m in state["text"]]
    assert not problems, "\n".join(problems)
    assert opened > 20, opened
