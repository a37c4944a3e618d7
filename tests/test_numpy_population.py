"""A NumPy population of K networks trained as one program follows each member trained alone."""

import numpy as np
import pytest

from act_experiments.data import tasks
from act_experiments.training import loop
from act_experiments.training.populations import NumpyPopulation as Population
from act_experiments.training.backends import NumpyBackend

TASKS = {
    "parity": dict(task="parity", bits=6, hidden=16, batch_size=16),
    "logic": dict(task="logic", max_vectors=3, max_gates=3, hidden=16, batch_size=8),
    "addition": dict(task="addition", max_numbers=2, max_digits=2, hidden=16, batch_size=8, max_ponder=20),
    "sort": dict(task="sort", max_length=4, hidden=16, batch_size=8),
    "characters": dict(task="characters", seq_len=8, hidden=16, batch_size=8),
}
# what makes each member its own run: seed, tau, epsilon, learning rate, a no-ACT baseline (M = 1)
# and a fixed-computation control (F = 3 updates per input, no halting unit)
MEMBERS = [dict(seed=0, tau=1e-3), dict(seed=1, tau=1e-2, epsilon=0.05, lr=3e-3), dict(seed=2, no_act=True, lr=1e-3),
           dict(seed=3, fixed_ponder=3, lr=3e-3)]


def configs_for(task, members=MEMBERS):
    shared = dict(TASKS[task], dtype="float64", lr=1e-2, out="unused")
    if shared.get("max_ponder") is not None:
        members = [m if m.get("no_act") or m.get("fixed_ponder") else dict(m, max_ponder=shared["max_ponder"])
                   for m in members]
        shared = {k: v for k, v in shared.items() if k != "max_ponder"}
    return [loop.make_config({**shared, **m}, NumpyBackend) for m in members]


def batches(config, n):
    """The first n training batches of a run: its own data stream, as loop.train draws it."""
    rng = np.random.default_rng([config["seed"], loop.DATA_STREAM])
    return [tasks.make_batch(config["task"], rng, config["batch_size"], **config["task_options"]) for _ in range(n)]


def stacked(data, i=0):
    """Batch i of every member, stacked on a leading axis: x (K, B, T, D), y, mask (K, B, T)."""
    return tuple(np.stack([d[i][j] for d in data]) for j in range(3))


def assert_same_stats(stats, ref, where):
    assert stats["loss"] == pytest.approx(ref["loss"], rel=1e-9, abs=1e-12), where
    assert np.array_equal(stats["N"], ref["N"]) and np.array_equal(stats["wrong"], ref["wrong"]), where
    assert np.allclose(stats["rho"], ref["rho"], rtol=1e-9, atol=1e-12), where


@pytest.mark.slow
@pytest.mark.parametrize("task", list(TASKS))
def test_each_member_follows_its_run_trained_alone(task):
    configs, steps = configs_for(task), 30
    data = [batches(c, steps) for c in configs]
    alone = []
    for config, d in zip(configs, data):
        backend = NumpyBackend(config)
        log = [backend.train_step(*b) for b in d]
        alone.append((log, backend.params_numpy()))
    pop = Population(configs)
    for i in range(steps):
        for k, stats in enumerate(pop.train_step(*stacked(data, i))):
            assert_same_stats(stats, alone[k][0][i], (k, i))
    assert max(int(alone[k][0][-1]["N"].max()) for k in range(2)) > 1, "the ACT members should ponder"
    assert (alone[2][0][-1]["N"] == 1).all(), "the no-ACT member takes one step"
    assert (alone[3][0][-1]["N"] == 3).all(), "the fixed member takes F = 3 steps"
    for k, (_, params) in enumerate(alone):
        for name, value in pop.member_params(k).items():
            assert np.allclose(value, params[name], rtol=1e-9, atol=1e-12), (k, name)


@pytest.mark.parametrize("task", ["parity", "logic"])
def test_float32_members_halt_where_their_runs_alone_do(task):
    """In float32 too each member halts and errs where its run alone does (1 - epsilon is compared in
    the network's dtype, whether epsilon is one number or one per member)."""
    configs = [dict(c, dtype="float32") for c in configs_for(task)]
    data = [batches(c, 10) for c in configs]
    alone = [NumpyBackend(c) for c in configs]
    pop = Population(configs)
    for i in range(10):
        for k, stats in enumerate(pop.train_step(*stacked(data, i))):
            ref = alone[k].train_step(*data[k][i])
            assert np.array_equal(stats["N"], ref["N"]) and np.array_equal(stats["wrong"], ref["wrong"]), (k, i)
            assert stats["loss"] == pytest.approx(ref["loss"], rel=1e-6), (k, i)


def test_evaluate_changes_nothing_and_matches_alone():
    configs = configs_for("logic")
    pop = Population(configs)
    before = {k: v.copy() for k, v in pop.params.items()}
    data = [batches(c, 1) for c in configs]
    for k, stats in enumerate(pop.evaluate(*stacked(data))):
        assert_same_stats(stats, NumpyBackend(configs[k]).evaluate(*data[k][0]), k)
    assert all(np.array_equal(before[k], v) for k, v in pop.params.items())
    assert all(member_state["adam_t"] == 0 for member_state in map(pop.member_state, range(pop.K)))


def test_members_with_different_caps_halt_by_their_own():
    configs = configs_for("parity", [dict(seed=0, halting_bias=-4.0, max_ponder=m) for m in (1, 3, 7)])
    pop = Population(configs)
    stats = pop.evaluate(*stacked([batches(c, 1) for c in configs]))
    assert [int(s["N"].max()) for s in stats] == [1, 3, 7]      # sigmoid(-4): every row runs to its cap
    assert [int(s["N"].min()) for s in stats] == [1, 3, 7]


def test_member_state_resumes_as_a_single_run_and_back():
    """Member 1 after 3 steps, continued alone for 3 more, equals 6 steps in the population;
    and a single run's state loaded into a member continues as the single run does."""
    configs = configs_for("addition")
    data = [batches(c, 6) for c in configs]
    pop = Population(configs)
    for i in range(3):
        pop.train_step(*stacked(data, i))
    state = pop.member_state(1)
    assert sorted(state) == sorted(NumpyBackend(configs[1]).state_dict())
    alone = NumpyBackend(configs[1])
    alone.load_state_dict(state)
    logs = [alone.train_step(*b) for b in data[1][3:]]
    for i in range(3, 6):
        assert_same_stats(pop.train_step(*stacked(data, i))[1], logs[i - 3], i)
    for name, value in pop.member_params(1).items():
        assert np.allclose(value, alone.params_numpy()[name], rtol=1e-9, atol=1e-12), name

    # the other way: a run saved alone after 2 steps becomes member 0 of a fresh population,
    # whose Adam step counts now differ between members (2 against 0)
    single = NumpyBackend(configs[0])
    for b in data[0][:2]:
        single.train_step(*b)
    fresh = Population(configs)
    fresh.load_member_state(0, single.state_dict())
    assert [int(fresh.member_state(k)["adam_t"]) for k in range(3)] == [2, 0, 0]
    for i in range(2, 5):
        assert_same_stats(fresh.train_step(*stacked(data, i))[0], single.train_step(*data[0][i]), i)


def torch_engine():
    from act_experiments.training.populations import TorchPopulation
    from act_experiments.training.backends import TorchBackend
    return TorchPopulation, TorchBackend


@pytest.mark.parametrize("engine", ["numpy", "torch"])
@pytest.mark.parametrize("change, message", [({"hidden": 8}, "hidden"), ({"cell": "lstm"}, "cell"),
                                             ({"dtype": "float32"}, "dtype"), ({"bits": 5}, "task_options")])
def test_members_must_share_the_shape_of_the_computation(change, message, engine):
    population, backend = (Population, NumpyBackend) if engine == "numpy" else torch_engine()
    configs = [loop.make_config({**config, "out": "unused"}, backend) for config in
               ({**TASKS["parity"], "dtype": "float64", "seed": 0},
                {**TASKS["parity"], "dtype": "float64", "seed": 1, **change})]
    with pytest.raises(ValueError, match=message):
        population(configs)
    with pytest.raises(ValueError, match="at least one"):
        population([])


def test_bad_batches_are_refused_with_the_argument_named():
    configs = configs_for("parity", [dict(seed=0), dict(seed=1)])
    pop = Population(configs)
    x, y, mask = batches(configs[0], 1)[0]
    with pytest.raises(ValueError, match=r"x must be \(K=2"):
        pop.train_step(x, y, mask)                             # one network's batch, no K axis
    xs, ys, masks = stacked([batches(c, 1) for c in configs])
    with pytest.raises(ValueError, match=r"x must be \(K=2"):
        pop.evaluate(xs[:, :, :, :3], ys, masks)              # the wrong input size D
    bad = xs.copy()
    bad[1, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="x contains NaN or inf"):
        pop.train_step(bad, ys, masks)
    with pytest.raises(ValueError, match="x must be a real numeric array"):
        pop.train_step(xs + 1j, ys, masks)
    for k in (2, -1, 1.0):
        with pytest.raises(ValueError, match=r"k must be an integer in 0\.\.1"):
            pop.member_state(k)


def test_non_finite_parameters_are_refused_as_divergence():
    """The training loop turns a 'NaN or inf' ValueError into Diverged, as for NumpyBackend."""
    configs = configs_for("parity", [dict(seed=0), dict(seed=1)])
    pop = Population(configs)
    pop.params["W_s"][1, 0, 0] = np.inf
    with pytest.raises(ValueError, match=r"params\['W_s'\] contains NaN or inf"):
        pop.evaluate(*stacked([batches(c, 1) for c in configs]))
