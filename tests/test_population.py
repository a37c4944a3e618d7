"""A population of K networks trained as one program follows each member trained alone."""

import numpy as np
import pytest
import torch

from act_experiments.data import tasks
from act_experiments.training import loop
from act_experiments.training.populations import TorchPopulation as Population
from act_experiments.training.backends import TorchBackend

TASKS = {
    "parity": dict(task="parity", bits=6, hidden=16, batch_size=16),
    "logic": dict(task="logic", max_vectors=3, max_gates=3, hidden=16, batch_size=8),
    "addition": dict(task="addition", max_numbers=2, max_digits=2, hidden=16, batch_size=8, max_ponder=20),
}
# what makes each member its own run: seed, tau, epsilon, learning rate, a no-ACT baseline (M = 1)
# and a fixed-computation control (F = 3 updates per input, no halting unit)
MEMBERS = [dict(seed=0, tau=1e-3), dict(seed=1, tau=1e-2, epsilon=0.05, lr=3e-3), dict(seed=2, no_act=True, lr=1e-3),
           dict(seed=3, fixed_ponder=3, lr=3e-3)]


def configs_for(task, members=MEMBERS):
    shared = dict(TASKS[task], dtype="float64", device="cpu", lr=1e-2, out="unused")
    if shared.get("max_ponder") is not None:
        members = [m if m.get("no_act") or m.get("fixed_ponder") else dict(m, max_ponder=shared["max_ponder"])
                   for m in members]
        shared = {k: v for k, v in shared.items() if k != "max_ponder"}
    return [loop.make_config({**shared, **m}, TorchBackend) for m in members]


def batches(config, n):
    """The first n training batches of a run: its own data stream, as loop.train draws it."""
    rng = np.random.default_rng([config["seed"], loop.DATA_STREAM])
    return [tasks.make_batch(config["task"], rng, config["batch_size"], **config["task_options"]) for _ in range(n)]


@pytest.mark.slow
@pytest.mark.parametrize("task", list(TASKS))
def test_each_member_follows_its_run_trained_alone(task):
    configs, steps = configs_for(task), 30
    alone = []
    for config in configs:
        backend = TorchBackend(config)
        log = [backend.train_step(*b) for b in batches(config, steps)]
        alone.append((log, backend.params_numpy()))
    pop = Population(configs)
    data = [batches(c, steps) for c in configs]
    for i in range(steps):
        x, y, mask = (np.stack([d[i][j] for d in data]) for j in range(3))
        for k, stats in enumerate(pop.train_step(x, y, mask)):
            ref = alone[k][0][i]
            assert stats["loss"] == pytest.approx(ref["loss"], rel=1e-9, abs=1e-12), (k, i)
            assert np.array_equal(stats["N"], ref["N"]) and np.array_equal(stats["wrong"], ref["wrong"]), (k, i)
            assert np.allclose(stats["rho"], ref["rho"], rtol=1e-9, atol=1e-12), (k, i)
    ponders = {int(alone[k][0][-1]["N"].max()) for k in range(2)}
    assert max(ponders) > 1, "the ACT members should ponder"
    for k, (_, params) in enumerate(alone):
        for name, value in pop.member_params(k).items():
            assert np.allclose(value, params[name], rtol=1e-9, atol=1e-12), (k, name)


def test_evaluate_changes_nothing_and_matches_alone():
    configs = configs_for("logic")
    pop = Population(configs)
    before = {k: v.detach().clone() for k, v in pop.params.items()}
    data = [batches(c, 1)[0] for c in configs]
    x, y, mask = (np.stack([d[j] for d in data]) for j in range(3))
    results = pop.evaluate(x, y, mask)
    for k, config in enumerate(configs):
        ref = TorchBackend(config).evaluate(*data[k])
        assert results[k]["loss"] == pytest.approx(ref["loss"], rel=1e-12)
        assert np.array_equal(results[k]["N"], ref["N"])
    assert all(torch.equal(before[k], v) for k, v in pop.params.items())


def test_members_with_different_caps_halt_by_their_own():
    configs = configs_for("parity", [dict(seed=0, halting_bias=-4.0, max_ponder=m) for m in (1, 3, 7)])
    pop = Population(configs)
    x, y, mask = (np.stack([batches(c, 1)[0][j] for c in configs]) for j in range(3))
    stats = pop.evaluate(x, y, mask)
    assert [int(s["N"].max()) for s in stats] == [1, 3, 7]      # sigmoid(-4): every row runs to its cap


def test_batches_must_have_one_row_block_per_member():
    configs = configs_for("parity", [dict(seed=0), dict(seed=1)])
    x, y, mask = batches(configs[0], 1)[0]
    with pytest.raises(ValueError, match="K=2"):
        Population(configs).train_step(x, y, mask)


def test_member_adam_is_torch_adam_per_member():
    """act_engine.adam.MemberAdam: member k steps as torch.optim.Adam with lr[k], also after a
    member is loaded from a checkpoint of another age; a None gradient counts as zeros."""
    from act_engine.adam import MemberAdam
    gen = torch.Generator().manual_seed(0)
    shapes = {"W": (3, 2), "b": (2,)}
    lr = [1e-2, 3e-3]
    params = {n: torch.randn(2, *s, generator=gen, dtype=torch.float64) for n, s in shapes.items()}
    alone = [{n: p[k].clone().requires_grad_() for n, p in params.items()} for k in range(2)]
    torch_adams = [torch.optim.Adam(list(a.values()), lr=lr[k]) for k, a in enumerate(alone)]
    opt = MemberAdam(params, lr)
    for step in range(4):
        grads = {n: torch.randn(2, *s, generator=gen, dtype=torch.float64) for n, s in shapes.items()}
        if step == 2:
            grads["b"] = None
        opt.step(grads)
        for k, (a, ta) in enumerate(zip(alone, torch_adams)):
            for n, p in a.items():
                p.grad = torch.zeros_like(p) if grads[n] is None else grads[n][k].clone()
            ta.step()
    for k, a in enumerate(alone):
        for n, p in a.items():
            torch.testing.assert_close(params[n][k], p.detach(), rtol=1e-12, atol=1e-14)
    state = opt.member_state(0)
    assert int(state["adam_t"]) == 4 and set(state) == {"adam_t"} | {f"{kind}/{n}" for kind in ("param", "adam_m", "adam_v")
                                                                   for n in shapes}
    opt.load_member_state(1, state)                     # member 1 resumes as member 0's run
    assert list(opt.t) == [4, 4]
    for n in shapes:
        assert torch.equal(params[n][1], params[n][0]) and torch.equal(opt.m[n][1], opt.m[n][0])
    with pytest.raises(ValueError, match="lr"):
        MemberAdam(params, [1e-2, 0.0])
    with pytest.raises(ValueError, match="k must be"):
        opt.member_state(2)
