"""One training loop for both backends and for one run or a population: steps, evaluation, logs.

    summary = loop.run({"task": "parity", "bits": 8, "out": "runs/p8"}, TorchBackend)

The command line over it is ``scripts/train.py`` (``act_experiments.training.cli``); the settings are
``act_experiments.training.config``'s, the files ``act_experiments.training.checkpoints``' and the stops
``act_experiments.training.stopping``'s. Everything here is
plain NumPy and the standard library. A backend (``act_experiments.training.backends``) is a small class
that knows how to hold a model and take a step; this module does the rest, identically for both:

    class Backend:
        name = "numpy"                       # or "torch"
        default_dtype = "float64"
        def __init__(self, config): ...      # build the model (init_parameters) and Adam
        def train_step(self, x, y, mask, schedule=None): ...  # one Adam step; a stats dict (below)
        def evaluate(self, x, y, mask, schedule=None): ...    # no update; the same stats dict
        def state_dict(self): ...             # {name: np.ndarray}, parameters + optimiser
        def load_state_dict(self, state): ...

    class Population:                        # K runs as one program (train_population)
        name = "numpy"                       # the backend whose runs it holds
        def __init__(self, configs): ...     # K configs of that backend that share SHARED_BY_POPULATION
        def train_step(self, x, y, mask, schedule=None): ...  # x (K, B, T, D), y, mask (K, B, T)
        def evaluate(self, x, y, mask, schedule=None): ...    # K stats dicts
        def member_state(self, k): ...       # member k's state_dict(), the backend's layout
        def load_member_state(self, k, state): ...

    stats = {"loss": float,                  # L + tau * P averaged over the batch, eq. (12)
             "wrong": (B, T) bool,           # steps whose prediction is wrong (False off-target)
             "rho": (B, T),                  # rho_t = N(t) + R(t), eq. (10); 0 outside the sequence
             "N": (B, T) int}                # ponder steps taken

    schedule: None, or (B, T) (a population: (K, B, T)) the numbers of updates N that a run of
    the random-schedule control (config ``random_ponder``) takes, drawn by the loop from the run's
    own stream; a population ignores the entries of its other members.

A run writes log.jsonl, checkpoint.npz and summary.json into its ``out`` folder. It checkpoints
at the start, at every evaluation, every --checkpoint-every seconds (default 60; the numbers do
not depend on it) and on SIGINT or SIGTERM.

Nothing is lost when a run stops. SIGINT (Ctrl-C) or SIGTERM lets the current iteration finish,
writes a checkpoint and raises Stopped (the command line prints how to resume and exits with 130
or 143; a second signal stops at once). After SIGKILL or a power cut, --resume continues from the
last checkpoint and drops the log records written after it. A file that cannot be written (a
full disk, a read-only file system, no permission) raises WriteFailed, naming the file and the
run's last intact checkpoint, from which --resume continues once the file can be written.
--resume refuses, in one line, a damaged checkpoint or log, options that describe another run,
and for text a changed --data file (the checkpoint keeps the text's sha256).

What a run measures (sequence error, ponder, bits per character) is ``act_experiments.training.evaluation``'s.
Only the "time" fields differ between two runs with the same seed.
"""

import contextlib
import math
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

from act_experiments.training.checkpoints import Damaged, WriteFailed, load_checkpoint, log_at_checkpoint, read_log
from act_experiments.training.config import (DATA_STREAM, EVAL_STREAM, RESUMABLE, data_sha256, init_parameters,
                                             make_config, options_of, upgrade)
from act_experiments.training.evaluation import Tally, evaluate_runs, headline, text_tau
from act_experiments.training.runs import Run
from act_experiments.training.stopping import Diverged, StopRequests, Stopped

# The loop's names, and beside them the config and checkpoint functions a notebook calls while it
# trains, reads and resumes runs, so that this one module is all it imports.
__all__ = ["prepare", "run", "train", "train_population", "evaluate", "Stopped", "Diverged", "IN_STEP",
           "SHARED_BY_POPULATION", "make_config", "init_parameters", "DATA_STREAM",
           "EVAL_STREAM", "load_checkpoint", "read_log", "Damaged", "WriteFailed"]

# ---------------------------------------------------------------------------------------------
# Starting a run: a new one, or one saved in its folder
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
    saved = upgrade(meta["config"])      # a run saved before a key existed still resumes
    if options.get("task", saved["task"]) != saved["task"]:
        raise ValueError(f"cannot resume with different ['task']: the saved run has task={saved['task']!r}")
    # the options given must describe the same run: compare them with the saved config
    given = make_config({**options_of(saved), **options}, backend)
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
    log_at_checkpoint(path.parent / "log.jsonl", meta)    # raises if the log is damaged
    return config, (state, meta)


def run(options, backend, resume=False, progress=True, report_every=None):
    """make the config (or load the saved run), train, and return the summary."""
    config, checkpoint = prepare(options, backend, resume=resume)
    return train(config, backend, checkpoint=checkpoint, progress=progress, report_every=report_every)


def evaluate(model, config, data):
    """Evaluate on the held-out set (x, y, mask[, schedule]) in chunks of batch_size rows; returns
    (fields, wrong, rho, N), the last three per held-out sequence and step."""
    return evaluate_runs(_Alone(model), [config], [data])[0]


# ---------------------------------------------------------------------------------------------
# What the loop steps: one network, or a population
# ---------------------------------------------------------------------------------------------


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
    """A population (one of the engine's, see train_population): member k is run k; every step
    stacks the runs' batches on a leading axis."""

    def __init__(self, population):
        self.population = population

    def train_step(self, batches):
        return self.population.train_step(*self.stacked(batches))

    def evaluate(self, batches):
        return self.population.evaluate(*self.stacked(batches))

    @staticmethod
    def stacked(batches):
        """The runs' (x, y, mask[, schedule]) stacked on a leading axis; the schedules, when some
        run has one, with zeros for the runs that have none (the population reads only its
        random-schedule members' rows)."""
        x, y, mask = (np.stack(parts) for parts in zip(*(b[:3] for b in batches)))
        schedules = [b[3] if len(b) > 3 else None for b in batches]
        if all(sch is None for sch in schedules):
            return x, y, mask
        return x, y, mask, np.stack([np.zeros(mask.shape[1:], np.int64) if sch is None else sch
                                     for sch in schedules])

    def state(self, k):
        return self.population.member_state(k)

    def load_state(self, k, state):
        self.population.load_member_state(k, state)


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


def train(config, backend, checkpoint=None, progress=True, report_every=None):
    """Train a model as the config says, writing log, checkpoints and summary; returns the summary.

    backend: the backend class. checkpoint: (state, meta) from prepare() to resume from.
    progress: show a tqdm bar. report_every: None, or seconds between plain progress lines on
    stdout (iterations, rate, time left), for a log read without a terminal. Raises Stopped after SIGINT or SIGTERM (once the checkpoint is
    written), Diverged when the loss or the parameters stop being finite, and WriteFailed when
    a file cannot be written (the last checkpoint stands).
    """
    runs = [Run(config, checkpoint)]
    with StopRequests() as stop:
        return _Loop(runs, _Alone(backend(config)), backend.name, progress, stop, report_every).run()[0]


# what the runs trained as one population must share besides the shape of the computation:
# they take their steps, evaluations and checkpoints together
IN_STEP = ("iterations", "eval_every", "eval_size")
# the shape of the computation (the populations refuse members that differ) and the steps
SHARED_BY_POPULATION = ("task", "task_options", "cell", "hidden", "batch_size", "dtype", "device") + IN_STEP


def train_population(configs, backend, population, checkpoints=None, progress=True, report_every=None):
    """Train K runs as one population: each run writes its own log, checkpoints and summary, the
    same files as ``train`` writes for it alone (and the same numbers, to rounding).

    configs: K full configs of ``backend`` (``make_config``); population: the backend's
    population class, built as ``population(configs)``. checkpoints: None, or K entries of
    (state, meta) from prepare(), or None for a run that starts fresh; every run must start from
    the same iteration. A run's checkpoints resume it alone too, and a run saved alone resumes as
    a member. "train_time_s" of a run is the population's training time divided by K (its
    share); "time_s" is the population's wall time. progress, report_every: as ``train``'s.
    Returns the K summaries. Raises Stopped, Diverged and WriteFailed as ``train`` does.
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
    runs = [Run(c, ck) for c, ck in zip(configs, checkpoints)]
    with StopRequests() as stop:
        return _Loop(runs, _Stacked(population(configs)), backend.name, progress, stop, report_every).run()


class _Loop:
    """Runs trained together: one stepper step moves them all, one iteration at a time.

    runs: the Run of each; stepper: _Alone or _Stacked; stop: the StopRequests in force.
    ``run()`` trains from the runs' start to their last iteration and returns their summaries.
    """

    def __init__(self, runs, stepper, backend_name, progress, stop, report_every=None):
        self.runs, self.stepper, self.backend_name, self.stop = runs, stepper, backend_name, stop
        self.report_every = report_every
        self.K, first = len(runs), runs[0].config
        self.iterations, self.eval_every = first["iterations"], first["eval_every"]
        self.checkpoint_every = min(r.config["checkpoint_every"] for r in runs)
        self.progress, self.bar = progress, None
        for k, run in enumerate(runs):
            if run.state is not None:
                stepper.load_state(k, run.state)
        self.clock = time.perf_counter()
        # the iteration and the time of the last checkpoint
        self.saved_at, self.last_save = runs[0].start, self.clock

    def elapsed(self):
        return time.perf_counter() - self.clock

    def checkpoint(self, iteration):
        for k, run in enumerate(self.runs):
            run.save(iteration, self.stepper.state(k), self.backend_name, self.elapsed())
        self.saved_at, self.last_save = iteration, time.perf_counter()

    def diverged(self, iteration, problem, run=None):
        where = f" ({run.out})" if self.K > 1 and run is not None else ""
        return Diverged(f"training diverged at iteration {iteration}{where}: {problem}; a smaller --lr may help")

    @contextlib.contextmanager
    def diverging_at(self, iteration):
        # the backends refuse NaN or inf parameters with a ValueError: that one means divergence
        try:
            yield
        except ValueError as err:
            if "NaN or inf" not in str(err):
                raise
            raise self.diverged(iteration, err) from err

    def evaluations(self):
        """Every run evaluated on its held-out set: (fields, wrong, rho, N) each (evaluate_runs)."""
        return evaluate_runs(self.stepper, [r.config for r in self.runs], [r.evaluation_data() for r in self.runs])

    def evaluate(self, iteration):
        """Evaluate every run and log it; returns the first run's fields."""
        with self.diverging_at(iteration):
            results = self.evaluations()
        for run, result in zip(self.runs, results):
            run.write({"kind": "eval", "iteration": iteration, **result[0],
                       "time_s": run.time_before + self.elapsed(), "train_time_s": run.train_time})
            run.final = result
        return results[0][0]

    def run(self):
        """Train every run to its last iteration; write and return their summaries."""
        start = self.runs[0].start
        if start == 0:
            # before anything is logged: a folder with a log always has a checkpoint to resume from
            self.checkpoint(0)
        with contextlib.ExitStack() as files:
            for run in self.runs:
                files.enter_context(run.open_log())
            if start == 0:
                self.evaluate(0)
            done = self.train_from(start)
            if self.stop.signum is not None and done < self.iterations:
                if self.saved_at != done:
                    self.checkpoint(done)
                raise Stopped(self.stop.signum, done)
            for run in self.runs:
                run.log = None
        if self.runs[0].final is None:    # resumed at the very end: nothing left to train, evaluate for the summary
            results = self.evaluations()
            for run, result in zip(self.runs, results):
                run.final = result
        summaries = []
        for run in self.runs:
            summary = run.summary(self.backend_name, self.elapsed())
            run.write_summary(summary)
            summaries.append(summary)
        return summaries

    def train_from(self, start):
        """The training iterations after ``start``, until the last or a stop request; returns the
        last iteration done."""
        desc = f"{self.backend_name} {self.runs[0].config['task']}" + (f" x{self.K}" if self.K > 1 else "")
        self.bar = tqdm(total=self.iterations, initial=start, disable=not self.progress, desc=desc,
                        dynamic_ncols=True)
        done = start
        began = last_report = time.perf_counter()
        try:
            for it in range(start + 1, self.iterations + 1):
                if self.stop.signum is not None:
                    break
                self.step(it)
                self.bar.update(1)
                self.log(it)
                now = time.perf_counter()
                if self.report_every is not None and now - last_report >= self.report_every:
                    self.report(desc, it, start, now - began)
                    last_report = now
                if (self.eval_every and it % self.eval_every == 0) or it == self.iterations:
                    fields = self.evaluate(it)
                    if self.progress:
                        member = " (first run)" if self.K > 1 else ""
                        self.bar.write(f"iteration {it}: held-out{member} {headline(fields, long=True)}, "
                                       f"mean ponder {fields['mean_ponder']:.3f}")
                    self.checkpoint(it)
                elif time.perf_counter() - self.last_save >= self.checkpoint_every:
                    self.checkpoint(it)
                done = it
        finally:
            self.bar.close()
        return done

    def report(self, desc, it, start, seconds):
        """One plain progress line on stdout: the first run's folder, the iteration, the rate of
        this stretch of training and the time left at that rate."""
        rate = (it - start) / max(seconds, 1e-9)
        left = (self.iterations - it) / rate
        left = f"{left:.0f} s" if left < 90 else f"{left / 60:.0f} min" if left < 5400 else f"{left / 3600:.1f} h"
        print(f"{desc} ({Path(self.runs[0].out).name}{' and others' if self.K > 1 else ''}): iteration {it}/"
              f"{self.iterations}, {rate:.1f} it/s, about {left} left", flush=True)

    def step(self, it):
        """One training step of every run on its next batch, added to its open log window."""
        batches = [run.batch() for run in self.runs]
        tick = time.perf_counter()
        with self.diverging_at(it):
            results = self.stepper.train_step(batches)
        spent = (time.perf_counter() - tick) / self.K      # each run's share of the step
        for run, stats, batch in zip(self.runs, results, batches):
            if not math.isfinite(stats["loss"]):
                raise self.diverged(it, f"the loss is {stats['loss']}", run)
            run.train_time += spent
            run.window.add(stats, batch[2])

    def log(self, it):
        """Write each run's train record when its log window closes at ``it``."""
        for run in self.runs:
            if it % run.config["log_every"] == 0 or it == self.iterations:
                fields = run.window.fields(text_tau(run.config))
                run.write({"kind": "train", "iteration": it, **fields})
                run.window = Tally()
                if run is self.runs[0]:
                    self.bar.set_postfix(loss=f"{fields['loss']:.4f}", **headline(fields),
                                         ponder=f"{fields['mean_ponder']:.2f}", refresh=False)
