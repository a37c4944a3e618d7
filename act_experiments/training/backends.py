"""The two backends of the training loop: how NumPy and PyTorch each hold a model and take a step.

    python scripts/train.py --backend numpy --task parity --bits 8 --hidden 32 --lr 1e-3 --iterations 2000
    python scripts/train.py --backend torch --task parity --bits 16 --hidden 128 --lr 1e-3 --iterations 5000

The loop, options, logs and checkpoints are the same for both (``loop``, ``config`` and
``checkpoints`` of act_experiments.training), so both train, log and resume the same way; a
backend only says how it builds the network from a config, takes one step and saves its state
(the interface is in ``loop``'s docstring). Both start from ``config.init_parameters``, so a seed gives the
same initial weights in NumPy and PyTorch, and both save the same checkpoint layout
(``act_engine.members.pack_state``, as a population's members), so either can read the other's
parameters.

``NumpyBackend``, the reference: ``act_numpy.model.ACTModel.loss`` (forward, hand-written
backward) and ``act_numpy.optim.Adam``, in float64 by default.

``TorchBackend``, the fast one, in float32 by default (``--dtype float64`` matches one NumPy
step to about 1e-10). It is built, and PyTorch imported, when first asked for (``from
act_experiments.training.backends import TorchBackend``), so that a NumPy run, or a NumPy
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

from pathlib import Path

import numpy as np

from act_engine.members import pack_state, unpack_state
from act_numpy.model import ACTModel
from act_numpy.optim import Adam

from act_experiments.training.checkpoints import load_checkpoint
from act_experiments.training.config import init_parameters, model_sizes


class NumpyBackend:
    """An ACTModel and its Adam optimiser, built from a training config (see act_experiments/training/config.py)."""

    name = "numpy"
    default_dtype = "float64"

    def __init__(self, config):
        D, O, loss, heads = model_sizes(config)
        self.dtype = np.dtype(config["dtype"])
        params = {k: v.astype(self.dtype) for k, v in init_parameters(config).items()}
        self.model = ACTModel(config["cell"], D, config["hidden"], O, loss=loss, heads=heads,
                              tau=config["tau"], epsilon=config["epsilon"],
                              max_ponder=config["max_ponder"], params=params,
                              fixed_ponder=config.get("fixed_ponder"),
                              scheduled=config.get("random_ponder") is not None)
        self.optimizer = Adam(self.model.params, lr=config["lr"])

    def train_step(self, x, y, mask, schedule=None):
        """One Adam step on the batch; returns loss, wrong (B, T), rho (B, T), N (B, T).
        schedule (B, T): the numbers of updates of a random-schedule run (None for the others)."""
        loss, grads, stats = self.model.loss(x.astype(self.dtype), y, mask, schedule)
        self.optimizer.step(grads)
        return {"loss": loss, "wrong": stats["wrong"], "rho": stats["rho"], "N": stats["N"]}

    def evaluate(self, x, y, mask, schedule=None):
        """The same statistics as train_step, forward only, parameters untouched."""
        loss, stats = self.model.evaluate(x.astype(self.dtype), y, mask, schedule)
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


# PyTorch and the pieces built on it, imported by _import_torch() when the first TorchBackend is made
torch = torch_act = act_loss = loss_inputs = statistics = ACT = None


def _import_torch():
    global torch, torch_act, act_loss, loss_inputs, statistics, ACT
    if torch is None:
        import torch as _torch
        from act_engine import torch_act as _torch_act
        from act_torch import losses
        from act_torch.module import ACT as _ACT
        torch_act, act_loss, loss_inputs, statistics, ACT = (_torch_act, losses.act_loss, losses.loss_inputs,
                                                             losses.statistics, _ACT)
        torch = _torch


def _torch_dtypes():
    _import_torch()
    return {"float32": torch.float32, "float64": torch.float64}


class TorchBackend:
    """An ACT module and torch.optim.Adam, built from a training config (see act_experiments/training/config.py)."""

    name = "torch"
    default_dtype = "float32"
    extra_defaults = {"device": "auto"}
    extra_arguments = (("--device", str, "auto (the CPU: faster than eager CUDA for one network), cpu, cuda, "
                                         "cuda:1, ..."),)
    extra_resumable = ("device",)    # a run may continue on another device (not bit-exactly)

    @staticmethod
    def check_config(config):
        """Refuse a device this machine cannot run on, or the random-schedule control, which
        trains with the NumPy backend, before anything is written (ValueError)."""
        if config.get("random_ponder") is not None:
            raise ValueError("random_ponder: the random-schedule control trains with --backend numpy")
        _import_torch()
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
        _import_torch()
        D, O, self.loss_kind, self.heads = model_sizes(config)
        device = config["device"]
        if device == "auto":
            # one network: eager CUDA launches a tiny kernel per operation and is slower than
            # the CPU; populations take the GPU instead (act_engine)
            device = "cpu"
        self.device, self.dtype = torch.device(device), _torch_dtypes()[config["dtype"]]
        self.tau = config["tau"]
        self.fixed_ponder = config.get("fixed_ponder")     # None: ACT; F: the fixed-computation control
        self.model = ACT.from_numpy(init_parameters(config), config["cell"], epsilon=config["epsilon"],
                                    max_ponder=config["max_ponder"], dtype=self.dtype, device=self.device)
        self.params = self.model.params()      # name -> nn.Parameter, the paper's names
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config["lr"])

    def _forward(self, x, y, mask):
        """Loss (a 0-d tensor with gradient, eq. 12) and the statistics of the batch, as NumPy arrays."""
        as_t = dict(dtype=self.dtype, device=self.device)
        target, live, in_sequence = loss_inputs(y, mask, self.loss_kind, self.heads, **as_t)
        # the engine's loop: act_torch.act.act_forward's numbers (tests/test_engine_torch.py), faster
        x = torch.as_tensor(x, **as_t)
        if self.fixed_ponder is not None:
            y_hat, N, R = torch_act.fixed_forward(x, self.params, cell=self.model.cell, fixed_ponder=self.fixed_ponder)
        else:
            y_hat, N, R = torch_act.act_forward(x, self.params, cell=self.model.cell,
                                                epsilon=self.model.epsilon, max_ponder=self.model.max_ponder)
        loss, wrong, rho = act_loss(y_hat, N, R, target, live, in_sequence, kind=self.loss_kind, heads=self.heads,
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
                # gradient; with --fixed-ponder nothing reads them) still takes its Adam step with
                # a zero gradient, as in NumPy
                p.grad = torch.zeros_like(p)
        self.optimizer.step()
        return {"loss": loss.item(), **stats}

    def evaluate(self, x, y, mask):
        """The same statistics as train_step, without a gradient or an update."""
        with torch.no_grad():
            loss, stats = self._forward(x, y, mask)
        return {"loss": loss.item(), **stats}

    def state_dict(self):
        """Parameters and Adam state as a flat dict of NumPy arrays (act_engine.members' layout)."""
        params, m, v, steps = {}, {}, {}, set()
        for k, p in self.params.items():
            s = self.optimizer.state.get(p, {})
            params[k] = p.detach().cpu().numpy()
            m[k] = s["exp_avg"].cpu().numpy() if s else np.zeros(p.shape, params[k].dtype)
            v[k] = s["exp_avg_sq"].cpu().numpy() if s else np.zeros(p.shape, params[k].dtype)
            steps.add(int(s["step"]) if s else 0)
        assert len(steps) == 1, "every parameter should have taken the same number of Adam steps"
        return pack_state(params, m, v, steps.pop())

    def load_state_dict(self, state):
        params, m, v, t = unpack_state(state, self.params)
        as_t = dict(dtype=self.dtype, device=self.device)
        with torch.no_grad():
            for k, p in self.params.items():
                p.copy_(torch.as_tensor(params[k], **as_t))
                self.optimizer.state.pop(p, None)
                if t > 0:
                    # torch's Adam keeps the step count as a float tensor on the CPU; it is read
                    # with .item(), so any float dtype holding the integer exactly gives the same step
                    self.optimizer.state[p] = {
                        "step": torch.tensor(float(t), dtype=torch.float32),
                        "exp_avg": torch.as_tensor(m[k], **as_t).clone(),
                        "exp_avg_sq": torch.as_tensor(v[k], **as_t).clone()}

    def params_numpy(self):
        """The current parameters as float64 NumPy arrays (for comparing backends)."""
        return {k: p.detach().cpu().numpy().astype(np.float64) for k, p in self.params.items()}


BACKENDS = {"numpy": NumpyBackend, "torch": TorchBackend}


def load_backend(folder, device="cpu"):
    """The TorchBackend of a finished run (its folder), with its final parameters, and the run's config."""
    state, meta = load_checkpoint(Path(folder) / "checkpoint.npz")
    config = dict(meta["config"], device=device)
    backend = TorchBackend(config)
    backend.load_state_dict(state)
    return backend, config
