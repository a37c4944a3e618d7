"""The population's fixed-budget forward and its graphed training step equal the eager ones.

On the CPU the graphs are stood in for by act_engine.graphed.Rerun (replay = call again), which
runs all the control flow around them: budgets, the check of ``complete``, the exact fallback,
the recapture, the Adam factors. The test with real CUDA graphs is skipped without a GPU.
"""

import gc

import numpy as np
import pytest
import torch

from act_experiments.data import tasks
from act_experiments.training import loop
from act_numpy.params import PARAM_NAMES
from act_engine.graphed import Rerun
from act_experiments.training.populations import TorchPopulation as Population
from act_engine.population_graphed import PopulationGraphStep, graph_step_for
from act_experiments.training.backends import TorchBackend

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

TASKS = {
    "rnn": dict(task="parity", bits=6, hidden=12, batch_size=8),
    "lstm": dict(task="logic", max_vectors=3, max_gates=3, hidden=12, batch_size=6),
    "softmax": dict(task="addition", max_numbers=2, max_digits=2, hidden=12, batch_size=6),
}
# members that halt differently: their own halting bias, threshold, cap M, and a no-ACT baseline
MEMBERS = [dict(seed=0, halting_bias=-2.0, lr=3e-2), dict(seed=1, halting_bias=0.0, epsilon=0.1, tau=1e-2),
           dict(seed=2, halting_bias=-2.0, max_ponder=4), dict(seed=3, no_act=True)]


def configs_for(kind, dtype="float64", device="cpu"):
    shared = dict(TASKS[kind], dtype=dtype, device=device, lr=1e-2, out="unused")
    return [loop.make_config({**shared, **m}, TorchBackend) for m in MEMBERS]


def batches(configs, n):
    """n stacked batches: member k's from its own data stream, as training draws them."""
    rngs = [np.random.default_rng([c["seed"], loop.DATA_STREAM]) for c in configs]
    c = configs[0]
    return [[np.stack(part) for part in zip(*(tasks.make_batch(c["task"], rng, c["batch_size"], **c["task_options"])
                                                for rng in rngs))] for _ in range(n)]


def forward_and_gradients(pop, x, dy, dponder, ponder_steps=None):
    """y, N, R (and complete) of pop.forward, and the gradients of sum(dy y) + sum(dponder (N + R))."""
    for p in pop.params.values():
        p.grad = None
    y, N, R, *complete = pop.forward(x, ponder_steps)
    ((dy * y).sum() + (dponder * (N + R)).sum()).backward()
    return [y.detach(), N, R.detach()] + [pop.params[k].grad for k in PARAM_NAMES], complete


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_fixed_steps_forward_equals_eager_forward_when_complete(kind):
    configs = configs_for(kind)
    pop = Population(configs)
    x = torch.as_tensor(batches(configs, 1)[0][0])
    rng = np.random.default_rng(0)
    y, N, _ = pop.forward(x)
    dy = torch.as_tensor(rng.normal(size=tuple(y.shape)))
    dponder = torch.as_tensor(rng.uniform(0.0, 0.1, tuple(N.shape)))
    want, _ = forward_and_gradients(pop, x, dy, dponder)
    longest = int(N.max())
    assert longest > 4, "some member should ponder beyond the capped member's M = 4"
    assert int(N[2].max()) == configs[2]["max_ponder"] and int(N[3].max()) == 1
    for budget in (longest, longest + 3):
        got, (complete,) = forward_and_gradients(pop, x, dy, dponder, budget)
        assert complete.dtype == torch.bool and complete.shape == () and bool(complete)
        assert torch.equal(got[1], want[1])
        for name, a, b in zip(["y", "N", "R"] + list(PARAM_NAMES), got, want):
            assert torch.allclose(a, b, rtol=1e-12, atol=1e-13), name
    # one step short: some row of some member would take another step
    _, (complete,) = forward_and_gradients(pop, x, dy, dponder, longest - 1)
    assert not bool(complete)


def test_fixed_steps_forward_is_complete_when_only_capped_members_need_more():
    """A member at its cap M stops there, whatever its halting sums: a budget of M is enough."""
    configs = [loop.make_config(dict(TASKS["rnn"], seed=k, halting_bias=-6.0, max_ponder=3, dtype="float64",
                                         device="cpu", out="unused"), TorchBackend) for k in range(2)]
    pop = Population(configs)
    x = torch.as_tensor(batches(configs, 1)[0][0])
    y, N, R, complete = pop.forward(x, 3)
    assert bool(complete) and (N == 3).all()
    y_eager, N_eager, R_eager = pop.forward(x)
    assert torch.equal(N, N_eager) and torch.allclose(y, y_eager, rtol=1e-12) and torch.allclose(R, R_eager)


def train_both(configs, steps, make_step):
    """Train one population eagerly and one with make_step(population) on the same batches."""
    eager, graphed = Population(configs, graphed=False), Population(configs, graphed=False)
    step = make_step(graphed)
    log = []
    for x, y, mask in batches(configs, steps):
        log.append((eager.train_step(x, y, mask), step(x, y, mask)))
    return eager, graphed, step, log


def assert_populations_equal(eager, graphed, log, rtol, atol, N_agree=1.0):
    for want_stats, got_stats in log:
        for want, got in zip(want_stats, got_stats):
            assert got["loss"] == pytest.approx(want["loss"], rel=rtol, abs=atol)
            assert np.mean(got["N"] == want["N"]) >= N_agree and np.mean(got["wrong"] == want["wrong"]) >= N_agree
            assert np.allclose(got["rho"], want["rho"], rtol=rtol, atol=atol)
    assert np.array_equal(graphed.adam.t, eager.adam.t)
    for name in PARAM_NAMES:
        for mine, theirs in ((graphed.params, eager.params), (graphed.adam.m, eager.adam.m),
                             (graphed.adam.v, eager.adam.v)):
            assert torch.allclose(mine[name].cpu(), theirs[name].cpu(), rtol=rtol, atol=atol), name


@pytest.mark.parametrize("kind", ["rnn", "lstm", "softmax"])
def test_graphed_steps_equal_eager_steps_with_graphs_stood_in_for(kind):
    """20 steps; slack 0 leaves no room, so a batch that ponders longer than any before it falls
    back to the exact step and the forward graph is captured again."""
    eager, graphed, step, log = train_both(configs_for(kind), 20,
                                           lambda pop: PopulationGraphStep(pop, slack=0, warmup=1, capture=Rerun))
    assert_populations_equal(eager, graphed, log, rtol=1e-10, atol=1e-12)
    graph = step.forward_graph
    assert graph.fallbacks >= 1 and graph.captures == graph.fallbacks + 1      # the first step is exact
    assert graph.ponder_steps == max(int(stats["N"].max()) for _, out in log for stats in out)


class RerunWithNoGraphAlive(Rerun):
    """Rerun that first checks what CUDA needs before a recording: no autograd graph is alive.
    A graph kept alive ties the parameters' gradient accumulators to the stream it ran on, and
    recording on another stream then fails (cudaErrorStreamCaptureImplicit)."""

    def __init__(self, fn, warmup=3):
        gc.collect()
        # type(o), not isinstance: isinstance on every object wakes deprecated module proxies
        alive = [o for o in gc.get_objects() if type(o) is torch.Tensor and o.grad_fn is not None]
        assert not alive, f"{len(alive)} tensor(s) with a grad_fn alive while recording"
        super().__init__(fn, warmup)


@pytest.mark.slow
def test_no_autograd_graph_outlives_the_exact_step():
    eager, graphed, step, log = train_both(configs_for("rnn"), 12,
                                           lambda pop: PopulationGraphStep(pop, slack=0, warmup=1,
                                                                           capture=RerunWithNoGraphAlive))
    assert step.forward_graph.captures >= 1          # each after an exact step
    assert_populations_equal(eager, graphed, log, rtol=1e-10, atol=1e-12)


def test_train_step_hands_its_work_to_the_graph_step():
    """Population.train_step is what the training loop calls: with a graph step kept, it runs
    through it (here stood in for on the CPU) and gives the eager numbers."""
    def kept(pop):
        pop.graph_step = PopulationGraphStep(pop, slack=1, warmup=1, capture=Rerun)
        return pop.train_step
    eager, graphed, _, log = train_both(configs_for("lstm"), 8, kept)
    assert_populations_equal(eager, graphed, log, rtol=1e-10, atol=1e-12)
    assert graphed.graph_step.forward_graph.captures >= 1


def test_graph_step_needs_a_cuda_population():
    configs = configs_for("rnn")
    pop = Population(configs)
    assert pop.graph_step is None                                   # None: graphs on CUDA only
    with pytest.raises(ValueError, match="graphed=True"):
        Population(configs, graphed=True)
    assert graph_step_for(pop, None) is None and graph_step_for(pop, False) is None
    with pytest.raises(ValueError, match="graphed=True"):
        graph_step_for(pop, True)
    with pytest.raises(ValueError, match="graphed must be"):
        graph_step_for(pop, "yes")
    with pytest.raises(ValueError, match="CUDA"):
        PopulationGraphStep(pop)


def test_graph_step_refuses_batches_of_the_wrong_member_count():
    configs = configs_for("rnn")
    x, y, mask = batches(configs, 1)[0]
    step = PopulationGraphStep(Population(configs), capture=Rerun)
    with pytest.raises(ValueError, match="K=4"):
        step(x[:2], y[:2], mask[:2])


@cuda
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_cuda_graphed_steps_equal_eager_steps(kind, dtype):
    """Real CUDA graphs against the eager population on the GPU, 20 steps with a fallback.
    float32: the fixed budget sums the mean field over more (zero) terms, so values differ by
    rounding and may move N where a halting sum lies within rounding of 1 - eps."""
    configs = configs_for(kind, dtype, "cuda")
    assert isinstance(Population(configs).graph_step, PopulationGraphStep)     # None: graphs on CUDA
    eager, graphed, step, log = train_both(configs, 20, lambda pop: PopulationGraphStep(pop, slack=0))
    if dtype == "float64":
        assert_populations_equal(eager, graphed, log, rtol=1e-9, atol=1e-11)
    else:
        assert_populations_equal(eager, graphed, log, rtol=1e-3, atol=1e-4, N_agree=0.99)
    assert step.forward_graph.fallbacks >= 1


@cuda
@pytest.mark.parametrize("kind", ["rnn", "lstm", "softmax"])
def test_cuda_population_equals_the_cpu_population_in_float64(kind):
    """The same members on the GPU, stepped as CUDA graphs, and on the CPU, stepped eagerly: after
    20 steps of float64 training every loss, N, parameter and Adam moment agrees to 1e-9."""
    configs = configs_for(kind, "float64", "cpu")
    cpu, gpu = Population(configs), Population(configs_for(kind, "float64", "cuda"))
    assert isinstance(gpu.graph_step, PopulationGraphStep) and cpu.graph_step is None
    log = [(cpu.train_step(x, y, mask), gpu.train_step(x, y, mask)) for x, y, mask in batches(configs, 20)]
    assert_populations_equal(cpu, gpu, log, rtol=1e-9, atol=1e-11)
    assert gpu.graph_step.forward_graph.captures >= 1


def test_the_budget_shrinks_once_the_rows_need_less_for_a_while():
    """One long row early on must not set the cost of every later step (graphed.BudgetedGraph)."""
    from act_engine.graphed import BudgetedGraph
    need = {"N": 9}

    def fn(steps):             # stands in for a fixed-budget step: complete when the rows need <= steps
        return torch.tensor([min(need["N"], steps)]), torch.tensor(need["N"] <= steps)

    graph = BudgetedGraph(fn, cap=20, slack=2, warmup=0, capture=Rerun, shrink_after=5)
    assert graph.replay() is None                     # no graph yet: the exact step runs
    graph.grow(torch.tensor([9]))
    assert graph.ponder_steps == 11
    need["N"] = 3
    for i in range(5):
        N, _ = graph.replay()
        graph.observe(N)
        assert graph.ponder_steps == (11 if i < 4 else 5), i     # after 5 steps that needed 3: 3 + slack
    assert graph.captures == 2
    need["N"] = 7                                     # a longer row again: the exact step, then room
    assert graph.replay() is None and graph.fallbacks == 1
    graph.grow(torch.tensor([7]))
    assert graph.ponder_steps == 9 and graph.captures == 3


def test_a_shrinking_budget_changes_no_number():
    eager, graphed, step, log = train_both(configs_for("lstm"), 16,
                                           lambda pop: PopulationGraphStep(pop, slack=3, warmup=1, capture=Rerun,
                                                                           shrink_after=2))
    graph = step.forward_graph
    assert graph.captures > graph.fallbacks + 1          # some captures were shrinks, not growth
    assert_populations_equal(eager, graphed, log, rtol=1e-10, atol=1e-12)
