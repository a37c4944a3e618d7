"""Bad input gets a ValueError that names the problem."""

import re

import numpy as np
import pytest

from act_numpy.act import act_backward, act_forward
from act_numpy.model import ACTModel
from act_numpy.params import init_params
from conftest import make_problem


@pytest.fixture
def good():
    x, params, dy, dponder = make_problem("rnn")
    return x, params


def call(x, params, **kw):
    return act_forward(x, params, **{"cell": "rnn", **kw})


@pytest.mark.parametrize("kw,match", [
    (dict(epsilon=0.0), "epsilon"), (dict(epsilon=1.0), "epsilon"), (dict(epsilon=-0.1), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"), (dict(epsilon="0.01"), "epsilon"),
    (dict(max_ponder=0), "max_ponder"), (dict(max_ponder=2.5), "max_ponder"), (dict(max_ponder=True), "max_ponder"),
    (dict(cell="gru"), "cell"),
])
def test_bad_settings(good, kw, match):
    x, params = good
    with pytest.raises(ValueError, match=match):
        call(x, params, **kw)


def test_x_not_3d(good):
    x, params = good
    with pytest.raises(ValueError, match="3-D"):
        call(x[0], params)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_x(good, bad):
    x, params = good
    x = x.copy()
    x[0, 1, 2] = bad
    with pytest.raises(ValueError, match="NaN or inf"):
        call(x, params)


def test_non_numeric_x(good):
    _, params = good
    with pytest.raises(ValueError, match="numeric"):
        call(np.full((1, 1, 4), "a"), params)


def test_missing_and_extra_keys(good):
    x, params = good
    missing = {k: v for k, v in params.items() if k != "W_h"}
    with pytest.raises(ValueError, match="W_h"):
        call(x, missing)
    with pytest.raises(ValueError, match="W_z"):
        call(x, dict(params, W_z=np.zeros(1)))


@pytest.mark.parametrize("name", ["W_x", "W_s", "b_s", "W_h", "b_h", "W_y", "b_y"])
def test_wrong_parameter_shape(good, name):
    x, params = good
    bad = dict(params, **{name: np.zeros(params[name].shape + (1,))})
    with pytest.raises(ValueError, match=name):
        call(x, bad)


def test_rnn_params_with_lstm_cell(good):
    x, params = good
    with pytest.raises(ValueError, match="W_x"):
        call(x, params, cell="lstm")


def test_input_size_mismatch(good):
    x, params = good
    with pytest.raises(ValueError, match="W_x"):
        call(x[:, :, :3], params)


def test_bad_dy_shape(good):
    x, params = good
    *_, cache = call(x, params)
    with pytest.raises(ValueError, match="dy"):
        act_backward(np.zeros((1, 1, 1)), 0.0, cache)


@pytest.mark.parametrize("name", ["W_x", "W_h", "b_y"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_parameter(good, name, bad):
    x, params = good
    value = params[name].copy()
    value.flat[0] = bad
    with pytest.raises(ValueError, match=re.escape(f"params[{name!r}] contains NaN or inf")):
        call(x, dict(params, **{name: value}))


def test_complex_x(good):
    x, params = good
    with pytest.raises(ValueError, match="x must be a real numeric array"):
        call(x + 0j, params)


@pytest.mark.parametrize("name", ["W_x", "b_h"])
def test_complex_or_boolean_parameter(good, name):
    # a cast to float would drop the imaginary part (or turn True into 1.0) without a word
    x, params = good
    for value in (params[name] + 1j, params[name] > 0):
        with pytest.raises(ValueError, match=re.escape(f"params[{name!r}] must be a real numeric array")):
            call(x, dict(params, **{name: value}))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_dy(good, bad):
    x, params = good
    y, *_, cache = call(x, params)
    dy = np.ones_like(y)
    dy[0, 1, 0] = bad
    with pytest.raises(ValueError, match="dy contains NaN or inf"):
        act_backward(dy, 0.01, cache)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_dponder(good, bad):
    x, params = good
    y, *_, cache = call(x, params)
    with pytest.raises(ValueError, match="dponder contains NaN or inf"):
        act_backward(np.ones_like(y), bad, cache)
    dponder = np.full(y.shape[:2], 0.01)
    dponder[-1, -1] = bad
    with pytest.raises(ValueError, match="dponder contains NaN or inf"):
        act_backward(np.ones_like(y), dponder, cache)


def test_complex_upstream_gradients(good):
    x, params = good
    y, *_, cache = call(x, params)
    with pytest.raises(ValueError, match="dy must be a real numeric array"):
        act_backward(np.ones_like(y) * (1 + 1j), 0.01, cache)
    with pytest.raises(ValueError, match="dponder must be a real numeric array"):
        act_backward(np.ones_like(y), 0.01 + 0.5j, cache)


def test_bad_dponder_shape(good):
    x, params = good
    y, *_, cache = call(x, params)
    with pytest.raises(ValueError, match="dponder"):
        act_backward(np.ones_like(y), np.zeros(y.shape[:2] + (2,)), cache)


def test_init_and_model_errors():
    with pytest.raises(ValueError, match="cell"):
        init_params("gru", 2, 3, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        init_params("rnn", 2, 3, 1, rng=0)
    with pytest.raises(ValueError, match="loss"):
        ACTModel("rnn", 2, 3, 1, loss="hinge")
    with pytest.raises(ValueError, match="tau"):
        ACTModel("rnn", 2, 3, 1, tau=-1.0)


def test_the_one_checker_names_the_argument_and_keeps_its_bounds():
    from act_numpy.checks import check_float, check_int
    assert check_int("M", np.int64(3)) == 3 and type(check_int("M", np.int64(3))) is int
    assert check_int("bits", 64, 1, 64) == 64
    for bad in (0, True, 2.0, "2", None):
        with pytest.raises(ValueError, match="^M must be an integer >= 1"):
            check_int("M", bad)
    with pytest.raises(ValueError, match=r"^bits must be an integer in 1\.\.64, got 65"):
        check_int("bits", 65, 1, 64)
    assert check_float("lr", 1, 0.0, low_open=True) == 1.0
    for bad in (0.0, -1.0, float("nan"), float("inf"), False, "0.1"):
        with pytest.raises(ValueError, match="^lr must be"):
            check_float("lr", bad, 0.0, low_open=True)
    assert check_float("p", 1.0, 0.0, 1.0) == 1.0
    with pytest.raises(ValueError, match=r"^p must be in \(0, 1\), got 1.0"):
        check_float("p", 1.0, 0.0, 1.0, low_open=True, high_open=True)
