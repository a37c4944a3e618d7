"""The training command line, ``python scripts/train.py``: one parser for both backends, and errors in one line.

    python scripts/train.py --task parity --bits 16 --hidden 128 --lr 1e-3             # PyTorch (default)
    python scripts/train.py --backend numpy --task addition --max-digits 2 --out runs/add
    python scripts/train.py --backend numpy --out runs/add --resume --iterations 4000   # continues exactly

``--backend`` picks the backend (``act_experiments.training.backends``); every other option is a run
option of ``act_experiments.training.config``, the same for both backends, plus the backend's own
(``--device`` for PyTorch). Its parser is ``act_experiments.cli``'s ``OneLineParser``, as every
script's is: errors in one line, exit status 2.
"""

import argparse
import os
import shlex

from act_experiments.cli import OneLineParser, number_list
from act_experiments.data import tasks
from act_experiments.training.checkpoints import WriteFailed
from act_experiments.training.config import DTYPES, TASK_OF_OPTION
from act_experiments.training.evaluation import headline
from act_experiments.training.stopping import Diverged, Stopped
from act_experiments.training.loop import prepare, train
from act_numpy.checks import check_float

PROG = "python scripts/train.py"
DEFAULT_BACKEND = "torch"

# What the help says of the task options whose default is None, and of those that need more words.
WHEN_NONE = {"data": "pydoc_data.topics", "skew": "off"}
OPTION_HELP = {"skew": ": F:LO-HI, a fraction F of the inputs with LO..HI non-zero bits, e.g. 0.1:13-16"}


def probabilities(text):
    """--random-ponder's text "0.2,0.5,0.3" as a list of floats (checked by the config)."""
    try:
        return list(number_list(text, "--random-ponder", check_float, 0.0))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def build_parser(backend, prog=None, backends=None):
    """The parser of a run's options for ``backend`` (a backend class). Options left out are
    absent from the result. backends: the names --backend may take (None: no --backend option,
    as in a sweep, which chooses the backend itself)."""
    S = argparse.SUPPRESS
    p = OneLineParser(
        prog=prog or PROG, argument_default=S,
        description="Train Adaptive Computation Time (Graves 2016) on one of the paper's tasks. "
                    "Defaults follow the paper for each task.")
    if backends is not None:
        p.add_argument("--backend", choices=sorted(backends),
                       help=f"numpy (the reference) or torch (the fast one); default {DEFAULT_BACKEND}")
    p.add_argument("--task", help=f"one of {', '.join(tasks.ALL_TASKS)} (default parity)")
    g = p.add_argument_group("task options (smaller versions of a task, or parity's difficulties reshaped)")
    for opt, task in TASK_OF_OPTION.items():
        default = WHEN_NONE.get(opt, tasks.DEFAULTS[task][opt])
        g.add_argument("--" + opt.replace("_", "-"), type=tasks.OPTION_TYPES.get(opt, int),
                       help=f"{task} only{OPTION_HELP.get(opt, '')} (default {default})")
    g = p.add_argument_group("model")
    g.add_argument("--cell", help="rnn or lstm (parity rnn, others lstm)")
    g.add_argument("--hidden", type=int, help="state size H (parity/logic 128, addition/sort 512, characters 256)")
    g.add_argument("--tau", type=float, help="time penalty tau of eq. (12) (default 1e-3)")
    g.add_argument("--epsilon", type=float, help="halting threshold epsilon (default 0.01)")
    g.add_argument("--max-ponder", type=int, help="cap M on ponder steps (addition 20, others 100)")
    g.add_argument("--no-act", action="store_true",
                   help="the paper's baseline: one update per input (max ponder 1)")
    g.add_argument("--fixed-ponder", type=int, metavar="F",
                   help="the fixed-computation control: exactly F updates per input, no halting unit "
                        "(F = 1 is --no-act)")
    g.add_argument("--random-ponder", type=probabilities, metavar="P1,...,PM",
                   help="the random-schedule control: no halting unit, N updates per input step drawn "
                        "i.i.d. with the probabilities (or counts) of N = 1..M given (NumPy backend)")
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


def chosen_backend(argv, backends):
    """The name --backend gives in ``argv`` (DEFAULT_BACKEND without it); one line and exit 2 for
    a name not in ``backends``. Read first, since the backend decides which options exist."""
    first = OneLineParser(prog=PROG, add_help=False)
    first.add_argument("--backend", choices=sorted(backends), default=DEFAULT_BACKEND)
    return first.parse_known_args(argv)[0].backend


def main(argv=None, backends=None):
    """Entry point of ``python scripts/train.py``; returns the summary.

    backends: name -> backend class (None: ``act_experiments.training.backends.BACKENDS``). Every failure
    the user can act on ends with one line on stderr and a non-zero exit status: 2 for options
    refused, 1 for a diverged run or a file that cannot be written (a full disk, a read-only file
    system, no permission), 130 or 143 after SIGINT or SIGTERM.
    """
    if backends is None:
        # imported here: the backends load PyTorch, which the sweeps that borrow build_parser
        # do not need
        from act_experiments.training.backends import BACKENDS as backends
    backend = backends[chosen_backend(argv, backends)]
    parser = build_parser(backend, backends=backends)
    options = vars(parser.parse_args(argv))
    options.pop("backend", None)
    resume = options.pop("resume", False)
    progress = not options.pop("no_progress", False)
    if backend.name == "torch" and "OMP_NUM_THREADS" not in os.environ:
        # These networks are small: one thread is faster than several, and when two processes
        # share 2 cores, two spinning thread pools made 16-bit parity ~15x slower (docs/parity.md).
        # Set OMP_NUM_THREADS to choose otherwise.
        import torch
        torch.set_num_threads(1)
    try:
        config, checkpoint = prepare(options, backend, resume=resume)
    except ValueError as err:
        parser.exit(2, f"{parser.prog}: error: {err}\n")
    again = f"{parser.prog} --backend {backend.name} --out {shlex.quote(config['out'])} --resume"
    try:
        summary = train(config, backend, checkpoint=checkpoint, progress=progress)
    except Stopped as stop:
        parser.exit(stop.exit_code, f"{stop}: checkpoint written; continue with {again}\n")
    except KeyboardInterrupt:     # a second signal: stopped at once
        parser.exit(130, f"interrupted: continue from the last checkpoint with {again}\n")
    except Diverged as err:
        parser.exit(1, f"{parser.prog}: error: {err}\n")
    except WriteFailed as err:
        then = f"continue with {again}" if err.checkpoint is not None else "start the run again"
        parser.exit(1, f"{parser.prog}: error: {err}: make room or fix the permissions, then {then}\n")
    fields = summary["final_eval"]
    print(f"done: {config['iterations']} iterations in {summary['time_s']:.1f} s; held-out "
          f"{headline(fields, long=True)}, mean ponder {fields['mean_ponder']:.3f}; wrote {config['out']}")
    return summary
