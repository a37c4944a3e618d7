"""Train ACT with the NumPy reference: ``python -m act_numpy.train --help``.

The loop, options, logs and checkpoints live in ``act_experiments/training.py``, shared with the PyTorch
backend (``python -m act_torch.train``, the fast one). This file only says how NumPy holds the
model and takes a step: ACTModel.loss (forward, hand-written backward) and Adam.

    python -m act_numpy.train --task parity --bits 8 --hidden 32 --lr 1e-3 --iterations 2000
"""

import numpy as np

from act_experiments import training
from .model import ACTModel
from .optim import Adam


class NumpyBackend:
    """An ACTModel and its Adam optimiser, built from a training config (see act_experiments/training.py)."""

    name = "numpy"
    default_dtype = "float64"

    def __init__(self, config):
        D, O, loss, heads = training.model_sizes(config)
        self.dtype = np.dtype(config["dtype"])
        params = {k: v.astype(self.dtype) for k, v in training.init_parameters(config).items()}
        self.model = ACTModel(config["cell"], D, config["hidden"], O, loss=loss, heads=heads,
                              tau=config["tau"], epsilon=config["epsilon"],
                              max_ponder=config["max_ponder"], params=params)
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
        return adam_checkpoint(self.optimizer)

    def load_state_dict(self, state):
        load_adam_checkpoint(self.optimizer, state)

    def params_numpy(self):
        """The current parameters as float64 NumPy arrays (for comparing backends)."""
        return {k: v.astype(np.float64) for k, v in self.model.params.items()}


def adam_checkpoint(optimizer):
    """One network's parameters and Adam state as checkpoints store them: "param/<name>",
    "adam_m/<name>", "adam_v/<name>" (copies) and "adam_t" (a 0-d array)."""
    opt = optimizer.state_dict()
    state = {"adam_t": np.array(opt["t"])}
    for k, v in optimizer.params.items():
        state[f"param/{k}"] = v.copy()
        state[f"adam_m/{k}"], state[f"adam_v/{k}"] = opt["m"][k], opt["v"][k]
    return state


def load_adam_checkpoint(optimizer, state):
    """Set the optimiser's parameters and Adam state from a dict in adam_checkpoint's layout."""
    for k, v in optimizer.params.items():
        v[...] = state[f"param/{k}"]           # in place: the model holds these same arrays
    optimizer.load_state_dict({
        "t": int(state["adam_t"]),
        "m": {k: state[f"adam_m/{k}"] for k in optimizer.params},
        "v": {k: state[f"adam_v/{k}"] for k in optimizer.params}})


def main(argv=None):
    return training.main(NumpyBackend, argv)


if __name__ == "__main__":
    main()
