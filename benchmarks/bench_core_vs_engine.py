"""The learner's core against the engine, one network, forward + backward: what readability costs.

    python benchmarks/bench_core_vs_engine.py [--repeats 10] [--calls 5] [--ponder 3,10]

The core (``act_numpy.act``, ``act_torch.act``) is written to be read: one network, each line under
its equation. The engine (``act_engine.numpy_act``, ``act_engine.torch_act``) runs the same
equations arranged for speed and for K stacked networks; with one network its loop is the one the
course used before the two were separated, and the one a single PyTorch training run still steps
through. Both are timed in one process, taking turns, at the paper's sizes (bench_act.py's: the
halting bias is set so that every input takes about N ponder steps), float32 for PyTorch and
float64 for NumPy, one thread each, process time; the best of --repeats rounds of --calls calls.
The last column is core time over engine time.
"""

import argparse
import time

import numpy as np
import torch

from act_engine import numpy_act, torch_act
from act_numpy import act as numpy_core
from act_numpy.params import check_arrays, init_params
from act_torch import act as torch_core
from bench_act import SIZES, halting_bias_for


def numpy_calls(cell, x, params, dy):
    """The NumPy core's and the engine's forward + backward on one network, as two functions."""
    def core():
        _, _, _, cache = numpy_core.act_forward(x, params, cell=cell)
        numpy_core.act_backward(dy, 1e-3, cache)

    def engine():
        X, P = check_arrays(x, params, cell, 0.01, 100)
        _, N, _, cache = numpy_act.forward_pass(X, P, cell, 0.01, 100)
        numpy_act.backward_pass(dy, np.full(N.shape, 1e-3), cache)
    return core, engine


def torch_calls(cell, x, params):
    """The same for PyTorch: act_forward, then autograd through y and R."""
    P = {k: torch.tensor(v, dtype=torch.float32, requires_grad=True) for k, v in params.items()}
    xt = torch.tensor(x, dtype=torch.float32)

    def run(forward):
        def call():
            y, N, R = forward(xt, P, cell=cell)
            (y.sum() + R.sum()).backward()
        return call
    return run(torch_core.act_forward), run(torch_act.act_forward)


def best_time(fns, repeats, calls):
    """Seconds per call of each function, the best of ``repeats`` rounds in which they take turns."""
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.process_time()
            for _ in range(calls):
                fn()
            best[i] = min(best[i], (time.process_time() - start) / calls)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--ponder", default="3,10", help="target N values")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    print("| size | N | library | core (ms) | engine (ms) | core / engine |")
    print("|---|---|---|---|---|---|")
    for size, (cell, B, T, D, H, O) in SIZES.items():
        for N in (int(n) for n in args.ponder.split(",")):
            rng = np.random.default_rng(0)
            params = init_params(cell, D, H, O, rng, halting_bias=halting_bias_for(N))
            params["W_h"][:] = 0.0
            x, dy = rng.normal(size=(B, T, D)), rng.normal(size=(B, T, O))
            for library, fns in (("numpy", numpy_calls(cell, x, params, dy)), ("torch", torch_calls(cell, x, params))):
                core, engine = best_time(fns, args.repeats, args.calls)
                print(f"| {size} | {N} | {library} | {core * 1e3:.2f} | {engine * 1e3:.2f} | {core / engine:.2f} |")


if __name__ == "__main__":
    main()
