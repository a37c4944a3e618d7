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

    class Population:                        # K runs as one program (train_population)
        name = "numpy"                       # the backend whose runs it holds
        def __init__(self, configs): ...     # K configs of that backend that share SHARED_BY_POPULATION
        def train_step(self, x, y, mask): ... # x (K, B, T, D), y, mask (K, B, T): K stats dicts
        def evaluate(self, x, y, mask): ...
        def member_state(self, k): ...       # member k's state_dict(), the backend's layout
        def load_member_state(self, k, state): ...

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
    checkpoint.npz  parameters, optimiser state, iteration, data-generator state, the open log
                    window and how far the log had got: --resume continues exactly as if the
                    run had never stopped. Written at the start, at every evaluation, every
                    --checkpoint-every seconds (default 60; the numbers do not depend on it)
                    and on SIGINT or SIGTERM
    summary.json    config, final evaluation (with error and ponder per difficulty), timings

Nothing is lost when a run stops. Files are replaced in one step (``atomic_write``): a crash
leaves the old file or the new one, never half of one. SIGINT (Ctrl-C) or SIGTERM lets the
current iteration finish, writes a checkpoint, prints how to resume and exits with 130 or 143
(a second signal stops at once). After SIGKILL or a power cut, --resume continues from the last
checkpoint and drops the log records written after it. --resume refuses, in one line, a
damaged checkpoint or log, options that describe another run, and for text a changed --data
file (the checkpoint keeps the text's sha256).

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
import contextlib
import json
import math
import numbers
import os
import shlex
import signal
import threading
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from . import tasks, text
from act_numpy.model import sequence_steps
from act_numpy.params import init_params

# ---------------------------------------------------------------------------------------------
# Defaults
# ---------------------------------------------------------------------------------------------

# Per task, the paper's settings (section 3), from the task table; the task options are those
# of tasks.DEFAULTS.
TASK_DEFAULTS = {task: t.train for task, t in tasks.TASK_TABLE.items()}

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
    "checkpoint_every": 60.0,  # seconds between checkpoints, besides those at evaluations
    "dtype": None,            # None: the backend's default (NumPy float64, PyTorch float32)
    "out": None,              # None: runs/<backend>-<task>-seed<seed>[-noact]
}

# Which task each task option belongs to, e.g. {"bits": "parity", "max_digits": "addition"}.
TASK_OF_OPTION = {opt: task for task, opts in tasks.DEFAULTS.items() for opt in opts}

# Options that may change when a run is resumed; everything else must match the saved run.
RESUMABLE = ("iterations", "eval_every", "log_every", "checkpoint_every", "out")

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
    # Adam moves every weight by about lr per step whatever the gradient's scale, so lr > 1 moves
    # weights initialised near 0.1 by more than their size at every step; far beyond it the first
    # step overflows (lr / (1 - beta1) is inf from lr ~ 1.8e307) and every weight becomes inf
    config["lr"] = _check_float("lr", config["lr"], 0.0, 1.0, low_open=True)
    config["checkpoint_every"] = _check_float("checkpoint_every", config["checkpoint_every"], low=0.0)
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
    if not config["out"]:
        # "" would mean the current folder: the run's files would land among the user's own
        raise ValueError("out must name a folder, got ''")
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


def data_sha256(config):
    """sha256 of the text a text task reads (its content, not its file name); None for other tasks."""
    if config["task"] not in tasks.TEXT_TASKS:
        return None
    return text.corpus_sha256(config["task_options"]["data"])


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
        # initial=0: a chunk may hold no step with a target (an addition sequence of one number)
        s["max_N"] = max(s["max_N"], int(np.asarray(stats["N"])[steps].max(initial=0)))
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


class Damaged(ValueError):
    """A checkpoint or log that cannot be read back as the run left it (the message names the file)."""


@contextlib.contextmanager
def atomic_write(path, mode="w"):
    """Write ``path`` all at once: yields a temporary file beside it that replaces it on success.

    mode: "w" (UTF-8 text, newlines written as given) or "wb". A crash, a kill or an exception
    inside the block leaves ``path`` as it was: readers see the old file or the new one, never
    half of one. Every file a run or a sweep writes whole goes through here.
    """
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    text_mode = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
    try:
        with open(tmp, mode, **text_mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())    # the bytes reach the disk before the name points at them
        os.replace(tmp, path)       # one step: the old file until here, the new one after
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_checkpoint(path, state, meta):
    """Write arrays and a JSON header to ``path`` (an .npz) atomically: a crash never leaves half a file."""
    arrays = {f"state/{k}": np.asarray(v) for k, v in state.items()}
    with atomic_write(path, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta)), **arrays)


def load_checkpoint(path):
    """(state, meta) as saved by save_checkpoint. Raises ValueError naming the file if it is damaged."""
    try:
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            state = {k[len("state/"):]: f[k] for k in f.files if k.startswith("state/")}
    except FileNotFoundError:
        raise
    except Exception as err:    # a cut or garbled file fails in many ways (zip, npy, JSON): all mean "damaged"
        raise Damaged(f"{path} is damaged or not a checkpoint ({type(err).__name__}: {err})") from None
    if not isinstance(meta, dict) or not {"iteration", "config", "backend", "data_rng", "window"} <= set(meta):
        raise Damaged(f"{path} is damaged or not a checkpoint (its header lacks the run's state)")
    return state, meta


def _parse_log(lines, path):
    """The records of log lines (bytes or str) as dicts; ValueError naming the file and line if damaged."""
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("iteration"), int):
            raise Damaged(f"{path} is damaged: line {number} is not a log record")
        records.append(record)
    return records


def read_log(path):
    """The records of a log.jsonl as a list of dicts (ValueError naming the file if it is damaged)."""
    with open(path, "rb") as f:
        return _parse_log(f, path)


def _log_at_checkpoint(path, meta):
    """The bytes of log.jsonl as they were when the checkpoint ``meta`` was written.

    A run logs past its last checkpoint, so the log is usually longer; the records after it are
    written again when the run continues. Raises ValueError naming the log if it is damaged.
    """
    raw = path.read_bytes() if path.exists() else b""
    if "log_bytes" not in meta:
        # a checkpoint from before the log's length was saved: keep the records up to its
        # iteration (none at 0, where the loop logs its first evaluation again)
        it = meta["iteration"]
        records = [r for r in _parse_log(raw.splitlines(), path) if 0 < it and r["iteration"] <= it]
        return "".join(json.dumps(r) + "\n" for r in records).encode()
    size = meta["log_bytes"]
    if len(raw) < size:
        raise Damaged(f"{path} is damaged: it holds {len(raw)} bytes, the checkpoint saw {size}")
    kept = raw[:size]
    records = _parse_log(kept.splitlines(), path)
    if (kept and not kept.endswith(b"\n")) or any(r["iteration"] > meta["iteration"] for r in records):
        raise Damaged(f"{path} is damaged: it does not match the checkpoint at iteration {meta['iteration']}")
    return kept


def _truncate_log(path, meta):
    """Cut log.jsonl back to the checkpoint ``meta`` (see _log_at_checkpoint), atomically."""
    kept = _log_at_checkpoint(path, meta)
    if path.exists() and path.read_bytes() == kept:
        return
    with atomic_write(path, "wb") as f:   # a kill while resuming must not cut the log short
        f.write(kept)


# ---------------------------------------------------------------------------------------------
# Stopping: signals and divergence
# ---------------------------------------------------------------------------------------------


class Stopped(KeyboardInterrupt):
    """train() stopped on SIGINT or SIGTERM after writing a checkpoint; --resume continues the run.

    signum: the signal; iteration: the checkpoint's; exit_code: 128 + signum (130 for SIGINT,
    143 for SIGTERM, the shell's convention). A KeyboardInterrupt, so that code catching
    Exception lets it through as it would let Ctrl-C through.
    """

    def __init__(self, signum, iteration):
        self.signum, self.iteration, self.exit_code = signum, iteration, 128 + signum
        super().__init__(f"stopped by {signal.Signals(signum).name} after iteration {iteration}")


class Diverged(RuntimeError):
    """The loss or the parameters became NaN or inf: training cannot go on (the last checkpoint stands)."""


class _StopRequests:
    """While active, SIGINT and SIGTERM only ask the loop to stop (``signum`` is set).

    A second signal stops at once with KeyboardInterrupt (the last checkpoint stands). A signal
    the process was told to ignore stays ignored (a sweep's workers ignore Ctrl-C and stop when
    their parent sends SIGTERM). Handlers can only be set in the main thread; elsewhere signals
    keep their usual effect.
    """

    def __init__(self):
        self.signum, self.previous = None, {}

    def _handle(self, signum, frame):
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) not in (signal.SIG_IGN, None):
                    self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


def prepare(options, backend, resume=False):
    """Check the options and find the starting point: returns (config, checkpoint or None).

    Without resume, the output folder must not already hold a run; it is created. With resume,
    the saved run's config is used; only the options in RESUMABLE may differ (e.g. more
    --iterations), and the checkpoint, the log and (for text) the data must be as the run left
    them. Every refusal is a ValueError with a one-line message.
    """
    if not resume:
        config = make_config(options, backend)
        out = Path(config["out"])
        if (out / "checkpoint.npz").exists():
            raise ValueError(f"{out} already holds a run: pass --resume to continue it, or choose another --out")
        if (out / "log.jsonl").exists():
            raise ValueError(f"{out} holds a log but no checkpoint to resume from: delete the folder "
                             "or choose another --out")
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {out} is a file, not a folder")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(f"cannot make the output folder {out}: {err.strerror or err}") from None
        return config, None

    if not options.get("out"):
        raise ValueError("--resume needs --out, the folder of the run to continue")
    path = Path(options["out"]) / "checkpoint.npz"
    if not path.exists():
        raise ValueError(f"nothing to resume: {path} does not exist (the run stopped before its first "
                         "checkpoint?); start the run without --resume")
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
    if meta.get("data_sha256") is not None and meta["data_sha256"] != data_sha256(config):
        data = config["task_options"]["data"] or "the default text"
        raise ValueError(f"cannot resume: {data} has changed since the run started (its sha256 differs "
                         "from the checkpoint's); restore it or start a new run")
    _log_at_checkpoint(path.parent / "log.jsonl", meta)    # raises if the log is damaged
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
    return _evaluate_runs(_Alone(model), [config], [data])[0]


def _evaluate_runs(stepper, configs, held_out):
    """Evaluate every run on its own held-out set, in chunks of batch_size rows, all runs at once.

    Returns, per run, (fields, wrong (E, T), rho (E, T)) for its E held-out sequences.
    """
    tallies = [Tally() for _ in configs]
    wrong, rho = [[] for _ in configs], [[] for _ in configs]
    size, batch = len(held_out[0][0]), configs[0]["batch_size"]
    for start in range(0, size, batch):
        part = slice(start, start + batch)
        chunks = [(x[part], y[part], mask[part]) for x, y, mask in held_out]
        for k, stats in enumerate(stepper.evaluate(chunks)):
            tallies[k].add(stats, chunks[k][2])
            wrong[k].append(np.asarray(stats["wrong"]))
            rho[k].append(np.asarray(stats["rho"], dtype=np.float64))
    return [(tally.fields(_text_tau(c)), np.concatenate(w), np.concatenate(r))
            for tally, c, w, r in zip(tallies, configs, wrong, rho)]


def _text_tau(config):
    """tau for a text task (its records add bits per char, eq. 12 read backwards), else None."""
    return config["tau"] if config["task"] in tasks.TEXT_TASKS else None


class _Alone:
    """One backend model, seen by the loop as a population of one."""

    def __init__(self, model):
        self.model = model

    def train_step(self, batches):
        return [self.model.train_step(*batches[0])]

    def evaluate(self, batches):
        return [self.model.evaluate(*batches[0])]

    def state(self, k):
        return self.model.state_dict()

    def load_state(self, k, state):
        self.model.load_state_dict(state)


class _Stacked:
    """A population (act_torch.population or act_numpy.population): member k is run k; every
    step stacks the runs' batches on a leading axis."""

    def __init__(self, population):
        self.population = population

    def train_step(self, batches):
        return self.population.train_step(*(np.stack(parts) for parts in zip(*batches)))

    def evaluate(self, batches):
        return self.population.evaluate(*(np.stack(parts) for parts in zip(*batches)))

    def state(self, k):
        return self.population.member_state(k)

    def load_state(self, k, state):
        self.population.load_member_state(k, state)


class _Run:
    """One run's part of the loop: its data stream, held-out set, log, open log window, timings.

    The model lives in the stepper (one network, or member k of a population); the loop moves
    every run forward together, one iteration at a time.
    """

    def __init__(self, config, checkpoint):
        self.config, task, opts = config, config["task"], config["task_options"]
        self.out = Path(config["out"])
        self.out.mkdir(parents=True, exist_ok=True)
        self.log_path, self.ckpt_path = self.out / "log.jsonl", self.out / "checkpoint.npz"
        self.data_rng = np.random.default_rng([config["seed"], DATA_STREAM])
        eval_rng = np.random.default_rng([config["eval_seed"], EVAL_STREAM])
        self.held_out = tasks.make_held_out(task, eval_rng, config["eval_size"], **opts)   # drawn once
        self.data_hash = data_sha256(config)
        self.start, self.window, self.time_before, self.train_time = 0, Tally(), 0.0, 0.0
        self.state, self.log, self.final = None, None, None
        if checkpoint is not None:
            self.state, meta = checkpoint
            self.data_rng.bit_generator.state = meta["data_rng"]
            self.start, self.window = meta["iteration"], Tally(meta["window"])
            self.time_before, self.train_time = meta["time_s"], meta["train_time_s"]
            _truncate_log(self.log_path, meta)

    def batch(self):
        """The run's next training batch, from its own data stream."""
        c = self.config
        return tasks.make_batch(c["task"], self.data_rng, c["batch_size"], **c["task_options"])

    def write(self, record):
        self.log.write((json.dumps(record) + "\n").encode())
        self.log.flush()       # the record is the OS's before any later checkpoint counts it

    def save(self, iteration, state, backend_name, elapsed):
        """Write the checkpoint of this run at ``iteration``: the model's state and the loop's."""
        log_bytes = 0
        if self.log is not None:
            # the log's bytes reach the disk before a checkpoint that counts them: after a power
            # cut the log is never shorter than the checkpoint says
            os.fsync(self.log.fileno())
            log_bytes = self.log.tell()
        meta = {"iteration": iteration, "data_rng": self.data_rng.bit_generator.state,
                "window": self.window.sums, "log_bytes": log_bytes, "data_sha256": self.data_hash,
                "time_s": self.time_before + elapsed, "train_time_s": self.train_time,
                "backend": backend_name, "config": self.config}
        save_checkpoint(self.ckpt_path, state, meta)

    def summary(self, backend_name, elapsed):
        """The run's summary.json, from its final evaluation."""
        fields, wrong, rho = self.final
        c = self.config
        return {
            "backend": backend_name,
            "iterations": c["iterations"],
            "final_eval": {**fields, "by_difficulty": by_difficulty(c["task"], *self.held_out, wrong, rho)},
            "time_s": self.time_before + elapsed,
            "train_time_s": self.train_time,
            "iterations_per_s": c["iterations"] / self.train_time if self.train_time > 0 else None,
            "config": c,
        }


def train(config, backend, checkpoint=None, progress=True):
    """Train a model as the config says, writing log, checkpoints and summary; returns the summary.

    backend: the backend class. checkpoint: (state, meta) from prepare() to resume from.
    progress: show a tqdm bar. Raises Stopped after SIGINT or SIGTERM (once the checkpoint is
    written) and Diverged when the loss or the parameters stop being finite.
    """
    runs = [_Run(config, checkpoint)]
    with _StopRequests() as stop:
        return _loop(runs, _Alone(backend(config)), backend.name, progress, stop)[0]


# what the runs trained as one population must share besides the shape of the computation:
# they take their steps, evaluations and checkpoints together
IN_STEP = ("iterations", "eval_every", "eval_size")
# the shape of the computation (the populations refuse members that differ) and the steps
SHARED_BY_POPULATION = ("task", "task_options", "cell", "hidden", "batch_size", "dtype", "device") + IN_STEP


def train_population(configs, backend, population, checkpoints=None, progress=True):
    """Train K runs as one population: each run writes its own log, checkpoints and summary, the
    same files as ``train`` writes for it alone (and the same numbers, to rounding).

    configs: K full configs of ``backend`` (``make_config``); population: the backend's
    population class (act_torch.population.Population or act_numpy.population.Population).
    checkpoints: None, or K entries of (state, meta) from prepare(), or None for a run that
    starts fresh; every run must start from the same iteration. A run's checkpoints resume it
    alone too, and a run saved alone resumes as a member. "train_time_s" of a run is the
    population's training time divided by K (its share); "time_s" is the population's wall time.
    Returns the K summaries. Raises Stopped and Diverged as ``train`` does.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("configs must hold at least one run")
    checkpoints = list(checkpoints) if checkpoints is not None else [None] * len(configs)
    if len(checkpoints) != len(configs):
        raise ValueError(f"checkpoints must have one entry per config: {len(checkpoints)} for {len(configs)}")
    for key in IN_STEP:
        values = sorted({c[key] for c in configs})
        if len(values) > 1:
            raise ValueError(f"the runs of a population must share {key}; got {values}")
    starts = sorted({0 if ck is None else ck[1]["iteration"] for ck in checkpoints})
    if len(starts) > 1:
        raise ValueError(f"the runs of a population must resume from the same iteration; got {starts}")
    outs = [c["out"] for c in configs]
    if len(set(outs)) < len(outs):
        raise ValueError("every run of a population needs its own out folder")
    runs = [_Run(c, ck) for c, ck in zip(configs, checkpoints)]
    with _StopRequests() as stop:
        return _loop(runs, _Stacked(population(configs)), backend.name, progress, stop)


def _loop(runs, stepper, backend_name, progress, stop):
    """Train the runs together (one stepper step moves them all); returns their summaries."""
    K, first = len(runs), runs[0].config
    iterations, eval_every = first["iterations"], first["eval_every"]
    checkpoint_every = min(r.config["checkpoint_every"] for r in runs)
    task = first["task"]
    for k, run in enumerate(runs):
        if run.state is not None:
            stepper.load_state(k, run.state)

    clock = time.perf_counter()
    start = runs[0].start
    saved_at, last_save = start, clock       # the iteration and the time of the last checkpoint

    def elapsed():
        return time.perf_counter() - clock

    def checkpoint_now(iteration):
        nonlocal saved_at, last_save
        for k, run in enumerate(runs):
            run.save(iteration, stepper.state(k), backend_name, elapsed())
        saved_at, last_save = iteration, time.perf_counter()

    def diverged(iteration, problem, run=None):
        where = f" ({run.out})" if K > 1 and run is not None else ""
        return Diverged(f"training diverged at iteration {iteration}{where}: {problem}; a smaller --lr may help")

    @contextlib.contextmanager
    def diverging_at(iteration):
        # the backends refuse NaN or inf parameters with a ValueError: that one means divergence
        try:
            yield
        except ValueError as err:
            if "NaN or inf" not in str(err):
                raise
            raise diverged(iteration, err) from err

    def run_eval(iteration):
        with diverging_at(iteration):
            results = _evaluate_runs(stepper, [r.config for r in runs], [r.held_out for r in runs])
        for run, result in zip(runs, results):
            run.write({"kind": "eval", "iteration": iteration, **result[0],
                       "time_s": run.time_before + elapsed(), "train_time_s": run.train_time})
            run.final = result
        return results[0][0]

    if start == 0:
        # before anything is logged: a folder with a log always has a checkpoint to resume from
        checkpoint_now(0)

    with contextlib.ExitStack() as files:
        for run in runs:
            run.log = files.enter_context(open(run.log_path, "ab"))
        if start == 0:
            run_eval(0)
        done = start
        desc = f"{backend_name} {task}" + (f" x{K}" if K > 1 else "")
        bar = tqdm(total=iterations, initial=start, disable=not progress, desc=desc, dynamic_ncols=True)
        try:
            for it in range(start + 1, iterations + 1):
                if stop.signum is not None:
                    break
                batches = [run.batch() for run in runs]
                tick = time.perf_counter()
                with diverging_at(it):
                    results = stepper.train_step(batches)
                spent = (time.perf_counter() - tick) / K      # each run's share of the step
                for run, stats, batch in zip(runs, results, batches):
                    if not math.isfinite(stats["loss"]):
                        raise diverged(it, f"the loss is {stats['loss']}", run)
                    run.train_time += spent
                    run.window.add(stats, batch[2])
                bar.update(1)
                for run in runs:
                    if it % run.config["log_every"] == 0 or it == iterations:
                        fields = run.window.fields(_text_tau(run.config))
                        run.write({"kind": "train", "iteration": it, **fields})
                        run.window = Tally()
                        if run is runs[0]:
                            bar.set_postfix(loss=f"{fields['loss']:.4f}", **_headline(fields),
                                            ponder=f"{fields['mean_ponder']:.2f}", refresh=False)
                if (eval_every and it % eval_every == 0) or it == iterations:
                    fields = run_eval(it)
                    if progress:
                        member = " (first run)" if K > 1 else ""
                        bar.write(f"iteration {it}: held-out{member} {_headline(fields, long=True)}, "
                                  f"mean ponder {fields['mean_ponder']:.3f}")
                    checkpoint_now(it)
                elif time.perf_counter() - last_save >= checkpoint_every:
                    checkpoint_now(it)
                done = it
        finally:
            bar.close()
        if stop.signum is not None and done < iterations:
            if saved_at != done:
                checkpoint_now(done)
            raise Stopped(stop.signum, done)
        for run in runs:
            run.log = None

    if runs[0].final is None:    # resumed at the very end: nothing left to train, evaluate for the summary
        for run, result in zip(runs, _evaluate_runs(stepper, [r.config for r in runs], [r.held_out for r in runs])):
            run.final = result
    summaries = []
    for run in runs:
        summary = run.summary(backend_name, elapsed())
        with atomic_write(run.out / "summary.json") as f:
            json.dump(summary, f, indent=2)
        summaries.append(summary)
    return summaries


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


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line (the message and a pointer to --help) and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(backend, prog=None):
    """The argparse parser shared by both backends. Options left out are absent from the result."""
    S = argparse.SUPPRESS
    p = OneLineParser(
        prog=prog or f"python -m act_{backend.name}.train", argument_default=S,
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
    for flag, kind, help_text in getattr(backend, "extra_arguments", ()):
        g.add_argument(flag, type=kind, help=help_text)
    g = p.add_argument_group("evaluation, logging, checkpoints")
    g.add_argument("--eval-every", type=int, help="iterations between evaluations (default 1000; 0: only at the end)")
    g.add_argument("--eval-size", type=int, help="held-out sequences (default 1000; characters 200)")
    g.add_argument("--eval-seed", type=int, help="seed of the held-out set (default: --seed)")
    g.add_argument("--log-every", type=int, help="iterations per log record (default 10)")
    g.add_argument("--checkpoint-every", type=float, metavar="SECONDS",
                   help="seconds between checkpoints besides those at evaluations (default 60; 0: every "
                        "iteration); changes no number, and may change on --resume")
    g.add_argument("--out", help="output folder (default runs/<backend>-<task>-seed<seed>)")
    g.add_argument("--resume", action="store_true", help="continue the run saved in --out exactly")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(backend, argv=None):
    """Entry point of ``python -m act_<backend>.train``; returns the summary.

    Every failure the user can act on ends with one line on stderr and a non-zero exit status:
    2 for options refused, 1 for a diverged run, 130 or 143 after SIGINT or SIGTERM.
    """
    parser = build_parser(backend)
    options = vars(parser.parse_args(argv))
    resume = options.pop("resume", False)
    progress = not options.pop("no_progress", False)
    try:
        config, checkpoint = prepare(options, backend, resume=resume)
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    again = f"{parser.prog} --out {shlex.quote(config['out'])} --resume"
    try:
        summary = train(config, backend, checkpoint=checkpoint, progress=progress)
    except Stopped as stop:
        parser.exit(stop.exit_code, f"{stop}: checkpoint written; continue with {again}\n")
    except KeyboardInterrupt:     # a second signal: stopped at once
        parser.exit(130, f"interrupted: continue from the last checkpoint with {again}\n")
    except Diverged as err:
        parser.exit(1, f"{parser.prog}: error: {err}\n")
    fields = summary["final_eval"]
    print(f"done: {config['iterations']} iterations in {summary['time_s']:.1f} s; held-out "
          f"{_headline(fields, long=True)}, mean ponder {fields['mean_ponder']:.3f}; wrote {config['out']}")
    return summary
