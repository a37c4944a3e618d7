"""The ACT architecture figure: one input step t unrolled into its ponder steps (Graves 2016, §2).

scripts/plot_architecture.py draws it into figures/act_architecture.png (``save``).

The idea of the paper's Figure 1, drawn by our own code on the worked example of notebook 01:
halting units h = (0.1, 0.3, 0.6) with epsilon = 0.01 give N(t) = 3 ponder steps, R(t) = 0.6 and
halting probabilities p = (0.1, 0.3, 0.6).

Read it row by row, one row per ponder step n. The same input x_t enters every row with one
appended flag unit (1 on the first ponder step, 0 after; eq. 3). The state runs down the chain
s_{t-1} -> s_t^1 -> s_t^2 -> s_t^3 (eq. 3). Each state feeds its halting unit (eq. 5); the running
sum of the halting units decides when to stop (eq. 7); the halting probabilities follow (eqs 6
and 8), and they weight the states into the mean-field state s_t (eq. 9), which goes on to the
output y_t and to the next input step t + 1.

The figure is a diagram, not a computation: nothing here is random, and save_figure writes the
same bytes every time.
"""

import matplotlib
import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch

from act_experiments.cli import OneLineParser
from act_experiments.figures import save_figure


NAME = "act_architecture"

# The worked example: halting units of the three ponder steps, and the threshold 1 - epsilon.
H = (0.1, 0.3, 0.6)
EPSILON = 0.01

# Okabe-Ito colours (safe for the common forms of colour blindness): (edge, light fill).
COLORS = {
    "input": ("#56B4E9", "#DDF0FB"),    # sky blue
    "state": ("#0072B2", "#D6E9F5"),    # blue
    "halt": ("#E69F00", "#FBEBC8"),     # orange
    "check": ("#7F7F7F", "#F0F0F0"),    # grey: bookkeeping, no weights
    "prob": ("#CC79A7", "#F5E1EC"),     # reddish purple
    "mean": ("#009E73", "#D2F0E7"),     # bluish green
    "out": ("#D55E00", "#F9DCC7"),      # vermillion
}
ARROW = "0.25"

# Layout in inches (the axes span the figure, one data unit = one inch).
WIDTH, HEIGHT = 11.0, 4.85
BOX_H = 0.62
ROWS = (3.02, 1.98, 0.94)                  # centre heights of ponder steps n = 1, 2, 3
SOURCE_Y = 3.92                            # x_t and s_{t-1}
HEADER_Y = 4.58                            # column headings
COLUMNS = {                                # name: (left edge, width)
    "input": (0.40, 1.10),
    "state": (1.85, 1.50),
    "halt": (3.75, 1.10),
    "check": (5.25, 1.90),
    "prob": (7.50, 1.30),
    "mean": (9.30, 1.65),
}
BUS_X = 9.05                               # where the weighted states are gathered


def _centre(column):
    left, width = COLUMNS[column]
    return left + width / 2


def _box(ax, column, y, lines, kind=None, sizes=None, width=None, left=None):
    """A rounded box in `column` centred at height y, with one text line per entry of `lines`."""
    col_left, col_width = COLUMNS[column]
    left = col_left if left is None else left
    width = col_width if width is None else width
    edge, fill = COLORS[kind or column]
    ax.add_patch(FancyBboxPatch((left, y - BOX_H / 2), width, BOX_H, boxstyle="round,pad=0,rounding_size=0.08",
                                facecolor=fill, edgecolor=edge, linewidth=1.6))
    sizes = sizes or [11] + [9.5] * (len(lines) - 1)
    step = 0.23
    top = y + step * (len(lines) - 1) / 2
    for k, (line, size) in enumerate(zip(lines, sizes)):
        ax.text(left + width / 2, top - k * step, line, ha="center", va="center", fontsize=size)


def _arrow(ax, start, end, color=ARROW, style="-|>"):
    ax.annotate("", xy=end, xytext=start,
                arrowprops=dict(arrowstyle=style, color=color, lw=1.4, shrinkA=0, shrinkB=0,
                                mutation_scale=12))


def _line(ax, xs, ys, color=ARROW):
    ax.plot(xs, ys, color=color, lw=1.4, solid_capstyle="butt")


def _ponder_row(ax, k, y, cumulative, p, bus_left):
    """Row k of the figure: ponder step n = k + 1 through the five columns, with its arrows."""
    n_steps, half = len(H), BOX_H / 2
    n = k + 1
    last = n == n_steps
    flag = 1 if n == 1 else 0
    _arrow(ax, (bus_left, y), (COLUMNS["input"][0], y))
    _box(ax, "input", y, [rf"$n = {n}$", rf"$x_t^{n} = [x_t,\ {flag}]$"], sizes=[10, 10.5])
    previous = r"s_{t-1}" if n == 1 else rf"s_t^{n - 1}"
    _box(ax, "state", y, [rf"$s_t^{n}$", rf"$= \mathcal{{S}}({previous},\, x_t^{n})$"], sizes=[12, 10])
    _box(ax, "halt", y, [rf"$h_t^{n} = {H[k]:.1f}$"], sizes=[11])
    threshold = f"{1 - EPSILON:.2f}"
    if n == 1:
        check = [rf"$\Sigma\, h = {cumulative[k]:.1f}$", rf"$< {threshold}$: go on"]
    else:
        total = rf"$\Sigma\, h = {cumulative[k - 1]:.1f} + {H[k]:.1f} = {cumulative[k]:.1f}$"
        check = [total, rf"$\geq {threshold}$: halt, $N(t) = {n}$" if last else rf"$< {threshold}$: go on"]
    _box(ax, "check", y, check, sizes=[10, 10])
    if last:
        prob = [rf"$p_t^{n} = R(t)$", rf"$= 1 - {cumulative[k - 1]:.1f} = {p[k]:.1f}$"]
    else:
        prob = [rf"$p_t^{n} = h_t^{n}$", rf"$= {p[k]:.1f}$"]
    _box(ax, "prob", y, prob, sizes=[11, 10.5])

    # within the row: x_t^n -> s_t^n -> h_t^n -> running sum -> p_t^n -> gathered into s_t
    for left, right in (("input", "state"), ("state", "halt"), ("halt", "check"), ("check", "prob")):
        _arrow(ax, (sum(COLUMNS[left]), y), (COLUMNS[right][0], y))
    _line(ax, [sum(COLUMNS["prob"]), BUS_X], [y, y])
    # down the chain: the next ponder step starts from this state; the running sum carries on
    if not last:
        for column in ("state", "check"):
            _arrow(ax, (_centre(column), y - half), (_centre(column), ROWS[k + 1] + half))


def draw():
    """Draw the architecture figure and return it (a matplotlib Figure, 11 x 4.85 inches)."""
    fig = plt.figure(figsize=(WIDTH, HEIGHT))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(0, HEIGHT)
    ax.axis("off")

    n_steps = len(H)
    cumulative = [sum(H[:k + 1]) for k in range(n_steps)]
    remainder = 1 - sum(H[:-1])            # R(t), eq. (8)
    p = list(H[:-1]) + [remainder]         # p_t^n, eq. (6)
    half = BOX_H / 2

    # column headings: what each column computes, with the paper's equation numbers
    headings = {
        "input": ("input + flag  (3)", r"$x_t^n = x_t + \delta_{n,1}$"),
        "state": ("state  (3)", r"$s_t^n = \mathcal{S}(s_t^{n-1}, x_t^n)$"),
        "halt": ("halting unit  (5)", r"$h_t^n = \sigma(W_h\, s_t^n + b_h)$"),
        "check": ("halt?  (7)", r"first $n$: $\Sigma_{n' \leq n}\, h_t^{n'} \geq 1 - \epsilon$"),
        "prob": ("halting prob.  (6), (8)", r"$p_t^n = h_t^n$ for $n < N$, $p_t^N = R(t)$"),
        "mean": ("mean field  (9)", r"$s_t = \Sigma_n\, p_t^n\, s_t^n$"),
    }
    for column, (title, formula) in headings.items():
        x = _centre(column)
        ax.text(x, HEADER_Y + 0.15, title, ha="center", va="center", fontsize=10, fontweight="bold",
                color=COLORS[column][0] if column != "check" else "0.3")
        ax.text(x, HEADER_Y - 0.15, formula, ha="center", va="center", fontsize=9.5)

    # where the step starts: the input x_t and the mean-field state of the previous input step
    _box(ax, "input", SOURCE_Y, [r"$x_t$"], kind="input", width=0.7, left=_centre("input") - 0.35)
    _box(ax, "state", SOURCE_Y, [r"$s_{t-1}$", r"from step $t-1$"], kind="state", sizes=[11, 9.5])

    # the same x_t goes to every ponder step, down a bus on the left
    bus_left = 0.18
    _line(ax, [_centre("input") - 0.35, bus_left], [SOURCE_Y, SOURCE_Y])
    _line(ax, [bus_left, bus_left], [SOURCE_Y, ROWS[-1]])
    _arrow(ax, (_centre("state"), SOURCE_Y - half), (_centre("state"), ROWS[0] + half))

    for k, y in enumerate(ROWS):
        _ponder_row(ax, k, y, cumulative, p, bus_left)

    # the weighted states p_t^n s_t^n are gathered into the mean-field state (eq. 9)
    _line(ax, [BUS_X, BUS_X], [ROWS[0], ROWS[-1]])
    _arrow(ax, (BUS_X, ROWS[1]), (COLUMNS["mean"][0], ROWS[1]))
    weights = " + ".join(rf"{w:.1f}\,s_t^{k + 1}" for k, w in enumerate(p))
    _box(ax, "mean", ROWS[1], [r"$s_t$", rf"$= {weights}$"], sizes=[12, 9])
    _box(ax, "mean", ROWS[0], [r"output $y_t$", r"$= W_y\, s_t + b_y$"], kind="out", sizes=[10.5, 10.5])
    _box(ax, "mean", ROWS[2], [r"$s_t$ goes on to", r"step $t+1$"], kind="mean", sizes=[10.5, 10.5])
    _arrow(ax, (_centre("mean"), ROWS[1] + half), (_centre("mean"), ROWS[0] - half))
    _arrow(ax, (_centre("mean"), ROWS[1] - half), (_centre("mean"), ROWS[2] + half))

    # the example's numbers, and what all ponder steps share
    ax.text(WIDTH / 2, 0.36,
            rf"Example: $\epsilon = {EPSILON}$ (threshold $1 - \epsilon = {1 - EPSILON:.2f}$), "
            rf"$h = ({', '.join(f'{v:.1f}' for v in H)})$ gives $N(t) = {n_steps}$, "
            rf"$R(t) = {remainder:.1f}$, $p = ({', '.join(f'{v:.1f}' for v in p)})$, which sums to 1.",
            ha="center", va="center", fontsize=10, color="0.2")
    ax.text(WIDTH / 2, 0.1,
            r"Every ponder step uses the same $\mathcal{S}$ (its weights $W_x, W_s, b_s$), $W_h$ and $b_h$; only the flag differs.",
            ha="center", va="center", fontsize=10, color="0.2")
    return fig


def save(directory=None):
    """Draw the figure, save it as act_architecture.png in `directory` (default figures/), return the path."""
    fig = draw()
    try:
        return save_figure(fig, NAME, directory)
    finally:
        plt.close(fig)


# ---------------------------------------------------------------------------------------------
# The command line of scripts/plot_architecture.py
# ---------------------------------------------------------------------------------------------

DESCRIPTION = 'The ACT architecture figure: one input step t unrolled into its ponder steps (Graves 2016, §2).'


def main(argv=None):
    """scripts/plot_architecture.py: write figures/act_architecture.png."""
    matplotlib.use("Agg")      # files only
    ap = OneLineParser(description=DESCRIPTION)     # errors in one line
    ap.add_argument("--figures", help="output folder (default figures/)")
    args = ap.parse_args(argv)
    print(f"wrote {save(args.figures)}")
