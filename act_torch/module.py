"""ACT as an ``nn.Module``, and conversions between its parameters and NumPy parameter dicts.

    model = ACT("lstm", D=102, H=128, O=1, generator=torch.Generator().manual_seed(0))
    y, N, R = model(x)

    model = params_to_module(np_params, "rnn")      # NumPy dict -> module (dtype kept)
    np_params = module_to_params(model)             # module -> NumPy dict (exact copy)

The module holds the seven parameters under the paper's names (W_x, W_s, b_s, W_h, b_h, W_y, b_y),
with the same shapes as in ``act_numpy.params`` and used the same way (``x @ W``), so a NumPy
dict and the module's ``state_dict`` line up key by key with no transposes.
"""

import math

import numpy as np
import torch
from torch import nn

from act_numpy.params import PARAM_NAMES, check_inputs, param_shapes

from .act import act_forward


class ACT(nn.Module):
    """Adaptive Computation Time over a tanh RNN (``cell="rnn"``) or an LSTM (``cell="lstm"``).

    D, H, O: input, state and output sizes. epsilon, max_ponder: the halting threshold and the
    cap M used by ``forward``. The initialisation follows ``act_numpy.params.init_params``:
    Gaussian weights with standard deviation 1/sqrt(fan_in), b_h = halting_bias (1 in the paper),
    the LSTM forget-gate bias 1, other biases 0; randomness only from ``generator``
    (a CPU ``torch.Generator``; None uses a fresh one seeded with 0).
    """

    def __init__(self, cell, D, H, O, *, epsilon=0.01, max_ponder=100, halting_bias=1.0,
                 generator=None, dtype=None, device=None):
        super().__init__()
        shapes = param_shapes(cell, D, H, O)                  # raises ValueError for a bad cell
        # validate epsilon and max_ponder now, not at the first forward
        check_inputs((1, 1, D), shapes, cell, epsilon, max_ponder)
        self.cell, self.D, self.H, self.O = cell, D, H, O
        self.epsilon, self.max_ponder = epsilon, max_ponder
        dtype = dtype if dtype is not None else torch.get_default_dtype()
        for name in PARAM_NAMES:
            self.register_parameter(name, nn.Parameter(torch.empty(shapes[name], dtype=dtype, device=device)))
        self.reset_parameters(generator, halting_bias=halting_bias)

    @torch.no_grad()
    def reset_parameters(self, generator=None, *, halting_bias=1.0):
        """Draw fresh parameters (the distribution of act_numpy.params.init_params)."""
        if generator is None:
            generator = torch.Generator().manual_seed(0)
        D, H = self.D, self.H
        fan_in = D + 1 + H
        std = {"W_x": 1.0 / math.sqrt(fan_in), "W_s": 1.0 / math.sqrt(fan_in),
               "W_h": 1.0 / math.sqrt(H), "W_y": 1.0 / math.sqrt(H)}
        for name, sd in std.items():
            p = getattr(self, name)
            # drawn on the CPU in float64 so a seed gives the same weights on every device and dtype
            p.copy_(torch.randn(p.shape, generator=generator, dtype=torch.float64) * sd)
        self.b_s.zero_()
        if self.cell == "lstm":
            self.b_s[H:2 * H] = 1.0                          # forget gate (block 2 of i, f, o, g)
        self.b_h.fill_(halting_bias)
        self.b_y.zero_()

    def params(self):
        """The seven parameters as a dict name -> nn.Parameter (what act_forward takes)."""
        return {name: getattr(self, name) for name in PARAM_NAMES}

    def forward(self, x):
        """x (B, T, D) -> y (B, T, O), N (B, T) int64, R (B, T); see act_torch.act.act_forward."""
        return act_forward(x, self.params(), cell=self.cell, epsilon=self.epsilon, max_ponder=self.max_ponder)

    def extra_repr(self):
        return (f"cell={self.cell!r}, D={self.D}, H={self.H}, O={self.O}, "
                f"epsilon={self.epsilon}, max_ponder={self.max_ponder}")

    @classmethod
    def from_numpy(cls, np_params, cell, *, epsilon=0.01, max_ponder=100, dtype=None, device=None):
        """A module holding copies of a NumPy parameter dict (as made by act_numpy.params).

        dtype None keeps the arrays' dtype (float64 stays float64), so the round trip through
        ``to_numpy`` is exact.
        """
        if not isinstance(np_params, dict):
            raise ValueError("np_params must be a dict of the seven ACT parameters")
        shapes = {k: np.shape(v) for k, v in np_params.items()}
        if "W_x" not in shapes or len(shapes["W_x"]) != 2:
            raise ValueError(f"params['W_x'] must be a 2-D array (D + 1, G), got {shapes.get('W_x')}")
        D = shapes["W_x"][0] - 1
        _, _, _, H, O = check_inputs((1, 1, D), shapes, cell, epsilon, max_ponder)
        arrays = {k: np.asarray(np_params[k]) for k in PARAM_NAMES}
        if dtype is None:
            dtype = torch.float32 if arrays["W_x"].dtype == np.float32 else torch.float64
        module = cls(cell, D, H, O, epsilon=epsilon, max_ponder=max_ponder, dtype=dtype, device=device)
        with torch.no_grad():
            for k, v in arrays.items():
                getattr(module, k).copy_(torch.from_numpy(np.ascontiguousarray(v)))
        return module

    def to_numpy(self):
        """The parameters as a dict name -> NumPy array (copies, in the module's dtype)."""
        return {name: getattr(self, name).detach().cpu().numpy().copy() for name in PARAM_NAMES}


def params_to_module(np_params, cell, **kwargs):
    """NumPy parameter dict -> ACT module (keyword arguments as in ACT.from_numpy)."""
    return ACT.from_numpy(np_params, cell, **kwargs)


def module_to_params(module):
    """ACT module -> NumPy parameter dict (exact copies)."""
    return module.to_numpy()
