"""Tests for act_beyond.pondernet: the halting distribution, the prior and the KL direction, the
forward pass against act_torch's ACT, inference, the loss, and the population trainer."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from act_beyond import pondernet as pn
from act_experiments.experiments import pondernet as pondernet_experiment
from act_experiments.data import tasks
from act_experiments.tables import read_csv
from act_experiments.training import loop
from act_experiments.training.pondernet_population import PonderNetPopulation, initial_params
from act_torch.act import act_forward


def t64(*values):
    return torch.tensor(values, dtype=torch.float64)


def small_params(seed=0, D=5, H=7, O=1, cell="rnn", halting_bias=-1.0):
    return initial_params(D, H, O, seed, cell=cell, halting_bias=halting_bias)


def parity(n, bits=5, seed=0, **options):
    return tasks.make_batch("parity", np.random.default_rng(seed), n, bits=bits, **options)


# ---------------------------------------------------------------------------------------------
# Halting distribution, prior, KL
# ---------------------------------------------------------------------------------------------

def test_generalised_geometric_by_hand():
    p = pn.generalised_geometric(t64(0.5, 0.5, 0.5))
    torch.testing.assert_close(p, t64(0.5, 0.25, 0.25))            # the last step takes what remains
    p = pn.generalised_geometric(t64(0.2, 0.9, 0.3, 0.7))
    torch.testing.assert_close(p, t64(0.2, 0.8 * 0.9, 0.8 * 0.1 * 0.3, 0.8 * 0.1 * 0.7))
    torch.testing.assert_close(pn.generalised_geometric(t64(0.3)), t64(1.0))


def test_generalised_geometric_sums_to_one_and_is_a_distribution():
    lam = torch.rand(50, 12, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    lam[0] = 1.0                     # halts at once: everything on step 1
    lam[1] = 0.0                     # never halts: everything on the last step
    p = pn.generalised_geometric(lam)
    assert torch.all(p >= 0)
    torch.testing.assert_close(p.sum(-1), torch.ones(50, dtype=torch.float64))
    assert p[0, 0] == 1 and p[1, -1] == 1


def test_generalised_geometric_gradient():
    lam = torch.rand(3, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    lam = lam.mul(0.9).add(0.05).requires_grad_()
    assert torch.autograd.gradcheck(pn.generalised_geometric, (lam,))


def test_geometric_prior():
    prior = pn.geometric_prior(0.25, 6)
    assert prior.shape == (6,) and prior.dtype == torch.float64
    torch.testing.assert_close(prior.sum(), torch.tensor(1.0, dtype=torch.float64))
    torch.testing.assert_close(prior[1:] / prior[:-1], torch.full((5,), 0.75, dtype=torch.float64))
    long = pn.geometric_prior(0.2, 200)
    assert abs(float(pn.expected_steps(long)) - 5.0) < 1e-9      # mean 1 / lambda_p, untruncated
    for bad in (0.0, 1.0, -0.1, 1.5, True, "0.2"):
        with pytest.raises(ValueError, match="lambda_p"):
            pn.geometric_prior(bad, 5)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="max_steps"):
            pn.geometric_prior(0.2, bad)


def test_kl_direction_is_halting_to_prior():
    p = t64(0.7, 0.2, 0.1)
    prior = pn.geometric_prior(0.3, 3)
    by_hand = float((p * (p / prior).log()).sum())
    reverse = float((prior * (prior / p).log()).sum())
    assert float(pn.kl_divergence(p, prior)) == pytest.approx(by_hand, rel=1e-12)
    assert abs(by_hand - reverse) > 1e-3                             # the two directions differ here
    # the public pitfall: KLDivLoss / kl_div with (p.log(), p_G) is the reverse, KL(p_G || p)
    pitfall = float(F.kl_div(p.log(), prior, reduction="sum"))
    assert pitfall == pytest.approx(reverse, rel=1e-12)
    assert float(pn.kl_divergence(prior, prior)) == pytest.approx(0.0, abs=1e-15)
    assert float(pn.kl_divergence(p, prior)) > 0


def test_kl_finite_where_some_p_is_zero():
    # a saturated lambda = 1 puts all mass on step 1; p log p is 0 there and the gradient finite
    lam = t64(1.0, 0.5, 0.5).requires_grad_()
    p = pn.generalised_geometric(lam)
    kl = pn.kl_divergence(p, pn.geometric_prior(0.2, 3))
    assert float(kl.detach()) == pytest.approx(-np.log(0.2 / (1 - 0.8 ** 3)), rel=1e-12)
    kl.backward()
    assert torch.isfinite(lam.grad).all()


def test_kl_gradient():
    prior = pn.geometric_prior(0.3, 5)
    lam = torch.rand(4, 5, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    lam = lam.mul(0.8).add(0.1).requires_grad_()
    assert torch.autograd.gradcheck(lambda v: pn.kl_divergence(pn.generalised_geometric(v), prior), (lam,))


# ---------------------------------------------------------------------------------------------
# The forward pass: ACT's step, ACT's halting units, ACT as attention over PonderNet's steps
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_forward_shapes(cell):
    x, _, _ = parity(4)
    out = pn.ponder_forward(torch.tensor(x), small_params(cell=cell), max_steps=6, cell=cell)
    assert out.y.shape == (4, 6, 1) and out.lam.shape == (4, 6) and out.p.shape == (4, 6)
    assert out.states.shape == (4, 6, 7)
    torch.testing.assert_close(out.p.sum(-1), torch.ones(4, dtype=torch.float64))


def test_first_step_reads_the_state_after_one_update():
    # step 1 comes from s^1 = tanh(x W_x[:D] + W_x[D] + b_s) (flag 1, zero state), not from s^0 = 0
    x, _, _ = parity(3)
    P = small_params()
    out = pn.ponder_forward(torch.tensor(x), P, max_steps=3)
    s1 = np.tanh(x[:, 0] @ P["W_x"][:-1] + P["W_x"][-1] + P["b_s"])
    np.testing.assert_allclose(out.states[:, 0].numpy(), s1, rtol=1e-12, atol=1e-12)
    lam1 = 1 / (1 + np.exp(-(s1 @ P["W_h"] + P["b_h"])))
    np.testing.assert_allclose(out.lam[:, 0].numpy(), lam1[:, 0], rtol=1e-12)
    np.testing.assert_allclose(out.y[:, 0].numpy(), s1 @ P["W_y"] + P["b_y"], rtol=1e-12, atol=1e-12)
    s2 = np.tanh(x[:, 0] @ P["W_x"][:-1] + s1 @ P["W_s"] + P["b_s"])      # flag 0 from step 2 on
    np.testing.assert_allclose(out.states[:, 1].numpy(), s2, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_same_states_and_halting_units_as_act_and_act_is_attention_over_them(cell):
    x, _, _ = parity(16, seed=4)
    P = small_params(seed=2, cell=cell, halting_bias=-0.5)
    out = pn.ponder_forward(torch.tensor(x), P, max_steps=12, cell=cell)
    record = {}
    y_act, N, R = act_forward(torch.tensor(x), {k: torch.tensor(v) for k, v in P.items()}, cell=cell,
                              max_ponder=12, record=record)
    h, p_act = record["h"][0], record["p"][0]                    # (B, n) for the steps ACT took
    n = h.shape[1]
    assert n >= 2
    torch.testing.assert_close(out.lam[:, :n], h, rtol=1e-12, atol=1e-12)
    # ACT's output is the p-weighted mean of the outputs of the steps PonderNet takes
    torch.testing.assert_close((p_act[..., None] * out.y[:, :n]).sum(1), y_act[:, 0], rtol=1e-12, atol=1e-12)
    # ... and its mean-field state the p-weighted mean of the same states
    torch.testing.assert_close((p_act[..., None] * out.states[:, :n]).sum(1), record["S"][:, 0],
                               rtol=1e-12, atol=1e-12)
    # the two weightings differ: ACT's p^n = h^n before N, PonderNet's p_n = lambda_n prod (1 - lambda_j)
    assert not torch.allclose(out.p[:, :n], p_act)


def test_stacked_members_equal_each_network_alone():
    x = [parity(5, seed=s)[0] for s in (0, 1, 2)]
    Ps = [small_params(seed=s) for s in (0, 1, 2)]
    stacked = {k: torch.tensor(np.stack([P[k] for P in Ps])) for k in Ps[0]}
    out = pn.ponder_forward(torch.tensor(np.stack(x)), stacked, max_steps=4)
    for k in range(3):
        alone = pn.ponder_forward(torch.tensor(x[k]), Ps[k], max_steps=4)
        for a, b in zip(out, alone):
            torch.testing.assert_close(a[k], b, rtol=1e-12, atol=1e-12)


def test_forward_refuses_bad_input():
    x, _, _ = parity(2)
    P = small_params()
    with pytest.raises(ValueError, match="max_steps"):
        pn.ponder_forward(torch.tensor(x), P, max_steps=0)
    with pytest.raises(ValueError, match="cell"):
        pn.ponder_forward(torch.tensor(x), P, cell="gru")
    with pytest.raises(ValueError, match="T = 1"):
        pn.ponder_forward(torch.tensor(np.repeat(x, 2, axis=1)), P)
    with pytest.raises(ValueError, match="torch.Tensor"):
        pn.ponder_forward(x, P)
    with pytest.raises(ValueError, match="W_s"):
        pn.ponder_forward(torch.tensor(x), {**P, "W_s": P["W_s"][:, :3]})
    stacked = {k: torch.tensor(np.stack([v, v])) for k, v in P.items()}
    with pytest.raises(ValueError, match="W_x"):
        pn.ponder_forward(torch.tensor(np.stack([x, x, x])), stacked)


# ---------------------------------------------------------------------------------------------
# Inference and the loss
# ---------------------------------------------------------------------------------------------

def _out(lam):
    lam = torch.as_tensor(lam, dtype=torch.float64)
    B, N = lam.shape
    y = torch.arange(B * N, dtype=torch.float64).view(B, N, 1)
    return pn.PonderOutput(y, lam, pn.generalised_geometric(lam), torch.zeros(B, N, 1))


def test_cumulative_halting():
    out = _out([[0.1, 0.5, 0.5, 0.5], [0.6, 0.5, 0.5, 0.5], [0.0, 0.0, 0.0, 0.0]])
    # cumulative p: row 0 0.1, 0.55, ...; row 1 0.6, ...; row 2 0, 0, 0, 1
    assert pn.choose_halting_step(out, mode="cumulative").tolist() == [2, 1, 4]
    assert pn.choose_halting_step(out, mode="cumulative", threshold=0.05).tolist() == [1, 1, 4]
    assert pn.choose_halting_step(out, mode="cumulative", threshold=1.0).tolist() == [4, 4, 4]
    torch.testing.assert_close(pn.output_at(out, torch.tensor([2, 1, 4])), t64(1, 4, 11)[:, None])


def test_sampled_halting_follows_p():
    lam = torch.tensor([[0.3, 0.5, 0.2, 0.4, 0.9]], dtype=torch.float64).repeat(20000, 1)
    out = _out(lam)
    n = pn.choose_halting_step(out, mode="sample", generator=torch.Generator().manual_seed(0))
    freq = np.bincount(n.numpy(), minlength=6)[1:] / len(n)
    np.testing.assert_allclose(freq, out.p[0].numpy(), atol=0.015)
    again = pn.choose_halting_step(out, mode="sample", generator=torch.Generator().manual_seed(0))
    assert torch.equal(n, again)
    assert n.min() >= 1 and n.max() <= 5


def test_halting_refuses_bad_arguments():
    out = _out([[0.5, 0.5]])
    with pytest.raises(ValueError, match="mode"):
        pn.choose_halting_step(out, mode="mean")
    with pytest.raises(ValueError, match="generator"):
        pn.choose_halting_step(out, mode="sample")
    for bad in (0.0, 1.5, "0.5"):
        with pytest.raises(ValueError, match="threshold"):
            pn.choose_halting_step(out, mode="cumulative", threshold=bad)


def test_loss_by_hand_and_per_member():
    x, y, _ = parity(6, seed=5)
    P = small_params(seed=3)
    out = pn.ponder_forward(torch.tensor(x), P, max_steps=5)
    target = torch.tensor(y[:, 0, 0])
    loss, parts = pn.pondernet_loss(out, target, beta=0.1, lambda_p=0.3)
    bce = F.binary_cross_entropy_with_logits(out.y[..., 0], target[:, None].expand(6, 5), reduction="none")
    prior = pn.geometric_prior(0.3, 5)
    kl = (out.p * (out.p / prior).log()).sum(-1)
    expected = (out.p * bce).sum(-1).mean() + 0.1 * kl.mean()
    torch.testing.assert_close(loss, expected, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(parts["kl"], kl.mean())
    loss0, _ = pn.pondernet_loss(out, target, beta=0.0)
    torch.testing.assert_close(loss0, parts["reconstruction"])
    # two stacked members with their own beta and lambda_p give each member's own loss
    Ps = [small_params(seed=s) for s in (3, 4)]
    stacked = {k: torch.tensor(np.stack([Q[k] for Q in Ps])) for k in P}
    out2 = pn.ponder_forward(torch.tensor(np.stack([x, x])), stacked, max_steps=5)
    both, _ = pn.pondernet_loss(out2, torch.stack([target, target]), beta=t64(0.1, 0.01),
                                lambda_p=t64(0.3, 0.2))
    alone = pn.pondernet_loss(pn.ponder_forward(torch.tensor(x), Ps[1], max_steps=5), target, beta=0.01,
                              lambda_p=0.2)[0]
    torch.testing.assert_close(both[0], loss)
    torch.testing.assert_close(both[1], alone)
    with pytest.raises(ValueError, match="beta"):
        pn.pondernet_loss(out, target, beta=-1.0)


def test_loss_gradient_through_the_parameters():
    x, y, _ = parity(2, seed=6, bits=2)
    P = {k: torch.tensor(v, requires_grad=True) for k, v in small_params(seed=1, D=2, H=3).items()}
    names = sorted(P)
    target = torch.tensor(y[:, 0, 0])

    def f(*values):
        out = pn.ponder_forward(torch.tensor(x), dict(zip(names, values)), max_steps=3)
        return pn.pondernet_loss(out, target, beta=0.05, lambda_p=0.3)[0]

    assert torch.autograd.gradcheck(f, tuple(P[k] for k in names))


# ---------------------------------------------------------------------------------------------
# Training and evaluation
# ---------------------------------------------------------------------------------------------

def test_population_starts_where_act_starts_and_reads_its_data():
    pop = PonderNetPopulation([{"seed": 3}], task_options={"bits": 6}, hidden=8, max_steps=4)
    config = loop.make_config({"task": "parity", "bits": 6, "hidden": 8, "seed": 3})
    act_init = loop.init_parameters(config)
    for k, v in pop.member_params(0).items():
        if k != "b_h":
            np.testing.assert_allclose(v, act_init[k], rtol=1e-6, atol=1e-7)      # float32 copies
    x, _ = pop.batch()
    x_act, _, _ = tasks.make_batch("parity", np.random.default_rng([3, loop.DATA_STREAM]), 128, bits=6)
    np.testing.assert_array_equal(x[0], x_act)


def test_population_members_train_as_alone_and_learn_the_range():
    options = {"bits": 5, "max_nonzero": 2}
    members = [{"seed": 0, "beta": 0.01}, {"seed": 1, "beta": 0.1, "lambda_p": 0.4, "lr": 3e-3}]
    pop = PonderNetPopulation(members, task_options=options, hidden=8, max_steps=4, batch_size=16, dtype="float64")
    alone = PonderNetPopulation(members[1:], task_options=options, hidden=8, max_steps=4, batch_size=16, dtype="float64")
    for _ in range(3):
        stats = pop.train_step()
        single = alone.train_step()
    assert stats["loss"].shape == (2,) and np.all(np.isfinite(stats["loss"]))
    np.testing.assert_allclose(stats["loss"][1], single["loss"][0], rtol=1e-10)
    for k, v in pop.member_params(1).items():
        np.testing.assert_allclose(v, alone.member_params(0)[k], rtol=1e-10, atol=1e-12)
    x, y = pop.batch()
    assert np.count_nonzero(x[..., 0, :], axis=-1).max() <= 2
    result = pop.evaluate(*parity(20, bits=5, min_nonzero=3)[:2], mode="cumulative")
    assert len(result) == 2 and 0 <= result[0]["error"] <= 1
    assert set(result[0]["counts"]) <= {3, 4, 5} and result[0]["n"].max() <= 4


def test_evaluate_act_matches_act_forward():
    x, y, _ = parity(30, seed=8)
    P = small_params(seed=5, halting_bias=1.0)
    result = pn.evaluate_act(P, x, y, dtype=torch.float64)
    y_hat, N, R = act_forward(torch.tensor(x), {k: torch.tensor(v) for k, v in P.items()})
    assert result["error"] == pytest.approx(float(((y_hat[:, 0, 0] > 0).numpy() != (y[:, 0, 0] > 0.5)).mean()))
    assert result["ponder"] == pytest.approx(float((N + R).mean()))
    assert pn.per_count([1, 0, 1, 1], [2, 2, 3, 3]) == {2: 0.5, 3: 1.0}


def test_population_refuses_bad_arguments():
    options = {"bits": 4}
    with pytest.raises(ValueError, match="members"):
        PonderNetPopulation([], task_options=options)
    with pytest.raises(ValueError, match="seed"):
        PonderNetPopulation([{"beta": 0.1}], task_options=options)
    with pytest.raises(ValueError, match="beta"):
        PonderNetPopulation([{"seed": 0, "beta": -0.1}], task_options=options)
    with pytest.raises(ValueError, match="lambda_p"):
        PonderNetPopulation([{"seed": 0, "lambda_p": 1.0}], task_options=options)
    with pytest.raises(ValueError, match="lr"):
        PonderNetPopulation([{"seed": 0, "lr": 0}], task_options=options)
    with pytest.raises(ValueError, match="max_nonzero"):
        PonderNetPopulation([{"seed": 0}], task_options={"bits": 4, "max_nonzero": 5})
    with pytest.raises(ValueError, match="dtype"):
        PonderNetPopulation([{"seed": 0}], task_options=options, dtype="float16")
    with pytest.raises(ValueError, match="hidden"):
        PonderNetPopulation([{"seed": 0}], task_options=options, hidden=0)
    pop = PonderNetPopulation([{"seed": 0}], task_options=options, hidden=4)
    with pytest.raises(ValueError, match="k must be"):
        pop.member_params(1)


# ---------------------------------------------------------------------------------------------
# The comparison and its command line
# ---------------------------------------------------------------------------------------------

TINY = dict(bits=4, train_max=2, hidden=4, batch_size=8, iterations=4, chunk=2, seeds=(0, 1), taus=(1e-2,),
            betas=(1e-2, 1e-1), max_steps=3, eval_size=24)


def comparison(folder, settings=TINY, progress=None, **kw):
    return pondernet_experiment.run_comparison(settings, work=folder / "work", out=folder / "out",
                                               progress=progress, **kw)


@pytest.mark.slow
def test_comparison_tables_round_trip(tmp_path):
    tables = comparison(tmp_path)         # what run_comparison returns is read tables from its files
    assert len(tables["runs"]) == 2 + 4                       # ACT: 1 tau x 2 seeds; PonderNet: 2 betas x 2 seeds
    assert len(tables["curves"]) == 2 * 6                     # measured after each of the two chunks
    assert {r["iteration"] for r in tables["curves"]} == {2, 4}
    for row in tables["runs"]:
        assert 0 <= row["error_in"] <= 1 and 0 <= row["error_out"] <= 1
        assert 1 <= row["steps_in"] <= 3
    # the attention rows of each network and count are a distribution over the steps
    sums = {}
    for r in tables["attention"]:
        key = (r["model"], r["knob"], r["seed"], r["count"])
        sums[key] = sums.get(key, 0.0) + r["p"]
    assert len(sums) == 6 * 4 and all(abs(v - 1) < 1e-5 for v in sums.values())
    assert tables["meta"]["settings"]["bits"] == 4 and len(tables["runs"]) == 6
    assert tables["runs"][0]["model"] in ("act", "pondernet") and isinstance(tables["runs"][0]["seed"], int)
    act_knob, pn_knob = pondernet_experiment.comparison_picks(tables)
    assert act_knob == 1e-2 and pn_knob in (1e-2, 1e-1)
    picks = pondernet_experiment.attention_picks(tables, act_knob, pn_knob)
    assert [m for m, _, _ in picks] == ["act", "pondernet"]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    experiment = pondernet_experiment
    for fig in (experiment.figure_errors(tables), experiment.figure_counts(tables, act_knob, pn_knob),
                experiment.figure_attention(tables, picks), experiment.figure_curves(tables)):
        plt.close(fig)


@pytest.mark.slow
def test_the_limits_move_epsilon_and_the_cap_on_the_trained_networks(tmp_path):
    """limits.csv: each network on each set at every epsilon (ACT) and at the trained and the raised
    cap; at the trained cap and epsilon 0.01 it is the network as runs.csv measured it."""
    tables = comparison(tmp_path)
    limits = tables["limits"]
    M, raised = 3, 3 * pondernet_experiment.RAISED_CAP
    act = [r for r in limits if r["model"] == "act"]
    ponder = [r for r in limits if r["model"] == "pondernet"]
    assert len(act) == 2 * len(pondernet_experiment.EPSILONS) * 2 * 2     # seeds x epsilons x caps x sets
    assert len(ponder) == 4 * 2 * 2 and all(r["epsilon"] is None for r in ponder)
    assert {r["cap"] for r in limits} == {M, raised} and {r["set"] for r in limits} == {"in", "out"}
    runs = {(r["model"], r["knob"], r["seed"]): r for r in tables["runs"]}
    for r in limits:
        assert 0 <= r["error"] <= 1 and 1 <= r["steps"] <= r["cap"] and 0 <= r["at_cap"] <= 1
        if r["cap"] == M and r["epsilon"] in (0.01, None):
            run = runs[(r["model"], r["knob"], r["seed"])]
            assert (r["error"], r["steps"]) == pytest.approx((run[f"error_{r['set']}"], run[f"steps_{r['set']}"]))
    # a larger epsilon halts no later: N falls (or stays) as epsilon rises, row by row
    for seed in (0, 1):
        for cap in (M, raised):
            steps = [next(r["steps"] for r in act if (r["seed"], r["cap"], r["epsilon"], r["set"]) == (seed, cap, e, "in"))
                     for e in sorted(pondernet_experiment.EPSILONS)]
            assert steps == sorted(steps, reverse=True)


@pytest.mark.slow
def test_a_comparison_finished_before_the_limits_gets_them_from_its_networks(tmp_path):
    comparison(tmp_path)
    (tmp_path / "out" / "limits.csv").unlink()
    assert pondernet_experiment.read_comparison(tmp_path / "out")["limits"] == []
    assert len(comparison(tmp_path)["limits"]) == 2 * 3 * 2 * 2 + 4 * 2 * 2      # measured again, no training


def test_comparison_refuses_bad_settings(tmp_path):
    with pytest.raises(ValueError, match="unknown setting"):
        comparison(tmp_path, {"bitz": 4})
    with pytest.raises(ValueError, match="train_max"):
        comparison(tmp_path, {**TINY, "train_max": 5})
    with pytest.raises(ValueError, match="seeds"):
        comparison(tmp_path, {**TINY, "seeds": ()})
    assert not (tmp_path / "out").exists()


def files(folder):
    return {p.name: p.read_bytes() for p in sorted((folder / "out").glob("*.csv"))}


@pytest.mark.slow
def test_a_stopped_comparison_resumes_to_the_same_tables(tmp_path, monkeypatch):
    """Stopped after its first chunk, and stopped in the middle of PonderNet's part of the second
    (after ACT's runs reached its end), a comparison run again ends with every CSV byte for byte
    as a run that never stopped."""
    comparison(tmp_path / "straight")
    straight = files(tmp_path / "straight")
    assert sorted(straight) == ["attention.csv", "counts.csv", "curves.csv", "limits.csv", "runs.csv"]

    def stop(line):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        comparison(tmp_path / "chunk", progress=stop)              # the first chunk is written, then a stop
    assert sorted(files(tmp_path / "chunk")) == ["curves.csv"]
    assert {int(r["iteration"]) for r in read_csv(tmp_path / "chunk" / "out" / "curves.csv")} == {2}
    assert comparison(tmp_path / "chunk")["meta"]["settings"]["iterations"] == 4
    assert files(tmp_path / "chunk") == straight

    real = PonderNetPopulation.train_step

    def train_step(self):
        if self.iteration == 3:
            raise KeyboardInterrupt                                  # in the middle of the second chunk
        return real(self)
    monkeypatch.setattr(PonderNetPopulation, "train_step", train_step)
    with pytest.raises(KeyboardInterrupt):
        comparison(tmp_path / "step")
    monkeypatch.undo()
    comparison(tmp_path / "step")
    assert files(tmp_path / "step") == straight
    before = files(tmp_path / "step")
    comparison(tmp_path / "step")                                    # finished: nothing to do
    assert files(tmp_path / "step") == before


def test_other_settings_are_refused_in_one_line_and_force_starts_over(tmp_path, monkeypatch, capsys):
    options = {**TINY, "seeds": (0,), "betas": (1e-2,)}
    pondernet_experiment.run(options, tmp_path / "results" / "tiny", progress=None)
    before = (tmp_path / "results" / "tiny" / "curves.csv").read_text()
    argv = ["--name", "tiny", "--bits", "4", "--train-max", "2", "--hidden", "4", "--batch-size", "8",
            "--iterations", "6", "--chunk", "2", "--seeds", "0", "--taus", "0.01", "--betas", "0.01",
            "--max-steps", "3", "--eval-size", "24"]
    assert pondernet_experiment.main(argv, root=tmp_path) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "other settings" in err and "--force" in err, err
    assert (tmp_path / "results" / "tiny" / "curves.csv").read_text() == before

    def stopped(*args, **kwargs):
        raise loop.Stopped(15, 2)                   # what ACT's runs raise after a SIGTERM
    monkeypatch.setattr(pondernet_experiment, "run_comparison", stopped)
    assert pondernet_experiment.main(argv + ["--force"], root=tmp_path) == 143
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "the same command continues" in err, err
    monkeypatch.undo()
    tables = pondernet_experiment.run({**options, "iterations": 6}, tmp_path / "results" / "tiny", force=True,
                                      progress=None)
    assert {r["iteration"] for r in tables["curves"]} == {2, 4, 6}
    assert PonderNetPopulation([{"seed": 0, "beta": 1e-2, "lambda_p": 0.2, "lr": 1e-2}],
                                              task_options={"bits": 4, "max_nonzero": 2}, hidden=4, max_steps=3,
                                              batch_size=8).restore(
        tmp_path / "runs" / "pondernet" / "tiny" / "pondernet.npz")["iteration"] == 6


def test_script_refuses_bad_input_in_one_line(capsys):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "scripts" / "pondernet.py"
    spec = importlib.util.spec_from_file_location("pondernet_script", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for args in (["--name", "x", "--train-max", "9", "--bits", "8", "--iterations", "1"],
                 ["--plot", "no_such_results"], ["--name", "a/b"], ["--name", "x", "--taus", "abc"]):
        try:
            status = script.main(args)
        except SystemExit as stop:          # argparse's own refusals
            status = stop.code
        err = capsys.readouterr().err
        assert status == 2, args
        assert len(err.strip().splitlines()) == 1 and "error" in err, err
