"""One training loop for both backends: options, defaults, the loop, evaluation, logs, checkpoints.

    python -m act_torch.train --task parity --bits 16 --lr 1e-3      # fast (PyTorch)
    python -m act_numpy.train --task parity --bits 16 --lr 1e-3      # reference (NumPy)

Everything here is plain NumPy and the standard library. A backend is a small class that knows
how to hold a model and take a step; this module does the rest, identically for both:

    class Backend:
        name = "numpy"                       # or "torch"
        default_dtype = "float64"
        def __init__(self, config): ...      # build the model (init_parameters) and Adam
        def train_step(self, x, y, mask): ... # one Adam step; returns a stats dict (below)
        def evaluate(self, x, y, mask): ...   # no update; the same stats dict
        def state_dict(self): ...             # {name: np.ndarray}, parameters + optimiser
        def load_state_dict(self, state): ...

    stats = {"loss": float,                  # L + tau * P averaged over the batch, eq. (12)
             "wrong": (B, T) bool,           # steps whose prediction is wrong (False off-target)
             "rho": (B, T),                  # rho_t = N(t) + R(t), eq. (10); 0 outside the sequence
             "N": (B, T) int}                # ponder steps taken

What a run writes into its output folder (``--out``):

    log.jsonl       one JSON object per line:
                    {"kind": "train", "iteration", "loss", "sequence_error", "mean_ponder",
                     "max_ponder"}  averaged over the last --log-every iterations, and
                    {"kind": "eval", ...the same fields on the held-out set..., "time_s",
                     "train_time_s"}  every --eval-every iterations (and at 0 and at the end)
    checkpoint.npz  parameters, optimiser state, iteration, data-generator state: --resume
                    continues exactly as if the run had never stopped
    summary.json    config, final evaluation (with error and ponder per difficulty), timings

Sequence error is the paper's metric: the fraction of sequences with at least one wrong
prediction. The characters task (text.py) adds "bits_per_char" to every record: the
cross-entropy L of eq. (12) without the ponder cost, per predicted byte, in bits. Mean ponder is the mean of rho_t over the steps of the sequences, max ponder the
largest N(t). Only the "time" fields differ between two runs with the same seed.

Randomness: three generators, all derived from the seed, so that the same seed gives the
same numbers run after run:
    default_rng([seed, 0])        initial parameters (identical in NumPy and PyTorch)
    default_rng([seed, 1])        training batches, drawn online (saved in checkpoints)
    default_rng([eval_seed, 2])   the held-out set, drawn once (eval_seed defaults to seed)
"""

import argparse
import json
import math
import numbers
import os
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from . import tasks
from .model import sequence_steps
from .params import init_params

# ---------------------------------------------------------------------------------------------
# Defaults
# ---------------------------------------------------------------------------------------------

# Per task, the paper's settings (section 3). The task options are those of tasks.DEFAULTS.
TASK_DEFAULTS = {
    "parity": {"cell": "rnn", "hidden": 128, "batch_size": 128, "max_ponder": 100},
    "logic": {"cell": "lstm", "hidden": 128, "batch_size": 16, "max_ponder": 100},
    "addition": {"cell": "lstm", "hidden": 512, "batch_size": 32, "max_ponder": 20},
    "sort": {"cell": "lstm", "hidden": 512, "batch_size": 16, "max_ponder": 100},
    # the paper: LSTM 1500 on 500-byte sequences (batch not given); smaller here (text.py)
    "characters": {"cell": "lstm", "hidden": 256, "batch_size": 32, "max_ponder": 100, "eval_size": 200},
}

# Shared by every task. lr, epsilon, halting bias and tau's scale are the paper's; the paper
# trained for 1M iterations on each of 16 threads, far beyond a laptop, so the number of
# iterations and the evaluation settings are this course's choices.
COMMON_DEFAULTS = {
    "task": "parity",
    "tau": 1e-3,
    "epsilon": 0.01,
    "lr": 1e-4,
    "halting_bias": 1.0,
    "no_act": False,
    "seed": 0,
    "eval_seed": None,        # None: the same as seed
    "iterations": 10_000,
    "eval_every": 1000,
    "eval_size": 1000,
    "log_every": 10,
    "dtype": None,            # None: the backend's default (NumPy float64, PyTorch float32)
    "out": None,              # None: runs/<backend>-<task>-seed<seed>[-noact]
}

# Which task each task option belongs to, e.g. {"bits": "parity", "max_digits": "addition"}.
TASK_OF_OPTION = {opt: task for task, opts in tasks.DEFAULTS.items() for opt in opts}

# Options that may change when a run is resumed; everything else must match the saved run.
RESUMABLE = ("iterations", "eval_every", "log_every", "out")

DTYPES = ("float32", "float64")
PARAM_STREAM, DATA_STREAM, EVAL_STREAM = 0, 1, 2

# ---------------------------------------------------------------------------------------------
# Configuration: checked once, then a plain dict (saved in checkpoints and the summary)
# ---------------------------------------------------------------------------------------------


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _check_float(name, value, low=-math.inf, high=math.inf, low_open=False, high_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        raise ValueError(f"{name} must be in {left}{low}, {high}{right}, got {value!r}")
    return float(value)


def make_config(options, backend=None):
    """Fill in the defaults for the options given and check every value.

    options: dict of the options the user set (keys as the CLI's, with underscores), e.g.
    {"task": "parity", "bits": 16, "lr": 1e-3}. backend: the backend class, for its name,
    default dtype and any extra options it declares (``backend.extra_defaults``).
    Returns the full config dict. Raises ValueError naming the problem.
    """
    extra = dict(getattr(backend, "extra_defaults", {}))
    options = dict(options)
    known = set(COMMON_DEFAULTS) | set(TASK_DEFAULTS["parity"]) | set(TASK_OF_OPTION) | set(extra)
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown}")

    task = options.get("task", COMMON_DEFAULTS["task"])
    if task not in tasks.ALL_TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {tasks.ALL_TASKS}")
    task_options = {}
    for opt in TASK_OF_OPTION:
        if opt in options:
            if TASK_OF_OPTION[opt] != task:
                raise ValueError(f"option {opt!r} belongs to task {TASK_OF_OPTION[opt]!r}, not {task!r}")
            task_options[opt] = options.pop(opt)
    task_options = tasks.resolve_options(task, **task_options)   # checks ranges, fills defaults

    config = {**COMMON_DEFAULTS, **TASK_DEFAULTS[task], **extra}
    config.update(options)
    config["task"], config["task_options"] = task, task_options

    if config["cell"] not in ("rnn", "lstm"):
        raise ValueError(f"unknown cell {config['cell']!r}; expected 'rnn' or 'lstm'")
    for name, low in (("hidden", 1), ("batch_size", 1), ("iterations", 0), ("eval_every", 0),
                      ("eval_size", 1), ("log_every", 1), ("max_ponder", 1), ("seed", 0)):
        config[name] = _check_int(name, config[name], low)
    if config["eval_seed"] is None:
        config["eval_seed"] = config["seed"]
    config["eval_seed"] = _check_int("eval_seed", config["eval_seed"], 0)
    config["tau"] = _check_float("tau", config["tau"], low=0.0)
    config["epsilon"] = _check_float("epsilon", config["epsilon"], 0.0, 1.0, low_open=True, high_open=True)
    config["lr"] = _check_float("lr", config["lr"], low=0.0, low_open=True)
    config["halting_bias"] = _check_float("halting_bias", config["halting_bias"])
    if not isinstance(config["no_act"], bool):
        raise ValueError(f"no_act must be True or False, got {config['no_act']!r}")
    if config["no_act"]:
        # the paper's baseline: exactly one update per input, i.e. the cap M = 1
        if "max_ponder" in options and config["max_ponder"] != 1:
            raise ValueError("--no-act means max_ponder = 1; do not also set --max-ponder")
        config["max_ponder"] = 1
    if config["dtype"] is None:
        config["dtype"] = getattr(backend, "default_dtype", "float64")
    if config["dtype"] not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {config['dtype']!r}")
    if config["out"] is None:
        name = getattr(backend, "name", "run")
        config["out"] = os.path.join(
            "runs", f"{name}-{task}-seed{config['seed']}" + ("-noact" if config["no_act"] else ""))
    config["out"] = str(config["out"])
    if hasattr(backend, "check_config"):
        backend.check_config(config)   # the backend's own options, e.g. PyTorch's device
    return config


def model_sizes(config):
    """(D, O, loss kind, heads) of the network a config asks for, from the task."""
    task, opts = config["task"], config["task_options"]
    return (tasks.input_size(task, **opts), tasks.output_size(task, **opts),
            tasks.loss_kind(task), tasks.num_heads(task, **opts))


def init_parameters(config):
    """The initial parameters of a run as NumPy arrays in float64 (both backends start here)."""
    D, O, _, _ = model_sizes(config)
    rng = np.random.default_rng([config["seed"], PARAM_STREAM])
    return init_params(config["cell"], D, config["hidden"], O, rng, halting_bias=config["halting_bias"])


# ---------------------------------------------------------------------------------------------
# Statistics of a batch
# ---------------------------------------------------------------------------------------------


class Tally:
    """Running sums over batches, turned into the logged fields by ``fields()``."""

    def __init__(self, sums=None):
        self.sums = dict(sums) if sums else {
            "loss": 0.0, "batches": 0, "rows": 0, "errors": 0, "rho": 0.0, "steps": 0, "max_N": 0,
            "targets": 0.0}

    def add(self, stats, mask):
        steps = sequence_steps(mask) > 0
        rows = int(mask.shape[0])
        s = self.sums
        # the loss is a batch mean: weight it by the rows so uneven evaluation chunks average right
        s["loss"] += float(stats["loss"]) * rows
        s["batches"] += 1
        s["rows"] += rows
        s["errors"] += int(np.asarray(stats["wrong"]).any(axis=1).sum())
        s["rho"] += float(np.asarray(stats["rho"], dtype=np.float64)[steps].sum())
        s["steps"] += int(steps.sum())
        s["max_N"] = max(s["max_N"], int(np.asarray(stats["N"])[steps].max()))
        s["targets"] = s.get("targets", 0.0) + float(np.sum(mask))

    def fields(self, tau=None):
        """The logged fields; with tau, also bits per target (per character, for text)."""
        s = self.sums
        fields = {"loss": s["loss"] / s["rows"], "sequence_error": s["errors"] / s["rows"],
                  "mean_ponder": s["rho"] / s["steps"], "max_ponder": s["max_N"]}
        if tau is not None:
            # eq. (12) read backwards: L = L^ - tau P, summed over the rows, per target, in bits
            fields["bits_per_char"] = (s["loss"] - tau * s["rho"]) / s["targets"] / math.log(2)
        return fields


def by_difficulty(task, x, y, mask, wrong, rho):
    """Error and mean ponder grouped by the task's difficulty (tasks.difficulty).

    Parity and sort measure difficulty per sequence: error is the sequence error, ponder the
    mean rho over the sequence's steps. Logic and addition measure it per input step: error is
    the fraction of wrong steps among those with a target, ponder the mean rho of the steps.
    Returns a list of {"difficulty", "count", "error", "ponder"}, sorted by difficulty.
    """
    d = np.asarray(tasks.difficulty(task, x, y, mask))
    steps = sequence_steps(mask)
    wrong, rho, mask = np.asarray(wrong), np.asarray(rho, dtype=np.float64), np.asarray(mask) > 0
    rows = []
    if d.ndim == 1:
        error = wrong.any(axis=1)
        ponder = rho.sum(axis=1) / steps.sum(axis=1)
        for k in np.unique(d):
            sel = d == k
            rows.append({"difficulty": int(k), "count": int(sel.sum()),
                         "error": float(error[sel].mean()), "ponder": float(ponder[sel].mean())})
    else:
        # only the steps that belong to a sequence (sequence_steps): rho is 0 elsewhere, e.g. on
        # an addition sequence of one number, which has no target at all
        live = steps > 0
        for k in np.unique(d[(d > 0) & live]):
            sel = (d == k) & live
            targets = sel & mask
            rows.append({"difficulty": int(k), "count": int(sel.sum()),
                         "error": float(wrong[targets].mean()) if targets.any() else None,
                         "ponder": float(rho[sel].mean())})
    return rows


# ---------------------------------------------------------------------------------------------
# Checkpoints and logs
# ---------------------------------------------------------------------------------------------


def save_checkpoint(path, state, meta):
    """Write arrays and a JSON header to ``path`` (an .npz) atomically: a crash never leaves half a file."""
    path = Path(path)
    tmp = path.with_name(path.stem + ".tmp.npz")
    arrays = {f"state/{k}": np.asarray(v) for k, v in state.items()}
    np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)
    os.replace(tmp, path)


def load_checkpoint(path):
    """(state, meta) as saved by save_checkpoint."""
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["meta"]))
        state = {k[len("state/"):]: f[k] for k in f.files if k.startswith("state/")}
    return state, meta


def read_log(path):
    """The records of a log.jsonl as a list of dicts."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _truncate_log(path, iteration):
    """Keep only the records up to ``iteration``: a run may have logged past its last checkpoint."""
    if not path.exists():
        return
    keep = [r for r in read_log(path) if r["iteration"] <= iteration]
    with open(path, "w") as f:
        for r in keep:
            f.write(json.dumps(r) + "\n")


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


def prepare(options, backend, resume=False):
    """Check the options and find the starting point: returns (config, checkpoint or None).

    Without resume, the output folder must not already hold a run. With resume, the saved
    run's config is used; only the options in RESUMABLE may differ (e.g. more --iterations).
    """
    if not resume:
        config = make_config(options, backend)
        out = Path(config["out"])
        if (out / "log.jsonl").exists() or (out / "checkpoint.npz").exists():
            raise ValueError(f"{out} already holds a run: pass --resume to continue it, or choose another --out")
        return config, None

    if "out" not in options:
        raise ValueError("--resume needs --out, the folder of the run to continue")
    path = Path(options["out"]) / "checkpoint.npz"
    if not path.exists():
        raise ValueError(f"nothing to resume: {path} does not exist")
    state, meta = load_checkpoint(path)
    if meta["backend"] != backend.name:
        raise ValueError(f"{path} was written by the {meta['backend']} backend; resume it with that backend")
    saved = meta["config"]
    if options.get("task", saved["task"]) != saved["task"]:
        raise ValueError(f"cannot resume with different ['task']: the saved run has task={saved['task']!r}")
    # the options given must describe the same run: compare them with the saved config
    given = make_config({**_options_of(saved), **options}, backend)
    resumable = RESUMABLE + tuple(getattr(backend, "extra_resumable", ()))
    changed = sorted(k for k in given if k not in resumable and given[k] != saved[k])
    if changed:
        raise ValueError(f"cannot resume with different {changed}: the saved run has "
                         + ", ".join(f"{k}={saved[k]!r}" for k in changed))
    config = {**saved, **{k: given[k] for k in resumable}}
    if config["iterations"] < meta["iteration"]:
        raise ValueError(f"the saved run is already at iteration {meta['iteration']} > --iterations {config['iterations']}")
    return config, (state, meta)


def _options_of(config):
    """Turn a full config back into options that make_config accepts."""
    options = {k: v for k, v in config.items() if k != "task_options"}
    options.update(config["task_options"])
    if options["no_act"]:
        options.pop("max_ponder")
    return options


def evaluate(model, config, data):
    """Evaluate on the held-out set in chunks of batch_size rows; returns (fields, per-row stats)."""
    x, y, mask = data
    tally, wrong, rho = Tally(), [], []
    text_tau = config["tau"] if config["task"] in tasks.TEXT_TASKS else None
    for start in range(0, x.shape[0], config["batch_size"]):
        part = slice(start, start + config["batch_size"])
        stats = model.evaluate(x[part], y[part], mask[part])
        tally.add(stats, mask[part])
        wrong.append(np.asarray(stats["wrong"]))
        rho.append(np.asarray(stats["rho"], dtype=np.float64))
    return tally.fields(text_tau), np.concatenate(wrong), np.concatenate(rho)


def train(config, backend, checkpoint=None, progress=True):
    """Train a model as the config says, writing log, checkpoints and summary; returns the summary.

    backend: the backend class. checkpoint: (state, meta) from prepare() to resume from.
    progress: show a tqdm bar.
    """
    out = Path(config["out"])
    out.mkdir(parents=True, exist_ok=True)
    log_path, ckpt_path = out / "log.jsonl", out / "checkpoint.npz"
    task, opts = config["task"], config["task_options"]

    model = backend(config)
    data_rng = np.random.default_rng([config["seed"], DATA_STREAM])
    eval_rng = np.random.default_rng([config["eval_seed"], EVAL_STREAM])
    held_out = tasks.make_held_out(task, eval_rng, config["eval_size"], **opts)   # drawn once
    text_tau = config["tau"] if task in tasks.TEXT_TASKS else None      # bits per char for text

    start, window, time_before, train_time_before = 0, Tally(), 0.0, 0.0
    if checkpoint is not None:
        state, meta = checkpoint
        model.load_state_dict(state)
        data_rng.bit_generator.state = meta["data_rng"]
        start, window = meta["iteration"], Tally(meta["window"])
        time_before, train_time_before = meta["time_s"], meta["train_time_s"]
        _truncate_log(log_path, start)

    clock = time.perf_counter()
    train_time = train_time_before

    def elapsed():
        return time_before + time.perf_counter() - clock

    def checkpoint_now(iteration):
        meta = {"iteration": iteration, "data_rng": data_rng.bit_generator.state, "window": window.sums,
                "time_s": elapsed(), "train_time_s": train_time, "backend": backend.name, "config": config}
        save_checkpoint(ckpt_path, model.state_dict(), meta)

    with open(log_path, "a") as log:
        def write(record):
            log.write(json.dumps(record) + "\n")
            log.flush()

        def run_eval(iteration):
            fields, wrong, rho = evaluate(model, config, held_out)
            write({"kind": "eval", "iteration": iteration, **fields,
                   "time_s": elapsed(), "train_time_s": train_time})
            return fields, wrong, rho

        final = None
        if start == 0:
            final = run_eval(0)
        bar = tqdm(total=config["iterations"], initial=start, disable=not progress,
                   desc=f"{backend.name} {task}", dynamic_ncols=True)
        for it in range(start + 1, config["iterations"] + 1):
            x, y, mask = tasks.make_batch(task, data_rng, config["batch_size"], **opts)
            tick = time.perf_counter()
            stats = model.train_step(x, y, mask)
            train_time += time.perf_counter() - tick
            window.add(stats, mask)
            bar.update(1)
            if it % config["log_every"] == 0 or it == config["iterations"]:
                fields = window.fields(text_tau)
                write({"kind": "train", "iteration": it, **fields})
                bar.set_postfix(loss=f"{fields['loss']:.4f}", **_headline(fields),
                                ponder=f"{fields['mean_ponder']:.2f}", refresh=False)
                window = Tally()
            if (config["eval_every"] and it % config["eval_every"] == 0) or it == config["iterations"]:
                final = run_eval(it)
                fields = final[0]
                if progress:
                    bar.write(f"iteration {it}: held-out {_headline(fields, long=True)}, "
                              f"mean ponder {fields['mean_ponder']:.3f}")
                checkpoint_now(it)
        bar.close()

    if checkpoint is None and config["iterations"] == 0:
        checkpoint_now(0)   # the loop did not run: still leave a run that --resume can extend
    if final is None:       # resumed at the very end: nothing left to train, evaluate for the summary
        final = evaluate(model, config, held_out)
    fields, wrong, rho = final
    summary = {
        "backend": backend.name,
        "iterations": config["iterations"],
        "final_eval": {**fields, "by_difficulty": by_difficulty(task, *held_out, wrong, rho)},
        "time_s": elapsed(),
        "train_time_s": train_time,
        "iterations_per_s": config["iterations"] / train_time if train_time > 0 else None,
        "config": config,
    }
    with open(out / "summary.json", "w") as f:
        json.dump(summary, f, indent=2)
    return summary


def _headline(fields, long=False):
    """The metric a person watches: bits per char for text, else the sequence error."""
    if "bits_per_char" in fields:
        value = f"{fields['bits_per_char']:.3f}"
        return f"bits/char {value}" if long else {"bpc": value}
    value = f"{fields['sequence_error']:.4f}" if long else f"{fields['sequence_error']:.3f}"
    return f"sequence error {value}" if long else {"err": value}


def run(options, backend, resume=False, progress=True):
    """make the config (or load the saved run), train, and return the summary."""
    config, checkpoint = prepare(options, backend, resume=resume)
    return train(config, backend, checkpoint=checkpoint, progress=progress)


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def build_parser(backend):
    """The argparse parser shared by both backends. Options left out are absent from the result."""
    S = argparse.SUPPRESS
    p = argparse.ArgumentParser(
        prog=f"python -m act_{backend.name}.train", argument_default=S,
        description="Train Adaptive Computation Time (Graves 2016) on one of the paper's tasks. "
                    "Defaults follow the paper for each task.")
    p.add_argument("--task", help=f"one of {', '.join(tasks.ALL_TASKS)} (default parity)")
    g = p.add_argument_group("task options (smaller versions of a task)")
    for opt, task in TASK_OF_OPTION.items():
        default = tasks.DEFAULTS[task][opt]
        g.add_argument("--" + opt.replace("_", "-"), type=tasks.OPTION_TYPES.get(opt, int),
                       help=f"{task} only (default {'pydoc_data.topics' if default is None else default})")
    g = p.add_argument_group("model")
    g.add_argument("--cell", help="rnn or lstm (parity rnn, others lstm)")
    g.add_argument("--hidden", type=int, help="state size H (parity/logic 128, addition/sort 512, characters 256)")
    g.add_argument("--tau", type=float, help="time penalty tau of eq. (12) (default 1e-3)")
    g.add_argument("--epsilon", type=float, help="halting threshold epsilon (default 0.01)")
    g.add_argument("--max-ponder", type=int, help="cap M on ponder steps (addition 20, others 100)")
    g.add_argument("--no-act", action="store_true",
                   help="the paper's baseline: one update per input (max ponder 1)")
    g.add_argument("--halting-bias", type=float, help="initial halting bias b_h (default 1.0)")
    g.add_argument("--dtype", choices=DTYPES, help=f"default {backend.default_dtype}")
    g = p.add_argument_group("training")
    g.add_argument("--lr", type=float, help="Adam learning rate (default 1e-4)")
    g.add_argument("--batch-size", type=int, help="parity 128, logic 16, addition 32, sort 16, characters 32")
    g.add_argument("--iterations", type=int, help="total training iterations (default 10000)")
    g.add_argument("--seed", type=int, help="seed of the parameters and the data (default 0)")
    for flag, kind, text in getattr(backend, "extra_arguments", ()):
        g.add_argument(flag, type=kind, help=text)
    g = p.add_argument_group("evaluation, logging, checkpoints")
    g.add_argument("--eval-every", type=int, help="iterations between evaluations (default 1000; 0: only at the end)")
    g.add_argument("--eval-size", type=int, help="held-out sequences (default 1000; characters 200)")
    g.add_argument("--eval-seed", type=int, help="seed of the held-out set (default: --seed)")
    g.add_argument("--log-every", type=int, help="iterations per log record (default 10)")
    g.add_argument("--out", help="output folder (default runs/<backend>-<task>-seed<seed>)")
    g.add_argument("--resume", action="store_true", help="continue the run saved in --out exactly")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(backend, argv=None):
    """Entry point of ``python -m act_<backend>.train``; returns the summary."""
    parser = build_parser(backend)
    options = vars(parser.parse_args(argv))
    resume = options.pop("resume", False)
    progress = not options.pop("no_progress", False)
    try:
        config, checkpoint = prepare(options, backend, resume=resume)
    except ValueError as err:
        parser.error(str(err))    # a clean usage message and exit status 2, no traceback
    summary = train(config, backend, checkpoint=checkpoint, progress=progress)
    fields = summary["final_eval"]
    print(f"done: {config['iterations']} iterations in {summary['time_s']:.1f} s; held-out "
          f"{_headline(fields, long=True)}, mean ponder {fields['mean_ponder']:.3f}; wrote {config['out']}")
    return summary
