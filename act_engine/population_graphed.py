"""A population's training step replayed as CUDA graphs: the fast path for K networks on a GPU.

    step = PopulationGraphStep(population)          # a Population on a CUDA device
    stats = step(x, y, mask)                        # what population.train_step(x, y, mask) gives

``Population(configs, graphed=None)`` keeps one as ``population.graph_step`` when it is on a
CUDA device (``graph_step_for``).

Eager, one step of a population is thousands of small kernels and a host sync after every ponder
step. Here the step is two CUDA graphs (act_engine.graphed):

1. forward with a fixed budget of ponder steps (``Population.forward(x, ponder_steps)``, no host
   sync), the loss of eq. (12) (act_torch.losses) and the gradients, written into buffers that
   this object keeps;
2. the per-member Adam update (act_engine.adam, the update of ``population.adam.step``) from
   those buffers, its per-member factors copied in before every replay.

Between them one host sync reads ``complete``. When some member's row needed more ponder steps
than the budget, the step is redone eagerly and exactly (``Population.forward(x)``), its
gradients go into the same buffers and graph 2 applies them, and graph 1 is captured again with
room for the longest N seen. The first step always runs this way, and sets the first budget.
The population's parameters and Adam moments are read and written where they are, so they must
only ever be changed in place (as ``Population.load_member_state`` does).
"""

import numpy as np
import torch

from . import adam
from .graphed import BudgetedGraph, CapturedGraph
from act_torch.losses import act_loss, loss_inputs, statistics


def graph_step_for(population, graphed=None):
    """The PopulationGraphStep for ``Population(configs, graphed)``, or None for eager steps.

    graphed: None for CUDA graphs exactly when the population is on a CUDA device; True to
    insist (ValueError elsewhere); False for eager steps.
    """
    if graphed is not None and not isinstance(graphed, bool):
        raise ValueError(f"graphed must be None, True or False, got {graphed!r}")
    on_cuda = population.device.type == "cuda"
    if graphed and not on_cuda:
        raise ValueError(f"graphed=True needs a population on a CUDA device, not {population.device}")
    if graphed is None:
        graphed = on_cuda
    return PopulationGraphStep(population) if graphed else None


class PopulationGraphStep:
    """population.train_step, with its work done by two CUDA graphs (see the module docstring).

    slack: ponder steps of room above the longest N seen; warmup: calls before recording;
    capture: graphed.CapturedGraph, or graphed.Rerun to run the same control flow on the CPU;
    shrink_after: steps after which the budget shrinks to the rows' recent needs (graphed.BudgetedGraph).
    forward_graph (a graphed.BudgetedGraph, made at the first step) counts its captures and
    fallbacks and holds the current budget, ponder_steps.
    """

    def __init__(self, population, *, slack=2, warmup=3, capture=CapturedGraph, shrink_after=200):
        if capture is CapturedGraph and population.device.type != "cuda":
            raise ValueError(f"CUDA graphs need a population on a CUDA device, not {population.device}")
        self.pop = population
        self.slack, self.warmup, self.capture, self.shrink_after = slack, warmup, capture, shrink_after
        self.cap = int(population.max_ponder.max())           # read once, never while recording
        as_t = dict(dtype=population.dtype, device=population.device)
        # the gradients that graph 1 (or the exact step) writes and graph 2 reads
        self.grads = {name: torch.zeros_like(p) for name, p in population.params.items()}
        # Adam's per-member factors for the coming update, copied in before graph 2 replays
        self.step_size, self.root = torch.zeros(population.K, **as_t), torch.zeros(population.K, **as_t)
        self.adam_graph = self.forward_graph = None
        self.shapes = None

    def _load(self, x, y, mask):
        """Copy the batch into the tensors the graphs read. A batch of another shape gets tensors
        of its own and a forward graph made afresh at its first step."""
        pop = self.pop
        x, mask = np.asarray(x), np.asarray(mask)
        if x.ndim != 4 or x.shape[0] != pop.K or mask.shape != x.shape[:3]:
            raise ValueError(f"x must be (K={pop.K}, B, T, D) with mask (K, B, T); got x {x.shape}, mask {mask.shape}")
        as_t = dict(dtype=pop.dtype, device=pop.device)
        batch = (torch.as_tensor(x, **as_t),) + loss_inputs(y, mask, pop.loss_kind, pop.heads, **as_t)
        shapes = [b.shape for b in batch]
        if shapes == self.shapes:
            for static, new in zip((self.x, self.target, self.live, self.in_sequence), batch):
                static.copy_(new)
            return
        self.shapes = shapes
        self.x, self.target, self.live, self.in_sequence = batch
        self.forward_graph = BudgetedGraph(self._forward_backward, self.cap, slack=self.slack,
                                           warmup=self.warmup, capture=self.capture,
                                           shrink_after=self.shrink_after)

    def _loss_and_gradients(self, y_hat, N, R):
        """The loss of eq. (12) per member and its gradients, written into self.grads."""
        pop = self.pop
        loss, wrong, rho = act_loss(y_hat, N, R, self.target, self.live, self.in_sequence, kind=pop.loss_kind,
                                    heads=pop.heads, tau=pop.tau)
        names = list(pop.params)
        # the members share no parameter: the gradient of the sum is each member's own
        grads = torch.autograd.grad(loss.sum(), [pop.params[name] for name in names], allow_unused=True)
        for name, g in zip(names, grads):
            if g is None:                  # a parameter outside the graph takes a zero gradient, as in MemberAdam.step
                self.grads[name].zero_()
            else:
                self.grads[name].copy_(g)
        return loss.detach(), wrong, rho.detach(), N

    def _exact_step(self):
        """The step without a budget, eagerly; its gradients go into self.grads.

        A method of its own, so that its autograd graph is freed when it returns. Kept alive
        until the next recording, that graph would keep the parameters' gradient accumulators
        tied to the default stream, and recording on the side stream would then fail
        (cudaErrorStreamCaptureImplicit)."""
        y_hat, N, R = self.pop.forward(self.x)
        return self._loss_and_gradients(y_hat, N, R)

    def _forward_backward(self, ponder_steps):
        """Graph 1: the fixed-budget forward, the loss and the gradients; complete last."""
        y_hat, N, R, complete = self.pop.forward(self.x, ponder_steps)
        return self._loss_and_gradients(y_hat, N, R) + (complete,)

    def _update(self):
        """Graph 2: every member's Adam update from self.grads and the factors."""
        opt = self.pop.adam
        adam.update_(opt.params, self.grads, opt.m, opt.v, self.step_size, self.root)

    def _adam(self):
        step_size, root = self.pop.adam.next_factors()
        self.step_size.copy_(torch.from_numpy(step_size))
        self.root.copy_(torch.from_numpy(root))
        if self.adam_graph is None:
            # the first update runs eagerly, which also loads its kernels before they are recorded;
            # recording alone changes nothing, so it needs no warm-up calls
            self._update()
            self.adam_graph = self.capture(self._update, warmup=0)
        else:
            self.adam_graph.replay()

    def __call__(self, x, y, mask):
        """One Adam step of every member on its own batch: x (K, B, T, D), y, mask (K, B, T).
        Returns K stats dicts, as Population.train_step: loss, wrong, rho, N."""
        self._load(x, y, mask)
        outputs = self.forward_graph.replay()
        if outputs is None:                                # no graph yet, or the budget was too small
            loss, wrong, rho, N = self._exact_step()
        else:
            loss, wrong, rho, N, _ = outputs
        self._adam()
        stats = statistics(wrong, rho, N)
        losses = loss.cpu().tolist()
        if outputs is None:
            self.forward_graph.grow(N)         # after the update has read the exact gradients
        else:
            self.forward_graph.observe(N)      # and shrink the budget when the rows need less
        return [{"loss": float(losses[k]), **{name: value[k] for name, value in stats.items()}}
                for k in range(self.pop.K)]
