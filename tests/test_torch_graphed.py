"""act_engine.graphed: a training step replayed as a CUDA graph equals the eager step.

Each test runs twice: on the CPU with the graph stood in for by act_engine.graphed.Rerun (replay
= call again: the budgets, the check, the fallback and the recapture all run), and on CUDA with
real graphs (skipped on a machine without a GPU).
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from act_numpy.params import PARAM_NAMES, init_params
from act_torch import ACT
from act_engine.graphed import CapturedGraph, CUDAGraphTrainStep, Rerun

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
# (device, capture): real CUDA graphs, and the stand-in that runs the same control flow anywhere
SETUPS = [pytest.param("cuda", CapturedGraph, marks=cuda, id="cuda"), pytest.param("cpu", Rerun, id="cpu-rerun")]


def loss_fn(y, N, R, target):
    return (F.binary_cross_entropy_with_logits(y, target, reduction="sum") + 1e-2 * (N + R).sum()) / y.shape[0]


def problem(cell, device, halting_bias=-1.0, w_h_scale=3.0, seed=0):
    rng = np.random.default_rng(seed)
    params = init_params(cell, 5, 8, 1, rng, halting_bias=halting_bias)
    params["W_h"] *= w_h_scale                              # rows halt at different n
    x = torch.tensor(rng.normal(size=(6, 3, 5)), device=device)
    target = torch.tensor((rng.random((6, 3, 1)) < 0.5).astype(np.float64), device=device)
    return params, x, target


def eager_steps(params, cell, x, target, n_steps, device):
    model = ACT.from_numpy(params, cell, max_ponder=20, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    Ns = []
    for _ in range(n_steps):
        opt.zero_grad(set_to_none=True)
        y, N, R = model(x)
        loss_fn(y, N, R, target).backward()
        opt.step()
        Ns.append(N.clone())
    return model, Ns


def test_needs_cuda_tensors():
    params, x, target = problem("rnn", "cpu")
    model = ACT.from_numpy(params, "rnn")
    with pytest.raises(ValueError, match="CUDA"):
        CUDAGraphTrainStep(model, torch.optim.Adam(model.parameters()), loss_fn, x, target, 5)


@pytest.mark.parametrize("device, capture", SETUPS)
@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_graph_steps_equal_eager_steps(cell, device, capture):
    params, x, target = problem(cell, device)
    want, want_N = eager_steps(params, cell, x, target, 4, device)
    with torch.no_grad():
        longest = int(ACT.from_numpy(params, cell, max_ponder=20, device=device)(x)[1].max())
    model = ACT.from_numpy(params, cell, max_ponder=20, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    step = CUDAGraphTrainStep(model, opt, loss_fn, x, target, longest + 2, capture=capture)
    for k in range(4):
        _, N, _ = step(x, target)
        assert torch.equal(N, want_N[k])
    for name in PARAM_NAMES:
        assert torch.allclose(getattr(model, name), getattr(want, name), rtol=1e-9, atol=1e-11), name
    assert step.graph.captures == 1 and step.graph.fallbacks == 0


@pytest.mark.parametrize("device, capture", SETUPS)
def test_too_few_steps_fall_back_to_the_exact_step_and_recapture(device, capture):
    params, x, target = problem("lstm", device)
    want, want_N = eager_steps(params, "lstm", x, target, 2, device)
    assert int(want_N[0].max()) > 1
    model = ACT.from_numpy(params, "lstm", max_ponder=20, device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    step = CUDAGraphTrainStep(model, opt, loss_fn, x, target, 1, capture=capture)    # too few on purpose
    for k in range(2):
        _, N, _ = step(x, target)
        assert torch.equal(N, want_N[k])
    assert step.graph.fallbacks == 1 and step.graph.captures == 2
    assert step.graph.ponder_steps == int(want_N[0].max()) + 2
    for name in PARAM_NAMES:
        assert torch.allclose(getattr(model, name), getattr(want, name), rtol=1e-9, atol=1e-11), name
