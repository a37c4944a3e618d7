"""The explorers of notebooks 01 and 05 (act_experiments.plots: vega, halting_explorer, tau_explorer).

Their numbers are the library's: every setting of notebook 01's grid against
act_numpy.halting.halting_weights, the free sliders against it as they move, notebook 05's rows
against the committed difficulty.csv. Their output: JupyterLab's Vega-Lite mimetype, or the
book's HTML in the book's kernels (ACT_BOOK=1), each alone; no script loaded from anywhere by
that HTML; data of bounded size; and the book's extension loading vega-embed from _static only on the
pages that hold an explorer. tests/test_book.py moves the sliders in the built book.
"""

import csv
import html.parser
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from act_experiments.experiments import parity
from act_experiments.plots import halting_explorer as he
from act_experiments.plots import tau_explorer as te
from act_experiments.plots import vega
from act_experiments.sweeps import stats
from act_experiments.sweeps.reading import NO_ACT, load_sweep, tau_label
from act_numpy.halting import halting_weights

ROOT = Path(__file__).resolve().parent.parent
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def grid():
    return he.grid_explorer()


@pytest.fixture(scope="module")
def seeds_sweep():
    return load_sweep("parity16_seeds")


def test_every_grid_setting_is_what_halting_weights_gives():
    rows, units = he.grid_rows()
    assert len(rows) == len(he.BIASES) * len(he.WEIGHTS) * len(he.EPSILONS) * len(he.CAPS) and len(units) == len(rows) // 9
    worst = 0.0
    for row in rows:
        h = he.sigmoid(row["w"] * he.READINGS + row["b"])                # eq. (5), one state unit
        N, p, R = halting_weights(h[:row["M"]], epsilon=row["e"], max_ponder=row["M"])
        assert row["N"] == N[0] and len(row["p"]) == row["M"], row
        unit = units[row["k"]]
        worst = max(worst, np.abs(np.array(row["p"]) - p[0]).max(), abs(row["R"] - R[0]),
                    abs(row["rho"] - (N[0] + R[0])), np.abs(np.array(unit["h"]) - h).max(),
                    np.abs(np.array(unit["c"]) - np.cumsum(h)).max(),
                    abs(row["m"] - p[0] @ he.READINGS[:row["M"]]))          # eq. (9)
    assert worst <= 0.5 * 10.0 ** -he.DIGITS + 1e-12, worst
    # the grid reaches every case the notebook's prose asks a reader to find
    assert {r["N"] for r in rows} >= set(range(1, 11))
    assert any(r["N"] == r["M"] and r["R"] > 0.5 for r in rows)          # stopped by the cap, large R


def test_the_free_explorer_follows_its_sliders():
    pytest.importorskip("ipywidgets")
    explorer = he.HaltingExplorer(h=he.WORKED_H, epsilon=0.1, max_ponder=4)
    row = explorer.row()
    assert (row["N"], row["R"], row["p"]) == (3, 0.6, [0.1, 0.3, 0.6, 0.0])    # notebook 01's worked example
    explorer.widget()
    shown = lambda: explorer._output.outputs[0]["data"]["text/plain"]
    assert shown().startswith("N = 3, R = 0.6000")
    explorer.controls["h^4"].value = 0.9                  # never read: the sum reached 0.9 at step 3
    assert explorer.row()["N"] == 3
    explorer.controls["h^3"].value = 0.4                  # the sum misses 0.9 at step 3
    assert shown().startswith("N = 4, R = 0.2000")
    explorer.controls["M"].value = 2                      # the cap: R takes what is left
    assert shown().startswith("N = 2, R = 0.9000")
    explorer.controls["epsilon"].value = 0.001
    N, p, R = halting_weights(explorer.h[:2], epsilon=explorer.epsilon, max_ponder=2)
    assert explorer.row()["p"] == np.round(p[0], he.DIGITS).tolist() and explorer.row()["R"] == round(R[0], he.DIGITS)
    mean = explorer.row()["m"]
    assert np.allclose(mean, 0.1 * he.STATES[0] + 0.9 * he.STATES[1], atol=1e-4)   # eq. (9)


@pytest.mark.parametrize("call, argument", [
    (lambda: he.check_setting([0.2, 1.5], 0.1, 2), "h"),
    (lambda: he.check_setting([], 0.1, 1), "h"),
    (lambda: he.check_setting([0.2, 0.5], 0.0, 2), "epsilon"),
    (lambda: he.check_setting([0.2, 0.5], 0.1, 3), "max_ponder"),
    (lambda: he.check_setting([0.2, 0.5], 0.1, 1.5), "max_ponder"),
    (lambda: he.halting_row([0.2, 0.5, 0.9], 0.1, 3, [0.0, 1.0]), "states"),
    (lambda: he.HaltingExplorer(states=np.zeros((6, 3))), "states"),
    (lambda: he.grid_rows(readings=[0.0, 1.0]), "readings"),
    (lambda: te.tau_explorer(load_sweep("parity16_seeds"), start=0.5), "start"),
])
def test_bad_input_raises_a_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=rf"^{argument}\b"):
        call()


def test_jupyterlab_gets_vegalite_and_the_book_gets_html(grid, monkeypatch):
    import altair as alt
    monkeypatch.delenv(vega.BOOK_ENV, raising=False)
    data, metadata = grid._repr_mimebundle_()
    # JupyterLab ranks text/html above Vega-Lite: outside the book, no HTML, or it would win
    assert vega.VEGALITE_MIME in data and vega.HTML_MIME not in data and data["text/plain"] == grid.text
    assert data[vega.VEGALITE_MIME]["$schema"].endswith(f"/v{alt.VEGALITE_VERSION}.json")
    assert metadata[vega.VEGALITE_MIME]["embed_options"]["actions"] is False
    monkeypatch.setenv(vega.BOOK_ENV, "1")
    data, _ = grid._repr_mimebundle_()
    # myst-nb warns about a mimetype it does not know, and the book fails on warnings: HTML alone
    assert vega.VEGALITE_MIME not in data and f'class="{vega.MARKER}"' in data[vega.HTML_MIME]
    assert json.dumps(grid.spec, separators=(",", ":"), sort_keys=True).replace("</", "<\\/") in data[vega.HTML_MIME]
    free = he.HaltingExplorer()
    data, _ = free._repr_mimebundle_()
    assert vega.HTML_MIME in data and WIDGET_MIME not in data          # the book: a figure, no widget
    pytest.importorskip("ipywidgets")
    monkeypatch.delenv(vega.BOOK_ENV)
    data, _ = free._repr_mimebundle_()        # JupyterLab: the sliders, and the figure for a frontend without them
    assert WIDGET_MIME in data and vega.VEGALITE_MIME in data and vega.HTML_MIME not in data


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_the_books_html_loads_no_script_and_escapes_its_data():
    figure = vega.VegaFigure({"data": {"values": [{"a": "</script><script src='https://x.org/y.js'>"}]},
                              "mark": "point"}, "test")
    page = figure.mimebundle(html=True)[0][vega.HTML_MIME]
    parser = _Tags()
    parser.feed(page)
    scripts = [attrs for tag, attrs in parser.tags if tag == "script"]
    assert len(scripts) == 1 and "src" not in scripts[0]
    assert page.count("</script>") == 1 and "<\\/script>" in page
    for explorer in (he.grid_explorer(), te.tau_explorer(load_sweep("parity16_seeds"))):
        parser = _Tags()
        parser.feed(explorer.mimebundle(html=True)[0][vega.HTML_MIME])
        sources = [attrs.get("src", "") + attrs.get("href", "") for _, attrs in parser.tags]
        assert not any(s.startswith(("http://", "https://", "//")) for s in sources), sources
        assert [tag for tag, _ in parser.tags] == ["div", "script"]


def test_the_explorers_data_stay_small(grid, seeds_sweep):
    assert grid.data_bytes() < 250_000                 # 1215 settings
    assert he.HaltingExplorer().figure().data_bytes() < 20_000
    largest = load_sweep(parity.largest_sweep())
    for sweep in (seeds_sweep, largest):
        assert te.tau_explorer(sweep).data_bytes() < 150_000, sweep["name"]


def test_the_tau_explorer_shows_the_committed_csv(seeds_sweep):
    with open(ROOT / "results" / "parity16_seeds" / "difficulty.csv", newline="") as f:
        committed = list(csv.DictReader(f))
    with open(ROOT / "results" / "parity16_seeds" / "runs.csv", newline="") as f:
        taus = {r["run"]: r["tau"] for r in csv.DictReader(f)}
    act = [r for r in committed if taus[r["run"]]]
    rows = te.seed_rows(seeds_sweep)
    assert len(rows) == len(act) and len(act) < len(committed)            # the baseline is not a τ
    for row, line in zip(rows, act):
        assert row["tau"] == tau_label(float(taus[line["run"]])) and row["difficulty"] == int(line["difficulty"])
        assert abs(row["error"] - float(line["error"])) <= 5e-5 and abs(row["ponder"] - float(line["ponder"])) <= 5e-5
    d, e, _, _ = stats.by_difficulty(seeds_sweep["difficulty"], NO_ACT, "error")
    assert np.allclose([r["error"] for r in te.baseline_rows(seeds_sweep)], e, atol=5e-5) and len(d) > 0
    spec = te.tau_explorer(seeds_sweep).spec
    (param,) = spec["params"]
    assert param["bind"]["options"] == [tau_label(t) for t in stats.taus(seeds_sweep)]
    assert param["value"] == tau_label(min(stats.taus(seeds_sweep)))
    assert [line["tau"] for line in te.tau_lines(seeds_sweep)] == param["bind"]["options"]


class _App:
    """Stands in for Sphinx's app in the book extension's handlers."""

    def __init__(self):
        self.js = []

    def add_js_file(self, filename, **kwargs):
        self.js.append(filename)


def test_the_book_loads_vega_embed_from_its_build_only_where_an_explorer_is(grid, tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        from coursebook import explorer_script, write_explorer_script
    finally:
        sys.path.pop(0)
    app = _App()
    explorer_script(app, "notebooks/02_binary_flag", "page.html", {"body": "<p>no explorer</p>"}, None)
    assert app.js == []
    explorer_script(app, "notebooks/01_forward_pass", "page.html",
                    {"body": grid.mimebundle(html=True)[0][vega.HTML_MIME]}, None)
    assert app.js == [vega.BUNDLE_PATH] and "://" not in vega.BUNDLE_PATH
    # vl-convert's real bundle takes seconds to make: tests/test_book.py runs it in the browser
    import vl_convert
    asked = []
    monkeypatch.setattr(vl_convert, "javascript_bundle", lambda vl_version: asked.append(vl_version) or
                        "const _ = 1; window.vegaEmbed = function () {};")
    app.outdir, app.builder = tmp_path, type("Builder", (), {"format": "html"})()
    write_explorer_script(app, None)
    bundle = (tmp_path / "_static" / vega.BUNDLE_PATH).read_text(encoding="utf-8")
    assert asked == [vega.vegalite_version()] and asked[0].startswith("5.")
    # wrapped in a function: its top-level names (here `_`, which Sphinx's pages declare too) stay its own
    assert bundle == "(function () {\nconst _ = 1; window.vegaEmbed = function () {};\n})();\n"
