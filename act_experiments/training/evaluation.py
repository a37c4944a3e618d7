"""What a run measures: running sums over batches, the held-out evaluation, error by difficulty.

    tally = Tally()
    tally.add(stats, mask)           # stats of one batch, as a backend's train_step returns them
    tally.fields(tau)                # {"loss", "sequence_error", "mean_ponder", "mean_N", "mean_R",
                                     #  "max_N"[, "bits_per_char"]}

Sequence error is the paper's metric: the fraction of sequences with at least one wrong
prediction. The characters task (text.py) adds "bits_per_char": the cross-entropy L of eq. (12)
without the ponder cost, per predicted byte, in bits. Mean ponder is the mean of rho_t = N(t) + R(t) over the
steps of the sequences; mean_N and mean_R split it into the updates a network made and the
remainder (measured, so that a comparison at equal computation counts updates, not rho); max_N
the largest N(t) (at most the cap M, ``max_ponder``).
"""

import math

import numpy as np

from act_experiments.data import tasks
from act_numpy.model import sequence_steps


class Tally:
    """Running sums over batches, turned into the logged fields by ``fields()``."""

    def __init__(self, sums=None):
        self.sums = dict(sums) if sums else {
            "loss": 0.0, "batches": 0, "rows": 0, "errors": 0, "rho": 0.0, "N": 0, "steps": 0, "max_N": 0,
            "targets": 0.0}

    def add(self, stats, mask):
        in_sequence = sequence_steps(mask) > 0
        rows = int(mask.shape[0])
        s = self.sums
        # the loss is a batch mean: weight it by the rows so uneven evaluation chunks average right
        s["loss"] += float(stats["loss"]) * rows
        s["batches"] += 1
        s["rows"] += rows
        s["errors"] += int(np.asarray(stats["wrong"]).any(axis=1).sum())
        s["rho"] += float(np.asarray(stats["rho"], dtype=np.float64)[in_sequence].sum())
        # "N" is absent from the sums of windows saved before it was measured: they count from here
        s["N"] = s.get("N", 0) + int(np.asarray(stats["N"])[in_sequence].sum())
        s["steps"] += int(in_sequence.sum())
        # initial=0: a chunk may hold no step with a target (an addition sequence of one number)
        s["max_N"] = max(s["max_N"], int(np.asarray(stats["N"])[in_sequence].max(initial=0)))
        s["targets"] = s.get("targets", 0.0) + float(np.sum(mask))

    def fields(self, tau=None):
        """The logged fields; with tau, also bits per target (per character, for text)."""
        s = self.sums
        fields = {"loss": s["loss"] / s["rows"], "sequence_error": s["errors"] / s["rows"],
                  "mean_ponder": s["rho"] / s["steps"], "mean_N": s.get("N", 0) / s["steps"],
                  "mean_R": (s["rho"] - s.get("N", 0)) / s["steps"], "max_N": s["max_N"]}
        if tau is not None:
            # eq. (12) read backwards: L = L^ - tau P, summed over the rows, per target, in bits
            fields["bits_per_char"] = (s["loss"] - tau * s["rho"]) / s["targets"] / math.log(2)
        return fields


def by_difficulty(task, x, y, mask, wrong, rho, N=None):
    """Error, mean ponder and (given N) the mean number of updates, grouped by the task's
    difficulty (tasks.difficulty).

    Parity and sort measure difficulty per sequence: error is the sequence error, ponder the
    mean rho over the sequence's steps. Logic and addition measure it per input step: error is
    the fraction of wrong steps among those with a target, ponder the mean rho of the steps.
    Returns a list of {"difficulty", "count", "error", "ponder"[, "N"]}, sorted by difficulty:
    N is the mean N(t) over the same steps as ponder.
    """
    d = np.asarray(tasks.difficulty(task, x, y, mask))
    in_sequence = sequence_steps(mask)
    wrong, rho, mask = np.asarray(wrong), np.asarray(rho, dtype=np.float64), np.asarray(mask) > 0
    # N(t) where the sequence lives, 0 elsewhere, as rho is
    updates = None if N is None else np.asarray(N, dtype=np.float64) * (in_sequence > 0)
    rows = []
    if d.ndim == 1:
        error = wrong.any(axis=1)
        ponder = rho.sum(axis=1) / in_sequence.sum(axis=1)
        for k in np.unique(d):
            sel = d == k
            rows.append({"difficulty": int(k), "count": int(sel.sum()),
                         "error": float(error[sel].mean()), "ponder": float(ponder[sel].mean())})
            if N is not None:
                rows[-1]["N"] = float((updates.sum(axis=1) / in_sequence.sum(axis=1))[sel].mean())
    else:
        # only the steps that belong to a sequence (sequence_steps): rho is 0 elsewhere, e.g. on
        # an addition sequence of one number, which has no target at all
        inside = in_sequence > 0
        for k in np.unique(d[(d > 0) & inside]):
            sel = (d == k) & inside
            targets = sel & mask
            rows.append({"difficulty": int(k), "count": int(sel.sum()),
                         "error": float(wrong[targets].mean()) if targets.any() else None,
                         "ponder": float(rho[sel].mean())})
            if N is not None:
                rows[-1]["N"] = float(updates[sel].mean())
    return rows


def N_counts(N, mask):
    """How often each number of updates was taken: [[N, count], ...] in increasing N, over the
    steps of the sequences (sequence_steps), N (E, T) and mask (E, T) of a held-out set. (Pairs,
    not a dict: JSON keeps them as they are, where it would turn a dict's keys into strings.)"""
    values, counts = np.unique(np.asarray(N)[sequence_steps(mask) > 0], return_counts=True)
    return [[int(v), int(c)] for v, c in zip(values, counts)]


def evaluate_runs(stepper, configs, held_out):
    """Evaluate every run on its own held-out set, in chunks of batch_size rows, all runs at once.

    held_out: per run (x, y, mask) or (x, y, mask, schedule), schedule (E, T) the numbers of
    updates of a random-schedule run (None for the others). Returns, per run, (fields,
    wrong (E, T), rho (E, T), N (E, T)) for its E held-out sequences.
    """
    tallies = [Tally() for _ in configs]
    wrong, rho, N = [[] for _ in configs], [[] for _ in configs], [[] for _ in configs]
    size, batch = len(held_out[0][0]), configs[0]["batch_size"]
    for start in range(0, size, batch):
        part = slice(start, start + batch)
        chunks = [tuple(None if a is None else a[part] for a in data) for data in held_out]
        for k, stats in enumerate(stepper.evaluate(chunks)):
            tallies[k].add(stats, chunks[k][2])
            wrong[k].append(np.asarray(stats["wrong"]))
            rho[k].append(np.asarray(stats["rho"], dtype=np.float64))
            N[k].append(np.asarray(stats["N"]))
    return [(tally.fields(text_tau(c)), np.concatenate(w), np.concatenate(r), np.concatenate(n))
            for tally, c, w, r, n in zip(tallies, configs, wrong, rho, N)]


def text_tau(config):
    """tau for a text task (its records add bits per char, eq. 12 read backwards), else None."""
    return config["tau"] if config["task"] in tasks.TEXT_TASKS else None


def headline(fields, long=False):
    """The metric a person watches: bits per char for text, else the sequence error."""
    if "bits_per_char" in fields:
        value = f"{fields['bits_per_char']:.3f}"
        return f"bits/char {value}" if long else {"bpc": value}
    value = f"{fields['sequence_error']:.4f}" if long else f"{fields['sequence_error']:.3f}"
    return f"sequence error {value}" if long else {"err": value}
