"""The engine's PyTorch loop against the core: one network, and K stacked networks member by member.

act_engine.torch_act arranges act_torch.act's equations for speed (a detached halting test, the
halting units recomputed in one product, W_s's layout, K members on a leading axis). Its results
and gradients must be act_torch.act.act_forward's, in float64 to 1e-12.
"""

import numpy as np
import pytest
import torch

from act_engine import torch_act
from act_numpy.params import PARAM_NAMES
from act_torch.act import act_forward
from conftest import make_problem


def run(forward, x, params, **kwargs):
    """y, N, R of forward and the gradients of a fixed function of y and R w.r.t. every parameter."""
    P = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    y, N, R = forward(torch.tensor(x), P, **kwargs)
    weights = torch.linspace(-1.0, 1.0, y.numel(), dtype=y.dtype).view_as(y)
    ((y * weights).sum() + 0.3 * R.sum()).backward()
    return y.detach(), N, R.detach(), {k: P[k].grad for k in PARAM_NAMES}


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
@pytest.mark.parametrize("epsilon, max_ponder", [(0.01, 100), (0.1, 3), (0.01, 1)])
def test_one_network_is_the_core(cell, epsilon, max_ponder):
    x, params, _, _ = make_problem(cell, B=5, T=4, seed=2, halting_bias=-1.0)
    kwargs = dict(cell=cell, epsilon=epsilon, max_ponder=max_ponder)
    want, got = run(act_forward, x, params, **kwargs), run(torch_act.act_forward, x, params, **kwargs)
    assert torch.equal(got[1], want[1])
    for a, b in ((got[0], want[0]), (got[2], want[2])):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-13)
    for name in PARAM_NAMES:
        torch.testing.assert_close(got[3][name], want[3][name], rtol=1e-10, atol=1e-12, msg=name)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_stacked_members_are_each_the_core(cell):
    """K = 3 members with their own epsilon and cap M, pondered together until all have halted."""
    problems = [make_problem(cell, B=4, T=3, seed=k, halting_bias=-1.0) for k in range(3)]
    epsilon, cap = [0.01, 0.2, 0.05], [100, 4, 1]
    x = torch.tensor(np.stack([p[0] for p in problems]))
    P = {name: torch.tensor(np.stack([p[1][name] for p in problems]), requires_grad=True) for name in PARAM_NAMES}
    threshold = torch.tensor([1.0 - e for e in epsilon], dtype=torch.float64).view(3, 1, 1)
    y, N, R = torch_act.ponder_until_halted(x, P, cell, threshold, torch.tensor(cap).view(3, 1, 1), max(cap))
    weights = torch.linspace(-1.0, 1.0, y[0].numel(), dtype=y.dtype).view_as(y[0])
    ((y * weights).sum() + 0.3 * R.sum()).backward()
    for k, (xk, params, _, _) in enumerate(problems):
        yk, Nk, Rk, grads = run(act_forward, xk, params, cell=cell, epsilon=epsilon[k], max_ponder=cap[k])
        assert torch.equal(N[k], Nk)
        torch.testing.assert_close(y[k].detach(), yk, rtol=1e-12, atol=1e-13)
        torch.testing.assert_close(R[k].detach(), Rk, rtol=1e-12, atol=1e-13)
        for name in PARAM_NAMES:
            torch.testing.assert_close(P[name].grad[k], grads[name], rtol=1e-10, atol=1e-12, msg=name)
