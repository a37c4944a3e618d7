"""Network-steps per second: K networks trained alone, one after another, against one population.

    OMP_NUM_THREADS=1 python benchmarks/bench_population.py [--sizes parity,logic] [--K 1,4,16]
        [--ponder 3] [--seconds 3] [--dtype float32]

"Alone" is K TorchBackend training steps in turn (what a sweep worker does today, one run after
another); "population" is one step of act_torch.population.Population holding the same K
networks. Both do the same work: each network takes one Adam step on its own batch. Every input
takes about --ponder ponder steps (W_h = 0 and the halting bias set as in bench_act.py, so the
halting units are constant until training moves them). Process CPU time; the last column is the
population's speed-up per network. No GPU path here yet: CPU only.
"""

import argparse
import time

import numpy as np
import torch

from act_experiments import tasks, training
from act_torch.population import Population
from act_torch.train import TorchBackend
from bench_act import halting_bias_for

SIZES = {  # the paper's sizes (section 3): parity 64 bits, tanh RNN 128, batch 128; logic LSTM 128, batch 16
    "parity": dict(task="parity", bits=64, hidden=128, batch_size=128),
    "logic": dict(task="logic", hidden=128, batch_size=16),
}


def configs(size, K, ponder, dtype):
    bias = halting_bias_for(ponder)
    return [training.make_config(dict(SIZES[size], seed=k, tau=1e-3, halting_bias=bias, dtype=dtype,
                                      device="cpu", out="unused"), TorchBackend) for k in range(K)]


def data_for(config):
    rng = np.random.default_rng([config["seed"], training.DATA_STREAM])
    return tasks.make_batch(config["task"], rng, config["batch_size"], **config["task_options"])


def rate(step, seconds):
    """Calls of step() per second of process time, after one warm-up call."""
    step()
    start, calls = time.process_time(), 0
    while calls == 0 or time.process_time() - start < seconds:
        step()
        calls += 1
    return calls / (time.process_time() - start)


def measure(size, K, ponder, seconds, dtype):
    cs = configs(size, K, ponder, dtype)
    data = [data_for(c) for c in cs]
    alone = [TorchBackend(c) for c in cs]
    pop = Population(cs)
    with torch.no_grad():
        for b in alone:
            b.params["W_h"].zero_()
        pop.params["W_h"].zero_()
    x, y, mask = (np.stack([d[j] for d in data]) for j in range(3))

    def alone_step():
        for b, d in zip(alone, data):
            b.train_step(*d)

    alone_rate = K * rate(alone_step, seconds)
    pop_rate = K * rate(lambda: pop.train_step(x, y, mask), seconds)
    return alone_rate, pop_rate


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="parity,logic", help=f"comma-separated, from {', '.join(SIZES)}")
    ap.add_argument("--K", default="1,4,16", help="population sizes (comma-separated)")
    ap.add_argument("--ponder", type=int, default=3, help="ponder steps per input (default 3)")
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per measurement (default 3)")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    args = ap.parse_args(argv)
    sizes = [s for s in args.sizes.split(",") if s]
    unknown = [s for s in sizes if s not in SIZES]
    if unknown or not sizes:
        ap.error(f"--sizes: unknown {unknown}; expected some of {', '.join(SIZES)}")
    try:
        Ks = [int(k) for k in args.K.split(",") if k]
    except ValueError:
        ap.error(f"--K must be comma-separated integers, got {args.K!r}")
    if not Ks or min(Ks) < 1 or args.ponder < 2 or args.seconds <= 0:
        ap.error("need K >= 1, --ponder >= 2 and --seconds > 0")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {args.dtype}, "
          f"about {args.ponder} ponder steps per input, process time\n")
    print("| size | K | alone: network-steps/s | population: network-steps/s | population / alone |")
    print("|---|---|---|---|---|")
    for size in sizes:
        for K in Ks:
            alone, pop = measure(size, K, args.ponder, args.seconds, args.dtype)
            print(f"| {size} | {K} | {alone:.1f} | {pop:.1f} | {pop / alone:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
