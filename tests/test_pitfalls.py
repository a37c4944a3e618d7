"""The pitfall gallery: the correct pieces are act_torch's ACT, and every bug is told apart from them."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from act_beyond import pitfalls as pf
from act_experiments.experiments import pitfalls as pitfalls_experiment
from act_numpy.params import init_params
from act_torch.act import act_forward

# the controlled-halting cases of the course's reference (epsilon = 0.01): h, cap M, correct N,
# correct p, correct d rho / d h^n for n <= N
CASES = {
    "A": ([0.3] * 8, 100, 4, [0.3, 0.3, 0.3, 0.1], [-1, -1, -1, 0]),
    "B": ([0.2485] * 8, 100, 4, [0.2485] * 3 + [0.2545], [-1, -1, -1, 0]),
    "C": ([0.2, 0.9, 0.5], 100, 2, [0.2, 0.8], [-1, 0]),
    "D": ([0.1, 0.1, 0.5, 0.45, 0.5], 100, 4, [0.1, 0.1, 0.5, 0.3], [-1, -1, -1, 0]),
    "E": ([0.02] * 6, 6, 6, [0.02] * 5 + [0.9], [-1] * 5 + [0]),
}
WEIGHT_BUGS = (pf.overshoot_weights, pf.remainder_through_N_weights, pf.cap_without_remainder_weights,
               pf.cap_zero_remainder_weights)


def network(cell, seed=1, D=5, H=8, O=3, bias=-1.0):
    P = init_params(cell, D, H, O, np.random.default_rng(seed), halting_bias=bias)
    return {k: torch.tensor(v, requires_grad=True) for k, v in P.items()}


def sequences(B=6, T=4, D=5, seed=2):
    return torch.tensor(np.random.default_rng(seed).normal(size=(B, T, D)))


def case_weights(name, weights=pf.remainder_weights, halts=pf.halts_at_threshold):
    h, M = CASES[name][:2]
    h = torch.tensor(h, dtype=torch.float64, requires_grad=True)
    N, p, R = pf.halting_from_values(h, max_ponder=M, weights=weights, halts=halts)
    return h, int(N[0]), p[0], R[0]


# ---------------------------------------------------------------------------------------------
# the correct pieces are ACT
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_correct_pieces_equal_act_forward_values_and_gradients(cell):
    P, x = network(cell), sequences()
    y1, N1, R1 = act_forward(x, P, cell=cell, max_ponder=7)
    y2, N2, R2 = pf.act_variant_forward(x, P, cell=cell, max_ponder=7)
    assert torch.equal(N1, N2) and N1.max() > 2
    assert torch.allclose(y1, y2, rtol=0, atol=1e-12) and torch.allclose(R1, R2, rtol=0, atol=1e-12)
    weights = torch.linspace(-1, 1, y1.numel(), dtype=torch.float64).view_as(y1)
    g1 = torch.autograd.grad((weights * y1).sum() + (N1 + R1).sum(), list(P.values()))
    g2 = torch.autograd.grad((weights * y2).sum() + (N2 + R2).sum(), list(P.values()))
    for name, a, b in zip(P, g1, g2):
        assert torch.allclose(a, b, rtol=0, atol=1e-12), name


@pytest.mark.parametrize("name", sorted(CASES))
def test_correct_weights_on_the_controlled_cases(name):
    _, _, N_true, p_true, dR_true = CASES[name]
    h, N, p, R = case_weights(name)
    assert N == N_true
    assert np.allclose(p[:N].detach().numpy(), p_true, atol=1e-12) and p.sum().item() == pytest.approx(1.0)
    (dh,) = torch.autograd.grad(N + R, h)
    assert np.allclose(dh[:N].numpy(), dR_true) and not dh[N:].any()      # eqs 14 and 20


# ---------------------------------------------------------------------------------------------
# the halting distribution: each bug differs where the reference says, and agrees elsewhere
# ---------------------------------------------------------------------------------------------

# the cases on which each bug gives other weights than the correct ones
WRONG_ON = {
    pf.overshoot_weights: {"B", "E"},
    pf.remainder_through_N_weights: {"A", "B", "C", "D", "E"},
    pf.cap_without_remainder_weights: {"E"},
    pf.cap_zero_remainder_weights: {"E"},
}


@pytest.mark.parametrize("bug", WEIGHT_BUGS, ids=lambda f: f.__name__)
def test_each_weights_bug_is_wrong_exactly_on_its_cases(bug):
    wrong = set()
    for name in CASES:
        _, N, p_ok, _ = case_weights(name)
        _, N_bug, p_bug, _ = case_weights(name, weights=bug)
        assert N_bug == N                     # the weights piece does not decide N
        if not torch.allclose(p_ok, p_bug, atol=1e-12):
            wrong.add(name)
            assert abs(p_bug.sum().item() - 1.0) > 1e-3        # and the weights no longer sum to 1
    assert wrong == WRONG_ON[bug]


def test_overshoot_loses_up_to_epsilon_and_the_cap_bugs_lose_R():
    _, _, p, _ = case_weights("B", weights=pf.overshoot_weights)
    assert p.sum().item() == pytest.approx(0.994)                  # 0.006 of the mass lost, < epsilon
    _, _, p, _ = case_weights("E", weights=pf.cap_without_remainder_weights)
    assert p.sum().item() == pytest.approx(0.12)                   # h^M in place of R = 0.9


def test_remainder_through_N_sends_the_ponder_gradient_to_h_N():
    h, N, p, R = case_weights("A", weights=pf.remainder_through_N_weights)
    (dh,) = torch.autograd.grad(N + R, h)
    assert R.item() == pytest.approx(-0.2) and dh[N - 1] == -1.0    # eq. (20) wants 0 there


def test_cap_zero_remainder_removes_the_ponder_gradient_at_the_cap():
    h, N, p, R = case_weights("E", weights=pf.cap_zero_remainder_weights)
    assert R.item() == 0.0 and p[N - 1].item() == 0.0
    (dh,) = torch.autograd.grad(N + R, h, allow_unused=True)
    assert dh is None or not dh.any()                               # correct: -1 on the first 5


@pytest.mark.parametrize("weights", (pf.remainder_weights,) + WEIGHT_BUGS, ids=lambda f: f.__name__)
def test_weights_pieces_pass_gradcheck_with_N_fixed(weights):
    h = torch.tensor([[0.3, 0.25, 0.3, 0.4, 0.2], [0.05, 0.1, 0.1, 0.2, 0.1]], dtype=torch.float64,
                     requires_grad=True)
    N, capped = torch.tensor([4, 5]), torch.tensor([False, True])
    assert torch.autograd.gradcheck(lambda v: weights(v, N, capped), (h,))


# ---------------------------------------------------------------------------------------------
# the halting test
# ---------------------------------------------------------------------------------------------

def test_counting_h_twice_halts_a_step_early():
    assert case_weights("A", halts=pf.halts_counting_h_twice)[1] == 3      # correct: 4
    assert case_weights("D", halts=pf.halts_counting_h_twice)[1] == 3      # correct: 4


def test_strict_test_differs_only_on_the_threshold_itself():
    for name in CASES:                                                     # no sum lands on 0.99
        assert case_weights(name, halts=pf.halts_strictly_above)[1] == CASES[name][2]
    h = [0.75, 0.5, 0.5]                              # exactly representable: the sum hits 1 - 0.25
    assert int(pf.halting_from_values(h, epsilon=0.25)[0][0]) == 1
    assert int(pf.halting_from_values(h, epsilon=0.25, halts=pf.halts_strictly_above)[0][0]) == 2


def test_dropping_epsilon_forbids_a_single_update():
    assert case_weights("B", halts=pf.halts_above_one)[1] == 5             # 0.994 < 1: one more step
    N, _, _ = pf.halting_from_values([0.999, 0.5], halts=pf.halts_above_one)
    assert int(N[0]) == 2 and int(pf.halting_from_values([0.999, 0.5])[0][0]) == 1


def test_halting_from_the_entering_state_reads_the_previous_state():
    P, x = network("rnn"), sequences()
    record = {}
    pf.act_variant_forward(x, P, halting_state=pf.entering_state, record=record)
    first = record["h"][0][:, 0]                      # t = 0, n = 1: read from the zero state
    assert torch.allclose(first, torch.sigmoid(P["b_h"]).expand_as(first))
    ok = {}
    pf.act_variant_forward(x, P, record=ok)
    assert not torch.allclose(ok["h"][0][:, 0], first)


# ---------------------------------------------------------------------------------------------
# the mean field
# ---------------------------------------------------------------------------------------------

def test_plain_average_gives_the_halting_unit_no_data_gradient():
    P, x = network("rnn"), sequences()
    y, N, R = pf.act_variant_forward(x, P, mix=pf.plain_average)
    assert N.max() > 1
    g = torch.autograd.grad(y.sum(), [P["W_h"], P["b_h"]], allow_unused=True)
    assert all(v is None or not v.any() for v in g)
    y_ok, _, _ = pf.act_variant_forward(x, P)
    assert torch.autograd.grad(y_ok.sum(), P["b_h"])[0].abs().item() > 1e-6


def test_mixes_agree_when_one_step_is_taken_and_differ_otherwise():
    S = torch.randn(3, 4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    entering = torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    one = torch.tensor([1, 1, 1])
    p_one = torch.tensor([[1.0, 0, 0, 0]] * 3, dtype=torch.float64)
    for mix in (pf.plain_average, pf.running_average):
        assert torch.allclose(mix(p_one, S, one, entering), S[:, 0])
    p = torch.tensor([[0.2, 0.3, 0.5, 0.0]] * 3, dtype=torch.float64)
    three = torch.tensor([3, 3, 3])
    right = pf.weighted_mean(p, S, three, entering)
    assert torch.allclose(pf.plain_average(p, S, three, entering), S[:, :3].mean(dim=1))
    assert not torch.allclose(pf.running_average(p, S, three, entering), right)
    # the running average's weights: p^n prod_{k>n} (1 - p^k), and prod (1 - p^n) left on the old state
    w = [0.2 * 0.7 * 0.5, 0.3 * 0.5, 0.5]
    expect = sum(wn * S[:, n] for n, wn in enumerate(w)) + 0.8 * 0.7 * 0.5 * entering
    assert torch.allclose(pf.running_average(p, S, three, entering), expect)


def test_mix_pieces_pass_gradcheck():
    S = torch.randn(2, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0), requires_grad=True)
    e = torch.randn(2, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1), requires_grad=True)
    p = torch.tensor([[0.3, 0.7, 0.0], [0.2, 0.3, 0.5]], dtype=torch.float64, requires_grad=True)
    N = torch.tensor([2, 3])
    for mix in (pf.weighted_mean, pf.plain_average, pf.running_average):
        assert torch.autograd.gradcheck(lambda a, b, c: mix(a, b, N, c), (p, S, e))


# ---------------------------------------------------------------------------------------------
# the flag
# ---------------------------------------------------------------------------------------------

def test_flag_pieces():
    x_t = torch.tensor([[0.0, 2.0]], dtype=torch.float64)
    assert pf.flag_appended(x_t, 1).tolist() == [[0.0, 2.0, 1.0]]
    assert pf.flag_appended(x_t, 2).tolist() == [[0.0, 2.0, 0.0]]
    assert pf.flag_inverted(x_t, 1).tolist() == [[0.0, 2.0, 0.0]]
    assert pf.flag_inverted(x_t, 3).tolist() == [[0.0, 2.0, 1.0]]
    assert pf.flag_missing(x_t, 1).tolist() == [[0.0, 2.0, 0.0]]
    assert pf.flag_added_to_values(x_t, 1).tolist() == [[1.0, 3.0, 0.0]]
    assert pf.flag_added_to_values(x_t, 2).tolist() == [[0.0, 2.0, 0.0]]


def test_flag_bugs_change_the_outputs_and_the_inverted_flag_is_a_reparametrisation():
    P, x = network("rnn"), sequences()
    y_ok, _, _ = pf.act_variant_forward(x, P)
    for flag in (pf.flag_inverted, pf.flag_missing, pf.flag_added_to_values):
        y_bug, _, _ = pf.act_variant_forward(x, P, flag=flag)
        assert (y_bug - y_ok).abs().max() > 1e-3, flag.__name__
    # inverted flag with (w, b_s) = correct flag with (-w, b_s + w), w the flag row of W_x
    with torch.no_grad():
        Q = {k: v.detach().clone() for k, v in P.items()}
        Q["b_s"] = Q["b_s"] + Q["W_x"][-1]
        Q["W_x"][-1] = -Q["W_x"][-1]
    y_inv, N_inv, _ = pf.act_variant_forward(x, P, flag=pf.flag_inverted)
    y_re, N_re, _ = pf.act_variant_forward(x, Q)
    assert torch.equal(N_inv, N_re) and torch.allclose(y_inv, y_re, atol=1e-12)
    # adding to the values leaves the flag row with no gradient: it never learns
    y_add, N_add, R_add = pf.act_variant_forward(x, P, flag=pf.flag_added_to_values)
    (g,) = torch.autograd.grad(y_add.sum() + R_add.sum(), P["W_x"])
    assert not g[-1].any() and g[:-1].abs().max() > 0


# ---------------------------------------------------------------------------------------------
# the ponder cost and the error rate
# ---------------------------------------------------------------------------------------------

def test_ponder_cost_variants():
    N = torch.tensor([[2, 3, 4]])
    R = torch.tensor([[0.5, 0.25, 0.75]], dtype=torch.float64, requires_grad=True)
    in_sequence = torch.tensor([[1.0, 1.0, 0.0]], dtype=torch.float64)          # the last step is padding
    assert pf.ponder_cost(N, R, in_sequence).sum().item() == 5.75
    assert pf.ponder_cost_with_padding(N, R, in_sequence).sum().item() == 10.5
    assert not pf.ponder_cost_detached(N, R, in_sequence).requires_grad
    assert pf.ponder_cost_detached(N, R, in_sequence).sum().item() == 5.75
    (g,) = torch.autograd.grad(pf.ponder_cost_with_padding(N, R, in_sequence).sum(), R)
    assert g.tolist() == [[1.0, 1.0, 1.0]]                                 # correct: [1, 1, 0]


def test_objective_is_act_loss_split_in_two():
    from act_torch.losses import act_loss
    y_hat = torch.tensor([[[0.3], [-2.0]]], dtype=torch.float64)
    N, R = torch.tensor([[2, 3]]), torch.tensor([[0.4, 0.1]], dtype=torch.float64)
    target, live = torch.tensor([[1.0, 1.0]], dtype=torch.float64), torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    in_sequence = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    data, ponder, wrong = pf.objective(y_hat, N, R, target, live, in_sequence, kind="sigmoid", heads=1, tau=0.01)
    total, wrong_ref, _ = act_loss(y_hat, N, R, target, live, in_sequence, kind="sigmoid", heads=1, tau=0.01)
    assert float(data + ponder) == pytest.approx(float(total)) and float(ponder) == pytest.approx(0.024)
    assert torch.equal(wrong, wrong_ref)


def test_error_threshold_on_the_logit():
    z = torch.tensor([[0.3], [-0.2], [0.7]])
    target = torch.tensor([[1.0], [0.0], [1.0]])
    live = torch.ones(3, 1)
    assert pf.wrong_at_logit_zero(z, target, live).tolist() == [[False], [False], [False]]
    assert pf.wrong_at_logit_half(z, target, live).tolist() == [[True], [False], [False]]


# ---------------------------------------------------------------------------------------------
# data, PonderNet's KL, the batch loop
# ---------------------------------------------------------------------------------------------

def test_parity_prefix_batch():
    x, y, mask = pf.parity_prefix_batch(np.random.default_rng(0), 4000, 8)
    assert x.shape == (4000, 1, 8) and y.shape == (4000, 1, 1) and mask.shape == (4000, 1)
    nonzero = x[:, 0] != 0
    count = nonzero.sum(axis=1)
    assert count.min() == 1 and count.max() == 7                        # never all 8
    assert np.array_equal(nonzero, np.arange(8)[None, :] < count[:, None])   # a prefix
    assert np.array_equal((x[:, 0] > 0).sum(axis=1) % 2, y[:, 0, 0])
    assert not x[:, 0, -1].any()                                         # the last entry is always 0
    with pytest.raises(ValueError, match="bits"):
        pf.parity_prefix_batch(np.random.default_rng(0), 4, 1)
    with pytest.raises(ValueError, match="rng"):
        pf.parity_prefix_batch(0, 4, 8)


def test_geometric_prior_and_halting_from_lambdas():
    prior = pf.geometric_prior(0.2, 10)
    assert prior.sum().item() == pytest.approx(1.0)
    raw = pf.geometric_prior(0.2, 10, normalise=False)
    assert raw.sum().item() == pytest.approx(1 - 0.8 ** 10) and raw[0].item() == pytest.approx(0.2)
    lam = torch.tensor([0.1, 0.5, 0.3, 0.2], dtype=torch.float64)
    p = pf.halting_from_lambdas(lam)
    assert p.sum().item() == pytest.approx(1.0)
    assert p[:3].tolist() == pytest.approx([0.1, 0.9 * 0.5, 0.9 * 0.5 * 0.3])
    for bad in (0.0, 1.0, True):
        with pytest.raises(ValueError, match="lambda_p"):
            pf.geometric_prior(bad, 5)
    with pytest.raises(ValueError, match="steps"):
        pf.geometric_prior(0.5, 0)


def test_kl_directions_and_the_kldivloss_trap():
    prior = pf.geometric_prior(0.3, 6)
    p = torch.tensor([0.05, 0.05, 0.6, 0.2, 0.05, 0.05], dtype=torch.float64)
    right, reverse = pf.kl_halting_to_prior(p, prior), pf.kl_prior_to_halting(p, prior)
    assert right > 0 and reverse > 0 and abs(right - reverse) > 0.05
    assert pf.kl_halting_to_prior(prior, prior).abs() < 1e-15
    # what the public code calls: KLDivLoss(input=p.log(), target=p_G) is the reverse direction
    called = torch.nn.KLDivLoss(reduction="sum")(p.log(), prior)
    assert torch.allclose(called, reverse) and not torch.allclose(called, right)
    assert torch.allclose(F.kl_div(prior.log(), p, reduction="sum"), right)
    # a step with p = 0: the right KL stays finite, the reverse is infinite
    p0 = torch.tensor([0.5, 0.5, 0, 0, 0, 0], dtype=torch.float64)
    assert math.isfinite(pf.kl_halting_to_prior(p0, prior).item())
    assert math.isinf(pf.kl_prior_to_halting(p0, prior).item())


def test_batch_loop_steps():
    N = torch.tensor([[1, 2], [1, 100], [1, 2]])
    loop, rows = pf.batch_loop_steps(N)
    assert loop == 101 and rows == pytest.approx((3 + 3 + 101) / 3)
    with pytest.raises(ValueError, match="N"):
        pf.batch_loop_steps(torch.tensor([1, 2]))


# ---------------------------------------------------------------------------------------------
# bad arguments, the gallery, a short training run
# ---------------------------------------------------------------------------------------------

def test_bad_arguments_name_the_argument():
    P, x = network("rnn"), sequences()
    with pytest.raises(ValueError, match="mix"):
        pf.act_variant_forward(x, P, mix="average")
    with pytest.raises(ValueError, match="epsilon"):
        pf.act_variant_forward(x, P, epsilon=1.5)
    with pytest.raises(ValueError, match="record"):
        pf.act_variant_forward(x, P, record=[])
    with pytest.raises(ValueError, match="h"):
        pf.halting_from_values([[[0.5]]])
    with pytest.raises(ValueError, match="halted"):
        pf.halting_from_values([0.1, 0.1])
    with pytest.raises(ValueError, match="max_ponder"):
        pf.halting_from_values([0.5], max_ponder=0)
    with pytest.raises(ValueError, match="pitfall"):
        pitfalls_experiment.train_variant("no such bug")
    with pytest.raises(ValueError, match="iterations"):
        pitfalls_experiment.train_variant("correct", iterations=-1)
    with pytest.raises(ValueError, match="lr"):
        pitfalls_experiment.train_variant("correct", lr=float("nan"))
    with pytest.raises(ValueError, match="prefix"):
        pitfalls_experiment.train_variant("parity prefix", task="logic", iterations=1)
    with pytest.raises(ValueError, match="option"):
        pitfalls_experiment.train_variant("correct", task_options={"bitz": 3})


def test_every_gallery_entry_names_what_it_breaks():
    assert "correct" in pf.PITFALLS and len(pf.PITFALLS) >= 15
    for p in pf.PITFALLS.values():
        assert p.what and p.breaks
        assert p.data in ("random", "prefix")
        assert set(p.forward) <= {"flag", "halting_state", "halts", "weights", "mix"}


SMALL = dict(task_options={"bits": 4}, hidden=8, batch_size=16, iterations=6, eval_every=3, eval_size=32,
             probe_every=2, dtype=torch.float64)


@pytest.mark.slow
def test_train_variant_records_and_tells_the_bugs_apart():
    ok = pitfalls_experiment.train_variant("correct", **SMALL)
    assert [e["iteration"] for e in ok["evals"]] == [0, 3, 6]
    last = ok["evals"][-1]
    assert 0 <= last["error"] <= 1 and last["weight_sum"] == pytest.approx(1.0)
    assert last["rho"] > last["mean_N"] >= 1                  # mean N, and the ponder cost N + R (eq. 10)
    assert last["grad_data"] > 0 and last["grad_ponder"] > 0
    # the strict test never meets a sum equal to 1 - eps here: the same run, number for number
    assert pitfalls_experiment.train_variant("halts on >", **SMALL)["evals"] == ok["evals"]
    plain = pitfalls_experiment.train_variant("plain average", **SMALL)["evals"]
    assert all(e["grad_data"] == 0.0 for e in plain[1:]) and plain[-1]["grad_ponder"] > 0
    detached = pitfalls_experiment.train_variant("ponder detached", **SMALL)["evals"]
    assert all(e["grad_ponder"] == 0.0 for e in detached[1:])
    prefix = pitfalls_experiment.train_variant("parity prefix", **SMALL)["evals"][-1]
    assert "error_random" in prefix
