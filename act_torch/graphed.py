"""One ACT training step replayed as a CUDA graph: the fast path on a GPU.

    step = CUDAGraphTrainStep(model, optimizer, loss_fn, x, target, ponder_steps=5)
    for x, target in batches:                 # tensors of the same shapes, on the GPU
        loss, N, R = step(x, target)          # forward, loss, backward, optimizer step

On a GPU, ACT's ponder loop is hundreds of tiny kernels; eager PyTorch spends its time
launching them, and the "is any row still running?" test after every ponder step makes the
CPU wait for the GPU each time. A CUDA graph records the kernels once and replays them with one
launch. A graph cannot branch on data, so it runs a fixed number K of ponder steps at every
input step (``act_forward_fixed_steps``): steps taken after a row halted get p = 0 and change
nothing, so the result equals ``act_forward`` whenever every row halts within K steps. One
host sync per training step reads that flag; when some row needed more steps, the step is
redone eagerly with ``act_forward`` (exact, just slower) and the graph is captured again with
room for the longest N seen.

``loss_fn(y, N, R, target)`` returns the scalar loss (task loss plus tau * ponder cost).
Use an optimizer with ``capturable=False`` (it runs eagerly after the check) and do not set
the parameters' ``.grad`` to None between steps: the graph writes the gradients in place.
"""

import torch

from .act import act_forward, act_forward_fixed_steps


class CUDAGraphTrainStep:
    def __init__(self, model, optimizer, loss_fn, x, target, ponder_steps, *, slack=2, warmup=3):
        if not x.is_cuda:
            raise ValueError("CUDAGraphTrainStep needs CUDA tensors")
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.slack, self.warmup = slack, warmup
        self.x, self.target = x.clone(), target.clone()       # static inputs the graph reads
        self.captures = self.fallbacks = 0
        self._capture(min(ponder_steps, model.max_ponder))

    def _forward_backward(self, steps):
        m = self.model
        y, N, R, complete = act_forward_fixed_steps(self.x, m.params(), steps, cell=m.cell,
                                                    epsilon=m.epsilon, max_ponder=m.max_ponder)
        loss = self.loss_fn(y, N, R, self.target)
        loss.backward()
        return loss.detach(), N, R.detach(), complete

    def _capture(self, steps):
        self.ponder_steps = steps
        params = list(self.model.parameters())
        # warm up on a side stream (lazy initialisations must not happen during capture)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(self.warmup):
                for p in params:
                    p.grad = None
                self._forward_backward(steps)
        torch.cuda.current_stream().wait_stream(side)
        # gradients allocated during capture live in the graph's memory: every replay rewrites them
        for p in params:
            p.grad = None
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.outputs = self._forward_backward(steps)
        self.captures += 1

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
        self.graph.replay()
        loss, N, R, complete = self.outputs
        if bool(complete):                                    # the one host sync of the step
            self.optimizer.step()
            return loss, N, R
        self.fallbacks += 1
        loss, N, R = self._eager_step()
        self.optimizer.step()
        longest = int(N.max())
        self._capture(min(longest + self.slack, self.model.max_ponder))
        return loss, N, R
