"""The Universal Transformer's runs (notebook 13, scripts/universal_transformer.py): training, and the committed comparison.

    result = train_ut(depth=None, tau=1e-2, iterations=600, seed=0)   # ACT per position
    rows, meta = read_experiment("compute")                         # results/universal_transformer/
    run({"experiment": "cap", "seeds": 1, "iterations": 50}, "/tmp/ut")   # train what /tmp/ut lacks
    plot(read("/tmp/ut"), figures="/tmp/figures")                   # figures/universal_transformer_*.png
    main(["run", "compute"])                                        # scripts/universal_transformer.py

The model, its halting loop and its evaluation are ``act_beyond.universal_transformer``'s; this
module trains it (``train_ut``), runs the committed experiments ``EXPERIMENTS`` ("compute": ACT at
three τ beside fixed depths 1-4; "cap": a tight cap M = 3, the remainder against two cap
pitfalls) through act_experiments.experiments.runner, reads them, draws their figures and is the
command line of scripts/universal_transformer.py.
"""

import math
import sys
import time
from pathlib import Path

import matplotlib
import numpy as np
import torch

from act_beyond import pitfalls, universal_transformer as ut
from act_experiments.experiments import runner
from act_experiments.figures import save_figure
from act_experiments.tables import RESULTS
from act_experiments.threads import torch_threads
from act_experiments.training.config import DATA_STREAM, EVAL_STREAM, HELD_OUT_SCHEDULE_STREAM, SCHEDULE_STREAM
from act_numpy.checks import check_float, check_int


def train_ut(*, depth=None, tau=1e-2, iterations=600, batch_size=64, lr=3e-3, epsilon=0.01, eval_every=100,
             eval_size=1000, seed=0, weights=ut.remainder_weights, dtype=torch.float32, task=None, model=None,
             depth_shares=None):
    """Train the encoder on ``ut.make_chains`` with Adam and return its log and parameters.

    depth=None: ACT per position with time penalty tau (eq. 12); depth=D: a fixed-depth UT
    (tau then multiplies the constant D and changes nothing). task: options of ut.make_chains
    (ut.TASK_DEFAULTS); model: options of ut.init_params (ut.MODEL_DEFAULTS; max_ponder is ACT's cap M
    and the number of step embeddings). weights: the halting distribution (the paper's by default).
    depth_shares (with depth=None): the random-depth control, no halting unit; every position's depth
    is drawn from this distribution of N = 1, 2, ... (``ut.draw_depths``), afresh with every batch
    from default_rng([seed, SCHEDULE_STREAM]) and once for the held-out set from
    default_rng([seed, HELD_OUT_SCHEDULE_STREAM]).

    Seeds: the parameters come from torch.Generator().manual_seed(seed), the training batches
    from np.random.default_rng([seed, DATA_STREAM]) and the held-out set (eval_size rows) from
    np.random.default_rng([seed, EVAL_STREAM]), the streams of act_experiments.training.config: one seed gives an ACT run and fixed-depth runs the same
    initial layer and the same data. Returns {"config", "evals", "params", "train_time_s"}:
    evals is a list of ``ut.evaluate`` records with "iteration", at 0, every eval_every and at the
    end; params the trained tensors (detached).
    """
    task = {**ut.TASK_DEFAULTS, **(task or {})}
    model = {**ut.MODEL_DEFAULTS, **(model or {})}
    if set(task) != set(ut.TASK_DEFAULTS):
        raise ValueError(f"task takes only {sorted(ut.TASK_DEFAULTS)}, got {sorted(task)}")
    if set(model) != set(ut.MODEL_DEFAULTS):
        raise ValueError(f"model takes only {sorted(ut.MODEL_DEFAULTS)}, got {sorted(model)}")
    for name, value, low in (("iterations", iterations, 0), ("batch_size", batch_size, 1),
                             ("eval_every", eval_every, 1), ("eval_size", eval_size, 1), ("seed", seed, 0)):
        check_int(name, value, low)
    tau = check_float("tau", tau, 0.0)
    lr = check_float("lr", lr, 0.0, low_open=True)
    generator = torch.Generator().manual_seed(seed)
    P = ut.init_params(vocab=ut.vocab_size(task["length"], task["values"]), length=task["length"], out=task["values"],
                    generator=generator, dtype=dtype, **model)
    heads = model["heads"]
    opt = torch.optim.Adam(P.values(), lr=lr)
    data = np.random.default_rng([seed, DATA_STREAM])
    held_out = ut.make_chains(np.random.default_rng([seed, EVAL_STREAM]), eval_size, **task)
    run = dict(heads=heads, epsilon=epsilon, weights=weights)
    evals = []
    if depth_shares is not None:
        draws = np.random.default_rng([seed, SCHEDULE_STREAM])
        held_out_depth = ut.draw_depths(np.random.default_rng([seed, HELD_OUT_SCHEDULE_STREAM]), depth_shares,
                                        held_out[0].shape)

    def log(iteration):
        given = held_out_depth if depth_shares is not None else depth
        evals.append({"iteration": iteration, **ut.evaluate(P, *held_out, model_depth=given, **run)})

    log(0)
    start = time.perf_counter()
    for it in range(1, iterations + 1):
        tokens, targets, _ = ut.make_chains(data, batch_size, **task)
        given = ut.draw_depths(draws, depth_shares, tokens.shape) if depth_shares is not None else depth
        logits, r = ut.ut_forward(P, torch.as_tensor(tokens), depth=given, **run)
        loss, _, _ = ut.loss_terms(logits, r, torch.as_tensor(targets), tau)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if it % eval_every == 0 or it == iterations:
            log(it)
    config = dict(depth=depth, depth_shares=depth_shares, tau=tau, iterations=iterations, batch_size=batch_size,
                  lr=lr, epsilon=epsilon,
                  seed=seed, eval_size=eval_size, weights=getattr(weights, "__name__", str(weights)),
                  dtype=str(dtype).replace("torch.", ""), **task, **model)
    return {"config": config, "evals": evals, "params": {k: v.detach() for k, v in P.items()},
            "train_time_s": time.perf_counter() - start}


COMMITTED = RESULTS / "universal_transformer"
SCRIPT = "scripts/universal_transformer.py"
DESCRIPTION = "The Universal Transformer's longer runs (notebook 13): ACT per position against fixed depths, and the cap."


DEPTHS = range(ut.TASK_DEFAULTS["max_depth"] + 1)


FIELDS = ("error", "sequence_error", "mean_N", "rho", "loop_steps", "capped", "weight_sum")


TEXT = ("entry", "kind", "weights")


# the share of held-out positions with N = n, the distribution the random-depth control draws from
SHARE_COLUMNS = tuple(f"share_N{n}" for n in range(1, ut.MODEL_DEFAULTS["max_ponder"] + 1))


def flat_eval(e):
    """An ``ut.evaluate`` record as one flat row: its fields, then error_d<k> and mean_N_d<k> (mean N)
    per depth k, and share_N<n> for n = 1..len(SHARE_COLUMNS)."""
    row = {k: e[k] for k in ("iteration",) + FIELDS}
    for r in e["by_depth"]:
        row[f"error_d{r['depth']}"] = r["error"]
        row[f"mean_N_d{r['depth']}"] = r["mean_N"]
    shares = list(e["N_shares"]) + [0.0] * len(SHARE_COLUMNS)
    row.update(zip(SHARE_COLUMNS, shares))
    return row


def read_experiment(name, folder=None):
    """(rows, meta) of the committed experiment ``name`` ("compute" or "cap"): one row per evaluation
    of every run (entry, kind, tau, depth, max_ponder, weights, seed, iteration, the FIELDS, error_d<k>,
    mean_N_d<k>), numbers as floats or ints (None where empty), and the settings it ran with."""
    return runner.read(name, COMMITTED if folder is None else folder, TEXT, SCRIPT)


def read(out=COMMITTED):
    """{name: (rows, meta)} (read_experiment) of every experiment of EXPERIMENTS that ``out`` holds."""
    return {name: read_experiment(name, out) for name in EXPERIMENTS if (Path(out) / f"{name}.csv").is_file()}


def final_rows(rows):
    """The last evaluation of every (entry, seed), in the order the entries first appear."""
    return runner.final_rows(rows, key="entry")


def summarise(rows, columns=None):
    """{entry: {column: (mean, lowest, highest) over the seeds' last evaluations, "seeds": n, and the
    entry's kind, tau, depth, max_ponder and weights}}, entries in the order of the rows."""
    ends = final_rows(rows)
    columns = columns or [c for c in rows[0] if c not in TEXT + ("tau", "depth", "max_ponder", "seed", "iteration")]
    out = {}
    for entry, summary in runner.summarise(rows, columns).items():
        mine = [r for r in ends if r["entry"] == entry]
        s = {k: mine[0][k] for k in ("kind", "tau", "depth", "max_ponder", "weights")}
        out[entry] = {**s, **summary}
    return out


# the names of notebook 11's gallery (act_beyond.pitfalls.PITFALLS)
WEIGHTS = {"remainder": ut.remainder_weights, "cap drops R": pitfalls.cap_without_remainder_weights,
           "cap zero R": pitfalls.cap_zero_remainder_weights}
COLUMNS = (("entry", "kind", "tau", "depth", "max_ponder", "weights", "seed", "iteration") + FIELDS
           + tuple(f"error_d{k}" for k in DEPTHS) + tuple(f"mean_N_d{k}" for k in DEPTHS))

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
    # the random-depth control (docs/universal_transformer.md states its claim): compute's settings,
    # eight seeds; per seed, depths drawn per position from that seed's ACT network's held-out N
    "random": {
        "seeds": 8,
        "settings": dict(iterations=1500, batch_size=64, lr=3e-3, eval_every=250, eval_size=1000),
        "entries": {"ACT tau=0.01": dict(tau=1e-2), "random depths": dict(random_of="ACT tau=0.01")},
        "columns": COLUMNS + SHARE_COLUMNS,
    },
    # a tight cap, M = 3 (tensor2tensor's UT caps at twice its number of layers): the paper's remainder
    # against the two cap pitfalls of notebook 11, h^M in place of R and R = 0
    "cap": {
        "seeds": 3,
        "settings": dict(iterations=1000, batch_size=64, lr=3e-3, eval_every=100, eval_size=1000, tau=1e-2,
                         model={"max_ponder": 3}),
        "entries": {name: dict(weights=name) for name in WEIGHTS},
    },
}


def entry_kwargs(settings, entry):
    """train_ut's keyword arguments for one entry: the experiment's settings, the entry's own, and
    the weights piece by name (an entry's random_of is the run's business: ``drawn_from``)."""
    kwargs = {**settings, **{k: v for k, v in entry.items() if k != "random_of"}}
    kwargs["weights"] = WEIGHTS[kwargs.get("weights", "remainder")]
    return kwargs


def drawn_from(out, name, entry, seed):
    """The share of held-out positions with N = 1, 2, ... of ``entry``'s run of ``seed`` at its last
    evaluation, from out/<name>.csv: the distribution the random-depth control draws from."""
    rows = [r for r in runner.read(name, out, TEXT, SCRIPT)[0] if r["entry"] == entry and r["seed"] == seed]
    if not rows:
        raise ValueError(f"{out}/{name}.csv holds no run of {entry!r} with seed {seed}: train it first")
    last = max(rows, key=lambda r: r["iteration"])
    return [last[c] or 0.0 for c in SHARE_COLUMNS]


def run(settings, out, force=False, log=print):
    """Train the experiment of ``settings`` into ``out``: {"experiment": a key of EXPERIMENTS, and
    optionally "seeds", "iterations", "entries"}, run_experiment's arguments; returns the CSV's path."""
    chosen = dict(settings)
    return run_experiment(chosen.pop("experiment"), out=out, force=force, log=log, **chosen)


def run_experiment(name, seeds=None, iterations=None, entries=None, out=COMMITTED, force=False, log=print):
    """Train experiment ``name`` (a key of EXPERIMENTS) into ``out``; returns the CSV's path.

    Resumes a run that stopped and refuses one with other settings (act_experiments.experiments.runner).
    """
    spec = EXPERIMENTS[name]
    settings = runner.settings_of(spec, iterations)
    chosen = entries or list(spec["entries"])
    meta = {"experiment": name, "entries": {e: spec["entries"][e] for e in chosen}, "seeds": seeds or spec["seeds"],
            "settings": settings, "task": ut.TASK_DEFAULTS,
            "model": {**ut.MODEL_DEFAULTS, **settings.get("model", {})}}

    def train(entry, seed):
        t0 = time.time()
        options = spec["entries"][entry]
        shares = drawn_from(out, name, options["random_of"], seed) if "random_of" in options else None
        result = train_ut(seed=seed, depth_shares=shares, **entry_kwargs(settings, options))
        c = result["config"]
        kind = "random" if shares else "fixed" if c["depth"] else "act"
        head = dict(entry=entry, kind=kind, tau=None if shares else c["tau"], depth=c["depth"],
                    max_ponder=c["max_ponder"], weights=options.get("weights", "remainder"), seed=seed)
        last = result["evals"][-1]
        return ([{**head, **flat_eval(e)} for e in result["evals"]],
                f"{entry:16s} seed {seed}: error {last['error']:.4f}, sequence error {last['sequence_error']:.3f}, "
                f"mean N {last['mean_N']:.2f} ({time.time() - t0:.0f} s)")

    return runner.run_entries(name, meta, train, list(spec.get("columns", COLUMNS)), out, entries_key="entries",
                              script=SCRIPT, force=force, log=log)



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
    ends = final_rows(rows)
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
            xs, ys = [r["mean_N"] for r in mine], [value(r) for r in mine]
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
    s = summarise(rows)
    depths = list(DEPTHS)
    fig, (ax_n, ax_e) = plt.subplots(1, 2, figsize=(11, 3.8))
    act = [e for e in s if s[e]["kind"] == "act"]
    colours = plt.cm.viridis([0.15 + 0.7 * i / max(1, len(act) - 1) for i in range(len(act))])
    for e, colour in zip(act, colours):
        m = [s[e][f"mean_N_d{k}"] for k in depths]
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
    fig.suptitle(f"A cap of M = {meta['model']['max_ponder']} steps, τ = {meta['settings']['tau']:g}: "
                 f"the remainder kept or dropped ({meta['seeds']} seeds, one line style each)", fontsize=10)
    fig.tight_layout()
    return fig


RANDOM_THRESHOLD = 0.01      # the smallest difference in sequence error that counts (docs/universal_transformer.md)


def random_claim(rows):
    """The random-depth control's claim: ACT τ = 0.01 against the random depths drawn from its own
    N, paired by seed (``measured.paired_test``, one-sided, RANDOM_THRESHOLD). Returns its dict
    with "seeds", "act", "other" (each seed's last sequence error), "deep" ({entry: each seed's
    error on depths 4 and 5}) and "N" ({entry: each seed's mean N})."""
    from act_experiments.experiments import measured
    ends = {(r["entry"], r["seed"]): r for r in final_rows(rows)}
    act, other = (sorted(s for e, s in ends if e == name) for name in ("ACT tau=0.01", "random depths"))
    seeds = sorted(set(act) & set(other))
    if len(seeds) < 2:
        raise ValueError(f"ACT and the random depths share {len(seeds)} seed(s); the claim needs 2")
    pick = {e: [ends[e, s] for s in seeds] for e in ("ACT tau=0.01", "random depths")}
    result = measured.paired_test([r["sequence_error"] for r in pick["ACT tau=0.01"]],
                                  [r["sequence_error"] for r in pick["random depths"]], threshold=RANDOM_THRESHOLD)
    return {"seeds": seeds, "act": [r["sequence_error"] for r in pick["ACT tau=0.01"]],
            "other": [r["sequence_error"] for r in pick["random depths"]], **result,
            "deep": {e: [_deep_error(r) for r in rs] for e, rs in pick.items()},
            "N": {e: [r["mean_N"] for r in rs] for e, rs in pick.items()}}


def draw_random(rows, meta):
    """The random-depth control: each seed's sequence error, ACT beside its random depths (a line
    per seed), and the error per chain depth of both (mean over seeds)."""
    import matplotlib.pyplot as plt
    claim = random_claim(rows)
    fig, (ax_s, ax_d) = plt.subplots(1, 2, figsize=(11, 3.8))
    for seed, a, o in zip(claim["seeds"], claim["act"], claim["other"]):
        ax_s.plot([0, 1], [a, o], "-o", color="0.6", ms=4)
        ax_s.annotate(str(seed), (1, o), xytext=(4, 0), textcoords="offset points", fontsize=7, va="center")
    ax_s.set_xticks([0, 1], ["ACT τ = 0.01", "random depths\n(its own N, drawn)"])
    ax_s.set_xlim(-0.4, 1.4)
    ax_s.set_ylabel("held-out sequence error, one line per seed")
    s = summarise(rows)
    for entry, colour in (("ACT tau=0.01", "tab:blue"), ("random depths", "tab:green")):
        ax_d.plot(list(DEPTHS), [s[entry][f"error_d{k}"][0] for k in DEPTHS], "-o", color=colour, ms=4,
                  label=f"{entry}: mean N {s[entry]['mean_N'][0]:.2f}")
    ax_d.set_xlabel("chain depth of the position")
    ax_d.set_ylabel("error (mean over seeds)")
    ax_d.legend(frameon=False, fontsize=8)
    for ax in (ax_s, ax_d):
        ax.grid(alpha=0.3)
    fig.suptitle(f"Pointer chains: ACT against random depths drawn from its own N ({len(claim['seeds'])} seeds, "
                 f"{meta['settings']['iterations']} iterations)", fontsize=10)
    fig.tight_layout()
    return fig


FIGURES = {"compute": {"compute": draw_compute, "depth": draw_depth}, "cap": {"cap": draw_cap},
           "random": {"random": draw_random}}


def plot(data, figures=None):
    """Draw figures/universal_transformer_<name>.png (or in ``figures``) for every experiment of
    ``read``'s data; returns the paths."""
    import matplotlib.pyplot as plt
    paths = []
    for experiment, drawings in FIGURES.items():
        if experiment not in data:
            continue
        rows, meta = data[experiment]
        for name, draw in drawings.items():
            fig = draw(rows, meta)
            paths.append(save_figure(fig, f"universal_transformer_{name}", directory=figures))
            plt.close(fig)
    return paths


def main(argv=None):
    matplotlib.use("Agg")
    torch_threads()                   # one thread unless OMP_NUM_THREADS says otherwise: the tensors are tiny
    return runner.main(argv, script=SCRIPT, description=DESCRIPTION, experiments=EXPERIMENTS,
                       entries_of=lambda experiment: EXPERIMENTS[experiment]["entries"], entry_option="--entries",
                       run=run_experiment, plot=lambda results, figures: plot(read(results), figures),
                       out=COMMITTED, figures_help="draw figures/universal_transformer_*.png")


if __name__ == "__main__":
    sys.exit(main())
