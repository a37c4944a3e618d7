"""Train ACT with PyTorch (the fast backend): ``python -m act_torch.train --help``.

    python -m act_torch.train --task parity --bits 16 --hidden 128 --lr 1e-3 --iterations 5000

The loop, options, logs and checkpoints are the experiment package's (``act_experiments/training.py``), so
both backends train, log and resume the same way. This file only says how PyTorch holds the
model and takes a step:

- the parameters start from ``act_numpy.params.init_params`` with the run's seed, so a seed gives
  the same initial weights as the NumPy reference; they are then copied into the ``ACT`` module;
- the loss (``act_torch.losses``, shared with the population) has the normalisation of
  ``act_numpy.losses``: cross-entropy summed over the steps that have targets (and over heads),
  averaged over the batch, plus tau * sum_t rho_t over each sequence's steps, averaged over the
  batch (eq. 12);
- autograd gives the gradient (N(t) is a constant, paper section 2.2); ``torch.optim.Adam`` steps.

float32 by default (fast); ``--dtype float64`` matches one NumPy step to about 1e-10.
``--device auto`` (the default) trains on the CPU: one network of these sizes steps eagerly on a
GPU slower than on the CPU, every operation a tiny kernel launch (docs/benchmarks_train_step.md);
a GPU pays off for many networks at once, as populations (``act_experiments.sweeps``). Ask for
it with ``--device cuda`` (or ``cuda:N``), which on a machine without that device is refused in
one line before anything is written.
"""

import os

import numpy as np
import torch

from act_experiments import training

from .losses import act_loss, loss_inputs, statistics
from .module import ACT

DTYPES = {"float32": torch.float32, "float64": torch.float64}


class TorchBackend:
    """An ACT module and torch.optim.Adam, built from a training config (see act_experiments/training.py)."""

    name = "torch"
    default_dtype = "float32"
    extra_defaults = {"device": "auto"}
    extra_arguments = (("--device", str, "auto (the CPU: faster than eager CUDA for one network), cpu, cuda, "
                                         "cuda:1, ..."),)
    extra_resumable = ("device",)    # a run may continue on another device (not bit-exactly)

    @staticmethod
    def check_config(config):
        """Refuse a device this machine cannot run on, before anything is written (ValueError)."""
        name = config["device"]
        if name == "auto":
            return
        try:
            device = torch.device(name)
        except (RuntimeError, TypeError) as err:
            raise ValueError(f"bad device {name!r}: {err}") from None
        if device.type == "cuda":
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if count == 0:
                raise ValueError(f"device {name!r}: CUDA is not available here; use --device cpu or auto")
            if device.index is not None and device.index >= count:
                raise ValueError(f"device {name!r}: there {'is' if count == 1 else 'are'} only {count} "
                                 f"CUDA device{'' if count == 1 else 's'} (cuda:0 to cuda:{count - 1})")
        elif device.type == "mps":
            if not torch.backends.mps.is_available():
                raise ValueError(f"device {name!r}: MPS is not available here; use --device cpu or auto")
        elif device.type != "cpu":
            raise ValueError(f"device {name!r}: expected auto, cpu, cuda, cuda:N or mps")

    def __init__(self, config):
        D, O, self.loss_kind, self.heads = training.model_sizes(config)
        device = config["device"]
        if device == "auto":
            # one network: eager CUDA launches a tiny kernel per operation and is slower than
            # the CPU; populations take the GPU instead (act_torch.population)
            device = "cpu"
        self.device, self.dtype = torch.device(device), DTYPES[config["dtype"]]
        self.tau = config["tau"]
        self.model = ACT.from_numpy(training.init_parameters(config), config["cell"], epsilon=config["epsilon"],
                                    max_ponder=config["max_ponder"], dtype=self.dtype, device=self.device)
        self.params = self.model.params()      # name -> nn.Parameter, the paper's names
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config["lr"])

    def _forward(self, x, y, mask):
        """Loss (a 0-d tensor with gradient, eq. 12) and the statistics of the batch, as NumPy arrays."""
        as_t = dict(dtype=self.dtype, device=self.device)
        target, live, steps = loss_inputs(y, mask, self.loss_kind, self.heads, **as_t)
        y_hat, N, R = self.model(torch.as_tensor(x, **as_t))
        loss, wrong, rho = act_loss(y_hat, N, R, target, live, steps, kind=self.loss_kind, heads=self.heads,
                                    tau=self.tau)
        return loss, statistics(wrong, rho, N)

    def train_step(self, x, y, mask):
        """One Adam step on the batch; returns loss, wrong (B, T), rho (B, T), N (B, T)."""
        self.optimizer.zero_grad(set_to_none=True)
        loss, stats = self._forward(x, y, mask)
        loss.backward()
        for p in self.params.values():
            if p.grad is None:
                # a parameter outside the graph (W_h, b_h when --no-act: eq. 20 leaves them no
                # gradient) still takes its Adam step with a zero gradient, as in NumPy
                p.grad = torch.zeros_like(p)
        self.optimizer.step()
        return {"loss": loss.item(), **stats}

    @torch.no_grad()
    def evaluate(self, x, y, mask):
        """The same statistics as train_step, without a gradient or an update."""
        loss, stats = self._forward(x, y, mask)
        return {"loss": loss.item(), **stats}

    def state_dict(self):
        """Parameters and Adam state as a flat dict of NumPy arrays (the NumPy backend's layout)."""
        state = {}
        steps = set()
        for k, p in self.params.items():
            s = self.optimizer.state.get(p, {})
            state[f"param/{k}"] = p.detach().cpu().numpy().copy()
            state[f"adam_m/{k}"] = s["exp_avg"].cpu().numpy().copy() if s else np.zeros(p.shape, state[f"param/{k}"].dtype)
            state[f"adam_v/{k}"] = s["exp_avg_sq"].cpu().numpy().copy() if s else np.zeros(p.shape, state[f"param/{k}"].dtype)
            steps.add(int(s["step"]) if s else 0)
        assert len(steps) == 1, "every parameter should have taken the same number of Adam steps"
        state["adam_t"] = np.array(steps.pop())
        return state

    def load_state_dict(self, state):
        t = int(state["adam_t"])
        as_t = dict(dtype=self.dtype, device=self.device)
        with torch.no_grad():
            for k, p in self.params.items():
                p.copy_(torch.as_tensor(state[f"param/{k}"], **as_t))
                self.optimizer.state.pop(p, None)
                if t > 0:
                    # torch's Adam keeps the step count as a float tensor on the CPU; it is read
                    # with .item(), so any float dtype holding the integer exactly gives the same step
                    self.optimizer.state[p] = {
                        "step": torch.tensor(float(t), dtype=torch.float32),
                        "exp_avg": torch.as_tensor(state[f"adam_m/{k}"], **as_t).clone(),
                        "exp_avg_sq": torch.as_tensor(state[f"adam_v/{k}"], **as_t).clone()}

    def params_numpy(self):
        """The current parameters as float64 NumPy arrays (for comparing backends)."""
        return {k: p.detach().cpu().numpy().astype(np.float64) for k, p in self.params.items()}


def main(argv=None):
    if "OMP_NUM_THREADS" not in os.environ:
        # These networks are small: one thread is faster than several, and when two processes
        # share 2 cores, two spinning thread pools made 16-bit parity ~15x slower (docs/parity.md).
        # Set OMP_NUM_THREADS to choose otherwise.
        torch.set_num_threads(1)
    return training.main(TorchBackend, argv)


if __name__ == "__main__":
    main()
