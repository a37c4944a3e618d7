"""The seven ACT parameters: their names, their shapes, checking them, and initialising them.

Every argument check of ``act.py`` lives here too, so that file opens with the maths:
``check_inputs`` (shapes and settings, shared with act_torch), ``check_arrays`` (act_forward's
arrays) and ``check_upstream`` (act_backward's dy and dponder), all through ``real_array``.

Names are the paper's. Every weight is used as ``x @ W`` (shape ``(in, out)``), the same in
NumPy and PyTorch, so no transposes hide between the two packages.

| name  | shape      | role                                                          |
|-------|------------|---------------------------------------------------------------|
| W_x   | (D + 1, G) | input -> cell; the last row belongs to the first-step flag    |
| W_s   | (H, G)     | previous state -> cell                                        |
| b_s   | (G,)       | cell bias                                                     |
| W_h   | (H, 1)     | state -> halting unit, eq. (5)                                |
| b_h   | (1,)       | halting bias (the paper initialises it to 1)                  |
| W_y   | (H, O)     | state -> output, eq. (4)                                      |
| b_y   | (O,)       | output bias                                                   |

G = H for the tanh RNN and 4H for the LSTM (gate blocks i, f, o, g).
"""

import numpy as np

from .cells import CELLS, gate_size
from .checks import check_float, check_int

PARAM_NAMES = ("W_x", "W_s", "b_s", "W_h", "b_h", "W_y", "b_y")


def param_shapes(cell, D, H, O):
    """Expected shape of every parameter for input size D, state size H and output size O."""
    G = gate_size(cell, H)
    return {
        "W_x": (D + 1, G), "W_s": (H, G), "b_s": (G,),
        "W_h": (H, 1), "b_h": (1,),
        "W_y": (H, O), "b_y": (O,),
    }


def check_inputs(x_shape, shapes, cell, epsilon, max_ponder):
    """Validate the arguments of act_forward from shapes alone (shared by NumPy and PyTorch).

    x_shape: shape of x; shapes: dict name -> shape of each parameter.
    Returns (B, T, D, H, O). Raises ValueError naming the problem.
    """
    if cell not in CELLS:
        raise ValueError(f"unknown cell {cell!r}; expected one of {CELLS}")
    check_float("epsilon", epsilon, 0.0, 1.0, low_open=True, high_open=True)
    check_int("max_ponder", max_ponder, 1)
    if len(x_shape) != 3:
        raise ValueError(f"x must be 3-D (B, T, D), got shape {tuple(x_shape)}")
    B, T, D = x_shape
    if B < 1 or T < 1:
        raise ValueError(f"x must have at least one sequence and one time step, got shape {tuple(x_shape)}")
    missing = [k for k in PARAM_NAMES if k not in shapes]
    extra = [k for k in shapes if k not in PARAM_NAMES]
    if missing or extra:
        raise ValueError(f"params keys must be exactly {PARAM_NAMES}; missing {missing}, unexpected {extra}")
    if len(shapes["W_s"]) != 2 or len(shapes["W_y"]) != 2:
        raise ValueError(f"W_s and W_y must be 2-D, got {tuple(shapes['W_s'])} and {tuple(shapes['W_y'])}")
    H, O = shapes["W_s"][0], shapes["W_y"][1]
    for name, want in param_shapes(cell, D, H, O).items():
        if tuple(shapes[name]) != want:
            raise ValueError(
                f"params[{name!r}] has shape {tuple(shapes[name])}, expected {want} "
                f"for cell={cell!r}, D={D}, H={H}, O={O}"
            )
    return B, T, D, H, O


def real_array(name, value, dtype=None):
    """``value`` as a finite real array of ``dtype``; ValueError naming ``name`` otherwise.

    The one value check for every array argument (x, the parameters, dy, dponder): complex,
    boolean and non-numeric values are refused rather than cast (a cast would silently drop an
    imaginary part), and so are NaN and inf. dtype None keeps float32/float64 and computes
    anything else (integers) in float64.
    """
    a = np.asarray(value)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if dtype is None:
        dtype = a.dtype if a.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    a = a.astype(dtype, copy=False)
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or inf")
    return a


def check_arrays(x, params, cell, epsilon, max_ponder):
    """act_forward's arguments checked and converted: x (B, T, D) and the dict P of the seven
    parameters, both in x's dtype (float32 or float64; anything else computes in float64)."""
    x = real_array("x", x)
    if not isinstance(params, dict):
        raise ValueError("params must be a dict of the seven ACT parameters")
    shapes = {k: np.shape(v) for k, v in params.items()}
    check_inputs(x.shape, shapes, cell, epsilon, max_ponder)
    return x, {k: real_array(f"params[{k!r}]", params[k], x.dtype) for k in PARAM_NAMES}


def check_upstream(dy, dponder, y_shape, dtype):
    """act_backward's upstream gradients checked and converted to ``dtype``: dy of ``y_shape``
    (B, T, O), and dponder a scalar or anything that broadcasts to (B, T), returned as (B, T)."""
    if np.shape(dy) != tuple(y_shape):
        raise ValueError(f"dy must have shape {tuple(y_shape)}, got {np.shape(dy)}")
    dy = real_array("dy", dy, dtype)
    dponder = real_array("dponder", dponder, dtype)
    try:
        dponder = np.broadcast_to(dponder, tuple(y_shape[:-1]))
    except ValueError:
        raise ValueError(f"dponder must be a scalar or broadcast to {tuple(y_shape[:-1])}, "
                         f"got shape {dponder.shape}") from None
    return dy, dponder


def init_params(cell, D, H, O, rng, *, halting_bias=1.0, dtype=np.float64):
    """Random parameters for ACT over `cell`, seeded through `rng` (a np.random.Generator).

    Weights are Gaussian with standard deviation 1/sqrt(fan_in) so activations start in the
    responsive range of tanh/sigmoid. b_h = halting_bias (1 in the paper, so that h starts near
    0.73 and the first steps halt early). The LSTM forget-gate bias starts at 1, a common choice
    that lets the cell remember by default; all other biases start at 0.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a np.random.Generator, e.g. np.random.default_rng(0)")
    G = gate_size(cell, H)
    fan_in = D + 1 + H
    p = {
        "W_x": rng.normal(0.0, 1.0 / np.sqrt(fan_in), (D + 1, G)),
        "W_s": rng.normal(0.0, 1.0 / np.sqrt(fan_in), (H, G)),
        "b_s": np.zeros(G),
        "W_h": rng.normal(0.0, 1.0 / np.sqrt(H), (H, 1)),
        "b_h": np.full(1, float(halting_bias)),
        "W_y": rng.normal(0.0, 1.0 / np.sqrt(H), (H, O)),
        "b_y": np.zeros(O),
    }
    if cell == "lstm":
        p["b_s"][H:2 * H] = 1.0
    return {k: v.astype(dtype) for k, v in p.items()}
