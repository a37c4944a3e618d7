"""Shared helpers for the tests: small seeded ACT problems; PyTorch on the course's thread count."""

import signal

import numpy as np
import pytest

from act_experiments.threads import torch_threads
from act_numpy.params import init_params


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """A ``twin`` (tests/test_judge.py: the judge alone on a submission of the attack suite) gives
    `make unit` quick feedback; where nbgrader's own run of that submission's notebook
    (tests/test_graded_course.py, which runs the same judge inside autograde) is selected too, as in
    `make test`, the twin is left out. Runs after -k and -m, so only what is really selected counts."""
    def param(item, name):
        callspec = getattr(item, "callspec", None)
        return callspec.params.get(name) if callspec else None

    graded = {param(item, "stem") for item in items if item.get_closest_marker("graded_course")}
    twins = [item for item in items if item.get_closest_marker("twin") and param(item, "submission").notebook in graded]
    if twins:
        config.hook.pytest_deselected(items=twins)
        left = set(map(id, twins))
        items[:] = [item for item in items if id(item) not in left]


@pytest.fixture(autouse=True, scope="session")
def course_threads():
    """PyTorch on the thread count the course trains with (OMP_NUM_THREADS, or one): the tests run
    the networks as the notebooks and experiments do, and under pytest-xdist each worker keeps to
    its core instead of its thread pool spinning on the other worker's."""
    torch_threads()


def logit(p):
    return float(np.log(p / (1.0 - p)))


def make_problem(cell="rnn", B=3, T=3, D=4, H=5, O=2, seed=0, halting_bias=1.0, w_h_scale=3.0, dtype=np.float64):
    """Random weights, inputs, dy and dponder for a small ACT problem.

    w_h_scale enlarges W_h so that the halting units differ across rows and steps
    (non-trivial N); w_h_scale=0 makes every halting unit equal to sigmoid(halting_bias).
    """
    rng = np.random.default_rng(seed)
    params = init_params(cell, D, H, O, rng, halting_bias=halting_bias)
    params["W_h"] *= w_h_scale
    x = rng.normal(size=(B, T, D))
    dy = rng.normal(size=(B, T, O))
    dponder = rng.normal(size=(B, T))
    cast = {k: v.astype(dtype) for k, v in params.items()}
    return x.astype(dtype), cast, dy, dponder


def autograd(forward, x, params, dy, dponder, **kwargs):
    """A PyTorch forward's y, N, R and its autograd gradients of sum(dy * y) + sum(dponder * (N + R)),
    the scalar whose gradient act_numpy.act.act_backward(dy, dponder) returns, all as NumPy arrays
    (zeros for a parameter the forward does not reach)."""
    import torch
    P = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    y, N, R = forward(torch.tensor(x), P, **kwargs)
    (torch.sum(torch.tensor(dy) * y) + torch.sum(torch.tensor(dponder) * (N + R))).backward()
    grads = {k: np.zeros(p.shape) if p.grad is None else p.grad.numpy() for k, p in P.items()}
    return y.detach().numpy(), N.numpy(), R.detach().numpy(), grads


class Interrupted(Exception):
    pass


def crashing(backend, after):
    """A backend class whose train_step raises on its call number after + 1 (a killed run)."""
    class Crashing(backend):
        calls = 0

        def train_step(self, x, y, mask):
            Crashing.calls += 1
            if Crashing.calls > after:
                raise Interrupted
            return super().train_step(x, y, mask)
    return Crashing


@pytest.fixture(autouse=True)
def sigint_delivered():
    """SIGINT as an interactive shell leaves it, for the tests of Ctrl-C.

    A test run started in the background (``cmd &`` in a shell without job control) inherits
    SIGINT ignored, and the training loop rightly leaves an ignored SIGINT alone
    (act_experiments.training.stopping): here it gets Python's own handler back, which the processes the
    tests start inherit as the default."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
