"""act_torch against the NumPy reference: forward values, N, R and every autograd gradient.

The cases come from act_torch.check (the same ones ``python -m act_torch.check`` prints).
float64 on the CPU must agree to relative 1e-10 (both sides round at 1e-16; only the order of
sums differs). float32 on CUDA is compared with float64 NumPy at act_torch.check.TOLERANCE.
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from act_numpy.act import act_forward as np_act_forward
from act_numpy.halting import halting_update
from act_numpy.params import PARAM_NAMES, init_params
from act_torch import ACT, act_forward, halting_distribution, module_to_params, params_to_module
from act_engine.torch_act import act_forward_fixed_steps
from act_torch.act import halting_after_step
from act_torch.check import SETTINGS, TOLERANCE, compare, halting_margin, make_case, numpy_result

CELLS = ("rnn", "lstm")
SEEDS = (0, 1, 2, 3)
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def assert_close(res, tol):
    assert res["N_equal"], "N differs from NumPy"
    worst = max(res["diffs"], key=res["diffs"].get)
    assert res["diffs"][worst] < tol, f"{worst}: rel error {res['diffs'][worst]:.2e} >= {tol:.0e}"


# ---------------------------------------------------------------------------------------
# float64 on the CPU: equal to NumPy to 1e-10
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("cell", CELLS)
def test_float64_cpu_matches_numpy(cell, setting):
    for seed in SEEDS:
        case = make_case(cell, setting, seed)
        res = compare(case, "cpu", torch.float64)
        assert_close(res, 1e-10)


@pytest.mark.parametrize("cell", CELLS)
def test_settings_reach_the_regimes_they_are_named_after(cell):
    """The named cases really exercise N = 1, the cap, mixed N, long pondering and T > 1."""
    N = {s: np.stack([numpy_result(make_case(cell, s, seed))["N"] for seed in SEEDS]) for s in SETTINGS}
    assert (N["N=1"] == 1).all()
    assert (N["N at cap"] == SETTINGS["N at cap"]["max_ponder"]).all()
    # rows of one batch at one input step halting at different n
    assert any(len(np.unique(N["mixed N"][k, :, t])) > 1 for k in range(len(SEEDS)) for t in range(3))
    assert N["long ponder"].min() >= 10
    assert SETTINGS["T>1"]["T"] > 1


@settings(max_examples=60, deadline=None)
@given(
    cell=st.sampled_from(CELLS),
    B=st.integers(1, 5), T=st.integers(1, 4), D=st.integers(1, 4), H=st.integers(1, 6), O=st.integers(1, 3),
    bias=st.floats(-4.0, 4.0), w_h_scale=st.floats(0.0, 5.0),
    epsilon=st.sampled_from([0.001, 0.01, 0.05, 0.2, 0.6]), max_ponder=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_shapes_float64_match_numpy(cell, B, T, D, H, O, bias, w_h_scale, epsilon, max_ponder, seed):
    rng = np.random.default_rng(seed)
    params = init_params(cell, D, H, O, rng, halting_bias=bias)
    params["W_h"] *= w_h_scale
    case = dict(x=rng.normal(size=(B, T, D)), params=params, dy=rng.normal(size=(B, T, O)),
                dponder=rng.uniform(0, 0.1, (B, T)),
                kwargs=dict(cell=cell, epsilon=epsilon, max_ponder=max_ponder))
    assert_close(compare(case, "cpu", torch.float64), 1e-10)


def test_outputs_types_and_gradient_flags():
    case = make_case("lstm", "mixed N")
    x = torch.tensor(case["x"], requires_grad=True)
    params = {k: torch.tensor(v, requires_grad=True) for k, v in case["params"].items()}
    y, N, R = act_forward(x, params, **case["kwargs"])
    assert N.dtype == torch.int64 and not N.requires_grad      # N is a constant (paper 2.2)
    assert y.requires_grad and R.requires_grad
    assert y.shape == (8, 3, 2) and N.shape == R.shape == (8, 3)


@pytest.mark.parametrize("x_dtype, want", [(torch.float32, torch.float32), (torch.float64, torch.float64),
                                           (torch.int64, torch.float64)])
def test_dtype_follows_x(x_dtype, want):
    case = make_case("rnn", "T>1")
    x = torch.tensor(case["x"] * 3).to(x_dtype)
    params = {k: torch.tensor(v, dtype=torch.float32) for k, v in case["params"].items()}
    y, N, R = act_forward(x, params, **case["kwargs"])
    assert y.dtype == R.dtype == want


def test_gradients_reach_parameters_of_another_dtype():
    """float32 parameters with float64 x: computed in float64, gradients land in float32."""
    case = make_case("rnn", "mixed N")
    params = {k: torch.tensor(v, dtype=torch.float32, requires_grad=True) for k, v in case["params"].items()}
    y, N, R = act_forward(torch.tensor(case["x"]), params, **case["kwargs"])
    (y.sum() + R.sum()).backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in params.values())


# ---------------------------------------------------------------------------------------
# Halting: the controlled cases of pitfalls.md, through the whole network
# ---------------------------------------------------------------------------------------

def constant_halting_case(cell, h_value, max_ponder, epsilon=0.01):
    """W_h = 0, so every ponder step has the same halting unit h = sigmoid(b_h) = h_value."""
    params = init_params(cell, 3, 4, 1, np.random.default_rng(0))
    params["W_h"][:] = 0.0
    params["b_h"][:] = math.log(h_value / (1.0 - h_value))
    x = np.random.default_rng(1).normal(size=(2, 2, 3))
    return x, params, dict(cell=cell, epsilon=epsilon, max_ponder=max_ponder)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("h_value, max_ponder, N_want, R_want", [
    (0.3, 100, 4, 0.1),          # case A
    (0.2485, 100, 4, 0.2545),    # case B: sum h lands in [1 - eps, 1) at n = 4
    (0.02, 6, 6, 0.9),           # case E: the cap M = 6, R = 1 - 5 * 0.02
])
def test_controlled_halting_cases(cell, h_value, max_ponder, N_want, R_want):
    x, params, kwargs = constant_halting_case(cell, h_value, max_ponder)
    _, N, R = act_forward(torch.tensor(x), {k: torch.tensor(v) for k, v in params.items()}, **kwargs)
    assert (N == N_want).all()
    assert torch.allclose(R, torch.full_like(R, R_want), rtol=0, atol=1e-12)


def test_halting_distribution_worked_examples_and_gradient():
    """h = (0.1, 0.3, 0.5, 0.5), N = 3 -> p = (0.1, 0.3, 0.6); case D -> p = (0.1, 0.1, 0.5, 0.3).

    The ponder cost R has gradient -1 on every h^n with n < N and 0 on h^N and after (eqs 14, 20).
    """
    h = torch.tensor([[0.1, 0.3, 0.5, 0.5], [0.1, 0.1, 0.5, 0.45]], dtype=torch.float64, requires_grad=True)
    N = torch.tensor([3, 4])
    p, R = halting_distribution(h, N)
    assert torch.allclose(p, torch.tensor([[0.1, 0.3, 0.6, 0.0], [0.1, 0.1, 0.5, 0.3]], dtype=torch.float64))
    assert torch.allclose(p.sum(dim=1), torch.ones(2, dtype=torch.float64))
    R.sum().backward()
    assert torch.equal(h.grad, torch.tensor([[-1.0, -1.0, 0.0, 0.0], [-1.0, -1.0, -1.0, 0.0]], dtype=torch.float64))


def step_by_step(h, epsilon, max_ponder, halts=None):
    """N and capped of halting values h (B, n) from act_torch.act.halting_after_step, one step at a time."""
    h = torch.as_tensor(h, dtype=torch.float64)
    B = h.shape[0]
    sums, N = torch.zeros(B, dtype=torch.float64), torch.zeros(B, dtype=torch.int64)
    running, capped = torch.ones(B, dtype=torch.bool), torch.zeros(B, dtype=torch.bool)
    for n in range(1, max_ponder + 1):
        sums, running, N, capped, newly = halting_after_step(sums, h[:, n - 1], n, running, N, capped,
                                                             1.0 - epsilon, max_ponder, halts)
        assert torch.equal(newly, N == n)
    assert not running.any()
    return N.numpy(), capped.numpy()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("epsilon,max_ponder", [(0.01, 12), (0.1, 5), (0.5, 3)])
def test_halting_after_step_equals_numpy_halting_update(seed, epsilon, max_ponder):
    """The step-by-step bookkeeping (the pitfalls' and the UT's) finds NumPy's N, row by row, with
    capped exactly where the cap M stopped a row whose sum was still below 1 - eps."""
    rng = np.random.default_rng(seed)
    h = rng.uniform(0, 0.6, size=(64, max_ponder)) ** rng.uniform(0.5, 3, size=(64, 1))
    h[0, 0] = 1 - epsilon                         # lands exactly on 1 - eps at n = 1: halts (>=)
    h[1, :2] = (1 - epsilon) / 2                  # and at n = 2 (halving and doubling are exact)
    N_np = np.zeros(64, dtype=np.int64)
    cum, running = np.zeros(64), np.ones(64, dtype=bool)
    for n in range(1, max_ponder + 1):
        _, halt, cum_next, running_next = halting_update(h[:, n - 1], cum, running, n, epsilon, max_ponder)
        N_np[halt] = n
        cum, running = cum_next, running_next
    N, capped = step_by_step(h, epsilon, max_ponder)
    np.testing.assert_array_equal(N, N_np)
    sums_at_N = np.array([h[b, :N[b]].sum() for b in range(64)])
    np.testing.assert_array_equal(capped, sums_at_N < 1 - epsilon)


def test_halting_after_step_takes_another_halting_condition():
    """A condition passed as ``halts`` replaces eq. (7) only: the cap M still stops every row."""
    h = torch.full((1, 6), 0.3, dtype=torch.float64)
    N, capped = step_by_step(h, 0.01, 6, halts=lambda sums, h, threshold: sums > 1.0)
    assert N.tolist() == [4] and not capped.any()            # 1.2 > 1 at n = 4, as at 1 - eps
    N, capped = step_by_step(h, 0.01, 6, halts=lambda sums, h, threshold: sums > 5.0)
    assert N.tolist() == [6] and capped.all()                # never: the cap M = 6 stops it


# ---------------------------------------------------------------------------------------
# CUDA (skipped without a GPU)
# ---------------------------------------------------------------------------------------

@cuda
@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("cell", CELLS)
def test_cuda_float64_matches_numpy(cell, setting):
    for seed in SEEDS[:2]:
        assert_close(compare(make_case(cell, setting, seed), "cuda", torch.float64), 1e-10)


@cuda
@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("cell", CELLS)
def test_cuda_float32_matches_float64_numpy(cell, setting):
    """float32 rounds at 6e-8 per operation; through sums over H, up to N*T chained ponder steps
    and the differences y^n - y^N of eq. (19) this grows to ~1e-5 of an array's largest entry
    (float32 on the CPU: at most 9e-6 over 160 random cases of act_torch.check), so
    TOLERANCE[float32] = 1e-4 leaves 10x headroom. N can only flip where a cumulative halting
    sum lies within float32 rounding of 1 - eps: the cases keep that margin above 1e-4, checked
    first."""
    for seed in SEEDS[:2]:
        case = make_case(cell, setting, seed)
        np_res = numpy_result(case)
        assert halting_margin(np_res, case["kwargs"]["epsilon"], case["kwargs"]["max_ponder"]) > 1e-4
        assert_close(compare(case, "cuda", torch.float32, np_res), TOLERANCE[torch.float32])


@cuda
def test_module_runs_on_cuda():
    model = ACT("lstm", 3, 5, 2, generator=torch.Generator().manual_seed(0)).cuda()
    y, N, R = model(torch.randn(4, 3, 3, device="cuda"))
    (y.sum() + R.sum()).backward()
    assert y.is_cuda and N.is_cuda and model.W_s.grad.is_cuda


# ---------------------------------------------------------------------------------------
# The nn.Module and the conversions
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cell", CELLS)
def test_parameter_conversion_round_trips_exactly(cell, dtype):
    params = init_params(cell, 5, 7, 3, np.random.default_rng(0), dtype=dtype)
    model = params_to_module(params, cell, epsilon=0.05, max_ponder=9)
    assert [name for name, _ in model.named_parameters()] == list(PARAM_NAMES)
    assert all(isinstance(getattr(model, k), torch.nn.Parameter) for k in PARAM_NAMES)
    back = module_to_params(model)
    assert set(back) == set(PARAM_NAMES)
    for k in PARAM_NAMES:
        assert back[k].dtype == dtype and back[k].shape == params[k].shape
        assert np.array_equal(back[k], params[k])
        assert back[k] is not params[k] and not np.shares_memory(back[k], params[k])
    # and back again into a module: the same tensors
    again = ACT.from_numpy(back, cell)
    assert all(torch.equal(getattr(again, k), getattr(model, k)) for k in PARAM_NAMES)


@pytest.mark.parametrize("cell", CELLS)
def test_module_forward_equals_numpy(cell):
    case = make_case(cell, "mixed N")
    model = params_to_module(case["params"], cell, epsilon=0.01, max_ponder=SETTINGS["mixed N"]["max_ponder"])
    y, N, R = model(torch.tensor(case["x"]))
    y_np, N_np, R_np, _ = np_act_forward(case["x"], case["params"], **case["kwargs"])
    assert np.array_equal(N.numpy(), N_np)
    assert np.allclose(y.detach().numpy(), y_np, rtol=0, atol=1e-12)
    assert np.allclose(R.detach().numpy(), R_np, rtol=0, atol=1e-12)


def test_module_initialisation():
    a = ACT("lstm", 4, 6, 2, halting_bias=1.0, generator=torch.Generator().manual_seed(3))
    b = ACT("lstm", 4, 6, 2, halting_bias=1.0, generator=torch.Generator().manual_seed(3))
    assert all(torch.equal(getattr(a, k), getattr(b, k)) for k in PARAM_NAMES)   # seeded
    assert a.W_x.shape == (5, 24) and a.W_s.shape == (6, 24) and a.W_h.shape == (6, 1)
    assert torch.equal(a.b_h, torch.ones(1))                                      # paper: b_h = 1
    assert torch.equal(a.b_s[6:12], torch.ones(6)) and a.b_s[:6].abs().sum() == 0  # forget bias 1
    with pytest.raises(ValueError, match="cell"):
        ACT("gru", 4, 6, 2)


# ---------------------------------------------------------------------------------------
# Bad input: the same ValueErrors as NumPy
# ---------------------------------------------------------------------------------------

def _bad_inputs():
    case = make_case("rnn", "T>1")
    x, p = case["x"], case["params"]
    nan_x = x.copy()
    nan_x[0, 0, 0] = np.nan
    inf_x = x.copy()
    inf_x[1, 1, 1] = np.inf
    nan_p = dict(p, W_s=p["W_s"].copy())
    nan_p["W_s"][0, 0] = np.nan
    missing = {k: v for k, v in p.items() if k != "b_y"}
    return {
        "x not 3-D": (x[0], p, {}),
        "empty batch": (x[:0], p, {}),
        "NaN in x": (nan_x, p, {}),
        "inf in x": (inf_x, p, {}),
        "NaN in params": (x, nan_p, {}),
        "missing key": (x, missing, {}),
        "extra key": (x, dict(p, W_z=p["W_s"]), {}),
        "wrong shape": (x, dict(p, W_s=p["W_s"][:, :-1]), {}),
        "wrong D": (x[:, :, :-1], p, {}),
        "lstm shapes for rnn": (x, p, {"cell": "lstm"}),
        "unknown cell": (x, p, {"cell": "gru"}),
        "epsilon 0": (x, p, {"epsilon": 0.0}),
        "epsilon 1": (x, p, {"epsilon": 1.0}),
        "max_ponder 0": (x, p, {"max_ponder": 0}),
        "max_ponder float": (x, p, {"max_ponder": 2.5}),
    }


@pytest.mark.parametrize("name", list(_bad_inputs()))
def test_bad_input_raises_the_same_value_error_as_numpy(name):
    x, p, kwargs = _bad_inputs()[name]
    with pytest.raises(ValueError) as np_err:
        np_act_forward(x, p, **kwargs)
    with pytest.raises(ValueError) as torch_err:
        act_forward(torch.tensor(x), {k: torch.tensor(v) for k, v in p.items()}, **kwargs)
    assert str(torch_err.value) == str(np_err.value)


def test_bad_input_of_the_wrong_kind():
    case = make_case("rnn", "T>1")
    params = {k: torch.tensor(v) for k, v in case["params"].items()}
    with pytest.raises(ValueError, match="torch.Tensor"):
        act_forward(case["x"], params)                                # NumPy array, not a tensor
    with pytest.raises(ValueError, match="dict"):
        act_forward(torch.tensor(case["x"]), list(params.values()))
    with pytest.raises(ValueError, match="real"):
        act_forward(torch.tensor(case["x"]) > 0, params)
    for bad in (params["W_h"].to(torch.complex128), params["W_h"] > 0):
        # a complex or boolean parameter is refused, not cast (which would drop the imaginary part)
        with pytest.raises(ValueError, match=r"params\['W_h'\] must be a real"):
            act_forward(torch.tensor(case["x"]), dict(params, W_h=bad))


# ---------------------------------------------------------------------------------------
# The fixed-step variant (for CUDA graphs and torch.compile)
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("setting", ["mixed N", "N at cap", "T>1"])
@pytest.mark.parametrize("cell", CELLS)
def test_fixed_steps_equal_act_forward_when_complete(cell, setting):
    """With at least max N steps, the extra steps get p = 0: values and gradients are unchanged."""
    case = make_case(cell, setting)
    N_max = int(numpy_result(case)["N"].max())

    def run(fn, *args):
        x = torch.tensor(case["x"], requires_grad=True)
        params = {k: torch.tensor(v, requires_grad=True) for k, v in case["params"].items()}
        y, N, R, *complete = fn(x, params, *args, **case["kwargs"])
        ((torch.tensor(case["dy"]) * y).sum() + (torch.tensor(case["dponder"]) * (N + R)).sum()).backward()
        return [y, N, R] + [params[k].grad for k in PARAM_NAMES] + [x.grad], complete

    want, _ = run(act_forward)
    for steps in (N_max, N_max + 3):
        got, (complete,) = run(act_forward_fixed_steps, steps)
        assert complete.dtype == torch.bool and bool(complete)
        for a, b in zip(got, want):
            assert torch.allclose(a.double(), b.double(), rtol=1e-12, atol=1e-13)
    if N_max > 1 and N_max < case["kwargs"]["max_ponder"]:
        _, (complete,) = run(act_forward_fixed_steps, N_max - 1)
        assert not bool(complete)                                     # too few steps: flagged


@pytest.mark.parametrize("cell", CELLS)
def test_memory_follows_the_steps_taken_not_the_cap(cell):
    """A cap of 10^12 steps costs nothing while every row halts early: nothing is made for all M
    steps (an arange of them alone would be 8 TB). Past 32 steps the step numbers grow, and the
    result still equals NumPy's."""
    case = make_case(cell, "T>1")
    params = {k: torch.tensor(v) for k, v in case["params"].items()}
    x = torch.tensor(case["x"])
    y, N, R = act_forward(x, params, cell=cell, max_ponder=10**12)
    y_cap, N_cap, R_cap = act_forward(x, params, cell=cell, max_ponder=100)
    assert torch.equal(N, N_cap) and torch.equal(y, y_cap) and torch.equal(R, R_cap)
    slow = dict(params, b_h=torch.tensor([-6.0], dtype=torch.float64), W_h=params["W_h"] * 0)
    y, N, R = act_forward(x, slow, cell=cell, max_ponder=10**12)        # h = sigmoid(-6): N = 402
    y_np, N_np, R_np, _ = np_act_forward(case["x"], {k: v.numpy() for k, v in slow.items()}, cell=cell,
                                         max_ponder=10**12)
    assert N.min().item() > 64 and np.array_equal(N.numpy(), N_np)
    assert np.allclose(y.numpy(), y_np, rtol=1e-10, atol=1e-12) and np.allclose(R.numpy(), R_np, rtol=1e-10)


def test_fixed_steps_rejects_bad_counts():
    case = make_case("rnn", "T>1")
    params = {k: torch.tensor(v) for k, v in case["params"].items()}
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="ponder_steps"):
            act_forward_fixed_steps(torch.tensor(case["x"]), params, bad)
