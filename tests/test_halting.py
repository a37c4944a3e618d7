"""The halting bookkeeping (eqs 6-8, 13, 14, 20) against hand-worked cases and the pitfalls table."""

import numpy as np
import pytest

from act_numpy.act import act_backward, act_forward
from act_numpy.halting import halting_backward, halting_weights
from conftest import logit, make_problem

# (name, halting values, epsilon, M, correct N, correct p): cases A-E separate right from wrong
# halting code found in public ACT implementations (a remainder that loses mass when the sum lands
# in [1 - eps, 1), none at the cap M, the current h counted twice); the last is worked by hand
CASES = [
    ("A", [0.3] * 8, 0.01, 100, 4, [0.3, 0.3, 0.3, 0.1]),
    ("B", [0.2485] * 8, 0.01, 100, 4, [0.2485] * 3 + [0.2545]),
    ("C", [0.2, 0.9, 0.5, 0.5], 0.01, 100, 2, [0.2, 0.8]),
    ("D", [0.1, 0.1, 0.5, 0.45, 0.5], 0.01, 100, 4, [0.1, 0.1, 0.5, 0.3]),
    ("E", [0.02] * 8, 0.01, 6, 6, [0.02] * 5 + [0.9]),
    ("worked example", [0.1, 0.3, 0.5, 0.5], 0.1, 100, 3, [0.1, 0.3, 0.6]),
]


@pytest.mark.parametrize("name,h,eps,M,N_true,p_true", CASES, ids=[c[0] for c in CASES])
def test_halting_cases(name, h, eps, M, N_true, p_true):
    N, p, R = halting_weights(np.array(h), epsilon=eps, max_ponder=M)
    assert N[0] == N_true
    np.testing.assert_allclose(p[0, :N_true], p_true, atol=1e-12)
    assert np.all(p[0, N_true:] == 0)
    assert R[0] == pytest.approx(p_true[-1], abs=1e-12)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("name,h,eps,M,N_true,p_true", CASES, ids=[c[0] for c in CASES])
def test_ponder_gradient_cases(name, h, eps, M, N_true, p_true):
    """d rho / d h^n = -1 before the halting step and exactly 0 at it (eqs 14, 20)."""
    N, p, R = halting_weights(np.array(h), epsilon=eps, max_ponder=M)
    dh = halting_backward(np.zeros_like(p), np.ones(1), N)
    expected = np.zeros(p.shape[1])
    expected[: N_true - 1] = -1.0
    np.testing.assert_array_equal(dh[0], expected)


def test_sum_landing_just_below_one_keeps_the_missing_mass():
    """Case B: sum h = 0.994 in [1 - eps, 1): the remainder is 1 - 0.7455, not h - (sum - 1)."""
    N, p, R = halting_weights(np.full(6, 0.2485))
    assert R[0] == pytest.approx(0.2545, abs=1e-12)
    assert R[0] != pytest.approx(0.2485)       # the 'h - max(sum h - 1, 0)' pitfall gives 0.2485


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
@pytest.mark.parametrize("h_value,eps,M,N_true", [(0.3, 0.01, 100, 4), (0.2485, 0.01, 100, 4), (0.02, 0.01, 6, 6)])
def test_constant_halting_through_the_network(cell, h_value, eps, M, N_true):
    """With W_h = 0 every halting unit equals sigmoid(b_h): cases A, B, E through act_forward."""
    x, params, _, _ = make_problem(cell, halting_bias=logit(h_value), w_h_scale=0.0)
    y, N, R, cache = act_forward(x, params, cell=cell, epsilon=eps, max_ponder=M)
    assert np.all(N == N_true)
    np.testing.assert_allclose(R, 1.0 - (N_true - 1) * h_value, atol=1e-12)
    p = cache["steps"][1].p                      # (B, n_t): the ponder steps of input step 2
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_mean_field_is_the_p_weighted_sum(cell):
    """eq. (9): the state carried on is sum_n p^n s^n, not an average or a moving average."""
    x, params, _, _ = make_problem(cell, halting_bias=-1.0)
    y, N, R, cache = act_forward(x, params, cell=cell)
    for t, st in enumerate(cache["steps"]):
        np.testing.assert_allclose(cache["S"][:, t], np.einsum("bn,bnh->bh", st.p, st.s), atol=1e-12)
        np.testing.assert_allclose(y[:, t], cache["S"][:, t] @ params["W_y"] + params["b_y"], atol=1e-12)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_halting_unit_of_the_last_step_gets_no_gradient(cell):
    """With N = 1 everywhere the only halting unit is h^N, whose gradient is 0 (eq. 20)."""
    x, params, dy, dponder = make_problem(cell, halting_bias=8.0, w_h_scale=0.5)
    _, N, _, cache = act_forward(x, params, cell=cell)
    assert np.all(N == 1)
    g = act_backward(dy, dponder, cache)
    assert np.all(g["W_h"] == 0.0) and np.all(g["b_h"] == 0.0)


def test_halting_is_computed_from_the_new_state():
    """h^1 must depend on the state step 1 produced; from the incoming (zero) state it would be sigma(b_h)."""
    x, params, _, _ = make_problem("rnn", B=2, T=1, halting_bias=0.0)
    _, _, _, cache = act_forward(x, params, cell="rnn")
    st = cache["steps"][0]
    expected = 1.0 / (1.0 + np.exp(-(st.s[:, 0] @ params["W_h"] + params["b_h"])[:, 0]))
    np.testing.assert_allclose(st.h[:, 0], expected, atol=1e-12)
    assert not np.allclose(st.h[:, 0], 0.5)


def test_flag_is_appended_and_set_on_the_first_step_only():
    """x~ = [x_t, 1] at n = 1 and [x_t, 0] after: the last row of W_x acts only on step 1."""
    x, params, _, _ = make_problem("rnn", B=2, T=1, halting_bias=-2.0, w_h_scale=0.0)
    _, N, _, cache = act_forward(x, params, cell="rnn", max_ponder=3)
    st = cache["steps"][0]
    D = x.shape[2]
    W, w_flag = params["W_x"][:D], params["W_x"][D]
    z1 = x[:, 0] @ W + w_flag + st.s_in[:, 0] @ params["W_s"] + params["b_s"]
    z2 = x[:, 0] @ W + st.s_in[:, 1] @ params["W_s"] + params["b_s"]
    np.testing.assert_allclose(st.s[:, 0], np.tanh(z1), atol=1e-12)
    np.testing.assert_allclose(st.s[:, 1], np.tanh(z2), atol=1e-12)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_ponder_steps_are_named(cell):
    """The cache of an input step is a PonderSteps, read by field name (st.p); every array is batch
    first with the ponder steps second, as many as the slowest row took: the layout of halting.py,
    whose halting_weights reads st.h as it is and gives st.p."""
    x, params, _, _ = make_problem(cell, B=4, T=2, halting_bias=-1.0)
    _, N, _, cache = act_forward(x, params, cell=cell, epsilon=0.05, max_ponder=6)
    for t, st in enumerate(cache["steps"]):
        n_t, B, H = int(N[:, t].max()), 4, params["W_s"].shape[0]
        assert st.s.shape == st.s_in.shape == (B, n_t, H) and st.h.shape == st.p.shape == (B, n_t)
        if cell == "lstm":
            assert st.c.shape == (B, n_t, H)
        assert len(st.cell) == n_t and (st.c is None) == (cell == "rnn")
        N_t, p, _ = halting_weights(st.h, epsilon=0.05, max_ponder=6)
        np.testing.assert_array_equal(N_t, N[:, t])
        np.testing.assert_allclose(p, st.p, rtol=0, atol=1e-15)
        assert st._fields == ("s_in", "s", "c", "h", "p", "cell")
