"""Character prediction with and without ACT (Graves 2016, section 3.5): a tau sweep and its analysis.

    python scripts/characters.py --name characters_small --taus 6e-3,3e-2,1e-1 --seeds 1 \\
        --workers 2 --seq-len 32 --hidden 128 --batch-size 64 --lr 3e-3 --max-ponder 20 \\
        --iterations 400 --eval-every 50 --eval-size 200

Every (tau, seed) pair, and each seed with --no-act, is one run of the shared training loop on
the task "characters" (act_experiments/text.py), started by scripts/sweep.py's worker in a pool of
processes. Every run gets the same number of iterations: a fixed budget of data, not of compute
(an ACT run that ponders more does more work per byte). Then each trained network is read back
from its checkpoint and run once more, on the CPU, over

  - the run's own held-out set (the same chunks its evaluations used), to measure ponder and
    bits per character for each kind of input byte (text.DETAIL_CLASSES), and
  - a fixed passage of held-out text (text.passage), cut into consecutive chunks of --seq-len
    bytes, each chunk its own sequence from the zero state as in training: the paper's Figure 23.

Runs are written to runs/sweeps/<name>/ (not committed); results go to results/<name>/:

    runs.csv      one row per run: tau (empty without ACT), act, seed, held-out bits per char,
                  mean and max ponder, loss, iterations, training seconds; and the mean ponder
                  of the first step of a chunk (just after the reset) and of the later steps
    curves.csv    one row per run and evaluation: iteration, bits per char, mean ponder
    classes.csv   one row per run and byte class (text.DETAIL_CLASSES), two ways: by the byte just
                  read (count, mean ponder, mean bits of its next byte) and by the byte to be
                  predicted (target_count, target_ponder, target_bits). The first step of each
                  chunk is left out: its ponder answers the reset more than the byte.
    passage.csv   one row per run and passage byte: chunk, position, byte, class, rho, N, bits
    sweep.json    the command, shared options, corpus (size, sha256), baselines, wall time, machine

Extra options after the script's own go to every run (see python -m act_torch.train --help;
--task is set here). Run it again with the same arguments to finish an interrupted sweep:
finished runs are kept, and a run that was stopped continues from its last checkpoint (every
--eval-every iterations, every --checkpoint-every seconds and on Ctrl-C) exactly as if it had
not stopped. As in scripts/sweep.py, the sweep's settings, the sha256 of the text among them,
are kept in runs/sweeps/<name>/sweep_config.json: a rerun with other settings or another text
is refused unless --force, and a lock keeps two sweeps of one name from running at once. Then
draw the figures with scripts/plot_characters.py.
"""

import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sweep  # noqa: E402  (the worker, the job list, the checks, the lock, the CSV writer)

from act_experiments import training  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PASSAGE_CHUNKS = 4          # the passage: this many consecutive chunks of --seq-len bytes


def parse_args(argv=None):
    ap = training.OneLineParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True, help="results/<name>/ and runs/sweeps/<name>/")
    ap.add_argument("--taus", required=True, help="comma-separated time penalties, e.g. 6e-3,3e-2")
    ap.add_argument("--seeds", type=int, default=1, help="networks per tau (seeds 0..seeds-1)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the no-ACT runs")
    ap.add_argument("--workers", type=int, default=2, help="parallel runs")
    ap.add_argument("--device", default="cpu", help="device of every training run (cpu, cuda)")
    ap.add_argument("--passage-chunks", type=int, default=PASSAGE_CHUNKS,
                    help=f"chunks of held-out text in the ponder passage (default {PASSAGE_CHUNKS})")
    ap.add_argument("--force", action="store_true",
                    help="delete every earlier run of a sweep of this name, finished or not, and start over")
    args, tokens = ap.parse_known_args(argv)
    try:
        args.taus = [float(t) for t in args.taus.split(",") if t]
    except ValueError as err:
        ap.error(f"--taus: {err}")
    if not args.taus or args.seeds < 1 or args.workers < 1 or args.passage_chunks < 1:
        ap.error("need at least one tau, one seed, one worker and one passage chunk")
    sweep.check_name(ap, args.name)
    args.task = "characters"
    return args, tokens


# ---------------------------------------------------------------------------------------------
# Reading a trained network back and measuring it byte by byte
# ---------------------------------------------------------------------------------------------


def load_backend(folder, device="cpu"):
    """The TorchBackend of a finished run, with its final parameters, and the run's config."""
    from act_experiments.training import load_checkpoint
    from act_torch.train import TorchBackend
    state, meta = load_checkpoint(Path(folder) / "checkpoint.npz")
    config = dict(meta["config"], device=device)
    backend = TorchBackend(config)
    backend.load_state_dict(state)
    return backend, config


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
    from act_experiments import tasks, training
    rng = np.random.default_rng([config["eval_seed"], training.EVAL_STREAM])
    return tasks.make_held_out(config["task"], rng, config["eval_size"], **config["task_options"])


def passage_batch(config, chunks):
    """(codes (K, T), x, y, mask): a fixed passage of held-out text as K consecutive chunks."""
    from act_experiments import text
    T, data = config["task_options"]["seq_len"], config["task_options"]["data"]
    codes = text.passage(data, length=chunks * T + 1).astype(np.int64)
    rows = np.stack([codes[k * T:(k + 1) * T + 1] for k in range(chunks)])   # each one byte longer
    x, y, mask = text.sequences(rows)
    return rows[:, :-1], x, y, mask


def analyse(run_id, folder, chunks):
    """The first-step and later-step ponder, classes.csv rows and passage.csv rows of one run."""
    from act_experiments import text
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


# ---------------------------------------------------------------------------------------------
# Collecting the runs
# ---------------------------------------------------------------------------------------------


def collect(jobs, out_dir, chunks):
    """Read back and analyse every run; write the four CSV files; returns the rows of runs.csv."""
    out_dir.mkdir(parents=True, exist_ok=True)
    runs, curves, classes, passage = [], [], [], []
    for run_id, options in jobs:
        folder = Path(options["out"])
        row, run_curves, _ = sweep.run_record(run_id, folder, "bits_per_char")
        runs.append(row)
        curves += run_curves
        steps, c, p = analyse(run_id, folder, chunks)
        runs[-1].update(steps)
        classes += c
        passage += p
    sweep.write_csv(out_dir / "runs.csv", runs, list(runs[0]))
    sweep.write_csv(out_dir / "curves.csv", curves, ["run", "iteration", "bits_per_char", "mean_ponder"])
    sweep.write_csv(out_dir / "classes.csv", classes, list(classes[0]))
    sweep.write_csv(out_dir / "passage.csv", passage, list(passage[0]))
    return runs


def corpus_facts(data):
    """Size, sha256 and the unigram and bigram baselines (bits per byte) of the text."""
    from act_experiments import text
    train, held_out = text.split(data)
    return {"data": data or "pydoc_data.topics", "bytes": int(len(train) + len(held_out)),
            "held_out_bytes": int(len(held_out)), "sha256": text.corpus_sha256(data),
            "unigram_bits": round(text.unigram_bits(train, held_out), 4),
            "bigram_bits": round(text.bigram_bits(train, held_out), 4)}


def main(argv=None):
    args, tokens = parse_args(argv)
    shared = sweep.passthrough_options(tokens, "characters.py")
    jobs = sweep.jobs_for(args, shared)
    configs = sweep.check_jobs(jobs, "characters.py")
    config = sweep.sweep_config(args, jobs, configs)
    with sweep.open_sweep(sweep.run_folder(args.name), config, args.force, "characters.py"):
        out_dir = ROOT / "results" / args.name
        print(f"{len(jobs)} character runs on {args.workers} workers ({args.device}) -> {out_dir.relative_to(ROOT)}")
        start = time.perf_counter()
        trained = sweep.run_pool(jobs, args.workers, "characters.py")
        train_wall = time.perf_counter() - start
        import torch
        torch.set_num_threads(min(4, os.cpu_count() or 1))
        runs = collect(jobs, out_dir, args.passage_chunks)
        analysis = time.perf_counter() - start - train_wall
        data = shared.get("data")
        old = out_dir / "sweep.json"
        if not trained and old.exists():
            # nothing was trained this time (only the analysis ran again): keep the training time
            train_wall = json.loads(old.read_text()).get("train_wall_time_s", train_wall)
        wall = train_wall + analysis
        meta = {"command": "python scripts/characters.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                "task": "characters", "taus": args.taus, "seeds": args.seeds, "baseline": not args.no_baseline,
                "device": args.device, "shared_options": shared, "passage_chunks": args.passage_chunks,
                "corpus": corpus_facts(data), "runs": len(runs), "workers": args.workers,
                "train_wall_time_s": round(train_wall, 1), "analysis_time_s": round(analysis, 1),
                "wall_time_s": round(wall, 1),
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} "
                           f"{platform.python_version()}, torch {torch.__version__}"
                           + (f", {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else "")}
        sweep.write_json(out_dir / "sweep.json", meta)
    for r in runs:
        tau = "no ACT" if not r["act"] else f"tau {r['tau']:g}"
        print(f"{tau:>12s} seed {r['seed']}: {r['bits_per_char']:.3f} bits/char, mean ponder {r['mean_ponder']:.2f}")
    print(f"{len(runs)} runs in {wall:.0f} s; results in {out_dir.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
