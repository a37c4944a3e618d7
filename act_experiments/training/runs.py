"""One run's part of the training loop: its data streams, held-out set, files and timings.

The loop (``loop``) moves every run forward together, one iteration at a time, each through a
``Run``: its next batch (and, for the random-schedule control, its numbers of updates), its
held-out set, its log, checkpoints and summary.
"""

import contextlib
import json
import os
from pathlib import Path

import numpy as np

from act_experiments.data import tasks
from act_experiments.tables import write_json
from act_experiments.training.checkpoints import open_log, save_checkpoint, truncate_log, writing
from act_experiments.training.config import (DATA_STREAM, EVAL_STREAM, HELD_OUT_SCHEDULE_STREAM, SCHEDULE_STREAM,
                                             data_sha256, draw_schedule, upgrade)
from act_experiments.training.evaluation import N_counts, Tally, by_difficulty



class Run:
    """One run's part of the loop: its data stream, held-out set, files, open log window, timings.

    The model lives in the stepper (one network, or member k of a population); the loop moves
    every run forward together, one iteration at a time. Every file the run writes goes through
    ``self.writing``, so that a write that fails names the file and the run's last intact
    checkpoint (``saved_at``: its iteration, None before the first).
    """

    def __init__(self, config, checkpoint):
        self.config, task, opts = config, config["task"], config["task_options"]
        self.out = Path(config["out"])
        self.log_path, self.ckpt_path = self.out / "log.jsonl", self.out / "checkpoint.npz"
        self.data_rng = np.random.default_rng([config["seed"], DATA_STREAM])
        eval_rng = np.random.default_rng([config["eval_seed"], EVAL_STREAM])
        self.held_out = tasks.make_held_out(task, eval_rng, config["eval_size"], **opts)   # drawn once
        # the random-schedule control's numbers of updates: the held-out set's drawn once from a
        # stream of their own, the training batches' with each batch (saved in checkpoints)
        self.probabilities = upgrade(config)["random_ponder"]
        self.schedule_rng = self.eval_data = None
        if self.probabilities is not None:
            self.schedule_rng = np.random.default_rng([config["seed"], SCHEDULE_STREAM])
            held_rng = np.random.default_rng([config["eval_seed"], HELD_OUT_SCHEDULE_STREAM])
            self.eval_data = (*self.held_out, draw_schedule(self.probabilities, held_rng, self.held_out[2].shape))
        self.data_hash = data_sha256(config)
        self.start, self.window, self.time_before, self.train_time = 0, Tally(), 0.0, 0.0
        self.state, self.log, self.final, self.saved_at = None, None, None, None
        if checkpoint is not None:
            self.state, meta = checkpoint
            self.data_rng.bit_generator.state = meta["data_rng"]
            if self.schedule_rng is not None:
                self.schedule_rng.bit_generator.state = meta["schedule_rng"]
            self.start, self.window = meta["iteration"], Tally(meta["window"])
            self.time_before, self.train_time = meta["time_s"], meta["train_time_s"]
            self.saved_at = meta["iteration"]
        with self.writing(self.out):
            self.out.mkdir(parents=True, exist_ok=True)
        if checkpoint is not None:
            with self.writing(self.log_path):
                truncate_log(self.log_path, meta)

    def writing(self, path):
        """A block that writes ``path``: an OSError in it becomes a WriteFailed naming the file and
        this run's last intact checkpoint."""
        return writing(path, self.saved_at)

    def batch(self):
        """The run's next training batch (x, y, mask), from its own data stream; for the
        random-schedule control also its numbers of updates (B, T), from its schedule stream."""
        c = self.config
        x, y, mask = tasks.make_batch(c["task"], self.data_rng, c["batch_size"], **c["task_options"])
        if self.schedule_rng is None:
            return x, y, mask
        return x, y, mask, draw_schedule(self.probabilities, self.schedule_rng, mask.shape)

    def evaluation_data(self):
        """What the run is evaluated on: its held-out set, with its numbers of updates for the
        random-schedule control."""
        return self.held_out if self.eval_data is None else self.eval_data

    def open_log(self):
        with self.writing(self.log_path):
            self.log = open_log(self.log_path)
        return self.log

    def write(self, record):
        with self.writing(self.log_path):
            try:
                self.log.write((json.dumps(record) + "\n").encode())
                self.log.flush()       # the record is the OS's before any later checkpoint counts it
            except OSError:
                # close the log now, dropping what could not be written: closing it later would
                # try to write those bytes once more and fail again
                log, self.log = self.log, None
                with contextlib.suppress(OSError):
                    log.close()
                raise

    def save(self, iteration, state, backend_name, elapsed):
        """Write the checkpoint of this run at ``iteration``: the model's state and the loop's."""
        log_bytes = 0
        if self.log is not None:
            # the log's bytes reach the disk before a checkpoint that counts them: after a power
            # cut the log is never shorter than the checkpoint says
            with self.writing(self.log_path):
                os.fsync(self.log.fileno())
            log_bytes = self.log.tell()
        meta = {"iteration": iteration, "data_rng": self.data_rng.bit_generator.state,
                "window": self.window.sums, "log_bytes": log_bytes, "data_sha256": self.data_hash,
                "time_s": self.time_before + elapsed, "train_time_s": self.train_time,
                "backend": backend_name, "config": self.config}
        if self.schedule_rng is not None:
            meta["schedule_rng"] = self.schedule_rng.bit_generator.state
        with self.writing(self.ckpt_path):
            save_checkpoint(self.ckpt_path, state, meta)
        self.saved_at = iteration

    def summary(self, backend_name, elapsed):
        """The run's summary, from its final evaluation."""
        fields, wrong, rho, N = self.final
        c = self.config
        return {
            "backend": backend_name,
            "iterations": c["iterations"],
            "final_eval": {**fields, "by_difficulty": by_difficulty(c["task"], *self.held_out, wrong, rho, N),
                           "N_counts": N_counts(N, self.held_out[2])},
            "time_s": self.time_before + elapsed,
            "train_time_s": self.train_time,
            "iterations_per_s": c["iterations"] / self.train_time if self.train_time > 0 else None,
            "config": c,
        }

    def write_summary(self, summary):
        path = self.out / "summary.json"
        with self.writing(path):
            write_json(path, summary)
