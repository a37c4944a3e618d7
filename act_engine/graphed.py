"""ACT's training step replayed as a CUDA graph: the fast path on a GPU.

    step = CUDAGraphTrainStep(model, optimizer, loss_fn, x, target, ponder_steps=5)
    for x, target in batches:                 # tensors of the same shapes, on the GPU
        loss, N, R = step(x, target)          # forward, loss, backward, optimizer step

On a GPU, ACT's ponder loop is hundreds of tiny kernels; eager PyTorch spends its time
launching them, and the "is any row still running?" test after every ponder step makes the
CPU wait for the GPU each time. A CUDA graph records the kernels once and replays them with one
launch. A graph cannot branch on data, so it runs a fixed budget of ponder steps at every
input step (``act_forward_fixed_steps``): steps taken after a row halted get p = 0 and change
nothing, so the result equals ``act_forward`` whenever every row halts within the budget. One
host sync per training step reads that flag; when some row needed more steps, the step is
redone eagerly with ``act_forward`` (exact, just slower) and the graph is captured again with
room for the longest N seen.

That policy is ``BudgetedGraph``, shared with the population's graphed step
(``act_engine.population_graphed``); ``CapturedGraph`` records a function after warm-up calls, and
``Rerun`` stands in for it where there is no GPU (it replays by calling the function again), so
that the control flow around the graphs can be tested anywhere.

``loss_fn(y, N, R, target)`` returns the scalar loss (task loss plus tau * ponder cost).
Use an optimizer with ``capturable=False`` (it runs eagerly after the check) and do not set
the parameters' ``.grad`` to None between steps: the graph writes the gradients in place.
"""

import torch

from .torch_act import act_forward, act_forward_fixed_steps


class CapturedGraph:
    """fn recorded as a CUDA graph, after ``warmup`` calls on a side stream (lazy initialisations
    must not happen while recording). replay() runs the recorded kernels again; outputs is what
    fn returned while being recorded, overwritten in place by every replay.

    fn must do tensor work only, on tensors that outlive it: its Python side effects happen
    during the warm-up and the recording, never at replay.
    """

    def __init__(self, fn, warmup=3):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.outputs = fn()

    def replay(self):
        self.graph.replay()


class Rerun:
    """A stand-in for CapturedGraph on any device: replay() calls fn again, and outputs is what
    the latest call returned. The same control flow as with a CUDA graph, without the speed."""

    def __init__(self, fn, warmup=3):
        for _ in range(warmup):
            fn()
        self.fn, self.outputs = fn, None

    def replay(self):
        self.outputs = self.fn()


class BudgetedGraph:
    """fn(ponder_steps) captured at a budget of ponder steps and replayed, with room made after a
    step that needed more.

        graph = BudgetedGraph(fn, cap, budget)   # fn(steps) -> tensors, the last a 0-d bool complete
        outputs = graph.replay()                 # fn's outputs, or None: no graph yet, or a row
                                                 #   needed more steps (then run the step exactly)
        graph.grow(N)                            # after the exact step: capture again with room
                                                 #   for the longest N seen, plus slack
        graph.observe(N)                         # after a complete replay: shrink the budget again
                                                 #   when the rows have needed less for a while

    cap: the largest M (no budget beyond it is ever needed); budget: the first budget, or None
    to capture only at the first grow(). capture: CapturedGraph, or Rerun for testing.
    shrink_after: steps over which observe() looks for the longest N before it shrinks the budget
    (None: never shrink). captures and fallbacks count the recordings and the replays that were
    not complete.
    """

    def __init__(self, fn, cap, budget=None, *, slack=2, warmup=3, capture=CapturedGraph, shrink_after=200):
        self.fn, self.cap, self.slack, self.warmup, self.capture = fn, cap, slack, warmup, capture
        self.graph, self.ponder_steps, self.longest = None, None, 0
        self.captures = self.fallbacks = 0
        self.shrink_after, self.recent, self.observed = shrink_after, 0, 0
        if budget is not None:
            self._capture(min(budget, cap))

    def _capture(self, steps):
        self.graph = None                       # the old graph's memory goes before the new one is made
        self.ponder_steps = steps
        self.graph = self.capture(lambda: self.fn(steps), self.warmup)
        self.captures += 1

    def replay(self):
        """Replay at the current budget: fn's outputs, or None when there is no graph yet or some
        row needed more ponder steps than the budget (the one host sync of the step)."""
        if self.graph is None:
            return None
        self.graph.replay()
        outputs = self.graph.outputs
        if bool(outputs[-1]):
            return outputs
        self.fallbacks += 1
        return None

    def grow(self, N):
        """Capture again with room for the longest N seen; N: the halting steps of the exact step."""
        self.longest = max(self.longest, int(N.max()))
        self._capture(min(self.longest + self.slack, self.cap))

    def observe(self, N):
        """Count a complete replay's halting steps N. Every ``shrink_after`` steps, when the longest
        N among them leaves more than ``slack`` steps of the budget unused, capture again at that N
        plus slack: one long row early in training would otherwise set the cost of every later step.
        A smaller budget changes no result (a replay that needs more falls back to the exact step),
        and a capture every shrink_after steps at most keeps its cost small."""
        if self.shrink_after is None:
            return
        self.recent = max(self.recent, int(N.max()))
        self.observed += 1
        if self.observed < self.shrink_after:
            return
        target = min(self.recent + self.slack, self.cap)
        if self.graph is not None and target < self.ponder_steps:
            self.longest = self.recent
            self._capture(target)
        self.recent = self.observed = 0


class CUDAGraphTrainStep:
    """One network's training step (forward, loss, backward) as a CUDA graph; the optimizer steps
    eagerly after the check. x, target: example inputs on the GPU (their shapes are the graph's);
    ponder_steps: the first budget; slack, warmup, capture: see BudgetedGraph (capture=Rerun
    runs the same steps on any device). graph (a BudgetedGraph) counts captures and fallbacks."""

    def __init__(self, model, optimizer, loss_fn, x, target, ponder_steps, *, slack=2, warmup=3,
                 capture=CapturedGraph):
        if capture is CapturedGraph and not x.is_cuda:
            raise ValueError("CUDAGraphTrainStep needs CUDA tensors")
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.x, self.target = x.clone(), target.clone()       # static inputs the graph reads
        self.graph = BudgetedGraph(self._forward_backward, model.max_ponder, ponder_steps,
                                   slack=slack, warmup=warmup, capture=capture)

    def _forward_backward(self, steps):
        # gradients allocated while the graph is recorded live in its memory: every replay
        # rewrites them, and the optimizer reads them there
        for p in self.model.parameters():
            p.grad = None
        m = self.model
        y, N, R, complete = act_forward_fixed_steps(self.x, m.params(), steps, cell=m.cell,
                                                    epsilon=m.epsilon, max_ponder=m.max_ponder)
        loss = self.loss_fn(y, N, R, self.target)
        loss.backward()
        return loss.detach(), N, R.detach(), complete

    def _eager_step(self):
        """The exact step with act_forward, gradients copied into the graph's .grad tensors."""
        m = self.model
        params = list(m.parameters())
        y, N, R = act_forward(self.x, m.params(), cell=m.cell, epsilon=m.epsilon, max_ponder=m.max_ponder)
        loss = self.loss_fn(y, N, R, self.target)
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.grad.copy_(g if g is not None else torch.zeros_like(p))
        return loss.detach(), N, R.detach()

    def __call__(self, x, target):
        """One training step on (x, target). Returns loss, N, R (overwritten by the next call)."""
        self.x.copy_(x)
        self.target.copy_(target)
        outputs = self.graph.replay()
        if outputs is not None:
            loss, N, R, _ = outputs
            self.optimizer.step()
            self.graph.observe(N)
            return loss, N, R
        loss, N, R = self._eager_step()
        self.optimizer.step()
        self.graph.grow(N)                     # after the optimizer has read the exact gradients
        return loss, N, R
