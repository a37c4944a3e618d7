"""Notebook 01's explorers: move the halting values, ε and the cap M, and watch N, R, p and ρ.

Every number the figures show comes from ``act_numpy.halting.halting_weights`` (eqs 6-8, 13),
computed here in Python; the figures only filter and draw them. Two explorers:

- ``HaltingExplorer``: free sliders (ipywidgets) for h^1..h^n, ε and M, in JupyterLab with a
  kernel; each move recomputes the weights and redraws. Without a widget frontend (nbval, the
  book) it shows the figure of its starting values.
- ``grid_explorer``: a worked example that needs no kernel, for the book. Each ponder step n
  reads a fixed scalar state s^n (``READINGS``) and the halting unit is h^n = σ(w s^n + b)
  (eq. 5 with one state unit); the weights are computed in advance for every b, w, ε and M of
  a small grid, and the figure's sliders pick one of them in the browser.

Both draw N, R and ρ over three panels: the halting units h^n beside the weights p^n, the
running sum of h against the threshold 1 - ε, and the mean-field state Σ_n p^n s^n among the
ponder states (eq. 9). A figure's data are three lists of rows: settings
(ε, M, and b, w in the grid; N, R, ρ, the weights p of length M, the mean-field state, and k, the
key of its halting units), units (per key: h^1..h^n and their running sums) and states (per step
n: s^n); the figure joins the setting it shows with its units and flattens them into one row per
ponder step.
"""

import numpy as np

from act_experiments.plots.vega import VegaFigure, in_the_book
from act_numpy.cells import sigmoid
from act_numpy.halting import halting_weights

READINGS = np.round(np.linspace(-1.0, 1.7, 10), 2)     # s^n, n = 1..10: the grid's ponder states
STATES = np.array([[0.9, 0.1], [0.6, 0.6], [0.1, 0.8],  # s^n, n = 1..6: the free explorer's, 2-D
                   [-0.4, 0.6], [-0.7, 0.2], [-0.8, -0.3]])
BIASES = np.arange(-4.0, 3.01, 0.5)                      # the grid: halting bias b,
WEIGHTS = np.arange(-2.0, 2.01, 0.5)                     # halting weight w,
EPSILONS = (0.1, 0.01, 0.001)                            # ε,
CAPS = (3, 5, 10)                                        # and the cap M
START = {"b": -1.0, "w": 1.0, "e": 0.01, "M": 10}         # where the grid explorer's sliders start
WORKED_H = (0.1, 0.3, 0.5, 0.5, 0.5, 0.5)                # notebook 01's worked example, padded to 6
DIGITS = 4                                               # decimals kept in the figures' data
PANEL = {"width": 150, "height": 150}        # three side by side fit the book's column
ROWS, UNITS, STATES_DATA = "settings", "units", "states"   # the names of a figure's three datasets


def check_setting(h, epsilon, max_ponder):
    """h as a 1-D float array; ValueError naming the argument that is out of range."""
    h = np.asarray(h, dtype=float)
    if h.ndim != 1 or h.size == 0 or not np.all((h >= 0) & (h <= 1)):
        raise ValueError(f"h must be a non-empty 1-D sequence of halting values in [0, 1], got {h!r}")
    if not 0 < epsilon < 1:
        raise ValueError(f"epsilon must lie in (0, 1), got {epsilon!r}")
    if int(max_ponder) != max_ponder or not 1 <= max_ponder <= h.size:
        raise ValueError(f"max_ponder must be a whole number from 1 to len(h) = {h.size}, got {max_ponder!r}")
    return h


def halting_row(h, epsilon, max_ponder, states):
    """One setting as a figure row, its weights computed by act_numpy.halting.halting_weights.

    h (n,) halting values h^1..h^n with n >= max_ponder; states (n, S) or (n,): the ponder states
    s^n. Returns a dict: e, M, N, R, rho = N + R (eq. 10), p (a list of length M, zeros after
    N) and the mean-field state m = Σ p^n s^n (eq. 9), a number when the states are scalars,
    else a list of S numbers.
    """
    h = check_setting(h, epsilon, max_ponder)
    states = np.asarray(states, dtype=float)
    if states.shape[0] < max_ponder:
        raise ValueError(f"states has {states.shape[0]} ponder states, fewer than max_ponder = {max_ponder}")
    M = int(max_ponder)
    N, p, R = halting_weights(h[None, :M], epsilon=epsilon, max_ponder=M)     # eqs (6)-(8), (13)
    N, p, R = int(N[0]), p[0], float(R[0])
    return {"e": float(epsilon), "M": M, "N": N, "R": _round(R), "rho": _round(N + R), "p": _round(p),
            "m": _round(p @ states[:M])}                                       # eq. (9)


def unit_row(h, key=0):
    """The halting units of one setting as a figure row: k (its key), h (n,) and c, the running
    sums Σ_{k<=n} h^k, as lists."""
    h = np.asarray(h, dtype=float)
    return {"k": key, "h": _round(h), "c": _round(np.cumsum(h))}


def _round(value):
    return np.round(value, DIGITS).tolist()


def grid_rows(readings=READINGS, biases=BIASES, weights=WEIGHTS, epsilons=EPSILONS, caps=CAPS):
    """The grid explorer's data: (rows, units).

    units: one unit_row per (b, w), with h^n = σ(w s^n + b) (eq. 5) for the scalar ponder states
    readings (n,), n >= max(caps); rows: one halting_row per (b, w, ε, M), with b, w and k, the
    key of its units.
    """
    readings = np.asarray(readings, dtype=float)
    if readings.ndim != 1 or readings.size < max(caps):
        raise ValueError(f"readings must be 1-D with at least max(caps) = {max(caps)} values, got shape {readings.shape}")
    rows, units = [], []
    for b in biases:
        for w in weights:
            h = sigmoid(w * readings + b)
            units.append(unit_row(h, key=len(units)))
            for epsilon in epsilons:
                for M in caps:
                    rows.append({"b": float(b), "w": float(w), "k": units[-1]["k"],
                                 **halting_row(h, epsilon, M, readings)})
    return rows, units


def _steps(alt, chart):
    """One row per ponder step n = 1..M of the setting the chart shows: its row joined with its
    units (h, c), the three arrays flattened, the steps numbered."""
    units = alt.LookupData(alt.Data(name=UNITS), "k", ["h", "c"])
    return (chart.transform_lookup(lookup="k", from_=units).transform_flatten(["h", "c", "p"])
            .transform_window(n="row_number()").transform_filter("datum.n <= datum.M"))


def _states(alt, chart, fields):
    """_steps with the ponder state of each step looked up (the dataset STATES_DATA, by n)."""
    return _steps(alt, chart).transform_lookup(lookup="n", from_=alt.LookupData(alt.Data(name=STATES_DATA), "n", fields))


def readout(alt, base):
    """One line over the panels: N, R and ρ = N + R of the setting shown."""
    return base.transform_calculate(
        text="'N = ' + datum.N + '  ·  R = ' + format(datum.R, '.4f') + '  ·  ρ = N + R = ' + format(datum.rho, '.4f')"
    ).mark_text(align="left", baseline="middle", fontSize=14, fontWeight="bold").encode(
        x=alt.value(0), y=alt.value(10), text="text:N").properties(
            width=3 * PANEL["width"], height=20, view=alt.ViewBackground(stroke=None))


def weights_panel(alt, base):
    """Bars of h^n and p^n per step n <= M (p^n = 0 after N, where h^n is faded: never computed)."""
    steps = _steps(alt, base).transform_fold(["h", "p"], as_=["quantity", "value"])
    legend = alt.Legend(title=None, orient="bottom",
                        labelExpr="datum.label == 'h' ? 'halting unit hⁿ' : 'weight pⁿ'")
    return steps.mark_bar().encode(
        x=alt.X("n:O", title="ponder step n", axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("quantity:N", sort=["h", "p"]),
        y=alt.Y("value:Q", title=None, scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("quantity:N", scale=alt.Scale(domain=["h", "p"], range=["#9ecae1", "#d6604d"]),
                        legend=legend),
        opacity=alt.condition("datum.n > datum.N", alt.value(0.3), alt.value(1.0)),
        tooltip=[alt.Tooltip("n:O"), alt.Tooltip("quantity:N"), alt.Tooltip("value:Q", format=".4f")],
    ).properties(title="halting units and weights", **PANEL)


def sum_panel(alt, base):
    """The running sum Σ_{k<=n} h^k up to N, against the threshold 1 - ε (eq. 7)."""
    steps = _steps(alt, base).transform_filter("datum.n <= datum.N")
    y = alt.Y("c:Q", title=None, scale=alt.Scale(domain=[0, 2]))
    line = steps.mark_line(point=True, color="#3182bd").encode(
        x=alt.X("n:O", title="ponder step n", axis=alt.Axis(labelAngle=0)), y=y,
        tooltip=[alt.Tooltip("n:O"), alt.Tooltip("c:Q", title="sum of h", format=".4f")])
    setting = base.transform_calculate(t="1 - datum.e")
    threshold = setting.mark_rule(color="crimson", strokeDash=[4, 3]).encode(y="t:Q")
    label = setting.transform_calculate(text="'1 − ε = ' + format(datum.t, '.3~f')").mark_text(
        align="left", dx=2, dy=-6, color="crimson").encode(x=alt.value(0), y="t:Q", text="text:N")
    return alt.layer(line, threshold, label).properties(title="running sum of h, up to N", **PANEL)


def readings_panel(alt, base):
    """The scalar ponder states s^n (dots sized by p^n) and the mean-field state Σ p^n s^n (eq. 9)."""
    steps = _states(alt, base, ["s"])
    dots = steps.mark_point(filled=True, color="#555").encode(
        x=alt.X("n:O", title="ponder step n", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("s:Q", title=None, scale=alt.Scale(domain=[-1.2, 1.9])),
        size=alt.Size("p:Q", scale=alt.Scale(domain=[0, 1], range=[15, 400]), legend=None),
        opacity=alt.condition("datum.n > datum.N", alt.value(0.25), alt.value(0.9)),
        tooltip=[alt.Tooltip("n:O"), alt.Tooltip("s:Q", title="s^n"), alt.Tooltip("p:Q", format=".4f")])
    field = base.mark_rule(color="#d6604d", strokeWidth=2).encode(y="m:Q")
    label = base.transform_calculate(text="'Σ pⁿ sⁿ = ' + format(datum.m, '.3f')").mark_text(
        align="right", dx=-2, dy=-6, color="#d6604d").encode(x=alt.value(PANEL["width"]), y="m:Q", text="text:N")
    return alt.layer(dots, field, label).properties(title="states sⁿ, mean field", **PANEL)


def states_panel(alt, base):
    """The 2-D ponder states s^n (dots sized by p^n, labelled n) and the mean-field state (a diamond)."""
    steps = _states(alt, base, ["x", "y"])
    x = alt.X("x:Q", title="state unit 1", scale=alt.Scale(domain=[-1, 1]))
    y = alt.Y("y:Q", title="state unit 2", scale=alt.Scale(domain=[-1, 1]))
    opacity = alt.condition("datum.n > datum.N", alt.value(0.25), alt.value(0.9))
    dots = steps.mark_point(filled=True, color="#555").encode(
        x=x, y=y, opacity=opacity, size=alt.Size("p:Q", scale=alt.Scale(domain=[0, 1], range=[15, 400]), legend=None))
    labels = steps.mark_text(dx=9, dy=-9).encode(x=x, y=y, opacity=opacity, text="n:N")
    mean = base.transform_calculate(x="datum.m[0]", y="datum.m[1]").mark_point(
        shape="diamond", filled=True, size=160, color="#d6604d").encode(x=x, y=y)
    return alt.layer(dots, labels, mean).properties(title="states sⁿ, mean field ◆", **PANEL)


def halting_chart(rows, units, states, state_panel, params=()):
    """The three panels side by side, as a Vega-Lite spec (a dict) whose datasets are `rows`
    (halting_row dicts, with k), `units` (unit_row dicts) and `states` (one dict per step n: its
    ponder state). state_panel is readings_panel or states_panel. With `params` (Altair params
    named b, w, e, M) the figure shows the one row that they select."""
    import altair as alt
    base = alt.Chart(alt.Data(name=ROWS))
    if params:
        b, w, e, M = params
        base = base.transform_filter((alt.datum.b == b) & (alt.datum.w == w) & (alt.datum.e == e) & (alt.datum.M == M))
    chart = alt.vconcat(readout(alt, base),
                        alt.hconcat(weights_panel(alt, base), sum_panel(alt, base), state_panel(alt, base)))
    spec = (chart.add_params(*params) if params else chart).to_dict()   # checked against the schema
    spec["datasets"] = {ROWS: rows, UNITS: units, STATES_DATA: states}   # the data after: quicker to check
    return spec


def grid_explorer(readings=READINGS):
    """The book's explorer: sliders for b and w, selects for ε and M, over grid_rows (a VegaFigure)."""
    import altair as alt
    rows, units = grid_rows(readings)
    states = [{"n": n, "s": float(s)} for n, s in enumerate(readings, start=1)]
    params = (alt.param(name="b", value=START["b"], bind=alt.binding_range(
                  min=float(BIASES[0]), max=float(BIASES[-1]), step=0.5, name="halting bias b ")),
              alt.param(name="w", value=START["w"], bind=alt.binding_range(
                  min=float(WEIGHTS[0]), max=float(WEIGHTS[-1]), step=0.5, name="halting weight w ")),
              alt.param(name="e", value=START["e"], bind=alt.binding_select(options=list(EPSILONS), name="ε ")),
              alt.param(name="M", value=START["M"], bind=alt.binding_select(options=list(CAPS), name="cap M ")))
    spec = halting_chart(rows, units, states, readings_panel, params)
    start = next(r for r in rows if all(r[k] == v for k, v in START.items()))
    return VegaFigure(spec, "halting-grid", text=summary_text(start))


def summary_text(row):
    """One line: N, R, ρ and p of a halting_row."""
    return (f"N = {row['N']}, R = {row['R']:.4f}, rho = N + R = {row['rho']:.4f}, "
            f"p = {np.round(row['p'], 4).tolist()}")


class HaltingExplorer:
    """Free sliders for h^1..h^n, ε and M (JupyterLab, with a kernel), drawn with STATES.

    h (n,) the starting halting values, n <= len(states); epsilon; max_ponder M <= n; states (n', 2).
    ``row()`` is the current setting's halting_row, ``figure()`` its VegaFigure. Shown in a
    notebook, it is the sliders above the figure; in the book, or where ipywidgets is missing,
    the figure of the starting values alone.
    """

    def __init__(self, h=WORKED_H, epsilon=0.1, max_ponder=4, states=STATES):
        self.states = np.asarray(states, dtype=float)
        if self.states.ndim != 2 or self.states.shape[1] != 2:
            raise ValueError(f"states must have the shape (n, 2), got {self.states.shape}")
        self.h = check_setting(h, epsilon, max_ponder).copy()
        if self.h.size > len(self.states):
            raise ValueError(f"h has {self.h.size} values but there are only {len(self.states)} states")
        self.epsilon, self.max_ponder = float(epsilon), int(max_ponder)
        self._box = self._output = None
        self.controls = {}

    def set(self, n=None, h=None, epsilon=None, max_ponder=None):
        """Change one halting value (h^n, n from 1), ε or M, as a slider does; checks the setting."""
        values = self.h.copy()
        if n is not None:
            values[n - 1] = h
        epsilon = self.epsilon if epsilon is None else epsilon
        max_ponder = self.max_ponder if max_ponder is None else max_ponder
        self.h = check_setting(values, epsilon, max_ponder)
        self.epsilon, self.max_ponder = float(epsilon), int(max_ponder)
        self._redraw()

    def row(self):
        return {"k": 0, **halting_row(self.h, self.epsilon, self.max_ponder, self.states)}

    def figure(self):
        row = self.row()
        states = [{"n": n, "x": float(x), "y": float(y)} for n, (x, y) in enumerate(self.states, start=1)]
        spec = halting_chart([row], [unit_row(self.h)], states, states_panel)
        return VegaFigure(spec, "halting-free", text=summary_text(row))

    def widget(self):
        """The sliders and the figure as one ipywidgets box (made once); ``controls`` names the
        sliders: "h^1".."h^n", "epsilon", "M"."""
        if self._box is None:
            import ipywidgets as widgets
            sliders = [widgets.FloatSlider(value=v, min=0.0, max=1.0, step=0.01, description=f"h^{n}",
                                           continuous_update=False) for n, v in enumerate(self.h, start=1)]
            for n, slider in enumerate(sliders, start=1):
                slider.observe(lambda change, n=n: self.set(n=n, h=change["new"]), names="value")
            eps = widgets.FloatLogSlider(value=self.epsilon, base=10, min=-3, max=-0.3, step=0.05,
                                         description="ε", readout_format=".3f", continuous_update=False)
            eps.observe(lambda change: self.set(epsilon=change["new"]), names="value")
            cap = widgets.IntSlider(value=self.max_ponder, min=1, max=self.h.size, description="cap M",
                                    continuous_update=False)
            cap.observe(lambda change: self.set(max_ponder=change["new"]), names="value")
            self.controls = {**{f"h^{n}": slider for n, slider in enumerate(sliders, start=1)}, "epsilon": eps, "M": cap}
            self._output = widgets.Output()
            self._box = widgets.VBox([widgets.HBox([widgets.VBox(sliders), widgets.VBox([eps, cap])]), self._output])
            self._redraw()
        return self._box

    def _redraw(self):
        if self._output is not None:
            data, metadata = self.figure().mimebundle(html=False)
            self._output.outputs = ({"output_type": "display_data", "data": data, "metadata": metadata},)

    def _repr_mimebundle_(self, include=None, exclude=None):
        static = self.figure().mimebundle()
        if in_the_book():
            return static
        try:
            box = self.widget()
        except ImportError:
            return static
        data, metadata = static
        # JupyterLab shows the sliders; a frontend without widgets falls back to the figure or its text
        view = {"version_major": 2, "version_minor": 0, "model_id": box.model_id}
        return {**data, "application/vnd.jupyter.widget-view+json": view}, metadata
