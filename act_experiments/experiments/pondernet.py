"""PonderNet against ACT on parity (notebook 12, scripts/pondernet.py): PonderNet's population, the comparison, its tables.

    tables = run_comparison({"bits": 8, "iterations": 4000}, work="runs/pondernet/x")
    write_comparison(tables, "results/pondernet8");  tables = read_comparison("results/pondernet8")

The model and its loss are ``act_beyond.pondernet``'s. Here: ``PonderNetPopulation`` (K PonderNets
on parity trained as one program, with the engine's per-member Adam), the comparison that trains ACT
(through the course's population engine) and PonderNet from the same seeds and measures both on
in-range and extrapolation held-out sets, and the CSV tables it writes and reads. Its figures are
in ``act_experiments.experiments.pondernet``.
"""

import shlex
import shutil
import sys
import time
from pathlib import Path

import matplotlib
import numpy as np
import torch

from act_beyond import pondernet as pn
from act_engine.adam import MemberAdam
from act_engine.members import check_member
from act_experiments.data import tasks
from act_experiments.figures import save_figures
from act_experiments.plots import pondernet as pondernet_plots
from act_experiments.tables import number, read_csv, write_csv, write_json
from act_experiments.training import checkpoints, config, loop
from act_experiments.training.backends import TorchBackend
from act_experiments.training.cli import OneLineParser
from act_experiments.training.populations import TorchPopulation
from act_numpy.checks import check_float, check_int
from act_numpy.params import init_params, PARAM_NAMES
from act_torch.act import act_forward


def initial_params(D, H, O, seed, *, cell="rnn", halting_bias=0.0):
    """Initial parameters of seed ``seed``: the course's ACT initialisation from the same random
    stream as ``act_experiments.training.config.init_parameters`` (default_rng([seed, 0])), so a
    PonderNet and an ACT run of one seed start from the same weights; only b_h is set here
    (``halting_bias``). Float64 NumPy arrays."""
    seed = check_int("seed", seed, low=0)
    rng = np.random.default_rng([seed, config.PARAM_STREAM])
    return init_params(cell, D, H, O, rng, halting_bias=halting_bias)


class PonderNetPopulation:
    """K PonderNets on parity trained as one program: parameters stacked on a leading axis, torch's
    Adam per member (``act_engine.adam.MemberAdam``, the optimiser of the engine's populations),
    each member with its own seed, beta, lambda_p and learning rate.

    members: a list of dicts with "seed" and optionally "beta" (0.01), "lambda_p" (0.2), "lr"
    (1e-3), "halting_bias" (0.0). The shared settings: bits and the training range of non-zero
    counts (``task_options``, as ``tasks.make_batch`` takes them), hidden, max_steps, batch_size,
    cell, dtype. Member k draws its batches from default_rng([seed, 1]), the stream an ACT run
    of that seed reads in ``act_experiments.training.loop``, so the two see the same data.
    """

    def __init__(self, members, *, task_options, hidden=64, max_steps=20, batch_size=128, cell="rnn",
                 dtype="float32"):
        if not isinstance(members, (list, tuple)) or not members:
            raise ValueError("members must be a non-empty list of dicts with a 'seed'")
        if dtype not in pn.DTYPES:
            raise ValueError(f"dtype must be one of {sorted(pn.DTYPES)}, got {dtype!r}")
        if cell not in ("rnn", "lstm"):
            raise ValueError(f"cell must be 'rnn' or 'lstm', got {cell!r}")
        self.task_options = tasks.resolve_options("parity", **dict(task_options))   # checks them
        self.hidden = check_int("hidden", hidden)
        self.max_steps = check_int("max_steps", max_steps)
        self.batch_size = check_int("batch_size", batch_size)
        self.cell, self.dtype = cell, pn.DTYPES[dtype]
        self.members = []
        allowed = {"seed", "beta", "lambda_p", "lr", "halting_bias"}
        for m in members:
            if not isinstance(m, dict) or "seed" not in m or set(m) - allowed:
                raise ValueError(f"each member must be a dict with 'seed' and only {sorted(allowed)}, got {m!r}")
            self.members.append({"seed": check_int("seed", m["seed"], low=0),
                                 "beta": check_float("beta", m.get("beta", 0.01), 0.0),
                                 "lambda_p": check_float("lambda_p", m.get("lambda_p", 0.2), 0.0, 1.0, low_open=True, high_open=True),
                                 "lr": check_float("lr", m.get("lr", 1e-3), 0.0, 1.0, low_open=True, high_open=True),
                                 "halting_bias": float(m.get("halting_bias", 0.0))})
        self.K = len(self.members)
        D = tasks.input_size("parity", **self.task_options)
        inits = [initial_params(D, self.hidden, 1, m["seed"], cell=cell, halting_bias=m["halting_bias"])
                 for m in self.members]
        self.params = {k: torch.tensor(np.stack([p[k] for p in inits]), dtype=self.dtype).requires_grad_()
                       for k in PARAM_NAMES}
        self.beta = torch.tensor([m["beta"] for m in self.members], dtype=self.dtype)
        self.lambda_p = torch.tensor([m["lambda_p"] for m in self.members], dtype=torch.float64)
        self.data_rngs = [np.random.default_rng([m["seed"], config.DATA_STREAM]) for m in self.members]
        self.adam = MemberAdam(self.params, [m["lr"] for m in self.members])
        self.iteration = 0

    def batch(self):
        """Each member's next training batch: x (K, B, 1, D), y (K, B) float."""
        batches = [tasks.make_batch("parity", rng, self.batch_size, **self.task_options) for rng in self.data_rngs]
        x = np.stack([b[0] for b in batches])
        y = np.stack([b[1][:, 0, 0] for b in batches])
        return x, y

    def train_step(self):
        """One Adam step of every member on its own batch; returns a dict of (K,) NumPy arrays:
        "loss", "reconstruction", "kl", "steps" (batch mean of E[n])."""
        x, y = self.batch()
        for p in self.params.values():
            p.grad = None
        x = torch.as_tensor(x, dtype=self.dtype)
        if self.K == 1:
            # one network takes the 2-D products of a single run (a batched product over one
            # member gains nothing, and with several threads on a busy machine it can cost a lot);
            # the member axis is put back for the loss
            alone = {k: p[0] for k, p in self.params.items()}
            out = pn.PonderOutput(*(v[None] for v in pn.ponder_forward(x[0], alone, max_steps=self.max_steps,
                                                                  cell=self.cell)))
        else:
            out = pn.ponder_forward(x, self.params, max_steps=self.max_steps, cell=self.cell)
        loss, parts = pn.pondernet_loss(out, torch.as_tensor(y, dtype=self.dtype), beta=self.beta,
                                     lambda_p=self.lambda_p)
        loss.sum().backward()                 # members share no parameter: each its own gradient
        self.adam.step({k: p.grad for k, p in self.params.items()})
        self.iteration += 1
        return {"loss": loss.detach().numpy().astype(np.float64),
                **{k: v.numpy().astype(np.float64) for k, v in parts.items()}}

    def member_params(self, k):
        """Member k's parameters as float64 NumPy arrays (one network's shapes)."""
        k = check_member(k, self.K)
        return {name: p[k].detach().numpy().astype(np.float64) for name, p in self.params.items()}

    def evaluate(self, x, y, *, max_steps=None, mode="sample", seed=0, threshold=0.5):
        """Every member's ``pn.evaluate_pondernet`` on one batch (x (B, 1, D), y (B, 1, 1)); the coin
        flips of mode "sample" come from torch.Generator().manual_seed(seed), one per member.
        max_steps None: the training limit. Returns a list of K dicts."""
        steps = self.max_steps if max_steps is None else max_steps
        return [pn.evaluate_pondernet(self.member_params(k), x, y, max_steps=steps, cell=self.cell, mode=mode,
                                   generator=torch.Generator().manual_seed(seed), threshold=threshold,
                                   dtype=self.dtype)
                for k in range(self.K)]


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


@torch.no_grad()
def act_halting_weights(params, x, *, max_ponder, epsilon=0.01, dtype=torch.float32):
    """ACT's p over the ponder steps of one input per row (T = 1): (B, max_ponder) NumPy, zero
    after each row's N (``act_torch.act.act_forward`` with record)."""
    record = {}
    P = {k: torch.as_tensor(np.asarray(v), dtype=dtype) for k, v in params.items()}
    act_forward(torch.as_tensor(np.asarray(x), dtype=dtype), P, epsilon=epsilon, max_ponder=max_ponder, record=record)
    p = record["p"][0].double().numpy()
    return np.pad(p, ((0, 0), (0, max_ponder - p.shape[1])))


def _measure(model, params, sets, s):
    """Final and curve numbers of one trained network on the held-out sets (a dict per set)."""
    result = {}
    for name, (x, y) in sets.items():
        if model == "act":
            r = pn.evaluate_act(params, x, y, max_ponder=s["max_steps"])
            r["p"] = act_halting_weights(params, x, max_ponder=s["max_steps"])
        else:
            r = pn.evaluate_pondernet(params, x, y, max_steps=s["max_steps"], mode="sample",
                                   generator=torch.Generator().manual_seed(s["sample_seed"]))
            c = pn.evaluate_pondernet(params, x, y, max_steps=s["max_steps"], mode="cumulative")
            r["error_cumulative"] = c["error"]
            xt = torch.as_tensor(np.asarray(x), dtype=torch.float32)
            r["p"] = pn.ponder_forward(xt, params, max_steps=s["max_steps"]).p.double().numpy()
        result[name] = r
    return result


def run_comparison(settings=None, *, work, progress=print):
    """Train ACT and PonderNet networks on one parity and measure them; returns the tables.

    settings: COMPARISON_DEFAULTS overridden by the given keys. ACT: one network per (tau, seed),
    trained by ``act_experiments.training.loop.train_population`` (the course's population engine)
    in chunks of ``chunk`` iterations, its run folders under ``work``. PonderNet: one network per
    (beta, seed), trained by ``PonderNetPopulation``. Both train on counts 1..train_max of ``bits``
    (``tasks`` option max_nonzero), with the same seeds (so the same initial weights, except b_h,
    and the same batches), learning rate, batch and step limit (ACT's cap M = max_steps). After
    every chunk each network is measured on the held-out sets (``held_out_sets``); PonderNet
    halts by sampling (seeded), and its error with the cumulative-p rule (0.5) is kept too.

    Returns {"runs": [...], "curves": [...], "counts": [...], "attention": [...], "meta": {...}}:
    rows of dicts, ready for CSV (``write_comparison``).
    """
    s = _comparison_settings(settings)
    options = {"bits": s["bits"]}
    if s["train_max"] < s["bits"]:
        options["max_nonzero"] = s["train_max"]
    sets = held_out_sets(s["bits"], s["train_max"], s["eval_size"], s["eval_seed"])
    work = Path(work)
    stops = list(range(s["chunk"], s["iterations"], s["chunk"])) + [s["iterations"]]

    act_keys = [(tau, seed) for tau in s["taus"] for seed in s["seeds"]]
    common = dict(task="parity", hidden=s["hidden"], batch_size=s["batch_size"], lr=s["lr"],
                  max_ponder=s["max_steps"], eval_every=0, eval_size=200, checkpoint_every=3600.0, **options)
    outs = [str(work / f"act-tau{tau:g}-seed{seed}") for tau, seed in act_keys]
    pn_members = [{"seed": seed, "beta": beta, "lambda_p": s["lambda_p"], "lr": s["lr"]}
                  for beta in s["betas"] for seed in s["seeds"]]
    pn_pop = PonderNetPopulation(pn_members, task_options=options, hidden=s["hidden"], max_steps=s["max_steps"],
                                 batch_size=s["batch_size"])
    curves, finals = [], {}
    clock = {"act": 0.0, "pondernet": 0.0}
    for stop in stops:
        tick = time.perf_counter()
        # the first chunk starts the runs, each later one resumes them from their checkpoints
        pairs = [loop.prepare({**common, "tau": tau, "seed": seed, "iterations": stop, "out": out},
                                  TorchBackend, resume=stop != stops[0])
                 for (tau, seed), out in zip(act_keys, outs)]
        loop.train_population([c for c, _ in pairs], TorchBackend, TorchPopulation,
                                  checkpoints=[ck for _, ck in pairs], progress=False)
        clock["act"] += time.perf_counter() - tick
        tick = time.perf_counter()
        while pn_pop.iteration < stop:
            pn_pop.train_step()
        clock["pondernet"] += time.perf_counter() - tick
        for (tau, seed), out in zip(act_keys, outs):
            state, _ = checkpoints.load_checkpoint(Path(out) / "checkpoint.npz")
            params = {k: state[f"param/{k}"] for k in PARAM_NAMES}
            finals[("act", tau, seed)] = _measure("act", params, sets, s)
        for k, m in enumerate(pn_members):
            finals[("pondernet", m["beta"], m["seed"])] = _measure("pondernet", pn_pop.member_params(k), sets, s)
        curves += [{"model": model, "knob": knob, "seed": seed, "iteration": stop,
                    **{f"{field}_{name}": r[field] for name, r in result.items() for field in ("error", "steps")}}
                   for (model, knob, seed), result in finals.items()]
        if progress:
            progress(f"iteration {stop}: " + ", ".join(
                f"{model} {knob:g}/{seed} {r['in']['error']:.3f}" + (f"|{r['out']['error']:.3f}" if "out" in r else "")
                for (model, knob, seed), r in finals.items()))

    meta = {"settings": {k: list(v) if isinstance(v, tuple) else v for k, v in s.items()},
            "train_wall_s": {k: round(v, 1) for k, v in clock.items()},
            "knob": {"act": "tau (time penalty)", "pondernet": "beta (KL weight)"}}
    return {**_final_tables(finals), "curves": curves, "meta": meta}


def _comparison_settings(settings):
    """COMPARISON_DEFAULTS overridden by ``settings``, checked (ValueError naming the first bad one)."""
    s = {**COMPARISON_DEFAULTS, **(settings or {})}
    unknown = sorted(set(s) - set(COMPARISON_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown}")
    for name in ("bits", "train_max", "hidden", "batch_size", "iterations", "chunk", "max_steps", "eval_size"):
        check_int(name, s[name])
    if s["train_max"] > s["bits"]:
        raise ValueError(f"train_max must be at most bits = {s['bits']}, got {s['train_max']}")
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


def write_comparison(tables, folder):
    """Write the tables of ``run_comparison`` as <table>.csv and meta as comparison.json, each in one step."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        write_csv(folder / f"{name}.csv", tables[name], float_format=".6g")
    write_json(folder / "comparison.json", tables["meta"])


def read_comparison(folder):
    """The tables written by ``write_comparison``: rows as dicts with numbers where numbers are
    (``act_experiments.tables.number``), and "meta"."""
    import json
    folder = Path(folder)
    if not (folder / "runs.csv").is_file():
        raise FileNotFoundError(f"no comparison in {folder} (expected the runs.csv scripts/pondernet.py writes)")
    tables = {name: [{k: (v if k == "model" else number(v)) for k, v in row.items()}
                     for row in read_csv(folder / f"{name}.csv")] for name in TABLES}
    tables["meta"] = json.loads((folder / "comparison.json").read_text())
    return tables


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "scripts/pondernet.py"
DESCRIPTION = 'ACT against PonderNet on parity, several seeds and penalties, with an extrapolation test.'


def floats(text):
    return tuple(float(v) for v in text.split(","))


def ints(text):
    return tuple(int(v) for v in text.split(","))


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
    p.add_argument("--seeds", type=ints, default=D["seeds"], help="comma-separated, e.g. 0,1,2,3")
    p.add_argument("--taus", type=floats, default=D["taus"], help="ACT's time penalties, comma-separated")
    p.add_argument("--betas", type=floats, default=D["betas"], help="PonderNet's KL weights, comma-separated")
    p.add_argument("--lambda-p", type=float, default=D["lambda_p"], help="PonderNet's geometric prior")
    p.add_argument("--max-steps", type=int, default=D["max_steps"], help="step limit of both (ACT's cap M)")
    p.add_argument("--eval-size", type=int, default=D["eval_size"])
    p.add_argument("--force", action="store_true", help="delete runs/pondernet/<name>/ first")
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


def run(settings, name, force=False, command=None, progress=print):
    """Train the comparison ``settings`` into results/<name>/ (ACT's run folders in runs/pondernet/<name>/,
    refused when they exist unless ``force``); returns its tables."""
    work = ROOT / "runs" / "pondernet" / name
    if work.exists():
        if not force:
            raise ValueError(f"{work.relative_to(ROOT)} exists: pass --force to delete it and start over")
        shutil.rmtree(work)
    torch.set_num_threads(1)
    start = time.perf_counter()
    tables = run_comparison(settings, work=work, progress=progress)
    tables["meta"]["command"] = command
    tables["meta"]["wall_time_s"] = round(time.perf_counter() - start, 1)
    write_comparison(tables, ROOT / "results" / name)
    return tables


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.plot:
            for path in draw(args.plot):
                print("wrote", path.relative_to(ROOT))
            return 0
        if not args.name or "/" in args.name:
            raise ValueError("--name must name a folder under results/ (no '/')")
        settings = {"bits": args.bits, "train_max": args.train_max if args.train_max is not None else args.bits // 2,
                    "hidden": args.hidden, "batch_size": args.batch_size, "lr": args.lr,
                    "iterations": args.iterations, "chunk": args.chunk, "seeds": args.seeds, "taus": args.taus,
                    "betas": args.betas, "lambda_p": args.lambda_p, "max_steps": args.max_steps,
                    "eval_size": args.eval_size}
        command = "python scripts/pondernet.py " + shlex.join(sys.argv[1:] if argv is None else argv)
        run(settings, args.name, force=args.force, command=command, progress=lambda line: print(line, flush=True))
        print(f"wrote results/{args.name}/")
        for path in draw(args.name):
            print("wrote", path.relative_to(ROOT))
    except (ValueError, FileNotFoundError) as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
