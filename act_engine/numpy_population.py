"""A population: K ACT networks of one shape trained as one program, their parameters stacked.

    pop = Population(configs, inits, loss="sigmoid", heads=1)   # K members
    stats = pop.train_step(x, y, mask)               # x (K, B, T, D): one batch per member

The NumPy twin of ``act_engine.torch_population``, with the same interface, so the training loop
can drive either. Every parameter carries a leading axis of K members (W_s (K, H, G)), and the
forward and the hand-derived backward are ``act_engine.numpy_act``'s, the core's equations with
that axis: NumPy's ``@`` multiplies the K members' matrices in one call, so K small products cost
about as many Python steps as one.

Each member keeps what makes it its own run: its initial parameters (from its seed), time penalty tau, halting threshold epsilon, cap M (a no-ACT
baseline is the member with M = 1), halting bias and learning rate, and whether it halts at all
(a fixed-computation control, ``fixed_ponder`` F, is the member with M = F and h = 0; a
random-schedule control, ``random_ponder``, the member with h = 0 whose cap at each row and input
step is the N drawn for it, given to every step as ``schedule``). What the members share is
the shape of the computation: task and task options, cell, hidden size, batch size and dtype.
Halting, masks and ponder cost are per member and per sequence; the ponder loop goes on while
any row of any member is still running, and the steps a row takes after it halted get weight
p = 0, as for the rows of one batch in ``act_numpy.act``.

Each member steps with its own ``optim.Adam`` over views of the stacked arrays: its learning
rate and step count are its own (members may resume from checkpoints of different ages), and
its update is the single run's, operation for operation. In float64 member k follows the same
run trained alone (``act_numpy.model.ACTModel`` and ``optim.Adam``) to rounding
(tests/test_numpy_population.py).
"""

import numpy as np

from act_numpy.model import objective
from act_numpy.optim import Adam
from act_numpy.params import PARAM_NAMES, real_array

from .members import SHARED, check_member, check_members, halting_mask, pack_state, random_members, unpack_state
from .numpy_act import backward_pass, forward_pass


class Population:
    """K networks and their Adam states on stacked arrays.

    configs: K training configs that agree on SHARED; each gives its member's epsilon,
    max_ponder (the cap M), tau and lr. inits: K dicts of initial parameters (float64, the
    single network's shapes). loss, heads: the read-out's loss ("sigmoid" or "softmax") and its
    number of softmax groups. params[name] is (K, *shape of the single network's parameter),
    e.g. W_s (K, H, G).
    """

    name = "numpy"

    def __init__(self, configs, inits, *, loss, heads):
        configs = check_members(configs, SHARED)
        first = configs[0]
        self.K = len(configs)
        self.cell = first["cell"]
        self.loss_kind, self.heads = loss, heads
        self.D = inits[0]["W_x"].shape[0] - 1                      # W_x (D + 1, G): the flag's row last
        self.dtype = np.dtype(first["dtype"])
        self.params = {k: np.stack([p[k] for p in inits]).astype(self.dtype) for k in PARAM_NAMES}
        # per member, shaped to broadcast against the rows (K, B) and the steps (K, B, T)
        self.epsilon = np.array([c["epsilon"] for c in configs]).reshape(self.K, 1)
        self.max_ponder = np.array([c["max_ponder"] for c in configs]).reshape(self.K, 1)
        self.tau = np.array([c["tau"] for c in configs]).reshape(self.K, 1, 1)
        self.halting = halting_mask(configs, (self.K, 1), self.dtype)
        self.scheduled = random_members(configs, (self.K, 1, 1))
        # member k's Adam holds views of row k of the stacked arrays and updates them in place
        self.optimizers = [Adam({name: p[k] for name, p in self.params.items()}, lr=c["lr"])
                           for k, c in enumerate(configs)]

    def _caps(self, schedule, shape):
        """Each member's cap per row and input step (K, B, T): its cap M, or for a random-schedule
        member the numbers of updates in ``schedule`` (K, B, T); None when no member is one."""
        if self.scheduled is None:
            return None
        if schedule is None or np.shape(schedule) != shape:
            raise ValueError(f"schedule must be (K, B, T) = {shape}: the population has random-schedule members")
        schedule = np.asarray(schedule)
        if np.where(self.scheduled, schedule, 1).min() < 1:
            raise ValueError("schedule must hold numbers of updates >= 1 for the random-schedule members")
        return np.where(self.scheduled, schedule, self.max_ponder[:, :, None])

    def _step(self, x, y, mask, schedule, backward):
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
        y_hat, N, R, cache = forward_pass(x, self.params, self.cell, self.epsilon, self.max_ponder, keep=backward,
                                        halting=self.halting, caps=self._caps(schedule, mask.shape))
        total, dy, dponder, stats = objective(y_hat, N, R, y, mask, loss=self.loss_kind,
                                              heads=self.heads, tau=self.tau)
        grads = backward_pass(dy, dponder, cache) if backward else None
        members = [{"loss": float(total[k]), "wrong": stats["wrong"][k], "rho": stats["rho"][k], "N": N[k]}
                   for k in range(self.K)]
        return members, grads

    def train_step(self, x, y, mask, schedule=None):
        """One Adam step of every member on its own batch: x (K, B, T, D), y, mask (K, B, T);
        schedule (K, B, T), read for the random-schedule members only.

        Returns K stats dicts, each as NumpyBackend.train_step's: loss, wrong, rho, N.
        """
        members, grads = self._step(x, y, mask, schedule, backward=True)
        for k, optimizer in enumerate(self.optimizers):
            optimizer.step({name: grads[name][k] for name in PARAM_NAMES})
        return members

    def evaluate(self, x, y, mask, schedule=None):
        """The same statistics as train_step, without a gradient or an update."""
        return self._step(x, y, mask, schedule, backward=False)[0]

    def _check_member(self, k):
        return check_member(k, self.K)

    def member_params(self, k):
        """Member k's parameters as float64 arrays (the single network's shapes)."""
        k = self._check_member(k)
        return {name: p[k].astype(np.float64) for name, p in self.params.items()}

    def member_state(self, k):
        """Member k's parameters and Adam state in the checkpoint layout (members.pack_state), so
        a member's checkpoint resumes as a single run and a single run's as a member."""
        opt = self.optimizers[self._check_member(k)]
        return pack_state(opt.params, opt.m, opt.v, opt.t)

    def load_member_state(self, k, state):
        """Set member k from a state dict in the checkpoint layout."""
        opt = self.optimizers[self._check_member(k)]
        params, m, v, t = unpack_state(state, PARAM_NAMES)
        for name, p in opt.params.items():
            p[...] = params[name]               # in place: views of the stacked arrays
        opt.load_state_dict({"t": t, "m": m, "v": v})
