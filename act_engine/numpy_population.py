"""A population: K ACT networks of one shape trained as one program, their parameters stacked.

    pop = Population([config_0, config_1, ...])      # training configs (act_experiments.training)
    stats = pop.train_step(x, y, mask)               # x (K, B, T, D): one batch per member

The NumPy twin of ``act_torch.population``, with the same interface, so the training loop can
drive either. Every parameter carries a leading axis of K members (W_s (K, H, G)), and the
forward and the hand-derived backward are act.py's own ``forward_pass`` and ``backward_pass``:
NumPy's ``@`` multiplies the K members' matrices in one call, so K small products cost about
as many Python steps as one. Nothing in the ACT computation is written twice.

Each member keeps what makes it its own run: its seed (initial parameters, through
``training.init_parameters``), time penalty tau, halting threshold epsilon, cap M (a no-ACT
baseline is the member with M = 1), halting bias and learning rate. What the members share is
the shape of the computation: task and task options, cell, hidden size, batch size and dtype.
Halting, masks and ponder cost are per member and per sequence; the ponder loop goes on while
any row of any member is still running, and the steps a row takes after it halted get weight
p = 0, as for the rows of one batch in ``act.forward_pass``.

Each member steps with its own ``optim.Adam`` over views of the stacked arrays: its learning
rate and step count are its own (members may resume from checkpoints of different ages), and
its update is the single run's, operation for operation. In float64 member k follows the same
run trained alone by ``train.NumpyBackend`` to rounding (tests/test_numpy_population.py).
"""

import numpy as np

from act_experiments import training

from .act import backward_pass, forward_pass, real_array
from .model import objective
from .optim import Adam
from .params import PARAM_NAMES
from .train import adam_checkpoint, load_adam_checkpoint

# what the members must share: the shape of the computation
SHARED = ("task", "task_options", "cell", "hidden", "batch_size", "dtype")


def check_members(configs, shared):
    """The members' configs as a list, once they agree on every key in ``shared``.

    ValueError for an empty list, or naming the first key on which two members differ.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("configs must hold at least one member's config")
    for key in shared:
        missing = [i for i, c in enumerate(configs) if key not in c]
        if missing:
            raise ValueError(f"the config of member {missing[0]} has no {key!r}: members need full "
                             "training configs of one backend")
        values = {repr(c[key]) for c in configs}
        if len(values) > 1:
            raise ValueError(f"the members of a population must share {key!r}; got {sorted(values)}")
    return configs


def check_member(k, K):
    """k as an int once it is a member's index in [0, K); ValueError naming k otherwise."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < K:
        raise ValueError(f"k must be a member's index in [0, {K}), got {k!r}")
    return int(k)


class Population:
    """K networks and their Adam states on stacked arrays, built from K training configs.

    configs: full configs (``training.make_config``) that agree on SHARED. params[name] is
    (K, *shape of the single network's parameter), e.g. W_s (K, H, G).
    """

    name = "numpy"

    def __init__(self, configs):
        configs = check_members(configs, SHARED)
        first = configs[0]
        self.K = len(configs)
        self.cell = first["cell"]
        self.D, _, self.loss_kind, self.heads = training.model_sizes(first)
        self.dtype = np.dtype(first["dtype"])
        inits = [training.init_parameters(c) for c in configs]     # float64, as NumpyBackend
        self.params = {k: np.stack([p[k] for p in inits]).astype(self.dtype) for k in PARAM_NAMES}
        # per member, shaped to broadcast against the rows (K, B) and the steps (K, B, T)
        self.epsilon = np.array([c["epsilon"] for c in configs]).reshape(self.K, 1)
        self.max_ponder = np.array([c["max_ponder"] for c in configs]).reshape(self.K, 1)
        self.tau = np.array([c["tau"] for c in configs]).reshape(self.K, 1, 1)
        # member k's Adam holds views of row k of the stacked arrays and updates them in place
        self.optimizers = [Adam({name: p[k] for name, p in self.params.items()}, lr=c["lr"])
                           for k, c in enumerate(configs)]

    def _step(self, x, y, mask, backward):
        """Forward (and with ``backward`` the gradients) of every member.

        Returns the K members' stats dicts and the gradients, stacked as params (None without
        ``backward``).
        """
        x = real_array("x", x, self.dtype)
        mask = np.asarray(mask)
        if x.ndim != 4 or x.shape[0] != self.K or x.shape[3] != self.D or mask.shape != x.shape[:3]:
            raise ValueError(f"x must be (K={self.K}, B, T, D={self.D}) with mask (K, B, T); "
                             f"got x {x.shape}, mask {mask.shape}")
        for name, p in self.params.items():
            real_array(f"params[{name!r}]", p)      # NaN or inf: the loop reports divergence
        y_hat, N, R, cache = forward_pass(x, self.params, self.cell, self.epsilon, self.max_ponder)
        total, dy, dponder, stats = objective(y_hat, N, R, y, mask, loss=self.loss_kind,
                                              heads=self.heads, tau=self.tau)
        grads = backward_pass(dy, dponder, cache) if backward else None
        members = [{"loss": float(total[k]), "wrong": stats["wrong"][k], "rho": stats["rho"][k], "N": N[k]}
                   for k in range(self.K)]
        return members, grads

    def train_step(self, x, y, mask):
        """One Adam step of every member on its own batch: x (K, B, T, D), y, mask (K, B, T).

        Returns K stats dicts, each as NumpyBackend.train_step's: loss, wrong, rho, N.
        """
        members, grads = self._step(x, y, mask, backward=True)
        for k, optimizer in enumerate(self.optimizers):
            optimizer.step({name: grads[name][k] for name in PARAM_NAMES})
        return members

    def evaluate(self, x, y, mask):
        """The same statistics as train_step, without a gradient or an update."""
        return self._step(x, y, mask, backward=False)[0]

    def _check_member(self, k):
        return check_member(k, self.K)

    def member_params(self, k):
        """Member k's parameters as float64 arrays (the single network's shapes)."""
        k = self._check_member(k)
        return {name: p[k].astype(np.float64) for name, p in self.params.items()}

    def member_state(self, k):
        """Member k's parameters and Adam state in the layout of NumpyBackend.state_dict(), so a
        member's checkpoint resumes as a single run and a single run's as a member."""
        return adam_checkpoint(self.optimizers[self._check_member(k)])

    def load_member_state(self, k, state):
        """Set member k from a state dict of NumpyBackend.state_dict()'s layout."""
        load_adam_checkpoint(self.optimizers[self._check_member(k)], state)
