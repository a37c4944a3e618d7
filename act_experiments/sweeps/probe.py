"""The shuffle probe: does the number of updates a trained ACT network picks carry information?

Evaluation only, on the ACT networks a sweep committed (``scripts/sweep.py --save-weights``:
results/<sweep>/weights.npz, float16). For each network, on its own held-out set:

    error        ACT as trained: every input step halts where its halting units say (eq. 7)
    shuffled     each step forced to N', a fixed-seed permutation of the N the network chose over
                 the held-out steps: the same computation, the same distribution of N, given to
                 other inputs
    at_mean      each step forced to the rounded mean of those N: the same computation, spread
                 evenly

Under a forced N' the halting weights are ACT's own up to it: p^n = h^n for n < N' and the
remainder 1 - sum_{n<N'} h^n, clipped at 0, at N' (act_numpy.act.scheduled_forward with
halting=True). With N' = N this is ACT exactly, so any change in error comes from moving updates
between inputs. If the error rises when N is shuffled, the N a network picks depends on what the
input needs; if it does not, only the amount of computation mattered.

    rows = probe("parity16_measured")         # one row per ACT network (and writes probe.csv)
    rows = read("parity16_measured")          # the committed probe.csv

``main`` is scripts/probe.py.
"""

import numpy as np

from act_experiments.data import tasks
from act_experiments.sweeps.reading import load_sweep, sweep_folder
from act_experiments.sweeps.writing import load_weights
from act_experiments.tables import read_csv, numbers_in, write_csv
from act_experiments.training.backends import NumpyBackend
from act_experiments.cli import OneLineParser
from act_experiments.training.config import EVAL_STREAM, make_config, model_sizes
from act_numpy import act
from act_numpy.model import objective, sequence_steps

PROBE_SEED = 0          # the permutation of N, the same for every network
COLUMNS = ["run", "seed", "tau", "mean_N", "rounded_mean_N", "error", "shuffled", "at_mean"]


def run_config(sweep, run):
    """The training config of one committed run, rebuilt from sweep.json's shared options (the
    runs' own folders are not committed): what its held-out set and network depend on."""
    options = dict(sweep["meta"]["shared_options"], task=sweep["meta"]["task"], seed=run["seed"], tau=run["tau"])
    return make_config(options, NumpyBackend)


def held_out(config):
    """The run's held-out set (x, y, mask), drawn as the training loop draws it (runs.Run)."""
    rng = np.random.default_rng([config["eval_seed"], EVAL_STREAM])
    return tasks.make_held_out(config["task"], rng, config["eval_size"], **config["task_options"])


def sequence_error(config, params, data, N=None):
    """The held-out sequence error of the network ``params`` and its N (E, T): ACT's own halting
    when N is None, else forced to the N given (scheduled_forward with the halting units kept)."""
    x, y, mask = data
    dtype = np.dtype(config["dtype"])
    x = x.astype(dtype)
    params = {k: v.astype(dtype) for k, v in params.items()}
    if N is None:
        y_hat, N, R, _ = act.act_forward(x, params, cell=config["cell"], epsilon=config["epsilon"],
                                         max_ponder=config["max_ponder"])
    else:
        y_hat, N, R, _ = act.scheduled_forward(x, params, cell=config["cell"], N=N, halting=True)
    _, _, loss, heads = model_sizes(config)
    stats = objective(y_hat, N, R, y, mask, loss=loss, heads=heads, tau=config["tau"])[3]
    return float(stats["wrong"].any(axis=1).mean()), N


def forced_schedules(N, mask, seed=PROBE_SEED):
    """(shuffled, at_mean): N (E, T) with the values at the sequences' steps permuted (a fixed
    seed), and with every value the rounded mean of those steps' N (at least 1)."""
    live = sequence_steps(mask) > 0
    shuffled = N.copy()
    shuffled[live] = np.random.default_rng(seed).permutation(N[live])
    return shuffled, np.full_like(N, max(1, int(np.rint(N[live].mean()))))


def probe_run(config, params):
    """One network's row of the probe (COLUMNS, without run, seed and τ)."""
    data = held_out(config)
    error, N = sequence_error(config, params, data)
    shuffled, at_mean = forced_schedules(N, data[2])
    live = sequence_steps(data[2]) > 0
    return {"mean_N": float(N[live].mean()), "rounded_mean_N": int(at_mean.flat[0]), "error": error,
            "shuffled": sequence_error(config, params, data, shuffled)[0],
            "at_mean": sequence_error(config, params, data, at_mean)[0]}


def probe(name):
    """The probe on every ACT network of results/<name>/weights.npz; writes results/<name>/probe.csv
    and returns its rows. FileNotFoundError when the sweep committed no weights."""
    sweep = load_sweep(name, tables=())
    weights = load_weights(sweep_folder(name) / "weights.npz")
    rows = []
    for run in sweep["runs"]:
        if run["run"] in weights:
            config = run_config(sweep, run)
            rows.append({"run": run["run"], "seed": run["seed"], "tau": run["tau"],
                         **probe_run(config, weights[run["run"]])})
    write_csv(sweep_folder(name) / "probe.csv", rows, COLUMNS)
    return rows


def read(name):
    """The committed probe of a sweep: results/<name>/probe.csv as rows of numbers."""
    return [numbers_in(r, ("run",)) for r in read_csv(sweep_folder(name) / "probe.csv")]


def main(argv=None):
    """scripts/probe.py: run the probe on each sweep named and print its rows."""
    ap = OneLineParser(prog="probe.py", description=__doc__.splitlines()[0])
    ap.add_argument("sweeps", nargs="+", help="sweeps under results/ that committed weights.npz")
    args = ap.parse_args(argv)
    for name in args.sweeps:
        try:
            rows = probe(name)
        except (OSError, KeyError, ValueError) as err:
            ap.exit(1, f"probe.py: {name}: {err}\n")
        for r in rows:
            print(f"{name} {r['run']}: mean N {r['mean_N']:.2f}, error {r['error']:.3f}, "
                  f"N shuffled {r['shuffled']:.3f}, N = {r['rounded_mean_N']} everywhere {r['at_mean']:.3f}")
    return 0
