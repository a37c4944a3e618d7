"""PonderNet against ACT on parity (notebook 12, scripts/pondernet.py): the comparison, its tables, its command line.

    tables = run_comparison({"bits": 8, "iterations": 4000}, work="runs/pondernet/x", out="results/x")
    tables = read_comparison("results/pondernet8")

The model and its loss are ``act_beyond.pondernet``'s; PonderNet's population (K PonderNets on
parity trained as one program, with the engine's per-member Adam) is
``act_experiments.training.pondernet_population``'s, training machinery beside the engine's
populations. Here: the comparison that trains ACT (through the course's population engine) and
PonderNet from the same seeds, chunk by chunk through ``runner.run_plan`` (a stopped comparison
resumes), and measures both on in-range and extrapolation held-out sets; the CSV tables it writes
and reads, and its figures.
"""

import json
import shutil
import sys
import time
from pathlib import Path

import matplotlib
import numpy as np
import torch

from act_beyond import pondernet as pn
from act_experiments.cli import OneLineParser, number_list
from act_experiments.data import tasks
from act_experiments.experiments import runner
from act_experiments.files import ROOT
from act_experiments.figures import save_figures
from act_experiments.tables import numbers_in, read_csv, write_csv, write_json
from act_experiments.training import checkpoints, config, loop
from act_experiments.training.backends import TorchBackend
from act_experiments.training.pondernet_population import PonderNetPopulation
from act_experiments.training.populations import TorchPopulation
from act_numpy.checks import check_float, check_int
from act_numpy.params import PARAM_NAMES


COMPARISON_DEFAULTS = {
    "bits": 8, "train_max": 4, "hidden": 64, "batch_size": 128, "lr": 1e-2, "iterations": 3000, "chunk": 500,
    "seeds": (0, 1, 2, 3), "taus": (1e-3, 1e-2, 1e-1), "betas": (1e-3, 1e-2, 1e-1), "lambda_p": 0.2,
    "max_steps": 20, "eval_size": 1000, "eval_seed": 1000, "sample_seed": 0,
}


def held_out_sets(bits, train_max, eval_size, eval_seed):
    """The held-out batches of a comparison: {"in": counts 1..train_max, "out": counts
    train_max+1..bits} (no "out" when train_max = bits). Each is (x, y) from tasks.make_batch."""
    rng = np.random.default_rng([eval_seed, config.EVAL_STREAM])
    sets = {"in": tasks.make_batch("parity", rng, eval_size, bits=bits, max_nonzero=train_max)[:2]}
    if train_max < bits:
        sets["out"] = tasks.make_batch("parity", rng, eval_size, bits=bits, min_nonzero=train_max + 1)[:2]
    return sets


def _measure(model, params, sets, s):
    """Final and curve numbers of one trained network on the held-out sets (a dict per set)."""
    result = {}
    for name, (x, y) in sets.items():
        if model == "act":
            r = pn.evaluate_act(params, x, y, max_ponder=s["max_steps"])
            r["p"] = pn.act_halting_weights(params, x, max_ponder=s["max_steps"])
        else:
            r = pn.evaluate_pondernet(params, x, y, max_steps=s["max_steps"], mode="sample",
                                   generator=torch.Generator().manual_seed(s["sample_seed"]))
            c = pn.evaluate_pondernet(params, x, y, max_steps=s["max_steps"], mode="cumulative")
            r["error_cumulative"] = c["error"]
            xt = torch.as_tensor(np.asarray(x), dtype=torch.float32)
            r["p"] = pn.ponder_forward(xt, params, max_steps=s["max_steps"]).p.double().numpy()
        result[name] = r
    return result


class _Comparison:
    """ACT's runs and PonderNet's population of one comparison, trained chunk by chunk in ``work``
    and measured after each chunk.

    ACT: one run folder per (tau, seed), trained by ``loop.train_population`` up to each chunk's
    last iteration and resumed from its checkpoint for the next. PonderNet: one population,
    built on first use and restored from work/pondernet.npz when an earlier call saved it there.
    """

    def __init__(self, s, work):
        self.s, self.work = s, Path(work)
        self.options = {"bits": s["bits"]}
        if s["train_max"] < s["bits"]:
            self.options["max_nonzero"] = s["train_max"]
        self.sets = held_out_sets(s["bits"], s["train_max"], s["eval_size"], s["eval_seed"])
        self.act_keys = [(tau, seed) for tau in s["taus"] for seed in s["seeds"]]
        self.act_outs = [self.work / f"act-tau{tau:g}-seed{seed}" for tau, seed in self.act_keys]
        self.members = [{"seed": seed, "beta": beta, "lambda_p": s["lambda_p"], "lr": s["lr"]}
                        for beta in s["betas"] for seed in s["seeds"]]
        self.checkpoint = self.work / "pondernet.npz"
        self.population, self.finals = None, None
        self.clock = {"act": 0.0, "pondernet": 0.0}

    def pondernet(self):
        """PonderNet's population, where the last chunk left it."""
        if self.population is None:
            s = self.s
            self.population = PonderNetPopulation(self.members, task_options=self.options, hidden=s["hidden"],
                                                  max_steps=s["max_steps"], batch_size=s["batch_size"])
            if self.checkpoint.exists():
                self.clock = dict(self.population.restore(self.checkpoint)["clock"])
        return self.population

    def train_to(self, stop):
        """Train every network up to iteration ``stop``, measure them (``finals``) and save
        PonderNet's population; returns the curves rows of this chunk."""
        s, tick = self.s, time.perf_counter()
        common = dict(task="parity", hidden=s["hidden"], batch_size=s["batch_size"], lr=s["lr"],
                      max_ponder=s["max_steps"], eval_every=0, eval_size=200, checkpoint_every=3600.0,
                      **self.options)
        # a run with a checkpoint (an earlier chunk's, or one written on a signal) resumes from it
        pairs = [loop.prepare({**common, "tau": tau, "seed": seed, "iterations": stop, "out": str(out)},
                              TorchBackend, resume=(out / "checkpoint.npz").exists())
                 for (tau, seed), out in zip(self.act_keys, self.act_outs)]
        loop.train_population([c for c, _ in pairs], TorchBackend, TorchPopulation,
                              checkpoints=[ck for _, ck in pairs], progress=False)
        self.clock["act"] += time.perf_counter() - tick
        tick, population = time.perf_counter(), self.pondernet()
        while population.iteration < stop:
            population.train_step()
        self.clock["pondernet"] += time.perf_counter() - tick
        self.finals = self.measure()
        population.save(self.checkpoint, clock=self.clock)
        return [{"model": model, "knob": knob, "seed": seed, "iteration": stop,
                 **{f"{field}_{name}": r[field] for name, r in result.items() for field in ("error", "steps")}}
                for (model, knob, seed), result in self.finals.items()]

    def trained(self):
        """Whether ``work`` still holds every network's checkpoint."""
        return self.checkpoint.exists() and all((out / "checkpoint.npz").exists() for out in self.act_outs)

    def networks(self):
        """(model, knob, seed, params) of every network, as its last checkpoint holds it."""
        for (tau, seed), out in zip(self.act_keys, self.act_outs):
            state, _ = checkpoints.load_checkpoint(out / "checkpoint.npz")
            yield "act", tau, seed, {k: state[f"param/{k}"] for k in PARAM_NAMES}
        population = self.pondernet()
        for k, m in enumerate(self.members):
            yield "pondernet", m["beta"], m["seed"], population.member_params(k)

    def measure(self):
        """{(model, knob, seed): per held-out set} of every network as its last checkpoint holds it."""
        return {(model, knob, seed): _measure(model, params, self.sets, self.s)
                for model, knob, seed, params in self.networks()}

    def limits(self):
        """The rows of limits.csv: every trained network on every held-out set, evaluated again at
        each halting threshold of EPSILONS (ACT; PonderNet has none) and at the cap it trained with
        and at RAISED_CAP times it. No training: what the halting a network learned does when its
        limits move."""
        rows, s = [], self.s
        for model, knob, seed, params in self.networks():
            for cap in (s["max_steps"], RAISED_CAP * s["max_steps"]):
                for epsilon in (EPSILONS if model == "act" else ("",)):
                    for name, (x, y) in self.sets.items():
                        if model == "act":
                            r = pn.evaluate_act(params, x, y, epsilon=epsilon, max_ponder=cap)
                            n = r["N"]
                        else:
                            r = pn.evaluate_pondernet(params, x, y, max_steps=cap, mode="sample",
                                                      generator=torch.Generator().manual_seed(s["sample_seed"]))
                            n = r["n"]
                        rows.append({"model": model, "knob": knob, "seed": seed, "epsilon": epsilon, "cap": cap,
                                     "set": name, "error": r["error"], "steps": r["steps"],
                                     "at_cap": float(np.mean(n >= cap))})
        return rows

    def line(self, stop):
        """The progress line of a chunk: every network's error in range | beyond it."""
        return f"iteration {stop}: " + ", ".join(
            f"{model} {knob:g}/{seed} {r['in']['error']:.3f}" + (f"|{r['out']['error']:.3f}" if "out" in r else "")
            for (model, knob, seed), r in self.finals.items())


def run_comparison(settings=None, *, work, out, name=None, force=False, progress=print):
    """Train ACT and PonderNet networks on one parity, measure them and write the tables into
    ``out``; returns them (``read_comparison(out)``).

    settings: COMPARISON_DEFAULTS overridden by the given keys. ACT: one network per (tau, seed),
    trained by ``act_experiments.training.loop.train_population`` (the course's population engine),
    its run folders under ``work``. PonderNet: one network per (beta, seed), trained by
    ``PonderNetPopulation``. Both train on counts 1..train_max of ``bits`` (``tasks`` option
    max_nonzero), with the same seeds (so the same initial weights, except b_h, and the same
    batches), learning rate, batch and step limit (ACT's cap M = max_steps). After every chunk of
    ``chunk`` iterations each network is measured on the held-out sets (``held_out_sets``);
    PonderNet halts by sampling (seeded), and its error with the cumulative-p rule (0.5) is kept too.

    The chunks are the units of ``runner.run_plan``: after each one its rows are appended to
    out/curves.csv, ACT's runs have written their checkpoints and PonderNet's population its own
    (work/pondernet.npz, in one step). Running the same comparison again continues after the last
    finished chunk and ends with the same tables as a run that never stopped. A stop loses at most
    the chunk it interrupts: ACT's runs checkpoint on SIGINT and SIGTERM (training.stopping) and
    continue from there, PonderNet's population goes back to its last chunk. Other settings than
    out/comparison.json's are refused with ValueError (naming the comparison ``name``), as is a
    ``work`` folder that ``out`` holds no record of; ``force`` deletes ``work`` and starts over.
    After the last chunk: runs.csv, counts.csv and attention.csv from the last measurements.
    """
    s = _comparison_settings(settings)
    work, out = Path(work), Path(out)
    comparison = _Comparison(s, work)

    def reset():
        if work.exists() and not force:
            raise ValueError(f"{work} exists but {out} holds no record of it: pass --force to delete it and start over")
        shutil.rmtree(work, ignore_errors=True)
        for table in FINAL_TABLES:
            (out / f"{table}.csv").unlink(missing_ok=True)

    def train_chunk(stop):
        return {"curves.csv": comparison.train_to(stop)}, comparison.line(stop)

    stops = list(range(s["chunk"], s["iterations"], s["chunk"])) + [s["iterations"]]
    columns = ["model", "knob", "seed", "iteration"] + [f"{field}_{set_name}" for set_name in comparison.sets
                                                        for field in ("error", "steps")]
    meta = {"settings": {k: list(v) if isinstance(v, tuple) else v for k, v in s.items()},
            "knob": {"act": "tau (time penalty)", "pondernet": "beta (KL weight)"}}
    record = runner.run_plan(out, stops, train_chunk, {"curves.csv": columns}, meta,
                             unit_of=lambda table, row: int(row["iteration"]), record="comparison.json",
                             name=name or str(out), script=SCRIPT, force=force, reset=reset, float_format=".6g",
                             log=progress or (lambda line: None))
    if comparison.finals is None:
        if (out / "runs.csv").is_file():
            if not (out / "limits.csv").is_file() and comparison.trained():
                # finished before the limits were measured, its networks still in ``work``
                write_csv(out / "limits.csv", comparison.limits(), float_format=".6g")
            return read_comparison(out)             # finished before: nothing to do
        comparison.finals = comparison.measure()    # stopped after the last chunk, before its tables
    for table, rows in {**_final_tables(comparison.finals), "limits": comparison.limits()}.items():
        write_csv(out / f"{table}.csv", rows, float_format=".6g")
    train_wall_s = {k: round(v, 1) for k, v in comparison.clock.items()}
    write_json(out / "comparison.json", {**record, "train_wall_s": train_wall_s})
    return read_comparison(out)


def _comparison_settings(settings):
    """COMPARISON_DEFAULTS overridden by ``settings``, checked (ValueError naming the first bad one)."""
    s = {**COMPARISON_DEFAULTS, **(settings or {})}
    unknown = sorted(set(s) - set(COMPARISON_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown}")
    for name in ("bits", "hidden", "batch_size", "iterations", "chunk", "max_steps", "eval_size"):
        check_int(name, s[name])
    check_int("train_max", s["train_max"], 1, s["bits"])
    if not s["seeds"] or not s["taus"] or not s["betas"]:
        raise ValueError("seeds, taus and betas must each hold at least one value")
    return s


def _final_tables(finals):
    """The runs, counts and attention rows of the last measurements {(model, knob, seed): per set}."""
    runs, counts, attention = [], [], []
    for (model, knob, seed), result in finals.items():
        row = {"model": model, "knob": knob, "seed": seed}
        for name, r in result.items():
            row[f"error_{name}"] = r["error"]
            row[f"steps_{name}"] = r["steps"]
            row[f"ponder_{name}"] = r.get("ponder")                    # ACT's mean rho = N + R (eq. 10)
            row[f"expected_steps_{name}"] = r.get("expected_steps")    # PonderNet's mean E[n]
            row[f"error_cumulative_{name}"] = r.get("error_cumulative", "")
            n_name = "N" if model == "act" else "n"
            for c in np.unique(r["counts"]):
                sel = r["counts"] == c
                counts.append({"model": model, "knob": knob, "seed": seed, "count": int(c), "rows": int(sel.sum()),
                               "error": float(r["wrong"][sel].mean()), "steps": float(r[n_name][sel].mean())})
                mean_p = r["p"][sel].mean(axis=0)
                for n, value in enumerate(mean_p, start=1):
                    attention.append({"model": model, "knob": knob, "seed": seed, "count": int(c), "step": n,
                                      "p": float(value)})
        runs.append(row)
    return {"runs": runs, "counts": counts, "attention": attention}


TABLES = ("runs", "curves", "counts", "attention", "limits")
FINAL_TABLES = ("runs", "counts", "attention", "limits")       # written once, after the last chunk
EPSILONS = (0.1, 0.01, 0.001)     # ACT's halting threshold at evaluation (training takes config's 0.01)
RAISED_CAP = 5                    # the raised cap: this many times the cap the networks trained with


def read_comparison(folder):
    """The tables ``run_comparison`` writes into ``folder``: rows as dicts with numbers where numbers
    are (``act_experiments.tables.number``), and "meta" (comparison.json). limits.csv: one row per
    network, held-out set, cap and (ACT) halting threshold epsilon, with "error", "steps" (mean N, or
    PonderNet's mean halting step) and "at_cap" (the share of rows that stopped at the cap)."""
    folder = Path(folder)
    if not (folder / "runs.csv").is_file():
        raise FileNotFoundError(f"no comparison in {folder} (expected the runs.csv scripts/pondernet.py writes)")
    # a comparison finished before limits.csv was written has none: its limits are []
    tables = {name: [numbers_in(row, ("model", "set")) for row in read_csv(folder / f"{name}.csv")]
              if name != "limits" or (folder / f"{name}.csv").is_file() else [] for name in TABLES}
    tables["meta"] = json.loads((folder / "comparison.json").read_text())
    return tables


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# The figures: what they pick from the tables, and how they draw it (matplotlib imported when drawn)
# ---------------------------------------------------------------------------------------------


def by_knob(rows, model, field):
    """{knob: [values over seeds, in seed order]} of one model's ``field`` in the runs table."""
    out = {}
    for row in sorted((r for r in rows if r["model"] == model), key=lambda r: (r["knob"], r["seed"])):
        out.setdefault(row["knob"], []).append(row[field])
    return out


def comparison_picks(tables):
    """(ACT's tau, PonderNet's beta) with the lowest mean in-range error over seeds (the smaller
    knob on a tie): the settings the per-count and curve figures show."""
    picks = []
    for model in ("act", "pondernet"):
        errors = by_knob(tables["runs"], model, "error_in")
        picks.append(min(errors, key=lambda knob: (float(np.mean(errors[knob])), knob)))
    return tuple(picks)


def attention_picks(tables, act_knob, pn_knob):
    """[(model, knob, seed)] for ACT at act_knob and PonderNet at pn_knob: each the seed with the
    lowest in-range error (the smaller seed on a tie)."""
    picks = []
    for model, knob in (("act", act_knob), ("pondernet", pn_knob)):
        rows = [r for r in tables["runs"] if r["model"] == model and r["knob"] == knob]
        best = min(rows, key=lambda r: (r["error_in"], r["seed"]))
        picks.append((model, knob, best["seed"]))
    return picks


MODEL_NAMES = {"act": "ACT", "pondernet": "PonderNet"}


MODEL_COLOURS = {"act": "tab:blue", "pondernet": "tab:orange"}


KNOB_SYMBOLS = {"act": "τ", "pondernet": "β"}


def attention_matrix(p, counts, bits):
    """Mean p per number of non-zero bits: p (B, N) over the steps, counts (B,) -> (bits, N),
    row c - 1 for count c (NaN where no row has that count)."""
    p, counts = np.asarray(p, dtype=np.float64), np.asarray(counts)
    out = np.full((bits, p.shape[1]), np.nan)
    for c in range(1, bits + 1):
        if np.any(counts == c):
            out[c - 1] = p[counts == c].mean(axis=0)
    return out


def draw_attention(ax, matrix, title, train_max=None, vmax=1.0):
    """A heat map of p over steps (x) for each number of non-zero bits (y); a dashed line marks
    the end of the training range when ``train_max`` is below the largest count. Returns the image."""
    bits, steps = matrix.shape
    image = ax.imshow(matrix, origin="lower", aspect="auto", cmap="viridis", vmin=0.0, vmax=vmax,
                      extent=(0.5, steps + 0.5, 0.5, bits + 0.5))
    if train_max is not None and train_max < bits:
        ax.axhline(train_max + 0.5, color="white", ls="--", lw=1.2)
        ax.text(steps + 0.3, train_max + 0.6, "unseen in training ↑", color="white", ha="right", va="bottom",
                fontsize=8)
    ax.set_xlabel("ponder step n")
    ax.set_ylabel("non-zero bits")
    ax.set_title(title, fontsize=10)
    return image


def _knob_label(model, knob):
    return f"{KNOB_SYMBOLS[model]} = {knob:g}"


def figure_errors(tables):
    """Final error per seed for every tau (ACT) and beta (PonderNet): in range and beyond it."""
    import matplotlib.pyplot as plt
    runs, meta = tables["runs"], tables["meta"]["settings"]
    sets = [("in", f"held out, 1..{meta['train_max']} non-zero bits (the training range)")]
    if meta["train_max"] < meta["bits"]:
        sets.append(("out", f"extrapolation, {meta['train_max'] + 1}..{meta['bits']} non-zero bits"))
    fig, axes = plt.subplots(1, len(sets), figsize=(5.2 * len(sets), 3.6), squeeze=False)
    for ax, (name, title) in zip(axes[0], sets):
        ticks, labels, x = [], [], 0
        for model in ("act", "pondernet"):
            for knob, values in by_knob(runs, model, f"error_{name}").items():
                ax.scatter(np.full(len(values), x) + np.linspace(-0.12, 0.12, len(values)), values, s=22,
                           color=MODEL_COLOURS[model], alpha=0.8, zorder=3)
                ax.hlines(np.mean(values), x - 0.3, x + 0.3, color="black", lw=1.5, zorder=4)
                ticks.append(x)
                labels.append(f"{MODEL_NAMES[model]}\n{_knob_label(model, knob)}")
                x += 1
            x += 0.6
        ax.axhline(0.5, color="crimson", ls=":", lw=1, label="chance")
        ax.set_xticks(ticks)
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylim(-0.02, 0.75)
        ax.set_ylabel("error (dots: seeds, bar: mean)")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(frameon=False, fontsize=8, loc="upper left")
    fig.suptitle(f"{meta['bits']}-bit parity, tanh RNN H={meta['hidden']}, {meta['iterations']} iterations, "
                 f"{len(meta['seeds'])} seeds", fontsize=10)
    fig.tight_layout()
    return fig


def figure_counts(tables, act_knob, pn_knob):
    """Error and steps per number of non-zero bits, ACT at one tau beside PonderNet at one beta
    (thin lines: seeds; thick: their mean); the training range shaded."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    fig, (ax_e, ax_s) = plt.subplots(1, 2, figsize=(10.5, 3.6))
    for model, knob in (("act", act_knob), ("pondernet", pn_knob)):
        rows = [r for r in tables["counts"] if r["model"] == model and r["knob"] == knob]
        seeds = sorted({r["seed"] for r in rows})
        counts = sorted({r["count"] for r in rows})
        for field, ax in (("error", ax_e), ("steps", ax_s)):
            table = np.array([[next(r[field] for r in rows if r["seed"] == s and r["count"] == c) for c in counts]
                              for s in seeds])
            for line in table:
                ax.plot(counts, line, color=MODEL_COLOURS[model], alpha=0.25, lw=1)
            ax.plot(counts, table.mean(axis=0), color=MODEL_COLOURS[model], lw=2.2, marker="o",
                    label=f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}")
    for ax in (ax_e, ax_s):
        ax.axvspan(0.5, meta["train_max"] + 0.5, color="grey", alpha=0.12, lw=0, label="training range")
        ax.set_xlabel("non-zero bits")
        ax.set_xticks(range(1, meta["bits"] + 1))
        ax.grid(alpha=0.3)
    ax_e.axhline(0.5, color="crimson", ls=":", lw=1)
    ax_e.set_ylim(-0.02, 1.02)
    ax_e.set_ylabel("error")
    ax_s.set_ylabel("updates used (ACT: N; PonderNet: sampled n)")
    ax_e.legend(frameon=False, fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def figure_attention(tables, picks):
    """Heat maps of the mean p over steps per number of non-zero bits, one per trained network:
    picks, a list of (model, knob, seed)."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    matrices = []
    for model, knob, seed in picks:
        matrix = np.full((meta["bits"], meta["max_steps"]), np.nan)
        for r in tables["attention"]:
            if (r["model"], r["knob"], r["seed"]) == (model, knob, seed):
                matrix[r["count"] - 1, r["step"] - 1] = r["p"]
        matrices.append(matrix)
    # show the steps that get attention (mean p above 0.005 somewhere), and at least five
    used = max(int(np.flatnonzero(np.nanmax(m, axis=0) > 0.005).max(initial=0)) + 2 for m in matrices)
    steps = min(meta["max_steps"], max(5, used))
    fig, axes = plt.subplots(1, len(picks), figsize=(4.6 * len(picks), 3.4), squeeze=False)
    for ax, (model, knob, seed), matrix in zip(axes[0], picks, matrices):
        image = draw_attention(ax, matrix[:, :steps], f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}, seed {seed}",
                               train_max=meta["train_max"])
    if steps < meta["max_steps"]:
        fig.text(0.01, 0.0, f"steps {steps + 1}..{meta['max_steps']} get less than 0.005 of the attention and are "
                 "not drawn", fontsize=8)
    fig.colorbar(image, ax=axes[0].tolist(), label="mean p (attention on step n)", shrink=0.9)
    return fig


def figure_curves(tables):
    """Held-out error against iterations, one panel per penalty: the i-th tau of ACT beside the
    i-th beta of PonderNet, one line per seed, in range (solid) and beyond it (dashed)."""
    import matplotlib.pyplot as plt
    meta = tables["meta"]["settings"]
    beyond = meta["train_max"] < meta["bits"]
    pairs = list(zip(sorted(set(meta["taus"])), sorted(set(meta["betas"]))))
    fig, axes = plt.subplots(1, len(pairs), figsize=(3.6 * len(pairs), 3.3), sharey=True, squeeze=False)
    for ax, knobs in zip(axes[0], pairs):
        for model, knob in zip(("act", "pondernet"), knobs):
            rows = [r for r in tables["curves"] if r["model"] == model and r["knob"] == knob]
            for i, seed in enumerate(sorted({r["seed"] for r in rows})):
                mine = sorted((r for r in rows if r["seed"] == seed), key=lambda r: r["iteration"])
                its = [r["iteration"] for r in mine]
                label = f"{MODEL_NAMES[model]}, {_knob_label(model, knob)}" if i == 0 else None
                ax.plot(its, [r["error_in"] for r in mine], color=MODEL_COLOURS[model], lw=1.2, label=label)
                if beyond:
                    ax.plot(its, [r["error_out"] for r in mine], color=MODEL_COLOURS[model], lw=1.2, ls="--")
        ax.axhline(0.5, color="crimson", ls=":", lw=1)
        ax.set_xlabel("iteration")
        ax.set_ylim(-0.02, 0.8)
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8, loc="upper right")
    axes[0][0].set_ylabel("error (solid: in range, dashed: beyond)" if beyond else "held-out error")
    fig.suptitle(f"{meta['bits']}-bit parity, trained on 1..{meta['train_max']} non-zero bits: one line per seed",
                 fontsize=10)
    fig.tight_layout()
    return fig


SCRIPT = "scripts/pondernet.py"
DESCRIPTION = 'ACT against PonderNet on parity, several seeds and penalties, with an extrapolation test.'


def _listed(values):
    """A default list of numbers as the command line spells it: (0.001, 0.01) -> "0.001,0.01"."""
    return ",".join(map(str, values))


def build_parser():
    D = COMPARISON_DEFAULTS
    p = OneLineParser(prog="python scripts/pondernet.py", description=DESCRIPTION)
    p.add_argument("--name", help="results/<name>/ (required unless --plot)")
    p.add_argument("--plot", metavar="NAME", help="only redraw the figures of results/NAME/")
    p.add_argument("--bits", type=int, default=D["bits"])
    p.add_argument("--train-max", type=int, help="train on 1..train-max non-zero bits (default: bits // 2)")
    p.add_argument("--hidden", type=int, default=D["hidden"])
    p.add_argument("--batch-size", type=int, default=D["batch_size"])
    p.add_argument("--lr", type=float, default=D["lr"])
    p.add_argument("--iterations", type=int, default=D["iterations"])
    p.add_argument("--chunk", type=int, default=D["chunk"], help="iterations between measurements")
    p.add_argument("--seeds", default=_listed(D["seeds"]), help="comma-separated, e.g. 0,1,2,3")
    p.add_argument("--taus", default=_listed(D["taus"]), help="ACT's time penalties, comma-separated")
    p.add_argument("--betas", default=_listed(D["betas"]), help="PonderNet's KL weights, comma-separated")
    p.add_argument("--lambda-p", type=float, default=D["lambda_p"], help="PonderNet's geometric prior")
    p.add_argument("--max-steps", type=int, default=D["max_steps"], help="step limit of both (ACT's cap M)")
    p.add_argument("--eval-size", type=int, default=D["eval_size"])
    p.add_argument("--force", action="store_true",
                   help="start over: delete runs/pondernet/<name>/ first (a rerun without it resumes)")
    return p


def plot(data, figures=None):
    """Draw the figures of a comparison's tables from ``read`` as <figures or figures/>/pondernet_<name>_*.png,
    <name> its folder's; returns the paths."""
    tables = data
    s = tables["meta"]["settings"]
    act_knob, pn_knob = comparison_picks(tables)
    drawings = {
        "errors": figure_errors,
        "counts": lambda t: figure_counts(t, act_knob, pn_knob),
        "attention": lambda t: figure_attention(t, attention_picks(t, act_knob, pn_knob)),
        "curves": figure_curves,
    }
    if s["train_max"] == s["bits"]:
        drawings.pop("counts")        # no extrapolation: the error per count says little more
    return save_figures(drawings, tables, f"pondernet_{tables['name']}", figures)


def read(out):
    """The tables of the comparison in ``out`` (read_comparison), with "name", its folder's name."""
    return {**read_comparison(out), "name": Path(out).name}


def draw(name, root=None):
    """Draw the figures of <root>/results/<name>/ into <root>/figures/, root the folder that holds
    both (the checkout by default); returns the paths."""
    root = root or ROOT
    matplotlib.use("Agg")
    return plot(read(root / "results" / name), root / "figures")


def run(settings, out, force=False, progress=print):
    """Train the comparison ``settings`` into the folder ``out`` (results/<name>/ from the script), ACT's
    run folders and PonderNet's checkpoint in runs/pondernet/<name>/ beside the folder that holds it
    (``run_comparison``: a stopped comparison resumes, other settings are refused unless ``force``,
    which starts over); returns its tables."""
    out = Path(out)
    torch.set_num_threads(1)
    return run_comparison(settings, work=out.parent.parent / "runs" / "pondernet" / out.name, out=out,
                          name=out.name, force=force, progress=progress)


def main(argv=None, root=None):
    """Entry point of scripts/pondernet.py; root: the folder to write results/<name>/, figures/ and
    runs/pondernet/<name>/ under, if not the checkout (a Path). Returns the exit status."""
    root = root or ROOT
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.plot:
            for path in draw(args.plot, root):
                print("wrote", path.relative_to(root))
            return 0
        settings = {"bits": args.bits, "train_max": args.train_max if args.train_max is not None else args.bits // 2,
                    "hidden": args.hidden, "batch_size": args.batch_size, "lr": args.lr,
                    "iterations": args.iterations, "chunk": args.chunk,
                    "seeds": number_list(args.seeds, "--seeds", check_int, 0),
                    "taus": number_list(args.taus, "--taus", check_float, 0.0),
                    "betas": number_list(args.betas, "--betas", check_float, 0.0), "lambda_p": args.lambda_p,
                    "max_steps": args.max_steps,
                    "eval_size": args.eval_size}
        if not args.name or "/" in args.name:
            raise ValueError("--name must name a folder under results/ (no '/')")
        run(settings, root / "results" / args.name, force=args.force, progress=lambda line: print(line, flush=True))
        print(f"wrote results/{args.name}/")
        for path in draw(args.name, root):
            print("wrote", path.relative_to(root))
    except (ValueError, FileNotFoundError) as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:         # Ctrl-C, or training.stopping.Stopped after a signal
        print(f"{parser.prog}: stopped; the same command continues after the last finished chunk", file=sys.stderr)
        return getattr(stop, "exit_code", 130)
    return 0


if __name__ == "__main__":
    sys.exit(main())
