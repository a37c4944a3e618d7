"""The pitfall gallery's training runs (notebook 11): every bug of act_beyond.pitfalls, trained briefly.

    python scripts/pitfalls.py run gallery          # parity: every bug beside the correct ACT
    python scripts/pitfalls.py run sequence         # logic: the bugs that need a sequence or padding
    python scripts/pitfalls.py run prefix           # 16-bit parity: the prefix data convention
    python scripts/pitfalls.py run ponder_sum_h --out results/pitfalls_ponder_sum_h
                                                    # the simplified ponder cost -sum_{n<=N} h^n
    python scripts/pitfalls.py plot                 # figures/pitfalls_*.png from results/pitfalls/

``run`` trains each entry of the experiment for every seed with ``act_experiments.experiments.pitfalls.train_variant``
and appends its evaluations to ``results/pitfalls/<experiment>.csv`` (one row per evaluation);
``<experiment>.json`` keeps the settings and the command. A run that stopped continues where it
left off: entries already in the CSV are skipped, as long as the settings and seeds are the same
(entries added to the experiment are trained; other settings are refused; ``--force`` starts the
experiment over). ``--seeds`` and ``--iterations`` change the settings, so use them with ``--out``
for a trial run; ``--pitfalls`` trains only the entries named. Each (entry, seed) reaches the CSV in
one atomic step when it finishes (act_experiments.experiments.runner).
"""

import sys
import time

import matplotlib

from act_beyond import pitfalls as pf
from act_experiments.experiments import pitfalls as pitfall_runs
from act_experiments.experiments.pitfalls import final_evals, summarise
from act_experiments.experiments import runner
from act_experiments.figures import save_figure
from act_experiments.tables import RESULTS

OUT = RESULTS / "pitfalls"
COLUMNS = ("pitfall", "seed", "iteration", "error", "error_at_half", "error_random", "ponder", "rho", "max_N",
           "capped", "weight_sum", "grad_data", "grad_ponder")

EXPERIMENTS = {
    # 6-bit parity: the live run of notebook 05 (1000 iterations), with a cap M = 10 that some inputs reach
    "gallery": {
        "pitfalls": [name for name in pf.PITFALLS if name not in ("ponder counts padding", "ponder sums h")],
        "seeds": 3,
        "settings": dict(task="parity", task_options={"bits": 6}, cell="rnn", hidden=32, batch_size=128, lr=1e-2,
                         tau=1e-3, max_ponder=10, iterations=1000, eval_every=100, eval_size=1000),
    },
    # logic (a sequence of up to 4 vectors, padded to 4): the flag and the padding matter here, and
    # the cap M = 6 stops most steps, so the bugs of the remainder at the cap have work to do
    "sequence": {
        "pitfalls": ["correct", "flag inverted", "flag missing", "flag added", "ponder counts padding",
                     "halting from entering state", "overshoot remainder", "cap drops R", "cap zero R"],
        "seeds": 3,
        "settings": dict(task="logic", task_options={"max_vectors": 4, "max_gates": 2}, cell="lstm", hidden=32,
                         batch_size=32, lr=1e-2, tau=1e-2, max_ponder=6, iterations=600, eval_every=100,
                         eval_size=500),
    },
    # the simplified ponder cost -sum_{n<=N} h^n against eq. (12), on the gallery's 6-bit parity with
    # tau = 1e-2 (ten times the gallery's, so that the ponder part of the halting gradient matters);
    # written to results/pitfalls_ponder_sum_h/ (a folder of its own: results/pitfalls stays as committed)
    "ponder_sum_h": {
        "pitfalls": ["correct", "ponder sums h"],
        "seeds": 6,
        "settings": dict(task="parity", task_options={"bits": 6}, cell="rnn", hidden=32, batch_size=128, lr=1e-2,
                         tau=1e-2, max_ponder=10, iterations=1000, eval_every=100, eval_size=1000),
    },
    # the pitfall reference's setting: 16 bits, tanh RNN 128, batch 128, tau 1e-3, lr 1e-3
    "prefix": {
        "pitfalls": ["parity prefix", "correct"],
        "seeds": 2,
        "settings": dict(task="parity", task_options={"bits": 16}, cell="rnn", hidden=128, batch_size=128, lr=1e-3,
                         tau=1e-3, max_ponder=20, iterations=3000, eval_every=250, eval_size=1000),
    },
}


def run(name, seeds=None, iterations=None, pitfalls=None, out=OUT, force=False, log=print):
    """Train experiment ``name`` (a key of EXPERIMENTS) into ``out``; returns the CSV's path.

    Resumes a run that stopped and refuses one with other settings (act_experiments.experiments.runner).
    """
    spec = EXPERIMENTS[name]
    settings = dict(spec["settings"])
    if iterations is not None:
        settings["iterations"] = iterations
    meta = {"experiment": name, "pitfalls": pitfalls or spec["pitfalls"], "seeds": seeds or spec["seeds"],
            "settings": settings}

    def train(pitfall, seed):
        t0 = time.time()
        evals = pitfall_runs.train_variant(pitfall, seed=seed, **settings)["evals"]
        last = evals[-1]
        return ([{"pitfall": pitfall, "seed": seed, **e} for e in evals],
                f"{pitfall:28s} seed {seed}: error {last['error']:.3f}, ponder {last['ponder']:.2f} "
                f"({time.time() - t0:.0f} s)")

    return runner.run_entries(name, meta, train, COLUMNS, out, entries_key="pitfalls",
                                  script="scripts/pitfalls.py", force=force, log=log)


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

def draw_effects(rows, title):
    """Three panels, one row per pitfall: final error, final mean ponder N, and the gradient reaching
    the halting bias (data part and ponder part, mean over the run); one dot per seed."""
    import matplotlib.pyplot as plt
    s = summarise(rows)
    names = list(s)
    ends = final_evals(rows)
    fig, axes = plt.subplots(1, 3, figsize=(12, 0.42 * len(names) + 1.6), sharey=True)
    y = range(len(names))
    for ax, column, label in ((axes[0], "error", "held-out sequence error"),
                              (axes[1], "ponder", "mean ponder steps N")):
        ax.barh(y, [s[n][column][0] for n in names], color=["0.35" if n == "correct" else "tab:blue" for n in names],
                alpha=0.35)
        for i, n in enumerate(names):
            ax.plot([r[column] for r in ends if r["pitfall"] == n], [i] * s[n]["seeds"], "o", ms=3.5, color="black")
        correct = s.get("correct", {}).get(column)
        if correct:
            ax.axvline(correct[0], color="0.35", ls=":", lw=1)
        ax.set_xlabel(label)
    ax = axes[2]
    for offset, column, colour, label in ((-0.15, "grad_data", "tab:green", "data part"),
                                          (0.15, "grad_ponder", "tab:red", "ponder part (τP)")):
        values = [s[n][column][0] for n in names]
        shown = [max(v, 1e-9) for v in values]
        ax.barh([i + offset for i in y], shown, height=0.3, color=colour, label=label)
        for i, v in enumerate(values):
            if v == 0:
                ax.text(1.3e-9, i + offset, "exactly 0", va="center", fontsize=7)
    ax.set_xscale("log")
    ax.set_xlim(1e-9, None)
    ax.set_xlabel(r"mean $|\partial / \partial b_h|$ during training")
    ax.legend(frameon=False, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2)
    axes[0].set_yticks(list(y))
    axes[0].set_yticklabels(names)
    axes[0].invert_yaxis()
    for a in axes:
        a.grid(alpha=0.3, axis="x")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def draw_prefix(rows, title):
    """Held-out error against iteration: the correct data, and the prefix data scored on both conventions."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    styles = (("correct", "error", "tab:blue", "trained and tested on random positions (the course's data)"),
              ("parity prefix", "error", "tab:orange", "trained and tested on prefix data"),
              ("parity prefix", "error_random", "tab:red", "trained on prefix data, tested on random positions"))
    for pitfall, column, colour, label in styles:
        for k, seed in enumerate(sorted({r["seed"] for r in rows if r["pitfall"] == pitfall})):
            mine = sorted((r for r in rows if r["pitfall"] == pitfall and r["seed"] == seed), key=lambda r: r["iteration"])
            ax.plot([r["iteration"] for r in mine], [r[column] for r in mine], color=colour, marker="o", ms=3,
                    lw=1.2, ls="-" if k == 0 else "--", label=label if k == 0 else None)
    ax.axhline(0.5, color="crimson", ls=":", lw=1, label="chance")
    ax.set_xlabel("iteration")
    ax.set_ylabel("held-out sequence error")
    ax.set_ylim(-0.02, 0.62)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8, loc="lower left")
    ax.set_title(title + " (one line style per seed)", fontsize=10)
    fig.tight_layout()
    return fig


def _describe(meta):
    s = meta["settings"]
    options = ", ".join(f"{k} {v}" for k, v in s["task_options"].items())
    return (f"{s['task']} ({options}), {s['cell']} H={s['hidden']}, batch {s['batch_size']}, lr {s['lr']:g}, "
            f"τ {s['tau']:g}, M {s['max_ponder']}, {s['iterations']} it., {meta['seeds']} seeds")


def plot(results=OUT, figures=None):
    """Draw figures/pitfalls_<experiment>.png for every experiment found in ``results``; returns the paths."""
    import matplotlib.pyplot as plt
    paths = []
    for name in EXPERIMENTS:
        try:
            rows, meta = pitfall_runs.read_results(name, results)
        except ValueError:
            print(f"{name}: no results in {results}, skipped")
            continue
        draw = draw_prefix if name == "prefix" else draw_effects
        fig = draw(rows, _describe(meta))
        paths.append(save_figure(fig, f"pitfalls_{name}", directory=figures))
        plt.close(fig)
    return paths


def main(argv=None):
    matplotlib.use("Agg")
    return runner.main(argv, script="scripts/pitfalls.py", description=__doc__.splitlines()[0],
                           experiments=EXPERIMENTS, entries_of=lambda experiment: pf.PITFALLS,
                           entry_option="--pitfalls", run=run, plot=plot, out=OUT,
                           figures_help="draw figures/pitfalls_*.png")


if __name__ == "__main__":
    sys.exit(main())
