"""Where one LSTM ponder step spends its time: NumPy's hand-written backward against autograd.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_overhead.py [--repeats 7]

At the paper's logic size (LSTM, B = 16, H = 128) every array holds a few thousand numbers, so
the fixed cost of an operation, not its arithmetic, decides the speed. This script times the
pieces of one ponder step on their own, in microseconds of process CPU time (robust to other
processes), median over repeats of a block of calls:

- one elementwise multiply of two (16, 128) arrays: NumPy, and PyTorch without and with autograd
  recording (forward only);
- the LSTM cell's elementwise part, gates z (16, 512) -> (h', c'), over 10 chained ponder steps
  forward and then backward: ``act_numpy.cells.lstm_forward`` + ``lstm_backward`` against
  ``act_torch.act.lstm_cell`` + one ``torch.autograd.backward``;
- the whole LSTM ponder step, z = x W + s W_s and the cell, the same way, with the gradients
  of s and W_s (NumPy forms dW_s in one product over the 10 steps, as ``act_numpy.act`` does).

Chained pieces are reported per step.
It explains the LSTM rows of ``bench_train_step.py``; see docs/benchmarks_train_step.md.
"""

import argparse
import statistics
import time

import numpy as np
import torch

from act_numpy.cells import lstm_backward, lstm_forward
from act_torch.act import lstm_cell

B, H = 16, 128


def per_call_us(fn, calls, repeats):
    """Median over `repeats` blocks of `calls` calls: process CPU microseconds per call."""
    for _ in range(max(calls // 10, 1)):
        fn()                                          # warm caches and allocators
    samples = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        samples.append((time.process_time() - t0) / calls * 1e6)
    return statistics.median(samples)


def cases(rng, K=10):
    """(piece, numpy callable, torch callable, steps per call): each pair does the same work.

    The chained pieces run K ponder steps forward and then backward through all of them (one
    autograd backward for K steps, as in training), and are reported per step.
    """
    a, b = (rng.normal(size=(B, H)).astype(np.float32) for _ in range(2))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    ta_grad = ta.clone().requires_grad_()

    Z = rng.normal(size=(K, B, 4 * H)).astype(np.float32)      # K steps of gate pre-activations
    s0, c0 = (np.zeros((B, H), np.float32) for _ in range(2))
    ds = rng.normal(size=(B, H)).astype(np.float32)
    tZ = torch.from_numpy(Z).requires_grad_()
    ts0, tc0, tds = map(torch.from_numpy, (s0, c0, ds))

    def numpy_cells():
        state, caches = (s0, c0), []
        for k in range(K):
            _, state, cache = lstm_forward(Z[k], state)
            caches.append(cache)
        dc = np.zeros_like(c0)
        for cache in reversed(caches):               # every step's s' gets gradient ds
            _, dc = lstm_backward((ds, dc), cache)

    def torch_cells():
        state, outs = (ts0, tc0), []
        for z in tZ.unbind(0):
            s, state = lstm_cell(z, state)
            outs.append(s)
        torch.autograd.backward(outs, [tds] * K)

    W = (rng.normal(size=(H, 4 * H)) / np.sqrt(H)).astype(np.float32)
    xW = Z[0]
    tW = torch.from_numpy(W).requires_grad_()
    txW = torch.from_numpy(xW)

    def numpy_steps():
        state, caches, S = (s0, c0), [], []
        for _ in range(K):
            S.append(state[0])
            _, state, cache = lstm_forward(xW + state[0] @ W, state)
            caches.append(cache)
        dc, ds_next, dZ = np.zeros_like(c0), np.zeros_like(s0), []
        for cache in reversed(caches):
            dz, dc = lstm_backward((ds + ds_next, dc), cache)
            ds_next = dz @ W.T                       # back through s W_s to the previous s
            dZ.append(dz)
        np.stack(S[::-1]).reshape(K * B, H).T @ np.concatenate(dZ)   # dW_s, one product

    def torch_steps():
        W_s = tW.t().contiguous().t()                # the layout the engine uses on the CPU
        state, outs = (ts0, tc0), []
        for _ in range(K):
            s, state = lstm_cell(torch.addmm(txW, state[0], W_s), state)
            outs.append(s)
        torch.autograd.backward(outs, [tds] * K)

    return [
        ("multiply (16, 128), forward", lambda: a * b, lambda: ta * tb, 1),
        ("multiply (16, 128), forward, autograd recording", lambda: a * b, lambda: ta_grad * tb, 1),
        ("LSTM cell elementwise, forward + backward, per step", numpy_cells, torch_cells, K),
        ("LSTM ponder step (s W_s + cell), forward + backward, per step", numpy_steps, torch_steps, K),
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"torch {torch.__version__}, numpy {np.__version__}, torch threads {torch.get_num_threads()}")
    print("| piece | numpy (us) | torch (us) | torch / numpy |")
    print("|---|---|---|---|")
    for piece, numpy_fn, torch_fn, steps in cases(rng):
        calls = max(args.calls // steps, 10)
        t_np = per_call_us(numpy_fn, calls, args.repeats) / steps
        t_torch = per_call_us(torch_fn, calls, args.repeats) / steps
        print(f"| {piece} | {t_np:.1f} | {t_torch:.1f} | {t_torch / t_np:.2f}x |")


if __name__ == "__main__":
    main()
