"""Files written before they took the code's names still resume and read.

Before issue 39 a run's log.jsonl, its summary.json's final evaluation and a sweep's runs.csv
called the largest N(t) max_ponder (the code's max_N; max_ponder is the cap M alone).
``checkpoints.upgrade_record`` renames it where such a file is read, and
``writing.upgrade_runs_csv`` (scripts/upgrade_results.py) rewrites an old runs.csv once.
"""

import json

import numpy as np

from act_experiments.files import ROOT
from act_experiments.sweeps import reading, writing
from act_experiments.training import checkpoints, loop
from act_experiments.training.backends import NumpyBackend

RUN = dict(task="parity", bits=6, cell="rnn", hidden=8, batch_size=8, eval_every=3, eval_size=16, log_every=3,
           lr=1e-2)


def without_time(record):
    return {k: v for k, v in record.items() if k not in ("time_s", "train_time_s")}


def old_line(line):
    """A log line as the training loop wrote it before: max_N called max_ponder, in its place."""
    record = json.loads(line)
    return (json.dumps({("max_ponder" if k == "max_N" else k): v for k, v in record.items()}) + "\n").encode()


def write_with_old_names(folder):
    """Turn a run folder into one the training loop wrote before the rename: the log's records and
    summary.json's final evaluation say max_ponder, and the checkpoint counts the log's old bytes."""
    state, meta = checkpoints.load_checkpoint(folder / "checkpoint.npz")
    raw = (folder / "log.jsonl").read_bytes()
    kept = b"".join(old_line(line) for line in raw[:meta["log_bytes"]].splitlines())
    rest = b"".join(old_line(line) for line in raw[meta["log_bytes"]:].splitlines())
    (folder / "log.jsonl").write_bytes(kept + rest)
    checkpoints.save_checkpoint(folder / "checkpoint.npz", state, {**meta, "log_bytes": len(kept)})
    summary = json.loads((folder / "summary.json").read_text())
    final = {("max_ponder" if k == "max_N" else k): v for k, v in summary["final_eval"].items()}
    (folder / "summary.json").write_text(json.dumps({**summary, "final_eval": final}))


def test_a_run_folder_with_the_old_names_reads_and_resumes_exactly(tmp_path):
    loop.run({**RUN, "iterations": 8, "out": str(tmp_path / "straight")}, NumpyBackend, progress=False)
    loop.run({**RUN, "iterations": 4, "out": str(tmp_path / "old")}, NumpyBackend, progress=False)
    new_names = checkpoints.read_log(tmp_path / "old" / "log.jsonl")
    write_with_old_names(tmp_path / "old")
    assert b'"max_ponder"' in (tmp_path / "old" / "log.jsonl").read_bytes()
    assert checkpoints.read_log(tmp_path / "old" / "log.jsonl") == new_names          # read with the code's names
    final = checkpoints.read_summary(tmp_path / "old" / "summary.json")["final_eval"]
    assert "max_N" in final and "max_ponder" not in final

    loop.run({"out": str(tmp_path / "old"), "iterations": 8}, NumpyBackend, resume=True, progress=False)
    a, meta_a = checkpoints.load_checkpoint(tmp_path / "straight" / "checkpoint.npz")
    b, meta_b = checkpoints.load_checkpoint(tmp_path / "old" / "checkpoint.npz")
    assert sorted(a) == sorted(b) and all(np.array_equal(a[k], b[k]) for k in a)
    assert meta_a["iteration"] == meta_b["iteration"] == 8 and meta_a["data_rng"] == meta_b["data_rng"]
    # the old lines stay as they were, the new ones use the code's names, and every record reads as
    # the run that never stopped has it (stopping at 4 added records there, as any resume does)
    straight = {(r["kind"], r["iteration"]): r for r in checkpoints.read_log(tmp_path / "straight" / "log.jsonl")}
    resumed = checkpoints.read_log(tmp_path / "old" / "log.jsonl")
    assert all("max_N" in r and "max_ponder" not in r for r in resumed)
    # (the train record at 6 covers 5-6 only: the stop at 4 cut its window short)
    compared = 0
    for r in resumed:
        key = (r["kind"], r["iteration"])
        if key in straight and key != ("train", 6):
            assert without_time(r) == without_time(straight[key]), key
            compared += 1
    assert compared == 6          # evaluations at 0, 3, 6, 8 and training windows at 3 and 8
    on_disk = json.loads((tmp_path / "old" / "summary.json").read_text())["final_eval"]
    assert "max_N" in on_disk and "max_ponder" not in on_disk       # the resumed run wrote its summary anew


def test_an_old_runs_csv_reads_and_is_rewritten_once_cell_for_cell(tmp_path, capsys):
    committed = ROOT / "results" / "parity8" / "runs.csv"
    header, body = committed.read_text().split("\n", 1)
    assert "max_N" in header.split(",") and "max_ponder" not in header.split(",")
    folder = tmp_path / "parity8"
    folder.mkdir()
    (folder / "runs.csv").write_text(header.replace("max_N", "max_ponder") + "\n" + body)
    old, new = reading.load_sweep(folder, tables=())["runs"], reading.load_sweep(committed.parent, tables=())["runs"]
    assert old == new and all("max_N" in r for r in old)
    assert writing.upgrade_main([str(folder)]) == 0
    assert (folder / "runs.csv").read_bytes() == committed.read_bytes()
    assert writing.upgrade_runs_csv(folder) is False                               # once only
    assert capsys.readouterr().out == f"{folder}: rewritten\n"
