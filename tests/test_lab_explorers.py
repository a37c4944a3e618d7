"""The explorers in JupyterLab, in Chromium: a learner's `make lab`, a notebook that shows notebook
01's free and grid explorers and notebook 05's τ explorer, every cell run, every control moved.

JupyterLab renders the Vega-Lite figures with the Vega it bundles and the free explorer's sliders
with ipywidgets' front end: nothing is fetched from outside the server. The test starts the server
as tests/test_lab.py does (scripts/lab.py, Jupyter's folders in tmp_path), drives the page with
Playwright and Debian's Chromium (as tests/test_book.py does) and checks that moving each slider
or select changes the figure.

It needs a browser and starts a server and a kernel: `.ci/run` runs it beside tests/test_book.py
(ACT_BOOK_REQUIRED=1: a missing browser fails instead of skipping); `make test` skips it unless
ACT_BROWSER_TESTS=1.
"""

import json
import os

import pytest

from test_book import CHROMIUM_FLAGS, REQUIRED, _chromium, move_every_control
from test_lab import free_port, start_lab, stop, wait_for_url

WANTED = REQUIRED or os.environ.get("ACT_BROWSER_TESTS") == "1"
TIMEOUT_MS = 120_000
CELLS = [
    "from act_experiments.plots.halting_explorer import HaltingExplorer, grid_explorer\n"
    "HaltingExplorer(h=(0.1, 0.3, 0.5, 0.5, 0.5, 0.5), epsilon=0.1, max_ponder=4)",
    "grid_explorer()",
    "from act_experiments.plots.tau_explorer import tau_explorer\n"
    "from act_experiments.sweeps.reading import load_sweep\n"
    "tau_explorer(load_sweep('parity16_seeds'))",
]


def notebook(cells):
    return {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{k}", "metadata": {}, "outputs": [],
                       "source": source} for k, source in enumerate(cells)],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_explorers_move_in_jupyterlab_without_the_network(tmp_path):
    if not WANTED:
        pytest.skip("a browser test: set ACT_BROWSER_TESTS=1 (.ci/run does, with ACT_BOOK_REQUIRED=1)")
    executable = _chromium()
    if executable is None:
        if REQUIRED:
            pytest.fail("Chromium not found (ACT_BOOK_REQUIRED=1)")
        pytest.skip("Chromium not found")
    course = tmp_path / "work"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("")          # lab.py --course needs a course folder
    (course / "explorers.ipynb").write_text(json.dumps(notebook(CELLS)), encoding="utf-8")
    process, log = start_lab(tmp_path, free_port(), "--course", str(course))
    try:
        port, _, token, _ = wait_for_url(process, log)
        base = f"http://127.0.0.1:{port}"
        from playwright.sync_api import sync_playwright
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
            try:
                offsite, problems = run_and_move(chromium, base, token)
            finally:
                chromium.close()
    finally:
        stop(process)
    assert not offsite, f"fetched from outside the server: {offsite[:5]}"
    assert not problems, "\n".join(problems)


def wait_for_the_kernel(page, base, token, seconds=120):
    """Until the notebook's kernel has started and is idle (the server's sessions say so)."""
    import time
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        sessions = page.request.get(f"{base}/api/sessions?token={token}").json()
        if any(s.get("kernel", {}).get("execution_state") == "idle" for s in sessions):
            page.wait_for_timeout(1000)          # and the page has connected to it
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"the notebook's kernel did not start within {seconds} s")


def run_and_move(chromium, base, token):
    """Open the notebook, run its cells, move every control; (requests that left, problems)."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    offsite, problems = [], []

    def only_the_server(route):
        url = route.request.url
        if url.startswith(base) or url.startswith(("data:", "blob:", "ws://127.0.0.1")):
            route.continue_()
        else:
            offsite.append(url)
            route.abort()

    context.route("**/*", only_the_server)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base}/lab/tree/explorers.ipynb?token={token}", wait_until="load")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=TIMEOUT_MS)
    wait_for_the_kernel(page, base, token)
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    for k in range(len(CELLS)):
        # run one cell (Shift+Enter), and wait until the kernel has answered it: its prompt is numbered
        cells.nth(k).locator(".jp-InputArea-editor").click()
        page.keyboard.press("Shift+Enter")
        page.wait_for_function("cell => /\\[\\d+\\]/.test(cell.querySelector('.jp-InputPrompt').textContent)",
                               arg=cells.nth(k).element_handle(), timeout=TIMEOUT_MS)
    # three figures drawn by JupyterLab's Vega renderer (the free explorer's inside its widget)
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea svg.marks').length >= 3",
                           timeout=TIMEOUT_MS)
    # the free explorer: ipywidgets' sliders, moved with the keyboard as a learner would
    free = cells.nth(0)
    sliders = free.locator(".widget-slider .noUi-handle, .widget-slider input[type=range]")
    if sliders.count() != 8:
        problems.append(f"the free explorer shows {sliders.count()} sliders, expected h^1..h^6, ε and M")
    # h^1..h^4 (the cap is M = 4, so h^5 and h^6 are not drawn until M grows), then ε and M
    for k in [k for k in (0, 1, 2, 3, 6, 7) if k < sliders.count()]:
        before = free.locator("svg.marks").first.inner_html()
        sliders.nth(k).focus()
        page.keyboard.press("End")
        try:
            page.wait_for_function("([cell, old]) => { const s = cell.querySelector('svg.marks');"
                                   " return s && s.innerHTML !== old; }",
                                   arg=[free.element_handle(), before], timeout=20_000)
        except Exception as err:                        # playwright's TimeoutError
            problems.append(f"free explorer: slider {k} did not change the figure ({err})")
    # the grid explorer and the τ explorer: Vega-Lite's own bindings
    moved = 0
    for k, name in ((1, "grid explorer"), (2, "τ explorer")):
        found, count = move_every_control(name, cells.nth(k).locator(".jp-OutputArea-output").first)
        problems += found
        moved += count
    if moved < 5:
        problems.append(f"only {moved} Vega-Lite controls moved")
    context.close()
    return offsite, problems
