"""The paper's parity at the paper's size on two CPU cores, beside Fojo et al.'s table.

64 bits, tanh RNN 128, batch 128, ε = 0.01, M = 100, lr 1e-3, 100,000 iterations, an evaluation
every 2,000 on 2,000 held-out sequences, in three sweeps (docs/parity.md gives the commands and
the claims, fixed before the runs):

    parity64_main    ACT τ = 1e-2 and fixed F = 2, four seeds (with the ACT networks' weights)
    parity64_random  the random schedule of each τ = 1e-2 network's measured N, four seeds
    parity64_rest    ACT τ = 1e-1, 5e-3, 1e-3, fixed F = 3, 5, 8 and no ACT, two seeds

Each setting is read as Fojo, Campos and Giró-i-Nieto (ICLR 2018 workshop) report it: the training
iterations until 98% held-out accuracy (``iterations_to_98``, the first evaluation with sequence
error at most 0.02), beside the measured mean N and the final error of every seed.

    data = read()                  # {"sweeps", "settings": one row per setting}
    verdicts = claims(data)        # claims (a)-(d) as docs/parity.md fixed them

``run(settings, out)`` trains one of the sweeps into the folder of sweeps ``out``, ``read(out)`` reads
those there, ``plot(data, figures)`` draws figures/parity64_curves.png and ``main`` is
scripts/plot_parity64.py.
"""

import sys
from pathlib import Path

import matplotlib.pyplot as plt

from act_experiments import tables
from act_experiments.experiments import measured
from act_experiments.figures import plot_main, save_figure
from act_experiments.sweeps.experiment import run_into
from act_experiments.sweeps.reading import NO_ACT, fixed_key, load_sweep, random_key
from act_experiments.sweeps.writing import SOLVED_ERROR

SWEEPS = ("parity64_main", "parity64_random", "parity64_rest")
TAU = 1e-2          # the ACT setting claims (a), (c) and (d) are about
# Fojo et al.'s Table 1: steps to 98% (None: not solved) and repetitions, per setting
FOJO = {NO_ACT: (None, None), 1e-1: (None, 1.00), 1e-2: (53_000, 1.81), 5e-3: (356_000, 2.03),
        1e-3: (55_000, 2.04), fixed_key(2): (22_000, None), fixed_key(3): (49_000, None),
        fixed_key(5): (27_000, None), fixed_key(8): (26_000, None)}
ORDER = [NO_ACT, 1e-1, 1e-2, 5e-3, 1e-3, random_key(TAU), fixed_key(2), fixed_key(3), fixed_key(5), fixed_key(8)]


def label(key):
    """How a setting is written in the tables: 'ACT τ = 1e-2', 'fixed F = 2', 'random schedule', 'no ACT'."""
    if key == NO_ACT:
        return "no ACT"
    if isinstance(key, float):
        return f"ACT τ = {key:.0e}".replace("e-0", "e-")
    if key.startswith("fixed"):
        return f"fixed F = {key.split()[1]}"
    return "random schedule of τ = 1e-2's N"


def read(out=tables.RESULTS, names=SWEEPS):
    """The committed sweeps that exist and one row per setting: key, label, seeds, solved (how
    many seeds reached 98%), iterations (each seed's iterations_to_98, None when never), mean_N and
    error (each seed's final held-out numbers), and Fojo et al.'s steps and repetitions. out: the
    folder of sweeps that holds ``names``."""
    out = Path(out)
    sweeps = [load_sweep(out / name, tables=("curves",)) for name in names if (out / name / "runs.csv").exists()]
    if not sweeps:
        raise FileNotFoundError(f"none of {', '.join(names)} is committed under {out}")
    runs = [r for s in sweeps for r in s["runs"]]
    settings = []
    for key in ORDER:
        rows = sorted((r for r in runs if r["key"] == key), key=lambda r: r["seed"])
        if not rows:
            continue
        steps, repetitions = FOJO.get(key, (None, None))
        settings.append({"key": key, "label": label(key), "seeds": [r["seed"] for r in rows],
                         "solved": sum(r["iterations_to_98"] is not None for r in rows),
                         "iterations": [r["iterations_to_98"] for r in rows],
                         "mean_N": [r["mean_N"] for r in rows], "error": [r["sequence_error"] for r in rows],
                         "fojo_steps": steps, "fojo_repetitions": repetitions})
    return {"sweeps": sweeps, "settings": settings}


def claims(data):
    """Claims (a)-(d) of docs/parity.md: {"a", "b", "c", "d"}, each a dict with "holds" (True,
    False, or None when it cannot be decided: a sweep it needs is not committed, or for (c) no
    seed on which both solved, "why" then says which) and the numbers it rests on."""
    by = {s["key"]: s for s in data["settings"]}
    act, fixed, none, rnd = (by.get(k) for k in (TAU, fixed_key(2), NO_ACT, random_key(TAU)))
    out = {}
    out["a"] = ({"holds": act["solved"] >= 3 and fixed["solved"] >= 3, "act": act["solved"], "fixed": fixed["solved"]}
                if act and fixed else {"holds": None})
    out["b"] = {"holds": none["solved"] == 0, "solved": none["solved"]} if none else {"holds": None}
    if act and fixed:
        pairs = [(f, a) for f, a in zip(_by_seed(fixed, "iterations"), _by_seed(act, "iterations")) if None not in (f, a)]
        faster = sum(f < a for f, a in pairs)
        out["c"] = ({"holds": faster == len(pairs), "pairs": pairs, "faster": faster} if pairs else
                    {"holds": None, "pairs": [], "why": "no seed on which both solved"})
    else:
        out["c"] = {"holds": None}
    if act and rnd:
        seeds = sorted(set(act["seeds"]) & set(rnd["seeds"]))
        errors = [[dict(zip(x["seeds"], x["error"]))[s] for s in seeds] for x in (act, rnd)]
        test = measured.paired_test(*errors)
        out["d"] = {"holds": test["mean"] <= 0, "seeds": seeds, "act": errors[0], "other": errors[1], **test}
    else:
        out["d"] = {"holds": None}
    return out


def _by_seed(setting, field):
    return [dict(zip(setting["seeds"], setting[field])).get(s) for s in sorted(setting["seeds"])]


def table_rows(data):
    """The table of docs/parity.md, one markdown row per setting: Fojo et al.'s steps and
    repetitions, then this course's seeds solved, iterations to 98% per seed, mean N and error."""
    def k(v):
        return "—" if v is None else f"{v / 1000:g}k"

    rows = []
    for s in data["settings"]:
        fojo = "not solved" if s["fojo_steps"] is None and s["key"] in FOJO else k(s["fojo_steps"])
        if s["key"] not in FOJO:
            fojo = "(not run)"
        reps = "" if s["fojo_repetitions"] is None else f"{s['fojo_repetitions']:.2f}"
        its = ", ".join("—" if i is None else f"{i / 1000:g}k" for i in s["iterations"])
        N = ", ".join(f"{n:.2f}" for n in s["mean_N"])
        err = ", ".join(f"{e:.3f}" for e in s["error"])
        rows.append(f"| {s['label']} | {fojo} | {reps} | {s['solved']} of {len(s['seeds'])} | {its} | {N} | {err} |")
    return rows


COLOURS = {NO_ACT: "0.4", 1e-1: "tab:cyan", 1e-2: "tab:blue", 5e-3: "tab:purple", 1e-3: "navy",
           random_key(TAU): "tab:green", fixed_key(2): "tab:orange", fixed_key(3): "tab:red",
           fixed_key(5): "tab:brown", fixed_key(8): "tab:olive"}


def plot_curves(data):
    """Held-out sequence error during training, a line per seed, one colour per setting, each
    seed's iterations to 98% marked, the 0.02 line dotted."""
    fig, ax = plt.subplots(figsize=(9, 5))
    curves = [r for s in data["sweeps"] for r in s["curves"]]
    for s in data["settings"]:
        colour = COLOURS.get(s["key"], "k")
        for i, seed in enumerate(s["seeds"]):
            rows = sorted((r for r in curves if r["key"] == s["key"] and r["seed"] == seed), key=lambda r: r["iteration"])
            ax.plot([r["iteration"] for r in rows], [r["sequence_error"] for r in rows], color=colour, lw=1,
                    alpha=0.8, label=s["label"] if i == 0 else None)
            solved = s["iterations"][i]
            if solved is not None:
                error = next(r["sequence_error"] for r in rows if r["iteration"] == solved)
                ax.plot([solved], [error], "o", color=colour, mec="k", ms=5)
    ax.axhline(SOLVED_ERROR, color="k", ls=":", lw=1, label="98% accuracy (error 0.02)")
    ax.set_xlabel("training iteration")
    ax.set_ylabel("sequence error rate (held-out, 2,000 sequences)")
    ax.set_ylim(-0.02, 0.6)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.set_title("Parity at the paper's size (64 bits, RNN 128, batch 128, lr 1e-3): a line per seed, "
                 "dots where it reached 98%", fontsize=9)
    fig.tight_layout()
    return fig


SCRIPT = "scripts/plot_parity64.py"
DESCRIPTION = "Parity at the paper's size beside Fojo et al.: iterations to 98%, measured N, the claims"


def run(settings, out):
    """Train one of the three sweeps, settings["name"], into the folder of sweeps ``out``: scripts/sweep.py's
    options as a dict (docs/parity.md; act_experiments.sweeps.experiment.run_into)."""
    return run_into(settings, out)


def plot(data, figures=None):
    """Draw figures/parity64_curves.png (or in ``figures``); returns [its path]."""
    fig = plot_curves(data)
    path = save_figure(fig, "parity64_curves", directory=figures)
    plt.close(fig)
    return [path]


def describe(data):
    """The table and the claims, as lines of text."""
    lines = ["setting | Fojo steps | Fojo reps | solved | iterations to 98% | mean N | final error", *table_rows(data)]
    for name, c in claims(data).items():
        state = c.get("why", "not yet run") if c["holds"] is None else "holds" if c["holds"] else "fails"
        lines.append(f"claim ({name}): {state}")
    return "\n".join(lines)


def main(argv=None):
    """scripts/plot_parity64.py: the table, the claims and the figure of the committed 64-bit sweeps."""
    return plot_main(argv, script=SCRIPT, description=DESCRIPTION,
                     what=f"folders of sweeps that hold {', '.join(SWEEPS)} (default: results/)",
                     read=lambda folders: [read(f) for f in folders] or [read()],
                     summary=lambda data: print(describe(data)), plot=lambda data, figures, prefix: plot(data, figures))


if __name__ == "__main__":
    sys.exit(main())
