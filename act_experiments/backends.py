"""The two backends of the training loop: how NumPy and PyTorch each hold a model and take a step.

    python scripts/train.py --backend numpy --task parity --bits 8 --hidden 32 --lr 1e-3 --iterations 2000
    python scripts/train.py --backend torch --task parity --bits 16 --hidden 128 --lr 1e-3 --iterations 5000

The loop, options, logs and checkpoints are the same for both (``act_experiments.training``,
``config``, ``checkpoints``), so both train, log and resume the same way; a backend only says
how it builds the network from a config, takes one step and saves its state (the interface is
in ``training``'s docstring). Both start from ``config.init_parameters``, so a seed gives the
same initial weights in NumPy and PyTorch, and both save the same checkpoint layout
(``act_engine.members.pack_state``, as a population's members), so either can read the other's
parameters.

``NumpyBackend``, the reference: ``act_numpy.model.ACTModel.loss`` (forward, hand-written
backward) and ``act_numpy.optim.Adam``, in float64 by default.

``TorchBackend``, the fast one, in float32 by default (``--dtype float64`` matches one NumPy
step to about 1e-10). It lives in ``act_experiments.torch_backend`` and loads when first asked
for (``from act_experiments.backends import TorchBackend``), so that a NumPy run, or a NumPy
sweep's worker, starts without importing PyTorch:

- the parameters start from ``act_numpy.params.init_params`` with the run's seed, so a seed gives
  the same initial weights as the NumPy reference; they are then copied into the ``ACT`` module;
- the loss (``act_torch.losses``, shared with the population) has the normalisation of
  ``act_numpy.losses``: cross-entropy summed over the steps that have targets (and over heads),
  averaged over the batch, plus tau * sum_t rho_t over each sequence's steps, averaged over the
  batch (eq. 12);
- the forward is the engine's ponder loop for one network (``act_engine.torch_act.act_forward``:
  ``act_torch.act.act_forward``'s numbers, arranged for speed);
- autograd gives the gradient (N(t) is a constant, paper section 2.2); ``torch.optim.Adam`` steps.

``--device auto`` (the default) trains on the CPU: one network of these sizes steps eagerly on a
GPU slower than on the CPU, every operation a tiny kernel launch (docs/benchmarks_train_step.md);
a GPU pays off for many networks at once, as populations (``act_experiments.sweeps``). Ask for
it with ``--device cuda`` (or ``cuda:N``), which on a machine without that device is refused in
one line before anything is written.
"""

import numpy as np

from act_engine.members import pack_state, unpack_state
from act_numpy.model import ACTModel
from act_numpy.optim import Adam

from .config import init_parameters, model_sizes


class NumpyBackend:
    """An ACTModel and its Adam optimiser, built from a training config (see act_experiments/config.py)."""

    name = "numpy"
    default_dtype = "float64"

    def __init__(self, config):
        D, O, loss, heads = model_sizes(config)
        self.dtype = np.dtype(config["dtype"])
        params = {k: v.astype(self.dtype) for k, v in init_parameters(config).items()}
        self.model = ACTModel(config["cell"], D, config["hidden"], O, loss=loss, heads=heads,
                              tau=config["tau"], epsilon=config["epsilon"],
                              max_ponder=config["max_ponder"], params=params,
                              fixed_ponder=config.get("fixed_ponder"))
        self.optimizer = Adam(self.model.params, lr=config["lr"])

    def train_step(self, x, y, mask):
        """One Adam step on the batch; returns loss, wrong (B, T), rho (B, T), N (B, T)."""
        loss, grads, stats = self.model.loss(x.astype(self.dtype), y, mask)
        self.optimizer.step(grads)
        return {"loss": loss, "wrong": stats["wrong"], "rho": stats["rho"], "N": stats["N"]}

    def evaluate(self, x, y, mask):
        """The same statistics as train_step, forward only, parameters untouched."""
        loss, stats = self.model.evaluate(x.astype(self.dtype), y, mask)
        return {"loss": loss, "wrong": stats["wrong"], "rho": stats["rho"], "N": stats["N"]}

    def state_dict(self):
        """Parameters and Adam state as a flat dict of arrays (what checkpoints store)."""
        opt = self.optimizer
        return pack_state(opt.params, opt.m, opt.v, opt.t)

    def load_state_dict(self, state):
        params, m, v, t = unpack_state(state, self.optimizer.params)
        for k, p in self.optimizer.params.items():
            p[...] = params[k]                 # in place: the model holds these same arrays
        self.optimizer.load_state_dict({"t": t, "m": m, "v": v})

    def params_numpy(self):
        """The current parameters as float64 NumPy arrays (for comparing backends)."""
        return {k: v.astype(np.float64) for k, v in self.model.params.items()}


def __getattr__(name):
    """TorchBackend, TORCH_DTYPES and BACKENDS, importing PyTorch on first use."""
    if name in ("TorchBackend", "TORCH_DTYPES"):
        from . import torch_backend
        return getattr(torch_backend, name)
    if name == "BACKENDS":
        from .torch_backend import TorchBackend
        return {"numpy": NumpyBackend, "torch": TorchBackend}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
