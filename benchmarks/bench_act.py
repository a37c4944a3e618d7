"""Time act_forward + act_backward of the NumPy reference at the paper's sizes.

    python benchmarks/bench_act.py [--repeats 5]

The halting bias is set (with W_h = 0, so every halting unit equals sigmoid(b_h)) so that every
input takes N = 3, 10 or 30 ponder steps; seconds per call and per ponder step are printed.
"""

import argparse
import time

import numpy as np

from act_numpy.act import act_backward, act_forward
from act_numpy.params import init_params

SIZES = {  # name: (cell, B, T, D, H, O)
    "parity (rnn)": ("rnn", 128, 1, 64, 128, 1),
    "logic (lstm)": ("lstm", 16, 10, 102, 128, 1),
}


def halting_bias_for(N, epsilon=0.01):
    """b_h such that a constant halting unit h reaches 1 - epsilon exactly at step N."""
    h = (1.0 - epsilon) / (N - 0.5)      # N - 1 steps stay below, N steps reach the threshold
    return float(np.log(h / (1.0 - h)))


def time_call(cell, B, T, D, H, O, N_target, repeats):
    rng = np.random.default_rng(0)
    params = init_params(cell, D, H, O, rng, halting_bias=halting_bias_for(N_target))
    params["W_h"][:] = 0.0
    x = rng.normal(size=(B, T, D))
    dy = rng.normal(size=(B, T, O))
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        _, N, _, cache = act_forward(x, params, cell=cell)
        act_backward(dy, 1e-3, cache)
        best = min(best, time.perf_counter() - t0)
    return best, N


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"| size | B | T | D | H | mean N | s per call | ms per ponder step |")
    print(f"|---|---|---|---|---|---|---|---|")
    for name, (cell, B, T, D, H, O) in SIZES.items():
        for N_target in (3, 10, 30):
            sec, N = time_call(cell, B, T, D, H, O, N_target, args.repeats)
            steps = T * N.max()   # the batch runs until its slowest row halts, per input step
            print(f"| {name} | {B} | {T} | {D} | {H} | {N.mean():.1f} | {sec:.4f} | {1e3 * sec / steps:.3f} |")


if __name__ == "__main__":
    main()
