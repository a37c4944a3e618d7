"""The pitfall gallery's training runs (notebook 11, scripts/pitfalls.py): one entry trained briefly, and the committed runs.

    result = train_variant("plain average", task="parity", task_options={"bits": 6}, iterations=1000)
    rows, meta = read_experiment("gallery");  summarise(rows)    # results/pitfalls/gallery.csv
    run({"experiment": "gallery", "seeds": 1, "iterations": 50}, "/tmp/pitfalls")
    plot(read("/tmp/pitfalls"), figures="/tmp/figures")          # figures/pitfalls_*.png
    main(["run", "gallery"])                                # scripts/pitfalls.py

The pieces and the gallery itself (``PITFALLS``) are ``act_beyond.pitfalls``'; here one entry is
trained with Adam on a task of ``act_experiments.data.tasks`` and measured as it goes; the
committed experiments (``EXPERIMENTS``) run, resume and are read back through
act_experiments.experiments.runner, and their figures are drawn here.
"""

import sys
import time
from pathlib import Path

import matplotlib
import numpy as np
import torch

from act_beyond import pitfalls as pf
from act_experiments.data import tasks
from act_experiments.experiments import runner
from act_experiments.figures import save_figure
from act_experiments.tables import RESULTS
from act_experiments.training.config import DATA_STREAM, EVAL_STREAM, model_sizes, seed_parameters
from act_numpy.checks import check_float, check_int
from act_torch.losses import loss_inputs


def _batch_fn(pitfall, task, options):
    """make(rng, size) -> (x, y, mask): the task's batches, or the prefix convention's for its entry."""
    if pitfall.data == "prefix":
        if task != "parity":
            raise ValueError(f"the prefix convention is a parity convention; task is {task!r}")
        return lambda rng, size: pf.parity_prefix_batch(rng, size, options.get("bits", 64))
    return lambda rng, size: tasks.make_batch(task, rng, size, **options)


class _VariantRun:
    """One gallery entry being trained: its parameters, Adam, data, held-out sets and records."""

    def __init__(self, pitfall, task, options, *, cell, hidden, lr, tau, epsilon, max_ponder, halting_bias,
                 seed, eval_size, dtype):
        self.pitfall, self.tau = pitfall, tau
        D, O, self.kind, self.heads = model_sizes({"task": task, "task_options": options})
        self.make = _batch_fn(pitfall, task, options)
        np_params = seed_parameters(seed, cell, D, hidden, O, halting_bias)
        self.params = {k: torch.tensor(v, dtype=dtype, requires_grad=True) for k, v in np_params.items()}
        self.opt = torch.optim.Adam(self.params.values(), lr=lr)
        self.data_rng = np.random.default_rng([seed, DATA_STREAM])
        self.held_out = self.make(np.random.default_rng([seed, EVAL_STREAM]), eval_size)
        self.random_held_out = (
            tasks.make_batch("parity", np.random.default_rng([seed, EVAL_STREAM]), eval_size, **options)
            if pitfall.data == "prefix" else None)
        self.forward = dict(cell=cell, epsilon=epsilon, max_ponder=max_ponder, **pitfall.forward)
        self.as_t = dict(dtype=dtype, device="cpu")
        self.evals, self.probes = [], {"data": [], "ponder": []}

    def losses(self, batch):
        """Data loss, ponder loss (tau P, the entry's ponder piece), wrong, and what evaluate reads."""
        x, y, mask = batch
        target, live, in_sequence = loss_inputs(y, mask, self.kind, self.heads, **self.as_t)
        record = {}
        y_hat, N, R = pf.act_variant_forward(torch.as_tensor(x, **self.as_t), self.params, record=record,
                                             **self.forward)
        h_last = pf.last_halting(record, N) if getattr(self.pitfall.ponder, "needs_h_last", False) else None
        data_loss, ponder_loss, wrong = pf.objective(y_hat, N, R, target, live, in_sequence, kind=self.kind,
                                                     heads=self.heads, tau=self.tau, ponder=self.pitfall.ponder,
                                                     h_last=h_last)
        return data_loss, ponder_loss, wrong, (y_hat, N, R, target, live, in_sequence, record)

    @torch.no_grad()
    def evaluate(self, batch):
        """Held-out error, mean N, mean rho, largest N, capped share and weight sum on one batch."""
        _, _, wrong, (y_hat, N, R, target, live, in_sequence, record) = self.losses(batch)
        on = in_sequence > 0
        rec = {"error": float(wrong.any(dim=-1).to(torch.float64).mean()),
               "mean_N": float(N[on].to(torch.float64).mean()),
               "rho": float((N.to(R.dtype) + R)[on].to(torch.float64).mean()),
               "max_N": int(N[on].max()),
               "capped": float(torch.stack(record["capped"], dim=1)[on].to(torch.float64).mean()),
               "weight_sum": float(torch.stack([p.sum(dim=-1) for p in record["p"]], dim=1)[on]
                                   .to(torch.float64).mean())}
        if self.kind == "sigmoid":
            half = pf.wrong_at_logit_half(y_hat[..., 0], target, live)
            rec["error_at_half"] = float(half.any(dim=-1).to(torch.float64).mean())
        return rec

    def log(self, iteration):
        """Record an evaluation, with the mean halting-bias gradients of the probes since the last."""
        rec = {"iteration": iteration, **self.evaluate(self.held_out)}
        if self.random_held_out is not None:
            rec["error_random"] = self.evaluate(self.random_held_out)["error"]
        for part in ("data", "ponder"):
            rec[f"grad_{part}"] = float(np.mean(self.probes[part])) if self.probes[part] else None
            self.probes[part].clear()
        self.evals.append(rec)

    def step(self, batch_size, probe):
        """One Adam step; with ``probe`` the gradient reaching b_h is split into data and ponder parts."""
        b_h = self.params["b_h"]
        self.opt.zero_grad(set_to_none=True)
        data_loss, ponder_loss, _, _ = self.losses(self.make(self.data_rng, batch_size))
        if probe:
            (g_data,) = torch.autograd.grad(data_loss, [b_h], retain_graph=True, allow_unused=True)
        (data_loss + ponder_loss).backward()
        if probe:
            g_total = b_h.grad if b_h.grad is not None else torch.zeros_like(b_h)
            g_data = torch.zeros_like(g_total) if g_data is None else g_data
            self.probes["data"].append(float(g_data.abs().sum()))
            self.probes["ponder"].append(float((g_total - g_data).abs().sum()))
        for p in self.params.values():
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        self.opt.step()


def train_variant(pitfall="correct", *, task="parity", task_options=None, cell="rnn", hidden=64, batch_size=128,
                  lr=3e-3, tau=1e-3, epsilon=0.01, max_ponder=100, halting_bias=1.0, iterations=1000, seed=0,
                  eval_every=250, eval_size=1000, probe_every=10, dtype=torch.float32):
    """Train one gallery entry with Adam and return what happened, as plain Python numbers.

    pitfall: a name of PITFALLS (or a Pitfall). Initial weights from config.seed_parameters
    (default_rng([seed, PARAM_STREAM])), training batches from default_rng([seed, DATA_STREAM]) and
    the held-out set from default_rng([seed, EVAL_STREAM]), as act_experiments.training.loop draws
    them; so two entries with the same seed start from the same weights and see the same batches
    (the prefix entry sees its own data). Every ``probe_every`` iterations the gradient reaching the halting
    bias b_h is split into its data part and its ponder part (tau P).

    Returns a dict: "pitfall", "config", and "evals": a list of records at iteration 0, every
    ``eval_every`` and at the end, each with "iteration", "error" (held-out sequence error),
    "error_at_half" (the same scored with the logit threshold 0.5; sigmoid tasks), "mean_N" (mean
    number of updates N on the sequences' steps), "rho" (mean ponder cost N + R as the entry computes
    it), "max_N", "capped"
    (fraction of steps stopped by the cap), "weight_sum" (mean sum of p), "grad_data" and
    "grad_ponder" (mean |dL/db_h| and |d tau P / d b_h| over the probes since the last record;
    None at iteration 0)
    and, for the prefix entry, "error_random" (its error on the course's random-position data);
    and "params": the trained parameters as float64 NumPy arrays.
    """
    pitfall = pf.PITFALLS[pitfall] if isinstance(pitfall, str) and pitfall in pf.PITFALLS else pitfall
    if not isinstance(pitfall, pf.Pitfall):
        raise ValueError(f"pitfall must be one of {sorted(pf.PITFALLS)}, got {pitfall!r}")
    for name, value, low in (("hidden", hidden, 1), ("batch_size", batch_size, 1), ("iterations", iterations, 0),
                             ("eval_every", eval_every, 1), ("eval_size", eval_size, 1),
                             ("probe_every", probe_every, 1), ("seed", seed, 0)):
        check_int(name, value, low)
    for name, value in (("lr", lr), ("tau", tau)):
        check_float(name, value, 0.0)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
    options = dict(task_options or {})
    tasks.resolve_options(task, **options)              # refuses an unknown task or option
    run = _VariantRun(pitfall, task, options, cell=cell, hidden=hidden, lr=lr, tau=tau, epsilon=epsilon,
                      max_ponder=max_ponder, halting_bias=halting_bias, seed=seed, eval_size=eval_size, dtype=dtype)
    run.log(0)
    for it in range(1, iterations + 1):
        run.step(batch_size, probe=it % probe_every == 0)
        if it % eval_every == 0 or it == iterations:
            run.log(it)
    config = dict(task=task, task_options=options, cell=cell, hidden=hidden, batch_size=batch_size, lr=lr, tau=tau,
                  epsilon=epsilon, max_ponder=max_ponder, halting_bias=halting_bias, iterations=iterations,
                  seed=seed, eval_size=eval_size, dtype=str(dtype).replace("torch.", ""))
    final = {k: v.detach().numpy().astype(np.float64) for k, v in run.params.items()}
    return {"pitfall": pitfall.name, "config": config, "evals": run.evals, "params": final}


def fit_halting_to_step_losses(step_losses, prior, *, beta=0.01, kl=pf.kl_halting_to_prior, iterations=1000, lr=0.05):
    """A PonderNet-style halting distribution trained on its own: minimise sum_n p_n L_n + beta KL.

    step_losses (N,): the task loss if the network halts after step n (fixed here, the network is
    left out); prior (N,): p_G; kl: pf.kl_halting_to_prior (the paper's) or pf.kl_prior_to_halting (the
    reverse). p = pf.halting_from_lambdas(sigmoid(a)) with logits a (N,), all 0 at the start (every
    lambda 1/2), trained with Adam. Returns p (N,) float64 tensor after training (no gradient).
    """
    pf.check_piece("kl", kl)
    L = torch.as_tensor(step_losses, dtype=torch.float64)
    prior = torch.as_tensor(prior, dtype=torch.float64)
    if L.dim() != 1 or L.shape != prior.shape:
        raise ValueError(f"step_losses and prior must be two (N,) vectors, got {tuple(L.shape)} and {tuple(prior.shape)}")
    check_int("iterations", iterations, 0)
    a = torch.zeros_like(L, requires_grad=True)
    opt = torch.optim.Adam([a], lr=lr)
    for _ in range(iterations):
        opt.zero_grad()
        p = pf.halting_from_lambdas(torch.sigmoid(a))
        ((p * L).sum() + beta * kl(p, prior)).backward()
        opt.step()
    with torch.no_grad():
        return pf.halting_from_lambdas(torch.sigmoid(a))


# ---------------------------------------------------------------------------------------------
# The committed runs (scripts/pitfalls.py writes them to results/pitfalls/)
# ---------------------------------------------------------------------------------------------

COMMITTED = RESULTS / "pitfalls"
SCRIPT = "scripts/pitfalls.py"
DESCRIPTION = "The pitfall gallery's training runs (notebook 11): every bug of act_beyond.pitfalls, trained briefly."


def read_experiment(name, folder=None):
    """(rows, meta) of the committed experiment ``name`` ("gallery", "sequence", "prefix"): one row per
    evaluation (see train_variant) with "pitfall" and "seed", and the settings it ran with."""
    return runner.read(name, COMMITTED if folder is None else folder, ("pitfall",), SCRIPT)


def read(out=COMMITTED):
    """{name: (rows, meta)} (read_experiment) of every experiment of EXPERIMENTS that ``out`` holds."""
    return {name: read_experiment(name, out) for name in EXPERIMENTS if (Path(out) / f"{name}.csv").is_file()}


def final_evals(rows):
    """The last evaluation of every (pitfall, seed), in the order of the rows."""
    return runner.final_rows(rows, key="pitfall")


def _per_run_means(rows, pitfall, column):
    """The mean of ``column`` over each run's probes (the whole run), one value per seed."""
    mine = [r for r in rows if r["pitfall"] == pitfall]
    per_run = []
    for seed in sorted({r["seed"] for r in mine}):
        probes = [r[column] for r in mine if r["seed"] == seed and r.get(column) is not None]
        if probes:
            per_run.append(sum(probes) / len(probes))
    return per_run


def summarise(rows):
    """{pitfall: {column: (mean, lowest, highest)}} over the seeds, in the order of the rows.

    error, mean_N, rho, capped, ... from each run's last evaluation; grad_data and grad_ponder
    averaged over each run's probes first (the whole run); "seeds": how many runs."""
    out = runner.summarise(rows, ("error", "error_at_half", "error_random", "mean_N", "rho", "max_N", "capped",
                                  "weight_sum"), key="pitfall")
    for p, entry in out.items():
        for c in ("grad_data", "grad_ponder"):
            per_run = _per_run_means(rows, p, c)
            if per_run:
                entry[c] = runner.spread(per_run)
        entry["seeds"] = entry.pop("seeds")          # kept the last field, after the gradients
    return out


COLUMNS = ("pitfall", "seed", "iteration", "error", "error_at_half", "error_random", "mean_N", "rho", "max_N",
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


def run(settings, out, force=False, log=print):
    """Train the experiment of ``settings`` into ``out``: {"experiment": a key of EXPERIMENTS, and
    optionally "seeds", "iterations", "pitfalls"}, run_experiment's arguments; returns the CSV's path."""
    chosen = dict(settings)
    return run_experiment(chosen.pop("experiment"), out=out, force=force, log=log, **chosen)


def run_experiment(name, seeds=None, iterations=None, pitfalls=None, out=COMMITTED, force=False, log=print):
    """Train experiment ``name`` (a key of EXPERIMENTS) into ``out``; returns the CSV's path.

    Resumes a run that stopped and refuses one with other settings (act_experiments.experiments.runner).
    """
    spec = EXPERIMENTS[name]
    settings = runner.settings_of(spec, iterations)
    meta = {"experiment": name, "pitfalls": pitfalls or spec["pitfalls"], "seeds": seeds or spec["seeds"],
            "settings": settings}

    def train(pitfall, seed):
        t0 = time.time()
        evals = train_variant(pitfall, seed=seed, **settings)["evals"]
        last = evals[-1]
        return ([{"pitfall": pitfall, "seed": seed, **e} for e in evals],
                f"{pitfall:28s} seed {seed}: error {last['error']:.3f}, mean N {last['mean_N']:.2f} "
                f"({time.time() - t0:.0f} s)")

    return runner.run_entries(name, meta, train, list(COLUMNS), out, entries_key="pitfalls",
                                  script=SCRIPT, force=force, log=log)


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------

def draw_effects(rows, title):
    """Three panels, one row per pitfall: final error, final mean number of updates N, and the gradient reaching
    the halting bias (data part and ponder part, mean over the run); one dot per seed."""
    import matplotlib.pyplot as plt
    s = summarise(rows)
    names = list(s)
    ends = final_evals(rows)
    fig, axes = plt.subplots(1, 3, figsize=(12, 0.42 * len(names) + 1.6), sharey=True)
    y = range(len(names))
    for ax, column, label in ((axes[0], "error", "held-out sequence error"),
                              (axes[1], "mean_N", "mean number of updates N")):
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


def plot(data, figures=None):
    """Draw figures/pitfalls_<experiment>.png (or in ``figures``) for every experiment of ``read``'s
    data; returns the paths."""
    import matplotlib.pyplot as plt
    paths = []
    for name, (rows, meta) in data.items():
        draw = draw_prefix if name == "prefix" else draw_effects
        fig = draw(rows, _describe(meta))
        paths.append(save_figure(fig, f"pitfalls_{name}", directory=figures))
        plt.close(fig)
    return paths


def main(argv=None):
    matplotlib.use("Agg")
    return runner.main(argv, script=SCRIPT, description=DESCRIPTION, experiments=EXPERIMENTS,
                       entries_of=lambda experiment: pf.PITFALLS, entry_option="--pitfalls",
                       run=run_experiment, plot=lambda results, figures: plot(read(results), figures),
                       out=COMMITTED, figures_help="draw figures/pitfalls_*.png")


if __name__ == "__main__":
    sys.exit(main())
