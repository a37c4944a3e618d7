"""A population: K ACT networks of one shape trained as one program, their parameters stacked.

    pop = Population(configs, inits, loss="sigmoid", heads=1)   # K members
    stats = pop.train_step(x, y, mask)               # x (K, B, T, D): one batch per member

Training many small networks one at a time wastes the machine: every operation is a tiny matrix
product, or on a GPU a tiny kernel launch. Stacking the K networks of a sweep on a leading axis
turns K products of (B, H) x (H, G) into one batched product of (K, B, H) x (K, H, G), so the
whole population takes one step for about the price of a few networks.

Each member keeps everything that makes it its own run: its initial parameters (from its seed), time penalty tau, halting threshold epsilon, cap M (a no-ACT
baseline is the member with M = 1), halting bias and learning rate, and whether it halts at all
(a fixed-computation control, ``fixed_ponder`` F, is the member with M = F and h = 0). What the members share is
the shape of the computation: task and task options, cell, hidden size, batch size, dtype and
device. Halting, masks and ponder cost are per member and per sequence, exactly as in a single
run; the ponder loop goes on while any row of any member is still running, and the steps a row
takes after it halted get weight p = 0, as in ``act_torch.act.act_forward``.

Member k trained here follows the same run trained alone (``act_experiments.training.backends.TorchBackend``):
the same forward (eqs 3-13), the same loss (eq. 12, batch means) and torch's Adam, written out
on the stacked tensors so that every member keeps its own learning rate (``adam.MemberAdam``). In float64 the two
agree to rounding (tests/test_population.py).
"""

import numpy as np
import torch

from act_numpy.params import PARAM_NAMES
from act_torch.losses import act_loss, loss_inputs, statistics

from . import adam, members
from .members import check_member, check_members
from .population_graphed import graph_step_for
from .torch_act import ponder_fixed_steps, ponder_until_halted

# what the members must share: the shape of the computation (as in NumPy) and the device
SHARED = members.SHARED + ("device",)
DTYPES = {"float32": torch.float32, "float64": torch.float64}


class Population:
    """K networks and their Adam states (``adam``, a MemberAdam) on stacked tensors.

    configs: K training configs that agree on SHARED; each gives its member's epsilon,
    max_ponder (the cap M), tau and lr. inits: K dicts of initial parameters (float64 NumPy, the
    single network's shapes). loss, heads: the read-out's loss ("sigmoid" or "softmax") and its
    number of softmax groups. params[name] is (K, *shape of the single network's parameter),
    e.g. W_s (K, H, G). graphed: see population_graphed.graph_step_for. kernels: True for the
    ponder loop on the fused Triton kernels (act_engine.kernel_act: the tanh RNN or the LSTM on a
    CUDA device, with Triton installed; kernel_act.unavailable says what rules them out), eager
    and instead of CUDA graphs, which stay the default and the reference; False (the default)
    leaves the population as it was.
    """

    name = "torch"

    def __init__(self, configs, inits, *, loss, heads, graphed=None, kernels=False):
        configs = check_members(configs, SHARED)
        first = configs[0]
        self.K = len(configs)
        self.cell = first["cell"]
        self.loss_kind, self.heads = loss, heads
        device = first.get("device", "cpu")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device, self.dtype = torch.device(device), DTYPES[first["dtype"]]
        as_t = dict(dtype=self.dtype, device=self.device)
        self.params = {k: torch.tensor(np.stack([p[k] for p in inits]), **as_t).requires_grad_()
                       for k in PARAM_NAMES}
        column = (self.K, 1, 1)
        self.tau = torch.tensor([c["tau"] for c in configs], **as_t)
        self.threshold = torch.tensor([1.0 - c["epsilon"] for c in configs], **as_t).view(column)
        self.max_ponder = torch.tensor([c["max_ponder"] for c in configs], device=self.device).view(column)
        if members.random_members(configs, (self.K,)) is not None:
            raise ValueError("configs: the random-schedule control (random_ponder) trains in the NumPy population")
        mask = members.halting_mask(configs, column, np.float64)      # None unless a member is fixed
        self.halting = None if mask is None else torch.tensor(mask, **as_t)
        # torch's Adam, every member with its own learning rate and step count
        self.adam = adam.MemberAdam(self.params, [c["lr"] for c in configs])
        # kernels: the ponder loop on Triton kernels, or graphed: the training step as CUDA graphs
        # (act_engine.population_graphed; None: on CUDA). One or the other.
        self.kernels = self._kernels_allowed(kernels, graphed)
        self.graph_step = None if self.kernels else graph_step_for(self, graphed)

    def _kernels_allowed(self, kernels, graphed):
        """Check the kernels option (see the class); ValueError naming what rules it out."""
        if not isinstance(kernels, bool):
            raise ValueError(f"kernels must be True or False, got {kernels!r}")
        if not kernels:
            return False
        if graphed:
            raise ValueError("kernels=True replaces CUDA graphs: pass graphed=None or False with it")
        from . import kernel_act
        why = kernel_act.unavailable(self.device, self.params["W_s"].shape[-2])
        if why:
            raise ValueError(f"kernels=True: {why}")
        return True

    # -----------------------------------------------------------------------------------------
    # Forward
    # -----------------------------------------------------------------------------------------

    def forward(self, x, ponder_steps=None):
        """Every member's act_forward (eqs 3-13) at once, each with its own threshold and cap M.

        x (K, B, T, D) tensor: member k's batch in x[k]. Returns y (K, B, T, O), N (K, B, T) int64
        and R (K, B, T). The ponder loop goes on while any row of any member is still running;
        the steps a row takes after it halted get p = 0, as in act_forward.

        ponder_steps: None to ponder until every row has halted (one host sync per ponder step);
        an int to run exactly that many ponder steps at every input step with no host sync (for
        CUDA graphs), which adds a fourth result, complete: a 0-d bool tensor, True when every row
        of every member halted within the budget, and only then are y, N, R (and their gradients)
        those of ponder_steps=None.
        """
        if ponder_steps is None:
            longest = int(self.max_ponder.max())
            if self.kernels:                 # the same loop on the Triton kernels (act_engine.kernel_act)
                from .kernel_act import ponder_until_halted as on_kernels
                return on_kernels(x, self.params, self.cell, self.threshold, self.max_ponder, longest,
                                  halting=self.halting)
            return ponder_until_halted(x, self.params, self.cell, self.threshold, self.max_ponder, longest,
                                       halting=self.halting)
        return ponder_fixed_steps(x, self.params, self.cell, self.threshold, self.max_ponder, ponder_steps,
                                  halting=self.halting)

    # -----------------------------------------------------------------------------------------
    # Loss, step, evaluation
    # -----------------------------------------------------------------------------------------

    def _forward(self, x, y, mask):
        """Per-member losses (K,) with gradient (eq. 12), and per-member statistics as NumPy arrays."""
        x, mask = np.asarray(x), np.asarray(mask)
        D = self.params["W_x"].shape[1] - 1                  # W_x (K, D + 1, G): the flag's row last
        if x.ndim != 4 or x.shape[0] != self.K or x.shape[3] != D or mask.shape != x.shape[:3]:
            raise ValueError(f"x must be (K={self.K}, B, T, D={D}) with mask (K, B, T); got x {x.shape}, "
                             f"mask {mask.shape}")
        as_t = dict(dtype=self.dtype, device=self.device)
        target, live, in_sequence = loss_inputs(y, mask, self.loss_kind, self.heads, **as_t)
        y_hat, N, R = self.forward(torch.as_tensor(x, **as_t))
        loss, wrong, rho = act_loss(y_hat, N, R, target, live, in_sequence, kind=self.loss_kind, heads=self.heads,
                                    tau=self.tau)
        stats = statistics(wrong, rho, N)
        return loss, [{name: value[k] for name, value in stats.items()} for k in range(self.K)]

    def train_step(self, x, y, mask):
        """One Adam step of every member on its own batch: x (K, B, T, D), y, mask (K, B, T).

        Returns K stats dicts, each as TorchBackend.train_step's: loss, wrong, rho, N.
        """
        if self.graph_step is not None:        # on CUDA: forward, loss, backward and Adam replayed as graphs
            return self.graph_step(x, y, mask)
        for p in self.params.values():
            p.grad = None
        loss, stats = self._forward(x, y, mask)
        loss.sum().backward()            # the members share no parameter: each gets its own gradient
        self.adam.step({k: p.grad for k, p in self.params.items()})
        return [{"loss": float(v), **s} for v, s in zip(loss.detach().cpu().tolist(), stats)]

    @torch.no_grad()
    def evaluate(self, x, y, mask):
        """The same statistics as train_step, without a gradient or an update."""
        loss, stats = self._forward(x, y, mask)
        return [{"loss": float(v), **s} for v, s in zip(loss.cpu().tolist(), stats)]

    def member_params(self, k):
        """Member k's parameters as float64 NumPy arrays (the single network's shapes)."""
        k = check_member(k, self.K)
        return {name: p[k].detach().cpu().numpy().astype(np.float64) for name, p in self.params.items()}

    def member_state(self, k):
        """Member k's parameters and Adam state in the checkpoint layout (members.pack_state), so
        a member's checkpoint resumes as a single run and a single run's as a member."""
        return self.adam.member_state(k)

    def load_member_state(self, k, state):
        """Set member k from a state dict in the checkpoint layout."""
        self.adam.load_member_state(k, state)
