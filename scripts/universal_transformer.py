"""The Universal Transformer's longer runs (notebook 13): ACT per position against fixed depths, and the cap.

    python scripts/universal_transformer.py run compute    # ACT at three tau beside fixed depths 1-4
    python scripts/universal_transformer.py run cap        # a tight cap M = 3: the remainder against two cap pitfalls
    python scripts/universal_transformer.py plot           # figures/universal_transformer_*.png

``run`` trains every entry of the experiment for every seed with
``act_experiments.experiments.universal_transformer.train_ut`` on the pointer-chain task and appends its evaluations
to ``results/universal_transformer/<experiment>.csv`` (one row per evaluation, with error and
ponder per chain depth); ``<experiment>.json`` keeps the settings and the command. A run that
stopped continues where it left off: (entry, seed) pairs already in the CSV are skipped, as long
as the settings are the same (entries added are trained; other settings are refused; ``--force``
starts over). ``--seeds`` and ``--iterations`` change the settings, so use them with ``--out`` for a
trial run; ``--entries`` trains only the entries named. Each (entry, seed) reaches the CSV in one
atomic step when it finishes (act_experiments.experiments.runner).
"""

import math
import sys
import time

import matplotlib

from act_beyond import pitfalls
from act_beyond import universal_transformer as ut
from act_experiments import course
from act_experiments.experiments import runner
from act_experiments.experiments import universal_transformer as ut_runs
from act_experiments.figures import save_figure

OUT = ut_runs.COMMITTED
# the names of notebook 11's gallery (act_beyond.pitfalls.PITFALLS)
WEIGHTS = {"remainder": ut.remainder_weights, "cap drops R": pitfalls.cap_without_remainder_weights,
           "cap zero R": pitfalls.cap_zero_remainder_weights}
COLUMNS = (("entry", "kind", "tau", "depth", "max_steps", "weights", "seed", "iteration") + ut_runs.FIELDS
           + tuple(f"error_d{k}" for k in ut_runs.DEPTHS) + tuple(f"ponder_d{k}" for k in ut_runs.DEPTHS))

EXPERIMENTS = {
    # the live run of notebook 13 (600 iterations) taken to 1500, three seeds; every entry of one seed
    # starts from the same weights and sees the same batches
    "compute": {
        "seeds": 3,
        "settings": dict(iterations=1500, batch_size=64, lr=3e-3, eval_every=250, eval_size=1000),
        "entries": {
            "fixed D=1": dict(depth=1), "fixed D=2": dict(depth=2), "fixed D=3": dict(depth=3),
            "fixed D=4": dict(depth=4),
            "ACT tau=0.001": dict(tau=1e-3), "ACT tau=0.01": dict(tau=1e-2), "ACT tau=0.1": dict(tau=1e-1),
        },
    },
    # a tight cap, M = 3 (tensor2tensor's UT caps at twice its number of layers): the paper's remainder
    # against the two cap pitfalls of notebook 11, h^M in place of R and R = 0
    "cap": {
        "seeds": 3,
        "settings": dict(iterations=1000, batch_size=64, lr=3e-3, eval_every=100, eval_size=1000, tau=1e-2,
                         model={"max_steps": 3}),
        "entries": {name: dict(weights=name) for name in WEIGHTS},
    },
}


def entry_kwargs(settings, entry):
    """train_ut's keyword arguments for one entry: the experiment's settings, the entry's own, and
    the weights piece by name."""
    kwargs = {**settings, **entry}
    kwargs["weights"] = WEIGHTS[kwargs.get("weights", "remainder")]
    return kwargs


def run(name, seeds=None, iterations=None, entries=None, out=OUT, force=False, log=print):
    """Train experiment ``name`` (a key of EXPERIMENTS) into ``out``; returns the CSV's path.

    Resumes a run that stopped and refuses one with other settings (act_experiments.experiments.runner).
    """
    spec = EXPERIMENTS[name]
    settings = dict(spec["settings"])
    if iterations is not None:
        settings["iterations"] = iterations
    chosen = entries or list(spec["entries"])
    meta = {"experiment": name, "entries": {e: spec["entries"][e] for e in chosen}, "seeds": seeds or spec["seeds"],
            "settings": settings, "task": ut.TASK_DEFAULTS,
            "model": {**ut.MODEL_DEFAULTS, **settings.get("model", {})}}

    def train(entry, seed):
        t0 = time.time()
        result = ut_runs.train_ut(seed=seed, **entry_kwargs(settings, spec["entries"][entry]))
        c = result["config"]
        head = dict(entry=entry, kind="fixed" if c["depth"] else "act", tau=c["tau"], depth=c["depth"],
                    max_steps=c["max_steps"], weights=spec["entries"][entry].get("weights", "remainder"), seed=seed)
        last = result["evals"][-1]
        return ([{**head, **ut_runs.flat_eval(e)} for e in result["evals"]],
                f"{entry:16s} seed {seed}: error {last['error']:.4f}, sequence error {last['sequence_error']:.3f}, "
                f"ponder {last['ponder']:.2f} ({time.time() - t0:.0f} s)")

    return runner.run_entries(name, meta, train, COLUMNS, out, entries_key="entries",
                                  script="scripts/universal_transformer.py", force=force, log=log)



# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

def _deep_error(r):
    """Error on the positions of depth 4 and 5 (the ones that need three or more steps)."""
    return 0.5 * (r["error_d4"] + r["error_d5"])


def draw_compute(rows, meta):
    """Error against layer applications per position: fixed depths as a line, ACT per tau as points,
    one small marker per seed and a large one for the mean; left all positions, right depth 4-5."""
    import matplotlib.pyplot as plt
    ends = ut_runs.final_rows(rows)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharex=True)
    for ax, value, label in ((axes[0], lambda r: r["sequence_error"], "held-out sequence error"),
                             (axes[1], _deep_error, "error on positions of depth 4 and 5")):
        fixed = sorted({r["depth"] for r in ends if r["kind"] == "fixed"})
        means = []
        for D in fixed:
            mine = [value(r) for r in ends if r["kind"] == "fixed" and r["depth"] == D]
            ax.plot([D] * len(mine), mine, "o", ms=3, color="0.5")
            means.append(sum(mine) / len(mine))
        ax.plot(fixed, means, "-s", color="0.25", label="fixed depth D (D layer applications)")
        taus = sorted({r["tau"] for r in ends if r["kind"] == "act"})
        colours = plt.cm.viridis([0.15 + 0.7 * i / max(1, len(taus) - 1) for i in range(len(taus))])
        for tau, colour in zip(taus, colours):
            mine = [r for r in ends if r["kind"] == "act" and r["tau"] == tau]
            xs, ys = [r["ponder"] for r in mine], [value(r) for r in mine]
            ax.plot(xs, ys, "o", ms=3, color=colour)
            ax.plot([sum(xs) / len(xs)], [sum(ys) / len(ys)], "D", ms=8, color=colour, label=f"ACT, τ = {tau:g}")
        ax.set_yscale("symlog", linthresh=1e-2)
        ax.set_ylim(-0.001, 1.0)
        ax.set_xlabel("layer applications per position (mean N)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(frameon=False, fontsize=8)
    s = meta["settings"]
    fig.suptitle(f"Pointer chains (L = {meta['task']['length']}, depth 0-{meta['task']['max_depth']}): "
                 f"{s['iterations']} iterations, {meta['seeds']} seeds (small dots), their mean (large)", fontsize=10)
    fig.tight_layout()
    return fig


def draw_depth(rows, meta):
    """Left: ACT's mean N per chain depth, per tau (mean over seeds, seed range shaded), beside the fewest
    applications that resolve each depth by pointer doubling; right: error per chain depth of every
    entry (mean over seeds)."""
    import matplotlib.pyplot as plt
    s = ut_runs.summarise(rows)
    depths = list(ut_runs.DEPTHS)
    fig, (ax_n, ax_e) = plt.subplots(1, 2, figsize=(11, 3.8))
    act = [e for e in s if s[e]["kind"] == "act"]
    colours = plt.cm.viridis([0.15 + 0.7 * i / max(1, len(act) - 1) for i in range(len(act))])
    for e, colour in zip(act, colours):
        m = [s[e][f"ponder_d{k}"] for k in depths]
        ax_n.plot(depths, [v[0] for v in m], "-o", color=colour, label=e)
        ax_n.fill_between(depths, [v[1] for v in m], [v[2] for v in m], color=colour, alpha=0.2)
    ax_n.step(depths, [max(1, math.ceil(math.log2(k + 1))) for k in depths], where="mid", color="black", ls="--",
              lw=1, label="pointer doubling: fewest applications")
    ax_n.set_xlabel("chain depth of the position (references to follow)")
    ax_n.set_ylabel("mean N (layer applications)")
    ax_n.legend(frameon=False, fontsize=8)
    for e in s:
        style = dict(color="0.35", ls="--", marker="s") if s[e]["kind"] == "fixed" else dict(marker="o")
        if s[e]["kind"] == "act":
            style["color"] = colours[act.index(e)]
        ax_e.plot(depths, [s[e][f"error_d{k}"][0] for k in depths], ms=4, label=e, **style)
        if s[e]["kind"] == "fixed":
            ax_e.annotate(f"D={s[e]['depth']}", (depths[-1], s[e][f"error_d{depths[-1]}"][0]), fontsize=7,
                          xytext=(4, 0), textcoords="offset points", va="center")
    ax_e.set_yscale("symlog", linthresh=1e-2)
    ax_e.set_ylim(-0.001, 1.0)
    ax_e.set_xlabel("chain depth of the position")
    ax_e.set_ylabel("error (mean over seeds)")
    for ax in (ax_n, ax_e):
        ax.set_xticks(depths)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Per chain depth, after {meta['settings']['iterations']} iterations ({meta['seeds']} seeds)",
                 fontsize=10)
    fig.tight_layout()
    return fig


def draw_cap(rows, meta):
    """The cap experiment: learning curves of the error on depth 4-5, the share of positions stopped
    by the cap, and the mean sum of the halting weights; one line per seed."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    entries = list(dict.fromkeys(r["entry"] for r in rows))
    colours = dict(zip(entries, ("tab:blue", "tab:red", "tab:orange", "tab:green")))
    for ax, value, label in ((axes[0], _deep_error, "error on depth 4 and 5"),
                             (axes[1], lambda r: r["capped"], "share of positions stopped by the cap"),
                             (axes[2], lambda r: r["weight_sum"], "mean sum of the halting weights p")):
        for e in entries:
            for k, seed in enumerate(sorted({r["seed"] for r in rows if r["entry"] == e})):
                mine = sorted((r for r in rows if r["entry"] == e and r["seed"] == seed), key=lambda r: r["iteration"])
                ax.plot([r["iteration"] for r in mine], [value(r) for r in mine], color=colours[e], lw=1.2,
                        ls=("-", "--", ":")[k % 3], label=e if k == 0 else None)
        ax.set_xlabel("iteration")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(frameon=False, fontsize=8)
    fig.suptitle(f"A cap of M = {meta['model']['max_steps']} steps, τ = {meta['settings']['tau']:g}: "
                 f"the remainder kept or dropped ({meta['seeds']} seeds, one line style each)", fontsize=10)
    fig.tight_layout()
    return fig


FIGURES = {"compute": {"compute": draw_compute, "depth": draw_depth}, "cap": {"cap": draw_cap}}


def plot(results=OUT, figures=None):
    """Draw figures/universal_transformer_<name>.png for every experiment in ``results``; returns the paths."""
    import matplotlib.pyplot as plt
    paths = []
    for experiment, drawings in FIGURES.items():
        try:
            rows, meta = ut_runs.read_results(experiment, results)
        except ValueError:
            print(f"{experiment}: no results in {results}, skipped")
            continue
        for name, draw in drawings.items():
            fig = draw(rows, meta)
            paths.append(save_figure(fig, f"universal_transformer_{name}", directory=figures))
            plt.close(fig)
    return paths


def main(argv=None):
    matplotlib.use("Agg")
    course.torch_threads()            # one thread unless OMP_NUM_THREADS says otherwise: the tensors are tiny
    return runner.main(argv, script="scripts/universal_transformer.py", description=__doc__.splitlines()[0],
                           experiments=EXPERIMENTS, entries_of=lambda experiment: EXPERIMENTS[experiment]["entries"],
                           entry_option="--entries", run=run, plot=plot, out=OUT,
                           figures_help="draw figures/universal_transformer_*.png")


if __name__ == "__main__":
    sys.exit(main())
