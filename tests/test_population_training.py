"""Runs trained as one population write what each run trained alone writes: the same logs,
summaries and checkpoints, to rounding, and they stop and resume as single runs do."""

import json
import math
import os
import signal

import numpy as np
import pytest

from act_experiments.training import loop
from conftest import Interrupted, crashing
from act_experiments.training.populations import TorchPopulation as Population
from act_experiments.training.backends import TorchBackend

TASKS = {
    "parity": dict(task="parity", bits=6, hidden=16, batch_size=16),
    "logic": dict(task="logic", max_vectors=3, max_gates=3, hidden=16, batch_size=8),
    "addition": dict(task="addition", max_numbers=2, max_digits=2, hidden=16, batch_size=8),
    "sort": dict(task="sort", max_length=4, hidden=16, batch_size=8),
    "characters": dict(task="characters", seq_len=8, hidden=16, batch_size=8),
}
# what makes each member its own run: seed, tau, epsilon, learning rate, and a no-ACT baseline
MEMBERS = {"a": dict(seed=0, tau=1e-3), "b": dict(seed=1, tau=1e-2, epsilon=0.05, lr=3e-3),
           "noact": dict(seed=2, no_act=True, lr=1e-3)}
COMMON = dict(dtype="float64", device="cpu", lr=1e-2, iterations=30, eval_every=10, eval_size=20, log_every=5,
              checkpoint_every=1e9)
TIMES = ("time_s", "train_time_s")


def configs(task, folder, iterations=30):
    return [loop.make_config({**TASKS[task], **COMMON, **member, "iterations": iterations,
                                  "out": str(folder / name)}, TorchBackend)
            for name, member in MEMBERS.items()]


def close(a, b, where):
    """Two log records or evaluations equal but for the times: integers exactly, floats to 1e-9."""
    assert set(a) == set(b), where
    for key in a:
        if key in TIMES:
            continue
        if isinstance(a[key], float) or isinstance(b[key], float):
            assert math.isclose(a[key], b[key], rel_tol=1e-9, abs_tol=1e-12), (where, key, a[key], b[key])
        elif isinstance(a[key], list):
            assert len(a[key]) == len(b[key]), where
            for i, (u, v) in enumerate(zip(a[key], b[key])):
                if isinstance(u, dict):
                    close(u, v, (where, key, i))
                else:                      # N_counts: [N, count] pairs, integers
                    assert u == v, (where, key, i)
        else:
            assert a[key] == b[key], (where, key)


def same_run(folder_a, folder_b):
    log_a, log_b = (loop.read_log(f / "log.jsonl") for f in (folder_a, folder_b))
    assert len(log_a) == len(log_b) and len(log_a) > 0
    for i, (ra, rb) in enumerate(zip(log_a, log_b)):
        close(ra, rb, (folder_a.name, i))
    sa, sb = (json.loads((f / "summary.json").read_text()) for f in (folder_a, folder_b))
    close(sa["final_eval"], sb["final_eval"], "final_eval")
    state_a, meta_a = loop.load_checkpoint(folder_a / "checkpoint.npz")
    state_b, meta_b = loop.load_checkpoint(folder_b / "checkpoint.npz")
    assert meta_a["iteration"] == meta_b["iteration"] and meta_a["data_rng"] == meta_b["data_rng"]
    assert set(state_a) == set(state_b)
    for key in state_a:
        assert np.allclose(state_a[key], state_b[key], rtol=1e-9, atol=1e-12), key


@pytest.mark.slow
@pytest.mark.parametrize("task", list(TASKS))
def test_a_population_writes_what_its_runs_write_alone(tmp_path, task):
    alone = configs(task, tmp_path / "alone")
    for config in alone:
        loop.train(config, TorchBackend, progress=False)
    together = configs(task, tmp_path / "together")
    summaries = loop.train_population(together, TorchBackend, Population, progress=False)
    assert len(summaries) == len(together)
    for config in alone:
        name = config["out"].rsplit("/", 1)[-1]
        same_run(tmp_path / "alone" / name, tmp_path / "together" / name)
    ponders = [json.loads((tmp_path / "together" / n / "summary.json").read_text())["final_eval"]["max_N"]
               for n in MEMBERS]
    assert ponders[-1] == 1 and max(ponders) >= 1          # the no-ACT member never ponders


def test_each_run_gets_its_share_of_the_training_time(tmp_path):
    together = configs("parity", tmp_path, iterations=10)
    summaries = loop.train_population(together, TorchBackend, Population, progress=False)
    shares = {s["train_time_s"] for s in summaries}
    assert len(shares) == 1 and shares.pop() > 0
    assert all(s["time_s"] >= s["train_time_s"] * len(summaries) * 0.99 for s in summaries)


@pytest.mark.slow
def test_a_killed_population_resumes_exactly_together_or_alone(tmp_path):
    whole = configs("logic", tmp_path / "whole")
    loop.train_population(whole, TorchBackend, Population, progress=False)
    killed = configs("logic", tmp_path / "killed")
    with pytest.raises(Interrupted):
        loop.train_population(killed, TorchBackend, crashing(Population, after=17), progress=False)
    # every member checkpointed at its evaluation at 10; two resume together, one alone
    prepared = [loop.prepare({"out": c["out"]}, TorchBackend, resume=True) for c in killed]
    assert {p[1][1]["iteration"] for p in prepared} == {10}
    loop.train_population([p[0] for p in prepared[:2]], TorchBackend, Population,
                              checkpoints=[p[1] for p in prepared[:2]], progress=False)
    loop.train(prepared[2][0], TorchBackend, checkpoint=prepared[2][1], progress=False)
    for name in MEMBERS:
        same_run(tmp_path / "whole" / name, tmp_path / "killed" / name)


def test_runs_saved_alone_resume_as_a_population(tmp_path):
    whole = configs("parity", tmp_path / "whole")
    loop.train_population(whole, TorchBackend, Population, progress=False)
    part = configs("parity", tmp_path / "part", iterations=10)
    for config in part:
        loop.train(config, TorchBackend, progress=False)
    prepared = [loop.prepare({"out": c["out"], "iterations": 30}, TorchBackend, resume=True) for c in part]
    loop.train_population([p[0] for p in prepared], TorchBackend, Population,
                              checkpoints=[p[1] for p in prepared], progress=False)
    for name in MEMBERS:
        same_run(tmp_path / "whole" / name, tmp_path / "part" / name)


def test_a_population_stops_on_a_signal_with_every_member_checkpointed(tmp_path, monkeypatch):
    class SignalledAfter(Population):
        calls = 0

        def train_step(self, x, y, mask):
            SignalledAfter.calls += 1
            if SignalledAfter.calls == 13:
                os.kill(os.getpid(), signal.SIGTERM)
            return super().train_step(x, y, mask)

    stopped = configs("parity", tmp_path)
    with pytest.raises(loop.Stopped) as info:
        loop.train_population(stopped, TorchBackend, SignalledAfter, progress=False)
    assert info.value.iteration == 13 and info.value.exit_code == 143
    for config in stopped:
        _, meta = loop.load_checkpoint(f"{config['out']}/checkpoint.npz")
        assert meta["iteration"] == 13


def test_population_refusals(tmp_path):
    good = configs("parity", tmp_path)
    with pytest.raises(ValueError, match="at least one"):
        loop.train_population([], TorchBackend, Population)
    longer = [good[0], {**good[1], "iterations": 40}]
    with pytest.raises(ValueError, match="iterations"):
        loop.train_population(longer, TorchBackend, Population)
    with pytest.raises(ValueError, match="own out folder"):
        loop.train_population([good[0], good[0]], TorchBackend, Population)
    with pytest.raises(ValueError, match="one entry per config"):
        loop.train_population(good, TorchBackend, Population, checkpoints=[None])


def test_the_shared_keys_are_the_populations_own():
    from act_engine import members, numpy_population, torch_population
    assert numpy_population.SHARED == members.SHARED
    assert loop.SHARED_BY_POPULATION == members.SHARED + ("device",) + loop.IN_STEP
    assert torch_population.SHARED == members.SHARED + ("device",)
