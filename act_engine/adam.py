"""torch.optim.Adam's update (its defaults) for K stacked networks, each with its own learning
rate and step count: the optimiser of every PyTorch population.

    opt = MemberAdam(params, lr)                     # params: name -> (K, ...) tensors; lr (K,)
    opt.step(grads)                                  # one update of every member, in place

Used by act_engine.torch_population (eagerly, and replayed as a CUDA graph by
act_engine.population_graphed) and by act_experiments.training.pondernet_population. The update is cut in two so
that it can be replayed as a CUDA graph:

    step_size, root = opt.next_factors()             # on the host: float64 NumPy (K,)
    update_(params, grads, m, v, step_size, root)    # on the device, in place: tensors only

torch's Adam computes its scalars in Python floats; ``factors`` does the same in float64 for all
members at once. ``update_`` reads them from (K,) tensors, which a graph can be given anew
before every replay.
"""

import numpy as np
import torch

from act_numpy.checks import check_float

from .members import check_member, pack_state, unpack_state

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


class MemberAdam:
    """torch.optim.Adam for K stacked networks: member k has its own learning rate lr[k] and step
    count t[k] (members may resume from checkpoints of different ages).

    params: name -> (K, ...) tensors, updated in place; lr: K learning rates > 0.
    Attributes: t (K,) int64 step counts; m, v: name -> (K, ...) moments, zeros at first.
    """

    def __init__(self, params, lr):
        self.params = params
        self.lr = np.array([check_float("lr", value, 0.0, low_open=True) for value in lr])
        self.K = len(self.lr)
        self.t = np.zeros(self.K, dtype=np.int64)
        self.m = {name: torch.zeros_like(p) for name, p in params.items()}
        self.v = {name: torch.zeros_like(p) for name, p in params.items()}

    def next_factors(self):
        """Count the coming step and return its factors (``factors``): what a CUDA graph of
        ``update_`` is given before it replays."""
        self.t += 1
        return factors(self.t, self.lr)

    @torch.no_grad()
    def step(self, grads):
        """One update of every member from grads: name -> (K, ...) tensors (a None gradient, for a
        parameter nothing read, counts as zeros)."""
        step_size, root = self.next_factors()
        first = next(iter(self.params.values()))
        as_t = dict(dtype=first.dtype, device=first.device)
        grads = {name: torch.zeros_like(p) if grads[name] is None else grads[name]
                 for name, p in self.params.items()}
        update_(self.params, grads, self.m, self.v, torch.tensor(step_size, **as_t), torch.tensor(root, **as_t))

    def member_state(self, k):
        """Member k's parameters and Adam state in the checkpoint layout (members.pack_state)."""
        k = check_member(k, self.K)

        def row_k(tensors):
            return {name: tensors[name][k].detach().cpu().numpy() for name in self.params}
        return pack_state(row_k(self.params), row_k(self.m), row_k(self.v), self.t[k])

    @torch.no_grad()
    def load_member_state(self, k, state):
        """Set member k's parameters and Adam state from a state dict in the checkpoint layout."""
        k = check_member(k, self.K)
        params, m, v, t = unpack_state(state, list(self.params))
        for name, p in self.params.items():
            as_t = dict(dtype=p.dtype, device=p.device)
            p[k].copy_(torch.as_tensor(params[name], **as_t))
            self.m[name][k].copy_(torch.as_tensor(m[name], **as_t))
            self.v[name][k].copy_(torch.as_tensor(v[name], **as_t))
        self.t[k] = t
