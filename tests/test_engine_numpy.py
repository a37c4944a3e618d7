"""The engine's NumPy path against the core: K stacked networks, each exactly its own network.

act_engine.numpy_act runs act_numpy.act's equations with a leading member axis, each member with
its own epsilon and cap M. Every member's y, N, R and gradients must be what act_numpy.act gives
that network alone.
"""

import numpy as np
import pytest

from act_engine.numpy_act import backward_pass, forward_pass
from act_numpy.act import act_backward, act_forward
from conftest import make_problem


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_stacked_networks_are_each_their_own(cell):
    """forward_pass/backward_pass on K networks stacked on a leading axis, each with its own epsilon
    and cap M, give every network exactly what act_forward/act_backward give it alone."""
    problems = [make_problem(cell, seed=k, halting_bias=-1.0) for k in range(3)]
    epsilon, max_ponder = np.array([[0.01], [0.2], [0.05]]), np.array([[100], [4], [1]])
    x = np.stack([p[0] for p in problems])
    P = {name: np.stack([p[1][name] for p in problems]) for name in problems[0][1]}
    dy, dponder = np.stack([p[2] for p in problems]), np.stack([p[3] for p in problems])
    y, N, R, cache = forward_pass(x, P, cell, epsilon, max_ponder)
    grads = backward_pass(dy, dponder, cache)
    assert len({int(n.max()) for n in N}) > 1        # the members ponder differently
    for k, (xk, params, dyk, dpk) in enumerate(problems):
        yk, Nk, Rk, cache_k = act_forward(xk, params, cell=cell, epsilon=float(epsilon[k, 0]),
                                          max_ponder=int(max_ponder[k, 0]))
        np.testing.assert_array_equal(N[k], Nk)
        np.testing.assert_allclose(y[k], yk, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(R[k], Rk, rtol=1e-12, atol=1e-14)
        for name, g in act_backward(dyk, dpk, cache_k).items():
            np.testing.assert_allclose(grads[name][k], g, rtol=1e-10, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_one_network_without_the_member_axis(cell):
    """With no leading axis the engine's forward and backward are the core's, to rounding."""
    x, params, dy, dponder = make_problem(cell, seed=3, halting_bias=-0.5)
    y, N, R, cache = act_forward(x, params, cell=cell, epsilon=0.05, max_ponder=6)
    ye, Ne, Re, cache_e = forward_pass(x, params, cell, 0.05, 6)
    np.testing.assert_array_equal(Ne, N)
    np.testing.assert_allclose(ye, y, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Re, R, rtol=1e-12, atol=1e-14)
    grads = act_backward(dy, dponder, cache)
    for name, g in backward_pass(dy, np.broadcast_to(dponder, N.shape), cache_e).items():
        np.testing.assert_allclose(g, grads[name], rtol=1e-10, atol=1e-13, err_msg=name)
