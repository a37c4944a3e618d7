"""Invariants of the halting distribution (hypothesis), batching, stacked networks, and dtypes."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from act_numpy.act import act_backward, act_forward
from act_numpy.halting import halting_weights
from conftest import make_problem

halting_values = st.lists(st.floats(1e-6, 1 - 1e-6), min_size=1, max_size=12)


@settings(deadline=None, max_examples=200)
@given(h=halting_values, eps=st.floats(1e-4, 0.5), M=st.integers(1, 12))
def test_halting_distribution_invariants(h, eps, M):
    """sum p = 1, 0 <= p <= 1, 1 <= N <= M, 1 <= rho <= M + 1, for any halting values."""
    h = np.array(h + [0.5] * M)          # enough steps to reach the cap
    N, p, R = halting_weights(h, epsilon=eps, max_ponder=M)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(p >= 0) and np.all(p <= 1)
    assert 1 <= N[0] <= M
    assert 1 <= N[0] + R[0] <= M + 1
    # N is the FIRST step at which the sum reaches 1 - eps (or the cap)
    csum = np.cumsum(h)
    assert np.all(csum[: N[0] - 1] < 1 - eps)
    assert N[0] == M or csum[N[0] - 1] >= 1 - eps


@settings(deadline=None, max_examples=25)
@given(seed=st.integers(0, 10_000), cell=st.sampled_from(["rnn", "lstm"]),
       bias=st.floats(-4, 4), eps=st.floats(1e-3, 0.5), M=st.integers(1, 15))
def test_network_ponder_invariants(seed, cell, bias, eps, M):
    x, params, _, _ = make_problem(cell, seed=seed, halting_bias=bias)
    y, N, R, cache = act_forward(x, params, cell=cell, epsilon=eps, max_ponder=M)
    rho = N + R
    assert np.all((1 <= N) & (N <= M))
    assert np.all((rho >= 1) & (rho <= M + 1))
    for steps_t in cache["steps"]:
        p = steps_t.p                      # (B, n_t): 0 after each row's halting step
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
        assert np.all((p >= 0) & (p <= 1))


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_batch_rows_are_independent(cell):
    """Masks, not per-row loops: each row of a batch gives what it gives alone."""
    x, params, _, _ = make_problem(cell, B=4, T=3, halting_bias=-1.0)
    y, N, R, _ = act_forward(x, params, cell=cell)
    assert len(np.unique(N)) > 1
    for b in range(4):
        yb, Nb, Rb, _ = act_forward(x[b:b + 1], params, cell=cell)
        np.testing.assert_array_equal(Nb[0], N[b])
        np.testing.assert_allclose(yb[0], y[b], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(Rb[0], R[b], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_float32_follows_x_and_agrees_with_float64(cell):
    x, params, dy, dponder = make_problem(cell, halting_bias=2.0)
    y64, N64, R64, _ = act_forward(x, params, cell=cell)
    y32, N32, R32, _ = act_forward(x.astype(np.float32), params, cell=cell)
    assert y32.dtype == np.float32 and R32.dtype == np.float32
    np.testing.assert_array_equal(N32, N64)
    np.testing.assert_allclose(y32, y64, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(R32, R64, rtol=1e-4, atol=1e-5)


def test_max_ponder_one_is_one_update_per_input():
    """M = 1 (the no-ACT baseline): one step, p = 1, rho = 2 at every input."""
    x, params, _, _ = make_problem("lstm", halting_bias=-3.0)
    y, N, R, _ = act_forward(x, params, cell="lstm", max_ponder=1)
    assert np.all(N == 1) and np.allclose(R, 1.0)
