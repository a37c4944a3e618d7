"""Time one training step (forward + backward + Adam) of NumPy, PyTorch CPU and PyTorch CUDA.

    python benchmarks/bench_train_step.py                    # float32, every available backend
    python benchmarks/bench_train_step.py --dtype float64 --seconds 2
    python benchmarks/bench_train_step.py --markdown out.md  # also write the table as markdown

Sizes are the paper's: parity (tanh RNN, B=128, T=1, D=64, H=128, O=1) and logic (LSTM, B=16,
T=10, D=102, H=128, O=1). The halting bias is fixed, and W_h scaled down, so that the mean
ponder count N is about 3, 10 or 30; the measured mean and max N stand beside every time,
because the batch runs until its slowest row halts (pitfalls.md: throughput without ponder
statistics means little).

Loss: sigmoid cross-entropy against fixed random targets plus tau * sum_t rho_t, both averaged
over the batch (tau = 1e-3), the objective of the parity and logic tasks. Every backend starts
from the same weights and data (NumPy init_params, seed 0) and uses Adam with lr 1e-4, which
keeps N where it started over the few steps timed.

Timing: a few warm-up steps, then several rounds that cycle through the backends (so that a
burst of load from another process hits all of them), each round as many steps as fit in
--seconds; the reported time is the best round's mean per step. CUDA rounds synchronise first.
"""

import argparse
import math
import platform
import time

import numpy as np
import torch
import torch.nn.functional as F

from act_numpy.act import act_backward, act_forward
from act_numpy.losses import sigmoid_cross_entropy
from act_numpy.optim import Adam
from act_numpy.params import init_params
from act_torch.module import ACT

SIZES = {  # name: (cell, B, T, D, H, O)
    "parity": ("rnn", 128, 1, 64, 128, 1),
    "logic": ("lstm", 16, 10, 102, 128, 1),
}
TAU, LR, EPSILON = 1e-3, 1e-4, 0.01


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


class TorchStep:
    def __init__(self, size, N_target, dtype, device):
        self.name = f"torch {device}"
        cell, params, x, target = make_problem(size, N_target, dtype)
        self.device = torch.device(device)
        self.model = ACT.from_numpy(params, cell, epsilon=EPSILON, device=self.device)
        self.x = torch.from_numpy(x).to(self.device)
        self.target = torch.from_numpy(target).to(self.device)
        # fused Adam: one kernel (CUDA) or one loop (CPU) over all seven tensors
        self.opt = torch.optim.Adam(self.model.parameters(), lr=LR, fused=True)

    def __call__(self):
        self.opt.zero_grad(set_to_none=True)
        y, N, R = self.model(self.x)
        B = self.x.shape[0]
        loss = F.binary_cross_entropy_with_logits(y, self.target, reduction="sum") / B
        loss = loss + TAU * (N + R).sum() / B          # eq. (12): L + tau * P
        loss.backward()
        self.opt.step()
        return N

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()


def time_steps(steps, seconds, rounds, warmup=2):
    """Best round's mean seconds per step for every backend, and the N seen while timing."""
    Ns = {s.name: [] for s in steps}
    for s in steps:
        for _ in range(warmup):
            s()
        s.sync()
    best = {s.name: math.inf for s in steps}
    for _ in range(rounds):
        for s in steps:
            s.sync()
            t0, k = time.perf_counter(), 0
            while True:
                N = s()
                k += 1
                if k == 1:
                    Ns[s.name].append(np.asarray(N.cpu()) if isinstance(N, torch.Tensor) else N)
                if time.perf_counter() - t0 >= seconds / rounds:
                    break
            s.sync()
            best[s.name] = min(best[s.name], (time.perf_counter() - t0) / k)
    return best, {k: np.stack(v) for k, v in Ns.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--sizes", default="parity,logic")
    ap.add_argument("--ponder", default="3,10,30", help="target mean N values")
    ap.add_argument("--backends", default="numpy,cpu,cuda", help="any of numpy, cpu, cuda")
    ap.add_argument("--seconds", type=float, default=3.0, help="timing budget per backend and setting")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    ap.add_argument("--markdown", default=None, help="also write the table to this markdown file")
    args = ap.parse_args()

    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = np.dtype(args.dtype).type
    backends = args.backends.split(",")
    if "cuda" in backends and not torch.cuda.is_available():
        print("no CUDA device: skipping the cuda backend")
        backends.remove("cuda")
    cpu_name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu_name = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    setup = (f"{args.dtype}; CPU: {cpu_name}, torch threads {torch.get_num_threads()}; "
             f"torch {torch.__version__}, numpy {np.__version__}")
    if "cuda" in backends:
        setup += f"; GPU: {torch.cuda.get_device_name()}"
    print(setup)

    header = "| size | target N | mean N | max N | backend | steps/s | ms/step | vs numpy |"
    lines = [header, "|---|---|---|---|---|---|---|---|"]
    print(header)
    print(lines[1])
    for size in args.sizes.split(","):
        for N_target in (int(n) for n in args.ponder.split(",")):
            steps = []
            for b in backends:
                if b == "numpy":
                    steps.append(NumpyStep(size, N_target, dtype))
                else:
                    steps.append(TorchStep(size, N_target, dtype, b))
            best, Ns = time_steps(steps, args.seconds, args.rounds)
            base = best.get("numpy")
            for s in steps:
                N = Ns[s.name]
                ratio = f"{base / best[s.name]:.2f}x" if base else "-"
                line = (f"| {size} ({SIZES[size][0]}) | {N_target} | {N.mean():.1f} | {N.max()} | {s.name} | "
                        f"{1.0 / best[s.name]:.1f} | {1e3 * best[s.name]:.2f} | {ratio} |")
                lines.append(line)
                print(line, flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(setup + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
