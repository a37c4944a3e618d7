"""Tests for act_beyond.universal_transformer: the pointer-chain task, the per-position halting loop
(against act_torch's ACT, against the controlled-halting cases, and with a cap that drops R), the
carried-forward states of halted positions, the encoder, and a short training run."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from act_beyond import pitfalls
from act_beyond import universal_transformer as ut
from act_experiments.experiments import universal_transformer as ut_experiment
from act_numpy.params import init_params as act_init_params
from act_torch.act import act_forward

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "universal_transformer.py"


@pytest.fixture(autouse=True)
def one_thread():
    """These tensors are tiny: one thread, as the notebooks use (two threads on a busy machine wait
    on each other far longer than they compute)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def given_halting(values):
    """ponder_positions' arguments for halting values given in advance (ut.scripted_halting)."""
    return ut.scripted_halting(values)


def small_model(seed=0, length=5, values=3, **model):
    options = {**dict(d_model=8, heads=2, ff=12, max_ponder=5), **model}
    P = ut.init_params(vocab=ut.vocab_size(length, values), length=length, out=values,
                       generator=torch.Generator().manual_seed(seed), dtype=torch.float64, **options)
    tokens, targets, depth = ut.make_chains(np.random.default_rng(seed), 6, length=length, values=values, max_depth=3)
    return P, torch.as_tensor(tokens), torch.as_tensor(targets), depth


# ---------------------------------------------------------------------------------------------
# The task
# ---------------------------------------------------------------------------------------------

def test_chains_resolve_to_their_targets():
    tokens, targets, depth = ut.make_chains(np.random.default_rng(0), 500, length=8, values=4, max_depth=5)
    assert tokens.shape == targets.shape == depth.shape == (500, 8)
    assert tokens.dtype == targets.dtype == depth.dtype == np.int64
    again, hops = ut.resolve_chains(tokens, 4)
    np.testing.assert_array_equal(again, targets)
    np.testing.assert_array_equal(hops, depth)
    assert depth.min() == 0 and depth.max() == 5
    assert set(np.unique(targets)) == {0, 1, 2, 3}
    assert tokens.min() >= 0 and tokens.max() < ut.vocab_size(8, 4)
    # every position at depth k > 0 refers to a position at depth k - 1
    refs = tokens >= 4
    rows, cols = np.nonzero(refs)
    np.testing.assert_array_equal(depth[rows, tokens[rows, cols] - 4], depth[rows, cols] - 1)
    # depth 0 is a literal, every row has one, and no position refers to itself
    assert np.all((depth == 0) == ~refs) and np.all((depth == 0).any(axis=1))
    assert not np.any(tokens[rows, cols] - 4 == cols)


def test_chains_are_seeded_and_respect_max_depth():
    a = ut.make_chains(np.random.default_rng(3), 50, length=6, values=2, max_depth=2)
    b = ut.make_chains(np.random.default_rng(3), 50, length=6, values=2, max_depth=2)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert a[2].max() <= 2
    flat = ut.make_chains(np.random.default_rng(3), 50, length=6, values=2, max_depth=0)
    assert np.all(flat[2] == 0) and np.all(flat[0] < 2)


def test_describe_chains():
    with pytest.raises(ValueError, match="out of range or a cycle"):
        ut.resolve_chains(np.array([[5, 1, 2]]), 2)             # 5 refers to position 3 of 3
    with pytest.raises(ValueError, match="out of range or a cycle"):
        ut.resolve_chains(np.array([[3, 2, 1]]), 2)             # a = b, b = a
    assert ut.describe_chains(np.array([4, 1, 2]), 2) == ["a = c", "b = 1", "c = a"]


@pytest.mark.parametrize("kwargs, name", [
    (dict(batch_size=0), "batch_size"), (dict(length=1), "length"), (dict(values=1), "values"),
    (dict(max_depth=-1), "max_depth"), (dict(batch_size=2.5), "batch_size")])
def test_chains_bad_arguments(kwargs, name):
    args = {**dict(batch_size=4, length=5, values=3, max_depth=2), **kwargs}
    with pytest.raises(ValueError, match=name):
        ut.make_chains(np.random.default_rng(0), args.pop("batch_size"), **args)
    with pytest.raises(ValueError, match="rng"):
        ut.make_chains(0, 4)


# ---------------------------------------------------------------------------------------------
# The halting loop: the controlled cases, ACT itself, the cap
# ---------------------------------------------------------------------------------------------

# cases A-D of the course's pitfall table, one position each, eps = 0.01
CASES = {
    "A": ([0.3] * 6, 4, [0.3, 0.3, 0.3, 0.1]),
    "B": ([0.2485] * 6, 4, [0.2485] * 3 + [0.2545]),
    "C": ([0.2, 0.9, 0.5, 0.5, 0.5, 0.5], 2, [0.2, 0.8]),
    "D": ([0.1, 0.1, 0.5, 0.45, 0.5, 0.5], 4, [0.1, 0.1, 0.5, 0.3]),
}


def test_controlled_cases_position_by_position():
    values = torch.tensor([[CASES[k][0] for k in "ABCD"]], dtype=torch.float64)      # (1, 4, 6)
    z0, step, w_h, b_h = given_halting(values)
    r = ut.ponder_positions(z0, step, w_h, b_h, epsilon=0.01, max_ponder=100)
    assert r.loop_steps == 4                                  # the loop stops when the last position halts
    for i, k in enumerate("ABCD"):
        _, N, p = CASES[k]
        assert int(r.N[0, i]) == N
        np.testing.assert_allclose(r.p[0, i, :N].detach().numpy(), p, atol=1e-12)
        assert torch.all(r.p[0, i, N:] == 0)
    torch.testing.assert_close(r.p.sum(-1), torch.ones(1, 4, dtype=torch.float64))
    assert not r.capped.any()
    # d rho / d h: -1 before N, 0 at N and after (eqs 14, 20)
    (grad,) = torch.autograd.grad((r.N + r.R).sum(), r.h)
    for i, k in enumerate("ABCD"):
        N = CASES[k][1]
        expected = np.r_[-np.ones(N - 1), np.zeros(r.loop_steps - N + 1)]
        np.testing.assert_array_equal(grad[0, i].numpy(), expected)


def test_a_worked_example_like_notebook_01s():
    # (0.1, 0.3, 0.5): the sum lands on 1 - eps = 0.9 exactly, which the round trip through the
    # halting unit's sigmoid does not keep to the last bit; 0.55 halts at the same step
    z0, step, w_h, b_h = given_halting([[[0.1, 0.3, 0.55, 0.5]]])
    r = ut.ponder_positions(z0, step, w_h, b_h, epsilon=0.1, max_ponder=100)
    assert int(r.N) == 3
    np.testing.assert_allclose(r.p[0, 0].detach().numpy(), [0.1, 0.3, 0.6], atol=1e-12)
    np.testing.assert_allclose(float(r.R.detach()), 0.6)


def test_case_E_the_cap_keeps_the_remainder_and_the_pitfalls_drop_it():
    z0, step, w_h, b_h = given_halting([[[0.02] * 8]])
    right = ut.ponder_positions(z0, step, w_h, b_h, epsilon=0.01, max_ponder=6)
    assert int(right.N) == 6 and bool(right.capped) and right.loop_steps == 6
    np.testing.assert_allclose(right.p[0, 0].detach().numpy(), [0.02] * 5 + [0.9], atol=1e-12)
    np.testing.assert_allclose(float(right.R.detach()), 0.9)
    (g_right,) = torch.autograd.grad((right.N + right.R).sum(), right.h)
    np.testing.assert_array_equal(g_right[0, 0].numpy(), [-1.0] * 5 + [0.0])

    zero = ut.ponder_positions(z0, step, w_h, b_h, epsilon=0.01, max_ponder=6, weights=pitfalls.cap_zero_remainder_weights)
    assert int(zero.N) == 6 and float(zero.R.detach()) == 0.0
    np.testing.assert_allclose(float(zero.p.detach().sum()), 0.1)                   # the weights lose R = 0.9
    (g_zero,) = torch.autograd.grad((zero.N + zero.R).sum(), zero.h, allow_unused=True)
    assert g_zero is None or torch.all(g_zero == 0)                       # no ponder gradient at the cap
    last = ut.ponder_positions(z0, step, w_h, b_h, epsilon=0.01, max_ponder=6,
                               weights=pitfalls.cap_without_remainder_weights)
    np.testing.assert_allclose(last.p[0, 0].detach().numpy(), [0.02] * 6, atol=1e-12)    # h^M instead of R
    # the output state is sum p c: with a state of 1 at every step it is the sum of the weights
    ones = lambda z, n: torch.ones_like(z) * 4.0             # h = sigmoid(4) = 0.982: halts at step 2
    z1 = torch.zeros(1, 1, 1, dtype=torch.float64)
    r = ut.ponder_positions(z1, ones, w_h, b_h, max_ponder=1, weights=pitfalls.cap_zero_remainder_weights)
    assert float(r.out.detach()) == 0.0                               # capped at M = 1 and nothing kept
    r = ut.ponder_positions(z1, ones, w_h, b_h, max_ponder=1)
    assert float(r.out.detach()) == 4.0                               # p^1 = R = 1: the state itself


def test_one_position_with_an_rnn_step_is_act():
    """The halting weights, N, R, the mean field and all gradients of ACT, float64."""
    rng = np.random.default_rng(5)
    B, L, D, H, O = 6, 1, 4, 7, 3
    params = {k: torch.tensor(v, requires_grad=True) for k, v in act_init_params("rnn", D, H, O, rng, halting_bias=-0.5).items()}
    with torch.no_grad():
        params["W_h"].mul_(3.0)                              # halting units that differ from row to row
    x = torch.tensor(rng.normal(size=(B, L, D)))
    r = ut.ponder_positions(torch.zeros(B, L, H, dtype=torch.float64), ut.rnn_step(x, params),
                            params["W_h"], params["b_h"], epsilon=0.01, max_ponder=20)
    y_ut = r.out @ params["W_y"] + params["b_y"]
    record = {}
    y_act, N_act, R_act = act_forward(x.reshape(B * L, 1, D), params, cell="rnn", epsilon=0.01, max_ponder=20,
                                      record=record)
    assert len(set(r.N.flatten().tolist())) > 1              # the rows halt at different steps
    np.testing.assert_array_equal(r.N.reshape(-1).numpy(), N_act[:, 0].numpy())
    torch.testing.assert_close(r.R.reshape(-1), R_act[:, 0])
    torch.testing.assert_close(r.p.reshape(B * L, -1), record["p"][0])
    torch.testing.assert_close(y_ut.reshape(B * L, 1, O), y_act)
    weights = torch.tensor(rng.normal(size=(B * L, 1, O)))
    g_ut = torch.autograd.grad((y_ut.reshape(B * L, 1, O) * weights).sum() + 0.1 * (r.N + r.R).sum(), list(params.values()))
    g_act = torch.autograd.grad((y_act * weights).sum() + 0.1 * (N_act + R_act).sum(), list(params.values()))
    for name, a, b in zip(params, g_ut, g_act):
        torch.testing.assert_close(a, b, msg=f"gradient of {name}")


def test_independent_positions_are_act_row_by_row():
    rng = np.random.default_rng(6)
    B, L, D, H, O = 3, 5, 3, 6, 2
    params = {k: torch.tensor(v) for k, v in act_init_params("rnn", D, H, O, rng, halting_bias=0.0).items()}
    params["W_h"] = params["W_h"] * 4.0
    x = torch.tensor(rng.normal(size=(B, L, D)))
    r = ut.ponder_positions(torch.zeros(B, L, H, dtype=torch.float64), ut.rnn_step(x, params),
                            params["W_h"], params["b_h"], max_ponder=10)
    y_act, N_act, R_act = act_forward(x.reshape(B * L, 1, D), params, max_ponder=10)
    np.testing.assert_array_equal(r.N.reshape(-1).numpy(), N_act[:, 0].numpy())
    torch.testing.assert_close(r.R.reshape(-1), R_act[:, 0])
    torch.testing.assert_close((r.out @ params["W_y"] + params["b_y"]).reshape(B * L, 1, O), y_act)


def mixing_step(W, record=None):
    """A step that mixes positions: c_i = tanh(z_i W + mean_j z_j + 0.3), recording what it sees."""
    def step(z, n):
        if record is not None:
            record.append(z.detach().clone())
        return torch.tanh(z @ W + z.mean(dim=1, keepdim=True) + 0.3)
    return step


def test_halted_positions_are_carried_forward_unchanged():
    g = torch.Generator().manual_seed(3)
    B, L, d = 4, 6, 5
    z0 = torch.randn(B, L, d, generator=g, dtype=torch.float64)
    W = torch.randn(d, d, generator=g, dtype=torch.float64)
    w_h = 2.0 * torch.randn(d, 1, generator=g, dtype=torch.float64)
    seen = []
    r = ut.ponder_positions(z0, mixing_step(W, seen), w_h, torch.zeros(1, dtype=torch.float64), max_ponder=12)
    assert r.N.min() < r.N.max()                              # positions halt at different steps
    assert len(seen) == r.loop_steps
    # the output is sum_n p^n c^n with the final p; a halted position shows it from then on
    states = [mixing_step(W)(z, n + 1) for n, z in enumerate(seen)]
    S = torch.stack(states, dim=-2)
    torch.testing.assert_close(r.out, (r.p[..., None] * S).sum(dim=-2))
    for n in range(1, r.loop_steps):                  # seen[n] is the input of step n + 1
        halted = r.N < n + 1
        torch.testing.assert_close(seen[n][halted], r.out[halted])
        running = ~halted
        torch.testing.assert_close(seen[n][running], states[n - 1][running])


def test_gradcheck_through_the_halting_loop():
    g = torch.Generator().manual_seed(4)
    B, L, d = 2, 4, 3
    z0 = torch.randn(B, L, d, generator=g, dtype=torch.float64)
    W = torch.randn(d, d, generator=g, dtype=torch.float64).requires_grad_()
    w_h = (1.5 * torch.randn(d, 1, generator=g, dtype=torch.float64)).requires_grad_()
    b_h = torch.tensor([0.2], dtype=torch.float64, requires_grad=True)
    probe = torch.randn(B, L, d, generator=g, dtype=torch.float64)

    def f(W, w_h, b_h):
        r = ut.ponder_positions(z0, mixing_step(W), w_h, b_h, max_ponder=6)
        return (r.out * probe).sum() + 0.3 * (r.N + r.R).sum()

    N = ut.ponder_positions(z0, mixing_step(W), w_h, b_h, max_ponder=6).N
    assert N.min() < N.max()
    assert torch.autograd.gradcheck(f, (W, w_h, b_h))


@pytest.mark.parametrize("kwargs, name", [
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=1.0), "epsilon"), (dict(max_ponder=0), "max_ponder"),
    (dict(weights=None), "weights"), (dict(step=3), "step")])
def test_ponder_positions_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match="still running"):
        ut.ponder_positions(*given_halting([[[0.1, 0.1]]]), max_ponder=5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        given_halting([[1.0, 0.5]])
    z0, step, w_h, b_h = given_halting([[[0.5, 0.6]]])
    args = {"step": step, **kwargs}
    with pytest.raises(ValueError, match=name):
        ut.ponder_positions(z0, args.pop("step"), w_h, b_h, **args)
    with pytest.raises(ValueError, match="z0"):
        ut.ponder_positions(z0[0], step, w_h, b_h)
    with pytest.raises(ValueError, match="w_h"):
        ut.ponder_positions(z0, step, torch.ones(2, 1, dtype=torch.float64), b_h)


# ---------------------------------------------------------------------------------------------
# The encoder
# ---------------------------------------------------------------------------------------------

def test_encoder_shapes_and_halting_properties():
    P, tokens, targets, depth = small_model()
    logits, r = ut.ut_forward(P, tokens)
    assert logits.shape == (6, 5, 3) and r.N.shape == r.R.shape == (6, 5)
    assert torch.all((r.N >= 1) & (r.N <= 5))
    assert torch.all((r.R > 0) & (r.R <= 1))
    torch.testing.assert_close(r.p.sum(-1), torch.ones(6, 5, dtype=torch.float64))
    assert torch.all(r.p >= 0)
    # b_h = 1 and small w_h: every h near sigmoid(1) = 0.73, so every position takes 2 steps
    assert torch.all(r.N == 2)
    fixed, rf = ut.ut_forward(P, tokens, depth=3)
    assert fixed.shape == (6, 5, 3) and torch.all(rf.N == 3) and torch.all(rf.R == 0) and rf.loop_steps == 3
    torch.testing.assert_close(rf.p.sum(-1), torch.ones(6, 5, dtype=torch.float64))


def test_act_with_cap_one_is_the_one_layer_encoder():
    """M = 1: N = 1 and p^1 = R = 1 everywhere, so the output is the fixed-depth-1 encoder's."""
    P, tokens, _, _ = small_model(seed=1)
    a, r = ut.ut_forward(P, tokens, max_ponder=1)
    b, _ = ut.ut_forward(P, tokens, depth=1)
    torch.testing.assert_close(a, b)
    assert torch.all(r.N == 1) and torch.all(r.R == 1)


def test_encoder_gradcheck():
    P, tokens, targets, _ = small_model(seed=2, length=4)
    with torch.no_grad():
        P["w_h"].mul_(40.0)                         # positions that halt at different steps
    _, r = ut.ut_forward(P, tokens)
    assert r.N.min() < r.N.max()
    names = ("W_q", "w_h", "b_h", "step")

    def f(*tensors):
        Q = {**P, **dict(zip(names, tensors))}
        logits, r = ut.ut_forward(Q, tokens)
        loss, _, _ = ut.loss_terms(logits, r, targets, tau=0.05)
        return loss

    assert torch.autograd.gradcheck(f, tuple(P[k].detach().clone().requires_grad_() for k in names))


def test_time_penalty_reaches_the_halting_bias():
    P, tokens, targets, _ = small_model(seed=3)
    logits, r = ut.ut_forward(P, tokens)
    (g0,) = torch.autograd.grad(ut.loss_terms(logits, r, targets, tau=0.0)[0], P["b_h"], retain_graph=True)
    (g1,) = torch.autograd.grad(ut.loss_terms(logits, r, targets, tau=1.0)[0], P["b_h"])
    # the ponder part: tau * d(sum rho)/d b_h averaged over the batch, = -tau sum_{n<N} h(1-h) / B < 0
    assert float(g1 - g0) < 0


@pytest.mark.parametrize("kwargs, name", [
    (dict(depth=6), "depth"), (dict(max_ponder=6), "max_ponder"), (dict(heads=3), "heads"), (dict(depth=0), "depth")])
def test_encoder_bad_arguments(kwargs, name):
    P, tokens, _, _ = small_model()
    with pytest.raises(ValueError, match=name):
        ut.ut_forward(P, tokens, **kwargs)
    with pytest.raises(ValueError, match="tokens"):
        ut.ut_forward(P, tokens + 100)
    with pytest.raises(ValueError, match="params"):
        ut.ut_forward({"embed": P["embed"]}, tokens)
    with pytest.raises(ValueError, match="multiple of heads"):
        ut.init_params(vocab=5, length=3, out=2, d_model=6, heads=4)
    with pytest.raises(ValueError, match="generator"):
        ut.init_params(vocab=5, length=3, out=2, generator=0)


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------

def test_training_is_seeded_and_shares_the_start():
    small = dict(task=dict(length=5, values=3, max_depth=2), model=dict(d_model=8, ff=8, max_ponder=4),
                 batch_size=8, eval_size=20, eval_every=2)
    a = ut_experiment.train_ut(iterations=3, seed=7, **small)
    b = ut_experiment.train_ut(iterations=3, seed=7, **small)
    for k in a["params"]:
        torch.testing.assert_close(a["params"][k], b["params"][k], rtol=0, atol=0)
    assert [e["iteration"] for e in a["evals"]] == [0, 2, 3]
    first = a["evals"][0]
    assert sum(r["count"] for r in first["by_depth"]) == 20 * 5
    assert first["weight_sum"] == pytest.approx(1.0) and first["capped"] == 0.0
    fixed = ut_experiment.train_ut(depth=2, iterations=0, seed=7, **small)
    act = ut_experiment.train_ut(iterations=0, seed=7, **small)
    for k in act["params"]:
        torch.testing.assert_close(act["params"][k], fixed["params"][k], rtol=0, atol=0)
    assert fixed["evals"][0]["mean_N"] == 2.0 and fixed["evals"][0]["loop_steps"] == 2
    # mean_N is the mean number of updates N, rho the ponder cost N + R (eq. 10): R > 0 under ACT
    start = act["evals"][0]
    assert start["rho"] > start["mean_N"] >= 1 and all(r["rho"] > r["mean_N"] for r in start["by_depth"])
    with pytest.raises(ValueError, match="task"):
        ut_experiment.train_ut(iterations=0, task=dict(bits=3))
    with pytest.raises(ValueError, match="lr"):
        ut_experiment.train_ut(iterations=0, lr=0.0)


# ---------------------------------------------------------------------------------------------
# scripts/universal_transformer.py
# ---------------------------------------------------------------------------------------------

def load_script():
    import importlib.util
    spec = importlib.util.spec_from_file_location("ut_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["compute", "cap", "random"])
def test_a_rerun_of_the_committed_experiment_finds_its_record_equal_and_nothing_to_train(name, tmp_path):
    """run() writes the committed record, so a rerun resumes (nothing left to train) instead of
    refusing other settings."""
    out = tmp_path / "results"
    out.mkdir()
    for suffix in (".csv", ".json"):
        (out / f"{name}{suffix}").write_bytes((ut_experiment.COMMITTED / f"{name}{suffix}").read_bytes())
    lines = []
    ut_experiment.run_experiment(name, out=out, log=lines.append)
    assert lines == []
    assert (out / f"{name}.csv").read_bytes() == (ut_experiment.COMMITTED / f"{name}.csv").read_bytes()
    before, after = (json.loads((d / f"{name}.json").read_text()) for d in (ut_experiment.COMMITTED, out))
    bookkeeping = ("command", "machine", "wall_time_s")
    assert {k: v for k, v in after.items() if k not in bookkeeping} == {
        k: v for k, v in before.items() if k not in bookkeeping}


@pytest.mark.parametrize("argv, code", [
    (["run", "nothing"], 2), (["run", "cap", "--seeds", "0"], 2), (["run", "cap", "--entries", "foo"], 2),
    (["plot", "--results", "/nonexistent/folder"], 1), ([], 2)])
def test_script_refuses_bad_input_in_one_line(argv, code, capsys):
    script = load_script()
    with pytest.raises(SystemExit) as stop:
        script.main(argv)
    assert stop.value.code == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


def test_the_experiment_runs_resumes_refuses_other_settings_and_plots(tmp_path, monkeypatch):
    script = ut_experiment
    monkeypatch.setitem(script.EXPERIMENTS["cap"]["settings"], "eval_size", 30)
    monkeypatch.setitem(script.EXPERIMENTS["cap"]["settings"], "eval_every", 1)
    out = tmp_path / "results"
    lines = []
    script.run_experiment("cap", seeds=1, iterations=2, out=out, log=lines.append)
    assert len(lines) == 3
    rows, meta = ut_experiment.read_experiment("cap", out)
    assert {r["entry"] for r in rows} == set(script.WEIGHTS) and len(rows) == 3 * 3
    assert meta["model"]["max_ponder"] == 3 and meta["seeds"] == 1 and {r["max_ponder"] for r in rows} == {3}
    # the files and the code name the cap and the mean number of updates N alike (max_ponder,
    # mean_N, mean_N_d<k>), as the committed files do
    header = (out / "cap.csv").read_text().splitlines()[0].split(",")
    assert header == (ROOT / "results" / "universal_transformer" / "cap.csv").read_text().splitlines()[0].split(",")
    assert {"max_ponder", "mean_N", "mean_N_d5"} <= set(header) and not {"ponder", "max_steps"} & set(header)
    assert json.loads((out / "cap.json").read_text())["model"]["max_ponder"] == 3
    assert all(r["mean_N"] >= 1 and r["rho"] > r["mean_N"] and r["mean_N_d5"] >= 1 for r in rows)
    script.run_experiment("cap", seeds=1, iterations=2, out=out, log=lines.append)          # nothing left to do
    assert len(lines) == 3
    with pytest.raises(ValueError, match="other settings"):
        script.run_experiment("cap", seeds=1, iterations=3, out=out)
    s = ut_experiment.summarise(rows)
    assert s["remainder"]["weight_sum"][0] == pytest.approx(1.0) and s["remainder"]["seeds"] == 1
    paths = script.plot(script.read(out), tmp_path / "figures")
    assert [p.name for p in paths] == ["universal_transformer_cap.png"]


# ---------------------------------------------------------------------------------------------
# The random-depth control: depths given per position, drawn from an ACT network's N
# ---------------------------------------------------------------------------------------------

def test_given_depths_are_fixed_depths_row_by_row():
    """Rows are independent: a row whose positions all take depth D is the fixed-depth-D encoder's
    row bit for bit, and a depth tensor of one value is that fixed depth."""
    P, tokens, _, _ = small_model(seed=2)
    per_row = torch.tensor([1, 2, 3, 3, 2, 1])[:, None].expand(tokens.shape)
    logits, r = ut.ut_forward(P, tokens, depth=per_row)
    assert torch.equal(r.N, per_row) and torch.all(r.R == 0) and r.loop_steps == 3
    assert torch.equal(r.p.argmax(-1) + 1, per_row)
    for D in (1, 2, 3):
        fixed, _ = ut.ut_forward(P, tokens, depth=D)
        rows = per_row[:, 0] == D
        assert torch.equal(logits[rows], fixed[rows])
        same, _ = ut.ut_forward(P, tokens, depth=torch.full(tokens.shape, D))
        assert torch.equal(same, fixed)


def test_a_position_past_its_depth_keeps_its_state():
    """z0 = 0, a step that adds n: a position of depth d ends at 1 + 2 + ... + d, whatever the others do."""
    depth = torch.tensor([[1, 3, 2], [2, 2, 1]])
    r = ut.given_depths(torch.zeros(2, 3, 1, dtype=torch.float64), lambda z, n: z + n, depth, max_depth=4)
    expected = (depth * (depth + 1) / 2).to(torch.float64)
    assert torch.equal(r.out[..., 0], expected) and r.loop_steps == 3


@pytest.mark.parametrize("depth, words", [(torch.zeros(2, 3, dtype=torch.int64), "1..4"),
                                          (torch.full((2, 3), 5), "1..4"), (torch.ones(3, 2, dtype=torch.int64), "(2, 3)"),
                                          (torch.ones(2, 3), "integer")])
def test_given_depths_refuse_what_the_step_embeddings_cannot_take(depth, words):
    with pytest.raises(ValueError, match=r"depth must") as err:
        ut.given_depths(torch.zeros(2, 3, 1), lambda z, n: z, depth, max_depth=4)
    assert words in str(err.value)


def test_depths_are_drawn_from_the_shares_given():
    shares = [0.1, 0.6, 0.0, 0.3]
    depth = ut.draw_depths(np.random.default_rng(0), shares, (400, 100))
    assert depth.dtype == torch.int64 and depth.shape == (400, 100)
    seen = np.bincount(depth.numpy().ravel(), minlength=5)[1:] / depth.numel()
    np.testing.assert_allclose(seen, shares, atol=0.005)
    for bad in ([0.5, 0.6], [], [[1.0]], [1.2, -0.2]):
        with pytest.raises(ValueError, match="shares"):
            ut.draw_depths(np.random.default_rng(0), bad, (2, 2))


def test_evaluation_records_the_share_of_each_N():
    P, tokens, targets, depth = small_model(seed=3)
    given = torch.tensor([1, 2, 2, 3, 3, 3])[:, None].expand(tokens.shape)
    rec = ut.evaluate(P, tokens.numpy(), targets.numpy(), depth, model_depth=given)
    assert rec["N_shares"] == pytest.approx([1 / 6, 2 / 6, 3 / 6]) and rec["mean_N"] == pytest.approx(14 / 6)
    act = ut.evaluate(P, tokens.numpy(), targets.numpy(), depth)
    assert sum(act["N_shares"]) == pytest.approx(1.0)
    assert sum(n * s for n, s in enumerate(act["N_shares"], 1)) == pytest.approx(act["mean_N"])


def test_the_random_depths_draw_from_their_seeds_act_run(tmp_path, monkeypatch):
    monkeypatch.setitem(ut_experiment.EXPERIMENTS["random"]["settings"], "eval_size", 40)
    monkeypatch.setitem(ut_experiment.EXPERIMENTS["random"]["settings"], "eval_every", 2)
    out = tmp_path / "results"
    lines = []
    ut_experiment.run({"experiment": "random", "seeds": 2, "iterations": 2}, out, log=lines.append)
    assert [line.split(":")[1].split("seed")[0].strip() for line in lines] == ["ACT tau=0.01", "random depths"] * 2
    rows, meta = ut_experiment.read_experiment("random", out)
    ends = {(r["entry"], r["seed"]): r for r in ut_experiment.final_rows(rows)}
    for seed in (0, 1):
        act, drawn = ends["ACT tau=0.01", seed], ends["random depths", seed]
        assert act["kind"] == "act" and drawn["kind"] == "random" and drawn["tau"] is None
        shares = [act[c] for c in ut_experiment.SHARE_COLUMNS]
        assert sum(shares) == pytest.approx(1.0)
        # the held-out depths are drawn from those shares: the same N = 1, 2, ... occur
        assert {n for n, s in enumerate(shares, 1) if s} >= {n for n, c in enumerate(ut_experiment.SHARE_COLUMNS, 1)
                                                              if drawn[c]}
    assert ut_experiment.drawn_from(out, "random", "ACT tau=0.01", 1) == [ends["ACT tau=0.01", 1][c]
                                                                          for c in ut_experiment.SHARE_COLUMNS]
    ut_experiment.run_experiment("random", seeds=2, iterations=2, out=out, log=lines.append)  # nothing left
    assert len(lines) == 4
    with pytest.raises(ValueError, match="no run of 'ACT tau=0.01' with seed 5"):
        ut_experiment.drawn_from(out, "random", "ACT tau=0.01", 5)
    claim = ut_experiment.random_claim(rows)
    assert claim["seeds"] == [0, 1] and claim["verdict"] in ("holds", "refuted", "not shown")
    drawn = ut_experiment.plot(ut_experiment.read(out), tmp_path / "figures")
    assert [p.name for p in drawn] == ["universal_transformer_random.png"]


def test_the_random_depth_claim_is_the_registered_paired_test():
    def row(entry, seed, error):
        return {"entry": entry, "seed": seed, "iteration": 1500, "sequence_error": error, "error_d4": 0.0,
                "error_d5": 0.0, "mean_N": 1.8}
    rows = [row("ACT tau=0.01", s, 0.0) for s in range(8)] + [row("random depths", s, 0.05 + 0.01 * s) for s in range(8)]
    claim = ut_experiment.random_claim(rows)
    assert claim["verdict"] == "holds" and claim["wins"] == 8 and claim["sign_p"] == pytest.approx(1 / 256)
    close = [row("ACT tau=0.01", s, 0.0) for s in range(8)] + [row("random depths", s, 0.004) for s in range(8)]
    assert ut_experiment.random_claim(close)["verdict"] == "not shown"        # below the 0.01 that counts
    with pytest.raises(ValueError, match="share 1 seed"):
        ut_experiment.random_claim(rows[:1] + rows[8:9])
