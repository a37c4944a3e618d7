"""PonderNet against ACT on parity (notebook 12, scripts/pondernet.py): the comparison, its tables, its command line.

    tables = run_comparison({"bits": 8, "iterations": 4000}, work="runs/pondernet/x", out="results/x")
    tables = read_comparison("results/pondernet8")

The model and its loss are ``act_beyond.pondernet``'s; PonderNet's population (K PonderNets on
parity trained as one program, with the engine's per-member Adam) is
``act_experiments.training.pondernet_population``'s, training machinery beside the engine's
populations. Here: the comparison that trains ACT (through the course's population engine) and
PonderNet from the same seeds, chunk by chunk through ``runner.run_plan`` (a stopped comparison
resumes), and measures both on in-range and extrapolation held-out sets; the CSV tables it writes
and reads. Its figures are in ``act_experiments.plots.pondernet``.
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
from act_experiments.plots import pondernet as pondernet_plots
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

    def measure(self):
        """{(model, knob, seed): per held-out set} of every network as its last checkpoint holds it."""
        finals = {}
        for (tau, seed), out in zip(self.act_keys, self.act_outs):
            state, _ = checkpoints.load_checkpoint(out / "checkpoint.npz")
            finals[("act", tau, seed)] = _measure("act", {k: state[f"param/{k}"] for k in PARAM_NAMES}, self.sets,
                                                  self.s)
        population = self.pondernet()
        for k, m in enumerate(self.members):
            finals[("pondernet", m["beta"], m["seed"])] = _measure("pondernet", population.member_params(k),
                                                                   self.sets, self.s)
        return finals

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
            return read_comparison(out)             # finished before: nothing to do
        comparison.finals = comparison.measure()    # stopped after the last chunk, before its tables
    for table, rows in _final_tables(comparison.finals).items():
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
            row[f"ponder_{name}"] = r["ponder"] if model == "act" else r["expected_steps"]
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


TABLES = ("runs", "curves", "counts", "attention")
FINAL_TABLES = ("runs", "counts", "attention")       # written once, after the last chunk


def read_comparison(folder):
    """The tables ``run_comparison`` writes into ``folder``: rows as dicts with numbers where numbers
    are (``act_experiments.tables.number``), and "meta" (comparison.json)."""
    folder = Path(folder)
    if not (folder / "runs.csv").is_file():
        raise FileNotFoundError(f"no comparison in {folder} (expected the runs.csv scripts/pondernet.py writes)")
    tables = {name: [numbers_in(row, ("model",)) for row in read_csv(folder / f"{name}.csv")] for name in TABLES}
    tables["meta"] = json.loads((folder / "comparison.json").read_text())
    return tables


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

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


def plot(tables, name, figures=None):
    """Draw the figures of a comparison's tables as <figures or figures/>/pondernet_<name>_*.png; returns the paths."""
    s = tables["meta"]["settings"]
    act_knob, pn_knob = pondernet_plots.comparison_picks(tables)
    drawings = {
        "errors": pondernet_plots.figure_errors,
        "counts": lambda t: pondernet_plots.figure_counts(t, act_knob, pn_knob),
        "attention": lambda t: pondernet_plots.figure_attention(t, pondernet_plots.attention_picks(t, act_knob, pn_knob)),
        "curves": pondernet_plots.figure_curves,
    }
    if s["train_max"] == s["bits"]:
        drawings.pop("counts")        # no extrapolation: the error per count says little more
    return save_figures(drawings, tables, f"pondernet_{name}", figures)


def read(name):
    """The tables of results/<name>/ (read_comparison)."""
    return read_comparison(ROOT / "results" / name)


def draw(name):
    """Draw the figures of results/<name>/ into figures/; returns the paths."""
    matplotlib.use("Agg")
    return plot(read(name), name)


def run(settings, name, force=False, progress=print):
    """Train the comparison ``settings`` into results/<name>/, ACT's run folders and PonderNet's
    checkpoint in runs/pondernet/<name>/ (``run_comparison``: a stopped comparison resumes, other
    settings are refused unless ``force``, which starts over); returns its tables."""
    if not name or "/" in name:
        raise ValueError("--name must name a folder under results/ (no '/')")
    torch.set_num_threads(1)
    return run_comparison(settings, work=ROOT / "runs" / "pondernet" / name, out=ROOT / "results" / name,
                          name=name, force=force, progress=progress)


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.plot:
            for path in draw(args.plot):
                print("wrote", path.relative_to(ROOT))
            return 0
        settings = {"bits": args.bits, "train_max": args.train_max if args.train_max is not None else args.bits // 2,
                    "hidden": args.hidden, "batch_size": args.batch_size, "lr": args.lr,
                    "iterations": args.iterations, "chunk": args.chunk,
                    "seeds": number_list(args.seeds, "--seeds", check_int, 0),
                    "taus": number_list(args.taus, "--taus", check_float, 0.0),
                    "betas": number_list(args.betas, "--betas", check_float, 0.0), "lambda_p": args.lambda_p,
                    "max_steps": args.max_steps,
                    "eval_size": args.eval_size}
        run(settings, args.name, force=args.force, progress=lambda line: print(line, flush=True))
        print(f"wrote results/{args.name}/")
        for path in draw(args.name):
            print("wrote", path.relative_to(ROOT))
    except (ValueError, FileNotFoundError) as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:         # Ctrl-C, or training.stopping.Stopped after a signal
        print(f"{parser.prog}: stopped; the same command continues after the last finished chunk", file=sys.stderr)
        return getattr(stop, "exit_code", 130)
    return 0


if __name__ == "__main__":
    sys.exit(main())
