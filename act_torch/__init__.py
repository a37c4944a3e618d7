"""Adaptive Computation Time (Graves 2016) in PyTorch: the twin of act_numpy, gradients by autograd.

    from act_torch import ACT, act_forward, params_to_module, module_to_params

``python -m act_torch.check`` compares it with the NumPy reference on the best available device.
"""

from .act import act_forward, halting_distribution, ponder_step
from .module import ACT, module_to_params, params_to_module

__all__ = ["ACT", "act_forward", "halting_distribution", "module_to_params", "params_to_module", "ponder_step"]
