"""Time one training step (forward + backward + Adam) of NumPy, PyTorch CPU and PyTorch CUDA.

    python benchmarks/bench_train_step.py                     # float32, every available backend
    python benchmarks/bench_train_step.py --backends numpy,cpu --clock cpu --seconds 6
    python benchmarks/bench_train_step.py --markdown out.md   # also append the table as markdown

Sizes are the paper's: parity (tanh RNN, B=128, T=1, D=64, H=128, O=1) and logic (LSTM, B=16,
T=10, D=102, H=128, O=1). The halting bias is fixed, and W_h scaled down, so that the mean
ponder count N is about 3, 10 or 30; the measured mean and max N stand beside every time,
because the batch runs until its slowest row halts (pitfalls.md: throughput without ponder
statistics means little).

Loss: sigmoid cross-entropy against fixed random targets plus tau * sum_t rho_t, both averaged
over the batch (tau = 1e-3), the objective of the parity and logic tasks. Every backend starts
from the same weights and data (NumPy init_params, seed 0) and takes real Adam steps, with
lr 1e-5 so that N stays where it started over the hundreds of steps timed.

Backends: numpy (act_numpy forward, hand-written backward, act_numpy.optim.Adam); cpu and cuda
(act_torch.act_forward, autograd, fused torch.optim.Adam); cuda-fixed (a fixed budget
of ponder steps, no sync inside the loop); cuda-graph (act_engine.graphed: forward + backward
replayed as one CUDA graph); cuda-compile (torch.compile, mode "reduce-overhead"). The budget is the
longest N at the start plus 1; the fixed-step variants check every step that no row needed more.

Threads: one for NumPy's BLAS and one for PyTorch unless OMP_NUM_THREADS / OPENBLAS_NUM_THREADS /
MKL_NUM_THREADS say otherwise. Timing: warm-up steps, then the backends take turns, one
training step each, for about --seconds each, so that a burst of load from another process
falls on all of them alike; the median step time is reported. CUDA steps end with a
synchronise. --clock cpu uses process time instead of wall time: on a shared machine it counts
only this process's work.
"""

import argparse
import math
import os
import platform
import time

# One thread each for NumPy's BLAS and PyTorch unless the caller says otherwise: at these sizes
# threads gain little, and on a shared machine idle threads that spin slow everyone down.
# (These must be set before NumPy and PyTorch load.)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from act_numpy.act import act_backward, act_forward  # noqa: E402
from act_numpy.losses import sigmoid_cross_entropy  # noqa: E402
from act_numpy.optim import Adam  # noqa: E402
from act_numpy.params import init_params  # noqa: E402
from act_engine.torch_act import act_forward_fixed_steps  # noqa: E402
from act_engine.graphed import CUDAGraphTrainStep  # noqa: E402
from act_torch.module import ACT  # noqa: E402

SIZES = {  # name: (cell, B, T, D, H, O)
    "parity": ("rnn", 128, 1, 64, 128, 1),
    "logic": ("lstm", 16, 10, 102, 128, 1),
}
TAU, LR, EPSILON = 1e-3, 1e-5, 0.01


def halting_bias(N, epsilon=EPSILON):
    """b_h for which a constant halting unit sigmoid(b_h) first reaches 1 - eps at step N.

    h = (1 - eps) / (N - 1/2) puts the sum of N - 1 units half a unit below the threshold and
    the sum of N half a unit above it, so small variations of h keep N.
    """
    h = (1.0 - epsilon) / (N - 0.5)
    return math.log(h / (1.0 - h))


def make_problem(size, N_target, dtype):
    cell, B, T, D, H, O = SIZES[size]
    rng = np.random.default_rng(0)
    params = init_params(cell, D, H, O, rng, halting_bias=halting_bias(N_target), dtype=dtype)
    params["W_h"] *= 0.05                    # halting units close to sigmoid(b_h), a little spread
    x = rng.normal(size=(B, T, D)).astype(dtype)
    target = (rng.random((B, T, O)) < 0.5).astype(dtype)
    return cell, params, x, target


class NumpyStep:
    name = "numpy"

    def __init__(self, size, N_target, dtype):
        self.cell, self.params, self.x, self.target = make_problem(size, N_target, dtype)
        self.mask = np.ones(self.x.shape[:2])
        self.opt = Adam(self.params, lr=LR)
        self.dponder = TAU / self.x.shape[0]

    def __call__(self):
        y, N, R, cache = act_forward(self.x, self.params, cell=self.cell, epsilon=EPSILON)
        _, dy, _ = sigmoid_cross_entropy(y, self.target, self.mask)
        self.opt.step(act_backward(dy, self.dponder, cache))
        return N

    def sync(self):
        pass


def loss_fn(y, N, R, target):
    """Sigmoid cross-entropy plus tau * sum_t rho_t, both averaged over the batch (eq. 12)."""
    B = y.shape[0]
    return (F.binary_cross_entropy_with_logits(y, target, reduction="sum") + TAU * (N + R).sum()) / B


class TorchStep:
    """Eager PyTorch: act_forward (one "any row running?" sync per ponder step), autograd, Adam."""

    def __init__(self, size, N_target, dtype, device):
        self.name = f"torch {device}"
        cell, params, x, target = make_problem(size, N_target, dtype)
        self.device = torch.device(device)
        self.model = ACT.from_numpy(params, cell, epsilon=EPSILON, device=self.device)
        self.x = torch.from_numpy(x).to(self.device)
        self.target = torch.from_numpy(target).to(self.device)
        # fused Adam: one kernel (CUDA) or one loop (CPU) over all seven tensors
        self.opt = torch.optim.Adam(self.model.parameters(), lr=LR, fused=True)

    def ponder_budget(self, slack=1):
        """Steps per input step for the fixed-step variants: the longest N now, plus slack."""
        with torch.no_grad():
            _, N, _ = self.model(self.x)
        return min(int(N.max()) + slack, self.model.max_ponder)

    def __call__(self):
        self.opt.zero_grad(set_to_none=True)
        y, N, R = self.model(self.x)
        loss_fn(y, N, R, self.target).backward()
        self.opt.step()
        return N

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()


class FixedStepsStep(TorchStep):
    """Eager, but a budget of ponder steps per input step with no sync inside the loop (one per step)."""

    def __init__(self, size, N_target, dtype, device):
        super().__init__(size, N_target, dtype, device)
        self.budget = self.ponder_budget()
        self.name = f"torch {device} fixed budget={self.budget}"

    def __call__(self):
        self.opt.zero_grad(set_to_none=True)
        m = self.model
        y, N, R, complete = act_forward_fixed_steps(self.x, m.params(), self.budget, cell=m.cell, epsilon=EPSILON)
        loss_fn(y, N, R, self.target).backward()
        if not bool(complete):
            raise RuntimeError(f"a row needed more than {self.budget} ponder steps")
        self.opt.step()
        return N


class GraphStep(TorchStep):
    """The whole forward + backward replayed as one CUDA graph (act_engine.graphed)."""

    def __init__(self, size, N_target, dtype, device):
        super().__init__(size, N_target, dtype, device)
        self.step = CUDAGraphTrainStep(self.model, self.opt, loss_fn, self.x, self.target, self.ponder_budget())
        self.name = f"torch {device} graph budget={self.step.graph.ponder_steps}"

    def __call__(self):
        _, N, _ = self.step(self.x, self.target)
        return N.clone()


class CompiledStep(TorchStep):
    """torch.compile(mode="reduce-overhead") of the fixed-step forward and loss: fused kernels,
    replayed as CUDA graphs, backward compiled too."""

    def __init__(self, size, N_target, dtype, device):
        super().__init__(size, N_target, dtype, device)
        self.budget = self.ponder_budget()
        self.name = f"torch {device} compiled budget={self.budget}"
        m, budget = self.model, self.budget

        def forward_loss(x, target):
            y, N, R, complete = act_forward_fixed_steps(x, m.params(), budget, cell=m.cell, epsilon=EPSILON)
            return loss_fn(y, N, R, target), N, complete

        self.forward_loss = torch.compile(forward_loss, mode="reduce-overhead", fullgraph=True)

    def __call__(self):
        self.opt.zero_grad(set_to_none=True)
        loss, N, complete = self.forward_loss(self.x, self.target)
        loss.backward()
        if not bool(complete):
            raise RuntimeError(f"a row needed more than {self.budget} ponder steps")
        self.opt.step()
        return N.clone()


BACKENDS = {  # name on the command line -> (class, device)
    "numpy": (None, None), "cpu": (TorchStep, "cpu"), "cuda": (TorchStep, "cuda"),
    "cuda-fixed": (FixedStepsStep, "cuda"), "cuda-graph": (GraphStep, "cuda"), "cuda-compile": (CompiledStep, "cuda"),
}


def time_steps(steps, seconds, clock, warmup=3, min_steps=5):
    """Median seconds per step of every backend, and the N of its first timed step.

    The backends take turns, one step each, so that a burst of load from another process on a
    shared machine falls on all of them alike; the median then ignores the steps it slowed.
    """
    for s in steps:
        for _ in range(warmup):
            s()
        s.sync()
    times = {s.name: [] for s in steps}
    Ns = {}
    start = clock()
    while clock() - start < seconds * len(steps) or min(len(v) for v in times.values()) < min_steps:
        for s in steps:
            t0 = clock()
            N = s()
            s.sync()
            times[s.name].append(clock() - t0)
            if s.name not in Ns:
                Ns[s.name] = np.asarray(N.cpu()) if isinstance(N, torch.Tensor) else N
    return {k: float(np.median(v)) for k, v in times.items()}, Ns


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--sizes", default="parity,logic")
    ap.add_argument("--ponder", default="3,10,30", help="target mean N values")
    ap.add_argument("--backends", default="numpy,cpu,cuda,cuda-graph",
                    help="comma-separated, from: " + ", ".join(BACKENDS))
    ap.add_argument("--seconds", type=float, default=3.0, help="timing budget per backend and setting")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: process time, robust to other processes on a shared machine (CPU backends only)")
    ap.add_argument("--markdown", default=None, help="append the table to this markdown file")
    args = ap.parse_args()

    dtype = np.dtype(args.dtype).type
    backends = [b for b in args.backends.split(",") if b]
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        ap.error(f"unknown backends {unknown}; choose from {list(BACKENDS)}")
    if not torch.cuda.is_available() and any(b.startswith("cuda") for b in backends):
        print("no CUDA device: skipping the cuda backends")
        backends = [b for b in backends if not b.startswith("cuda")]
    if args.clock == "cpu" and any(b.startswith("cuda") for b in backends):
        ap.error("--clock cpu measures CPU backends only")
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    setup = (f"{args.dtype}, {args.clock} clock; CPU: {cpu_name()}, {os.cpu_count()} cores, "
             f"threads: torch {torch.get_num_threads()}, OpenBLAS {os.environ.get('OPENBLAS_NUM_THREADS')}; "
             f"torch {torch.__version__}, numpy {np.__version__}")
    if any(b.startswith("cuda") for b in backends):
        setup += f"; GPU: {torch.cuda.get_device_name()}"
    print(setup)

    header = "| size | target N | mean N | max N | backend | steps/s | ms/step | vs numpy |"
    lines = [header, "|---|---|---|---|---|---|---|---|"]
    print(header, lines[1], sep="\n")
    for size in args.sizes.split(","):
        for N_target in (int(n) for n in args.ponder.split(",")):
            steps = []
            for b in backends:
                cls, device = BACKENDS[b]
                try:
                    steps.append(NumpyStep(size, N_target, dtype) if cls is None else cls(size, N_target, dtype, device))
                except Exception as err:          # one failing variant must not stop the others
                    print(f"| {size} | {N_target} | | | {b}: FAILED {type(err).__name__}: {err} | | | |", flush=True)
            try:
                best, Ns = time_steps(steps, args.seconds, clock)
            except Exception as err:
                print(f"| {size} | {N_target} | timing FAILED: {type(err).__name__}: {err} |", flush=True)
                continue
            base = best.get("numpy")
            for s in steps:
                N = Ns[s.name]
                ratio = f"{base / best[s.name]:.2f}x" if base else "-"
                line = (f"| {size} ({SIZES[size][0]}) | {N_target} | {N.mean():.1f} | {N.max()} | {s.name} | "
                        f"{1.0 / best[s.name]:.1f} | {1e3 * best[s.name]:.2f} | {ratio} |")
                lines.append(line)
                print(line, flush=True)
    if args.markdown:
        with open(args.markdown, "a") as f:
            f.write(setup + "\n\n" + "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
