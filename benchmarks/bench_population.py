"""Network-steps per second: K networks trained alone, one after another, against one population.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_population.py
        [--sizes parity,logic] [--K 1,4,16] [--ponder 3] [--seconds 3] [--dtype float32]
    python benchmarks/bench_population.py --device cuda [--K 1,16,64]        # on a GPU

Two engines, PyTorch and NumPy. "Alone" is K training steps of the engine's backend in turn
(TorchBackend or NumpyBackend: what a sweep worker does today, one run after another);
"population" is one step of the engine's Population (act_engine.torch_population, act_engine.numpy_population)
holding the same K networks. All do the same work: each network takes one Adam step on its own
batch. Every input takes about --ponder ponder steps (W_h = 0 and the halting bias set as in
bench_act.py, so the halting units are constant until training moves them). Process CPU time.
Each engine's "population / alone" is its speed-up per network; the last column is the fastest
of the four rates against PyTorch alone.

With --device cuda the table compares, in wall-clock time with the GPU synchronised after every
call: the NumPy population on the CPU (the CPU's best engine), PyTorch alone on CUDA (eager),
the torch population on CUDA eager (graphed=False) and the torch population replayed as CUDA
graphs (act_engine.population_graphed); the last column is the graphed population against the
NumPy population. --kernels adds the torch population on the fused Triton kernels
(Population(kernels=True), act_engine.kernel_act; needs requirements-kernels.txt) and its rate
against the graphed one.
"""

import argparse
import time

import numpy as np
import torch

from act_experiments.data import tasks
from act_experiments.training import loop
from act_experiments.training.backends import NumpyBackend, TorchBackend
from act_experiments.training.populations import NumpyPopulation
from act_experiments.training.populations import TorchPopulation
from bench_act import halting_bias_for

SIZES = {  # the paper's sizes (section 3): parity 64 bits, tanh RNN 128, batch 128; logic LSTM 128, batch 16
    "parity": dict(task="parity", bits=64, hidden=128, batch_size=128),
    "logic": dict(task="logic", hidden=128, batch_size=16),
}


def configs(size, K, ponder, dtype, backend, device="cpu"):
    bias = halting_bias_for(ponder)
    extra = {"device": device} if backend is TorchBackend else {}
    return [loop.make_config(dict(SIZES[size], seed=k, tau=1e-3, halting_bias=bias, dtype=dtype,
                                      out="unused", **extra), backend) for k in range(K)]


def data_for(config):
    rng = np.random.default_rng([config["seed"], loop.DATA_STREAM])
    return tasks.make_batch(config["task"], rng, config["batch_size"], **config["task_options"])


def rate(step, seconds):
    """Calls of step() per second of process time, after one warm-up call."""
    step()
    start, calls = time.process_time(), 0
    while calls == 0 or time.process_time() - start < seconds:
        step()
        calls += 1
    return calls / (time.process_time() - start)


def zero_halting_weights(params):
    """W_h = 0 in place: every halting unit is sigmoid(b_h), the same at every step."""
    with torch.no_grad():
        params["W_h"][...] = 0


def measure(size, K, ponder, seconds, dtype, backend, population):
    """(alone, population) network-steps per second of one engine, for K networks."""
    cs = configs(size, K, ponder, dtype, backend)
    data = [data_for(c) for c in cs]
    alone = [backend(c) for c in cs]
    pop = population(cs)
    for b in alone:
        zero_halting_weights(b.params if backend is TorchBackend else b.model.params)
    zero_halting_weights(pop.params)
    x, y, mask = (np.stack([d[j] for d in data]) for j in range(3))

    def alone_step():
        for b, d in zip(alone, data):
            b.train_step(*d)

    alone_rate = K * rate(alone_step, seconds)
    pop_rate = K * rate(lambda: pop.train_step(x, y, mask), seconds)
    return alone_rate, pop_rate


def wall_rate(step, seconds):
    """Calls of step() per second of wall-clock time, the GPU synchronised after each call, after
    six warm-up calls (a graphed population records its graphs after three eager steps)."""
    for _ in range(6):
        step()
    torch.cuda.synchronize()
    start, calls = time.perf_counter(), 0
    while calls == 0 or time.perf_counter() - start < seconds:
        step()
        torch.cuda.synchronize()
        calls += 1
    return calls / (time.perf_counter() - start)


def measure_cuda(size, K, ponder, seconds, dtype, kernels=False):
    """Network-steps per second: NumPy population (CPU), torch alone, population eager, graphed (CUDA),
    and with kernels the population on the Triton kernels (CUDA) as a fifth rate."""
    cpu = configs(size, K, ponder, dtype, NumpyBackend)
    gpu = configs(size, K, ponder, dtype, TorchBackend, device="cuda")
    data = [data_for(c) for c in cpu]
    x, y, mask = (np.stack([d[j] for d in data]) for j in range(3))
    numpy_pop = NumpyPopulation(cpu)
    alone = [TorchBackend(c) for c in gpu]
    eager, graphed = TorchPopulation(gpu, graphed=False), TorchPopulation(gpu, graphed=True)
    for params in [numpy_pop.params, eager.params, graphed.params] + [b.params for b in alone]:
        zero_halting_weights(params)

    def alone_step():
        for b, d in zip(alone, data):
            b.train_step(*d)

    rates = (K * wall_rate(lambda: numpy_pop.train_step(x, y, mask), seconds), K * wall_rate(alone_step, seconds),
             K * wall_rate(lambda: eager.train_step(x, y, mask), seconds),
             K * wall_rate(lambda: graphed.train_step(x, y, mask), seconds))
    if not kernels:
        return rates
    fused = TorchPopulation(gpu, kernels=True)
    zero_halting_weights(fused.params)
    return rates + (K * wall_rate(lambda: fused.train_step(x, y, mask), seconds),)


def main_cuda(sizes, Ks, args):
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}, numpy {np.__version__} on the CPU, "
          f"{args.dtype}, about {args.ponder} ponder steps per input, network-steps/s\n")
    extra = " population kernels (CUDA) | kernels / graphed |" if args.kernels else ""
    print("| size | K | numpy population (CPU) | torch alone (CUDA) | population eager (CUDA) "
          "| population graphed (CUDA) | graphed / numpy population |" + extra)
    print("|---|---|---|---|---|---|---|" + ("---|---|" if args.kernels else ""))
    for size in sizes:
        for K in Ks:
            n_pop, alone, eager, graphed, *fused = measure_cuda(size, K, args.ponder, args.seconds, args.dtype,
                                                                args.kernels)
            row = (f"| {size} | {K} | {n_pop:.1f} | {alone:.1f} | {eager:.1f} | {graphed:.1f} "
                   f"| {graphed / n_pop:.2f}x |")
            if fused:
                row += f" {fused[0]:.1f} | {fused[0] / graphed:.2f}x |"
            print(row, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="parity,logic", help=f"comma-separated, from {', '.join(SIZES)}")
    ap.add_argument("--K", default="1,4,16", help="population sizes (comma-separated)")
    ap.add_argument("--ponder", type=int, default=3, help="ponder steps per input (default 3)")
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per measurement (default 3)")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="cuda: the torch engines on the GPU, eager and graphed (see above)")
    ap.add_argument("--kernels", action="store_true",
                    help="with --device cuda: also the population on the Triton kernels (see above)")
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
    if args.kernels and args.device != "cuda":
        ap.error("--kernels needs --device cuda")
    if args.device == "cuda":
        if not torch.cuda.is_available():
            ap.error("--device cuda: CUDA is not available here")
        return main_cuda(sizes, Ks, args)
    print(f"torch {torch.__version__} ({torch.get_num_threads()} thread(s)), numpy {np.__version__}, "
          f"{args.dtype}, about {args.ponder} ponder steps per input, process time, network-steps/s\n")
    print("| size | K | torch alone | torch population | torch population / alone | numpy alone "
          "| numpy population | numpy population / alone | fastest / torch alone |")
    print("|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        for K in Ks:
            t_alone, t_pop = measure(size, K, args.ponder, args.seconds, args.dtype, TorchBackend, TorchPopulation)
            n_alone, n_pop = measure(size, K, args.ponder, args.seconds, args.dtype, NumpyBackend, NumpyPopulation)
            fastest = max(t_alone, t_pop, n_alone, n_pop)
            print(f"| {size} | {K} | {t_alone:.1f} | {t_pop:.1f} | {t_pop / t_alone:.2f}x | {n_alone:.1f} "
                  f"| {n_pop:.1f} | {n_pop / n_alone:.2f}x | {fastest / t_alone:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
