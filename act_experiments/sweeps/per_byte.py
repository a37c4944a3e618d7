"""What a characters sweep measures beyond its logs: ponder and bits byte by byte (section 3.5).

After the runs of a characters sweep have trained, each network is read back from its
checkpoint and run once more, on the CPU, over

  - the run's own held-out set (the same chunks its evaluations used), to measure ponder and
    bits per character for each kind of input byte (text.DETAIL_CLASSES), and
  - a fixed passage of held-out text (text.passage), cut into consecutive chunks of seq_len
    bytes, each chunk its own sequence from the zero state as in training: the paper's Figure 23.

``collect`` writes what the sweep commits for the task (see ``act_experiments.sweeps.launch``):

    runs.csv      the sweep's row per run with bits per char in place of sequence error, and the
                  mean ponder of the first step of a chunk (just after the reset) and of the rest
    curves.csv    one row per run and evaluation: iteration, bits per char, mean ponder
    classes.csv   one row per run and byte class, two ways: by the byte just read (count, mean
                  ponder, mean bits of its next byte) and by the byte to be predicted
                  (target_count, target_ponder, target_bits). The first step of each chunk is
                  left out: its ponder answers the reset more than the byte.
    passage.csv   one row per run and passage byte: chunk, position, byte, class, rho, N, bits

The read-back uses the PyTorch model whichever backend trained the run: both backends save
the same parameters under the same names.
"""

import math
from pathlib import Path

import numpy as np

from act_experiments.data import tasks, text
from act_experiments.training.backends import load_backend
from act_experiments.training.config import EVAL_STREAM
from act_experiments.tables import write_csv
from act_experiments.sweeps.writing import run_record, write_runs

PASSAGE_CHUNKS = 4          # the passage: this many consecutive chunks of seq_len bytes


def per_byte(backend, x, y, batch_size=64):
    """rho (B, T), N (B, T) and the bits of each target byte, -log2 p(y) (B, T), no gradient.

    x (B, T, 256) one-hot inputs, y (B, T) next bytes; run in slices of batch_size rows.
    """
    import torch
    rho, N, bits = [], [], []
    as_t = dict(dtype=backend.dtype, device=backend.device)
    with torch.no_grad():
        for start in range(0, x.shape[0], batch_size):
            part = slice(start, start + batch_size)
            y_hat, n, r = backend.model(torch.as_tensor(x[part], **as_t))
            logp = torch.log_softmax(y_hat, dim=-1)
            target = torch.as_tensor(y[part], dtype=torch.int64, device=backend.device)
            picked = logp.gather(-1, target[..., None])[..., 0]
            rho.append((n.to(r.dtype) + r).cpu().numpy())
            N.append(n.cpu().numpy())
            bits.append((-picked / math.log(2)).cpu().numpy())
    return (np.concatenate(rho).astype(np.float64), np.concatenate(N),
            np.concatenate(bits).astype(np.float64))


def held_out_set(config):
    """The run's held-out chunks, drawn again exactly as the training loop drew them."""
    rng = np.random.default_rng([config["eval_seed"], EVAL_STREAM])
    return tasks.make_held_out(config["task"], rng, config["eval_size"], **config["task_options"])


def passage_batch(config, chunks):
    """(codes (C, T), x, y, mask): a fixed passage of held-out text as C = ``chunks`` consecutive chunks."""
    T, data = config["task_options"]["seq_len"], config["task_options"]["data"]
    codes = text.passage(data, length=chunks * T + 1).astype(np.int64)
    rows = np.stack([codes[k * T:(k + 1) * T + 1] for k in range(chunks)])   # each one byte longer
    x, y, mask = text.sequences(rows)
    return rows[:, :-1], x, y, mask


def analyse(run_id, folder, chunks):
    """The first-step and later-step ponder, classes.csv rows and passage.csv rows of one run."""
    backend, config = load_backend(folder)
    x, y, _ = held_out_set(config)
    rho, _, bits = per_byte(backend, x, y)
    inputs = x.argmax(axis=2)
    read = text.detail_class(inputs)
    # the class of the byte to predict needs the byte before it, which is the input itself
    to_predict = text.detail_class(np.concatenate([inputs, y[:, -1:]], axis=1))[:, 1:]
    steps = {"ponder_first_step": round(float(rho[:, 0].mean()), 5),
             "ponder_later_steps": round(float(rho[:, 1:].mean()), 5)}
    later = np.arange(rho.shape[1])[None, :] > 0          # the classes leave out step 0
    class_rows = []
    for i, name in enumerate(text.DETAIL_CLASSES):
        row = {"run": run_id, "class": name}
        for prefix, classes in (("", read), ("target_", to_predict)):
            sel = (classes == i) & later
            row[prefix + "count"] = int(sel.sum())
            row[prefix + "ponder"] = round(float(rho[sel].mean()), 5) if sel.any() else None
            row[prefix + "bits"] = round(float(bits[sel].mean()), 5) if sel.any() else None
        class_rows.append(row)
    codes, px, py, _ = passage_batch(config, chunks)
    prho, pN, pbits = per_byte(backend, px, py)
    pclass = text.detail_class(codes)
    passage_rows = []
    for k in range(codes.shape[0]):
        for t in range(codes.shape[1]):
            passage_rows.append({"run": run_id, "chunk": k, "position": t, "byte": int(codes[k, t]),
                                 "class": text.DETAIL_CLASSES[pclass[k, t]], "rho": round(float(prho[k, t]), 5),
                                 "N": int(pN[k, t]), "bits": round(float(pbits[k, t]), 5)})
    return steps, class_rows, passage_rows


def collect(jobs, out_dir, chunks=PASSAGE_CHUNKS):
    """Read back and analyse every run; write the four CSV files; returns the rows of runs.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    runs, curves, classes, passage = [], [], [], []
    for run_id, options in jobs:
        folder = Path(options["out"])
        row, run_curves, _ = run_record(run_id, folder, "bits_per_char")
        steps, c, p = analyse(run_id, folder, chunks)
        runs.append({**row, **steps})
        curves += run_curves
        classes += c
        passage += p
    write_runs(out_dir / "runs.csv", runs)
    write_csv(out_dir / "curves.csv", curves, ["run", "iteration", "bits_per_char", "mean_ponder"])
    write_csv(out_dir / "classes.csv", classes, list(classes[0]))
    write_csv(out_dir / "passage.csv", passage, list(passage[0]))
    return runs
