"""A whole sweep, engine against engine: network-steps per second at equal work.

    python benchmarks/bench_sweep.py [--sizes logic,parity] [--networks 16] [--iterations 100]
        [--workers 2] [--ponder 3] [--setups pool:torch,population:torch,population:numpy]
    python benchmarks/bench_sweep.py --realistic [--iterations 150] [--sizes logic]

Each setup runs the same sweep with scripts/sweep.py's engine (act_experiments.sweeps.launch.main) in a
temporary folder: --networks runs (4 taus x networks/4 seeds, no baseline), --iterations
Adam steps each, one evaluation of 16 sequences at the end, on --workers worker processes with
one thread each. Every input takes about --ponder ponder steps (the halting bias is set as in
bench_act.py; W_h starts small, so the ponder stays near it over a short run). The time is the
sweep's wall time, from its start to its results files, so process start-up and imports count,
as they do for a real sweep. The last column is the speed against
the first setup (today's sweep: one process per run, PyTorch).

--realistic runs a sweep as a user runs it instead: 7 taus from 1e-3 to 1, 2 seeds each and the
2 no-ACT runs, the default halting bias (so ponder is whatever training makes it) and the default
evaluations; only --iterations is set.

Sizes are the paper's (section 3): logic LSTM 128, batch 16, up to 10 vectors and 10 gates;
parity tanh RNN 128, batch 128, 64 bits. Every run trains in float32, a sweep's default
for both backends.
"""

import argparse
import tempfile
import time
from pathlib import Path

from act_experiments.sweeps import launch
from bench_act import halting_bias_for

SIZES = {
    "logic": ["--task", "logic", "--hidden", "128", "--batch-size", "16"],
    "parity": ["--task", "parity", "--bits", "64", "--hidden", "128", "--batch-size", "128"],
}
TAUS = "1e-3,3e-3,1e-2,3e-2"
REALISTIC_TAUS = "1e-3,3e-3,1e-2,3e-2,1e-1,3e-1,1"


def run(size, engine, backend, args, folder):
    """Train one sweep; returns its wall time in seconds (workers, training, results files)."""
    name = f"{size}-{engine}-{backend}"
    argv = ["--name", name, *SIZES[size], "--engine", engine, "--backend", backend, "--workers", str(args.workers),
            "--device", "cpu", "--iterations", str(args.iterations)]
    if args.realistic:
        argv += ["--taus", REALISTIC_TAUS, "--seeds", "2"]
    else:
        argv += ["--taus", TAUS, "--seeds", str(args.networks // 4), "--no-baseline", "--eval-every", "0",
                 "--eval-size", "16", "--log-every", str(args.iterations),
                 "--halting-bias", f"{halting_bias_for(args.ponder):.6f}"]
    launch.ROOT = folder
    start = time.perf_counter()
    launch.main(argv)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="logic,parity")
    ap.add_argument("--networks", type=int, default=16, help="runs in the sweep (a multiple of 4)")
    ap.add_argument("--iterations", type=int, default=None, help="default 100 (150 with --realistic)")
    ap.add_argument("--realistic", action="store_true",
                    help="a sweep as a user runs it: 7 taus x 2 seeds + 2 no-ACT runs, default bias and evaluations")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--ponder", type=float, default=3.0)
    ap.add_argument("--setups", default="pool:torch,population:torch,population:numpy",
                    help="engine:backend pairs; the first is the reference")
    args = ap.parse_args()
    if args.networks < 4 or args.networks % 4:
        ap.error("--networks must be a positive multiple of 4")
    if args.iterations is None:
        args.iterations = 150 if args.realistic else 100
    if args.realistic:
        args.networks = 16                    # 7 taus x 2 seeds + 2 no-ACT runs
    setups = [tuple(s.split(":")) for s in args.setups.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_sweep_") as tmp:
        for size in args.sizes.split(","):
            reference = None
            for engine, backend in setups:
                seconds = run(size, engine, backend, args, Path(tmp))
                rate = args.networks * args.iterations / seconds
                reference = reference or rate
                rows.append((size, engine, backend, seconds, rate, rate / reference))
    ponder = "ponder as training makes it" if args.realistic else f"about {args.ponder:g} ponder steps per input"
    print(f"\n{args.networks} networks x {args.iterations} iterations, {args.workers} workers, {ponder}\n")
    print("| size | engine | backend | wall time (s) | network-steps/s | speed |")
    print("|---|---|---|---|---|---|")
    for size, engine, backend, seconds, rate, speed in rows:
        print(f"| {size} | {engine} | {backend} | {seconds:.1f} | {rate:.1f} | {speed:.2f}x |")


if __name__ == "__main__":
    main()
