"""A training run's settings: the paper's defaults, the option checks, and the run's seed streams.

    config = make_config({"task": "parity", "bits": 16, "lr": 1e-3}, NumpyBackend)

``make_config`` fills in the defaults for the options given and checks every value once, with
the course's one argument checker (``act_numpy.checks``); the result is a plain dict, saved in
every checkpoint and summary, from which the network (``model_sizes``, ``init_parameters``), the
data and the loop take what they need. Options are the command line's with underscores
(``--batch-size`` is ``batch_size``).

Randomness: three generators, all derived from the seed, so that the same seed gives the
same numbers run after run:
    default_rng([seed, PARAM_STREAM])      initial parameters (identical in NumPy and PyTorch)
    default_rng([seed, DATA_STREAM])       training batches, drawn online (saved in checkpoints)
    default_rng([eval_seed, EVAL_STREAM])  the held-out set, drawn once (eval_seed defaults to seed)
and for the random-schedule control (``random_ponder``) two more, for its numbers of updates:
    default_rng([seed, SCHEDULE_STREAM])   during training, drawn with each batch (saved in checkpoints)
    default_rng([eval_seed, HELD_OUT_SCHEDULE_STREAM])  on the held-out set, drawn once
so that its batches and held-out set are those of the ACT run of the same seed.
"""

import math
import os

import numpy as np

from act_experiments.data import tasks, text
from act_engine.members import check_members
from act_numpy.checks import check_float, check_int
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
    "fixed_ponder": None,     # None: ACT; F: the fixed-computation control, F updates per input
    "random_ponder": None,    # None, or the random-schedule control: probabilities of N = 1..M
    "seed": 0,
    "eval_seed": None,        # None: the same as seed
    "iterations": 10_000,
    "eval_every": 1000,
    "eval_size": 1000,
    "log_every": 10,
    "checkpoint_every": 60.0,  # seconds between checkpoints, besides those at evaluations
    "dtype": None,            # None: the backend's default (NumPy float64, PyTorch float32)
    "out": None,              # None: runs/<backend>-<task>-seed<seed>[-noact|-fixedF]
}

# Keys added to the config after runs were saved without them, and the value that describes
# those runs; ``upgrade`` fills them in, so that an old checkpoint or sweep still resumes.
ADDED_KEYS = {"fixed_ponder": None, "random_ponder": None}

# Which task each task option belongs to, e.g. {"bits": "parity", "max_digits": "addition"}.
TASK_OF_OPTION = {opt: task for task, opts in tasks.DEFAULTS.items() for opt in opts}

# Options that may change when a run is resumed; everything else must match the saved run.
RESUMABLE = ("iterations", "eval_every", "log_every", "checkpoint_every", "out")

DTYPES = ("float32", "float64")
PARAM_STREAM, DATA_STREAM, EVAL_STREAM, SCHEDULE_STREAM, HELD_OUT_SCHEDULE_STREAM = 0, 1, 2, 3, 4

# ---------------------------------------------------------------------------------------------
# The config: checked once, then a plain dict (saved in checkpoints and the summary)
# ---------------------------------------------------------------------------------------------


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
    _check_values(config, options)
    if config["dtype"] is None:
        config["dtype"] = getattr(backend, "default_dtype", "float64")
    if config["dtype"] not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {config['dtype']!r}")
    if config["out"] is None:
        name = getattr(backend, "name", "run")
        kind = ("-noact" if config["no_act"] else f"-fixed{config['fixed_ponder']}"
                if config["fixed_ponder"] is not None else "-random" if config["random_ponder"] is not None else "")
        config["out"] = os.path.join("runs", f"{name}-{task}-seed{config['seed']}{kind}")
    config["out"] = str(config["out"])
    if not config["out"]:
        # "" would mean the current folder: the run's files would land among the user's own
        raise ValueError("out must name a folder, got ''")
    if hasattr(backend, "check_config"):
        backend.check_config(config)   # the backend's own options, e.g. PyTorch's device
    return config


def _check_values(config, options):
    """Check (and convert) the model's and the loop's values in ``config`` in place.

    options: what the user gave, to tell a cap M the user set from the task's default.
    """
    if config["cell"] not in ("rnn", "lstm"):
        raise ValueError(f"unknown cell {config['cell']!r}; expected 'rnn' or 'lstm'")
    for name, low in (("hidden", 1), ("batch_size", 1), ("iterations", 0), ("eval_every", 0),
                      ("eval_size", 1), ("log_every", 1), ("max_ponder", 1), ("seed", 0)):
        config[name] = check_int(name, config[name], low)
    if config["eval_seed"] is None:
        config["eval_seed"] = config["seed"]
    config["eval_seed"] = check_int("eval_seed", config["eval_seed"], 0)
    config["tau"] = check_float("tau", config["tau"], low=0.0)
    config["epsilon"] = check_float("epsilon", config["epsilon"], 0.0, 1.0, low_open=True, high_open=True)
    # Adam moves every weight by about lr per step whatever the gradient's scale, so lr > 1 moves
    # weights initialised near 0.1 by more than their size at every step; far beyond it the first
    # step overflows (lr / (1 - beta1) is inf from lr ~ 1.8e307) and every weight becomes inf
    config["lr"] = check_float("lr", config["lr"], 0.0, 1.0, low_open=True)
    config["checkpoint_every"] = check_float("checkpoint_every", config["checkpoint_every"], low=0.0)
    config["halting_bias"] = check_float("halting_bias", config["halting_bias"])
    if not isinstance(config["no_act"], bool):
        raise ValueError(f"no_act must be True or False, got {config['no_act']!r}")
    if config["no_act"]:
        # the paper's baseline: exactly one update per input, i.e. the cap M = 1
        if "max_ponder" in options and config["max_ponder"] != 1:
            raise ValueError("--no-act means max_ponder = 1; do not also set --max-ponder")
        config["max_ponder"] = 1
    if config["fixed_ponder"] is not None:
        # the fixed-computation control: ACT without its halting unit, run to the cap M = F
        config["fixed_ponder"] = check_int("fixed_ponder", config["fixed_ponder"], 1)
        if config["no_act"]:
            raise ValueError("--no-act is --fixed-ponder 1 (one update per input); give only one of them")
        if "max_ponder" in options and config["max_ponder"] != config["fixed_ponder"]:
            raise ValueError("--fixed-ponder F means max_ponder = F; do not also set --max-ponder")
        config["max_ponder"] = config["fixed_ponder"]
    if config["random_ponder"] is not None:
        # the random-schedule control: no halting unit, N drawn per input step, at most M = len
        config["random_ponder"] = check_distribution("random_ponder", config["random_ponder"])
        if config["no_act"] or config["fixed_ponder"] is not None:
            raise ValueError("--random-ponder is a control of its own; do not also give --no-act or --fixed-ponder")
        if "max_ponder" in options and config["max_ponder"] != len(config["random_ponder"]):
            raise ValueError("--random-ponder with M probabilities means max_ponder = M; do not also set --max-ponder")
        config["max_ponder"] = len(config["random_ponder"])


def check_distribution(name, probabilities):
    """Probabilities of N = 1..M as a list of M floats that sum to 1 (the values given, divided
    by their sum: counts do as well); ValueError naming ``name`` unless they are finite, >= 0 and
    not all 0, and the last is above 0 (M is the largest N drawn)."""
    if isinstance(probabilities, (str, bytes)) or not hasattr(probabilities, "__len__") or not len(probabilities):
        raise ValueError(f"{name} must be a list of probabilities of N = 1, 2, ..., M, got {probabilities!r}")
    values = [check_float(f"{name}[{i}]", v, 0.0) for i, v in enumerate(probabilities)]
    if values[-1] == 0.0:
        raise ValueError(f"{name}: the probability of the last N (M = {len(values)}) must be above 0")
    total = math.fsum(values)
    return [v / total for v in values]


def draw_schedule(probabilities, rng, shape):
    """Numbers of updates N in 1..M drawn i.i.d. from ``probabilities`` (M of them), an int64
    array of ``shape``: the random-schedule control's N for each (row, input step)."""
    return rng.choice(np.arange(1, len(probabilities) + 1), size=shape, p=probabilities)


def uses_act(config):
    """Whether a run's config is ACT: not the no-ACT baseline, nor a fixed or random control."""
    config = upgrade(config)
    return not config["no_act"] and config["fixed_ponder"] is None and config["random_ponder"] is None


def upgrade(config):
    """A saved config with the keys added since it was saved (ADDED_KEYS), as they were then."""
    return {**ADDED_KEYS, **config}


def options_of(config):
    """Turn a full config back into options that make_config accepts."""
    options = {k: v for k, v in upgrade(config).items() if k != "task_options"}
    options.update(config["task_options"])
    if options["no_act"] or options["fixed_ponder"] is not None or options["random_ponder"] is not None:
        options.pop("max_ponder")
    return options


# ---------------------------------------------------------------------------------------------
# What a config implies
# ---------------------------------------------------------------------------------------------


def model_sizes(config):
    """(D, O, loss kind, heads) of the network a config asks for, from the task."""
    task, opts = config["task"], config["task_options"]
    return (tasks.input_size(task, **opts), tasks.output_size(task, **opts),
            tasks.loss_kind(task), tasks.num_heads(task, **opts))


def seed_parameters(seed, cell, D, H, O, halting_bias):
    """The initial parameters of seed ``seed`` (act_numpy.params.init_params, float64 NumPy arrays)
    from default_rng([seed, PARAM_STREAM]): every network of that seed starts here, a training run
    (``init_parameters``), PonderNet (``pondernet_population.initial_params``) and the pitfall
    gallery's entries alike, so all of them start from the same weights."""
    return init_params(cell, D, H, O, np.random.default_rng([seed, PARAM_STREAM]), halting_bias=halting_bias)


def init_parameters(config):
    """The initial parameters of a run as NumPy arrays in float64 (both backends start here)."""
    D, O, _, _ = model_sizes(config)
    return seed_parameters(config["seed"], config["cell"], D, config["hidden"], O, config["halting_bias"])


def population_arguments(configs, shared):
    """What the engine's populations take from K training configs: the configs (checked to agree
    on ``shared``), each member's initial parameters (as its run alone starts), and the read-out's
    loss and heads as keyword arguments."""
    configs = check_members(configs, shared)
    _, _, loss, heads = model_sizes(configs[0])
    return configs, [init_parameters(c) for c in configs], dict(loss=loss, heads=heads)

def data_sha256(config):
    """sha256 of the text a text task reads (its content, not its file name); None for other tasks."""
    if config["task"] not in tasks.TEXT_TASKS:
        return None
    return text.corpus_sha256(config["task_options"]["data"])
