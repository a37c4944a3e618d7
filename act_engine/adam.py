"""torch.optim.Adam's update (its defaults) for K stacked networks, each with its own learning
rate and step count, cut in two so that the update can be replayed as a CUDA graph:

    step_size, root = factors(adam_t, lr)           # on the host: float64 NumPy (K,)
    update_(params, grads, m, v, step_size, root)    # on the device, in place: tensors only

torch's Adam computes its scalars in Python floats; ``factors`` does the same in float64 for all
members at once. ``update_`` reads them from (K,) tensors, which a graph can be given anew
before every replay (act_engine.population_graphed).
"""

import numpy as np
import torch

# torch.optim.Adam's defaults, which TorchBackend uses
BETA1, BETA2, ADAM_EPS = 0.9, 0.999, 1e-8


def factors(adam_t, lr):
    """Per-member step size -lr / (1 - beta1^t) and root sqrt(1 - beta2^t) (bias corrections).

    adam_t (K,) int step counts *after* this step (1 at the first); lr (K,) learning rates.
    Returns two float64 NumPy arrays (K,).
    """
    t = np.asarray(adam_t, dtype=np.float64)
    bias1 = 1 - BETA1 ** t
    root = np.sqrt(1 - BETA2 ** t)
    return -np.asarray(lr, dtype=np.float64) / bias1, root


@torch.no_grad()
def update_(params, grads, m, v, step_size, root):
    """One Adam step of every member, in place: dicts name -> (K, ...) tensors of the parameters,
    their gradients and the first and second moments; step_size, root (K,) tensors in the
    parameters' dtype (``factors``). Each member's moments and parameters follow torch's Adam:

        m <- beta1 m + (1 - beta1) g,  v <- beta2 v + (1 - beta2) g^2,
        p <- p + step_size * m / (sqrt(v) / root + eps)
    """
    for name, p in params.items():
        g = grads[name]
        m[name].lerp_(g, 1 - BETA1)
        v[name].mul_(BETA2).addcmul_(g, g, value=1 - BETA2)
        column = (-1,) + (1,) * (p.dim() - 1)               # member k's factor on member k's block
        denom = (v[name].sqrt() / root.view(column)).add_(ADAM_EPS)
        p.add_(step_size.view(column) * m[name] / denom)
