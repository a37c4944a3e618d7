"""Adam (Kingma & Ba 2015), the optimiser the paper trains every network with."""

import numpy as np

from .checks import check_float


class Adam:
    """Adam over a dict of NumPy arrays, updated in place.

        opt = Adam(params, lr=1e-4)
        opt.step(grads)          # grads: dict with (at least) the keys of params

    ``state_dict()`` / ``load_state_dict()`` save and restore the moments and step count so a
    resumed run continues exactly.
    """

    def __init__(self, params, lr=1e-4, beta1=0.9, beta2=0.999, eps=1e-8):
        lr = check_float("lr", lr, 0.0, low_open=True)
        self.params, self.lr, self.beta1, self.beta2, self.eps = params, lr, beta1, beta2, eps
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, grads):
        self.t += 1
        # bias corrections for moments that start at zero (the textbook form, as torch.optim.Adam)
        bc1, bc2 = 1.0 - self.beta1 ** self.t, 1.0 - self.beta2 ** self.t
        for k, p in self.params.items():
            g = grads[k]
            self.m[k] *= self.beta1
            self.m[k] += (1.0 - self.beta1) * g
            self.v[k] *= self.beta2
            self.v[k] += (1.0 - self.beta2) * g * g
            p -= (self.lr / bc1) * self.m[k] / (np.sqrt(self.v[k] / bc2) + self.eps)

    def state_dict(self):
        return {"t": self.t, "m": {k: v.copy() for k, v in self.m.items()},
                "v": {k: v.copy() for k, v in self.v.items()}}

    def load_state_dict(self, state):
        self.t = int(state["t"])
        for k in self.params:
            self.m[k][...] = state["m"][k]
            self.v[k][...] = state["v"][k]
