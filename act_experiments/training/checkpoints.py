"""A run's files on disk: checkpoints and logs, each written so that a stop never loses one.

What a run writes into its output folder (``--out``):

    log.jsonl       one JSON object per line:
                    {"kind": "train", "iteration", "loss", "sequence_error", "mean_ponder",
                     "mean_N", "mean_R", "max_N" (the largest N(t))}  over the last
                    --log-every iterations, and
                    {"kind": "eval", ...the same fields on the held-out set..., "time_s",
                     "train_time_s"}  every --eval-every iterations (and at 0 and at the end)
    checkpoint.npz  parameters, optimiser state, iteration, data-generator state, the open log
                    window and how far the log had got: --resume continues exactly as if the
                    run had never stopped
    summary.json    config (its "max_ponder" is the cap M), final evaluation (with error and ponder
                    per difficulty, and "max_N", the largest N(t)), timings

Runs written before the files took the code's names called the largest N(t) "max_ponder" in
log.jsonl and summary.json's final evaluation (and sweeps in runs.csv); ``upgrade_record`` renames
it where such a file is read (``read_log``, ``read_summary``, the sweeps' reading), so that an old
run folder still resumes and reads.

Files are replaced in one step (``act_experiments.files.atomic_write``): a crash leaves the old
file or the new one, never half of one. The log only grows, and a checkpoint records how many of its bytes it
counts (``log_bytes``), so that a resumed run cuts the log back to its checkpoint
(``truncate_log``) and writes the records after it again. A file that cannot be read back as the
run left it raises ``Damaged``; a file that cannot be written (a full disk, a read-only file
system, no permission) raises ``WriteFailed``, and either way the message names the file.
"""

import json
from pathlib import Path

import numpy as np

# WriteFailed as well: the training loop, the sweeps and the command line take it from here,
# with the rest of a run's files
from act_experiments.files import WriteFailed, atomic_write, writing  # noqa: F401


class Damaged(ValueError):
    """A checkpoint or log that cannot be read back as the run left it (the message names the file)."""


def upgrade_record(record):
    """A run's measured record (a log.jsonl line, summary.json's final evaluation, a row of a
    sweep's runs.csv) with the names the code uses: files written before they took them called the
    largest N(t) "max_ponder", which now means the cap M alone (a record holds no cap)."""
    return {("max_N" if k == "max_ponder" else k): v for k, v in record.items()}


def read_summary(path):
    """A run's summary.json, its final evaluation with the code's names (``upgrade_record``)."""
    summary = json.loads(Path(path).read_text())
    return {**summary, "final_eval": upgrade_record(summary["final_eval"])}


def open_log(path):
    """log.jsonl opened to append records (binary: a checkpoint counts its bytes with tell())."""
    with writing(path):
        return open(path, "ab")


def save_checkpoint(path, state, meta):
    """Write arrays and a JSON header to ``path`` (an .npz) atomically: a crash never leaves half a file."""
    arrays = {f"state/{k}": np.asarray(v) for k, v in state.items()}
    with atomic_write(path, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta)), **arrays)


# what the header of a training run's checkpoint holds at least
RUN_HEADER = ("iteration", "config", "backend", "data_rng", "window")


def load_checkpoint(path, needs=RUN_HEADER):
    """(state, meta) as saved by save_checkpoint. Raises Damaged (a ValueError) naming the file,
    also when the header lacks a key of ``needs`` (by default a training run's)."""
    try:
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            state = {k[len("state/"):]: f[k] for k in f.files if k.startswith("state/")}
    except FileNotFoundError:
        raise
    except Exception as err:    # a cut or garbled file fails in many ways (zip, npy, JSON): all mean "damaged"
        raise Damaged(f"{path} is damaged or not a checkpoint ({type(err).__name__}: {err})") from None
    if not isinstance(meta, dict) or not set(needs) <= set(meta):
        raise Damaged(f"{path} is damaged or not a checkpoint (its header lacks the run's state)")
    return state, meta


def _parse_log(lines, path):
    """The records of log lines (bytes or str) as dicts; Damaged naming the file and line."""
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
    """The records of a log.jsonl as a list of dicts, fields as the code names them
    (``upgrade_record``); Damaged naming the file if it is damaged."""
    with open(path, "rb") as f:
        return [upgrade_record(record) for record in _parse_log(f, path)]


def log_at_checkpoint(path, meta):
    """The bytes of log.jsonl as they were when the checkpoint ``meta`` was written.

    A run logs past its last checkpoint, so the log is usually longer; the records after it are
    written again when the run continues. Raises Damaged naming the log if it is damaged.
    """
    path = Path(path)
    raw = path.read_bytes() if path.exists() else b""
    if "log_bytes" not in meta:
        raise Damaged(f"{path.parent / 'checkpoint.npz'} does not say how far the log had got: it was not "
                      "written by this course's training loop")
    size = meta["log_bytes"]
    if len(raw) < size:
        raise Damaged(f"{path} is damaged: it holds {len(raw)} bytes, the checkpoint saw {size}")
    kept = raw[:size]
    records = _parse_log(kept.splitlines(), path)
    if (kept and not kept.endswith(b"\n")) or any(r["iteration"] > meta["iteration"] for r in records):
        raise Damaged(f"{path} is damaged: it does not match the checkpoint at iteration {meta['iteration']}")
    return kept


def truncate_log(path, meta):
    """Cut log.jsonl back to the checkpoint ``meta`` (see log_at_checkpoint), atomically."""
    path = Path(path)
    kept = log_at_checkpoint(path, meta)
    if path.exists() and path.read_bytes() == kept:
        return
    with atomic_write(path, "wb") as f:   # a kill while resuming must not cut the log short
        f.write(kept)
