"""A tau sweep of ACT runs (plus the no-ACT baseline), trained as populations, saved as data.

    python scripts/sweep.py --name parity16 --task parity --bits 16 --hidden 128 --lr 1e-3 \\
        --iterations 3000 --taus 1e-4,1e-3,1e-2,1e-1 --seeds 3

The runs of a sweep are every (tau, seed) pair and, unless --no-baseline, each seed with
--no-act (the cap M = 1), and every (F, seed) pair of --fixed-ponders: the fixed-computation
control, exactly F updates per input and no halting unit (--fixed-ponder F of scripts/train.py).
A sweep with --fixed-ponders and no --taus is a control of its own: run with the settings and
seeds of an ACT sweep, its runs pair with that sweep's seed by seed. --random-ponders SWEEP:TAU
adds the random-schedule control (--random-ponder): per seed S, N drawn per input step from the
N_counts of SWEEP's run tauTAU-seedS, the computation that network used, spread at random. Each
run is the shared training loop with its own run folder, the files of scripts/train.py.

How the runs are scheduled (none of it changes what a run computes; the numbers agree to
rounding, and in float64 to about 1e-9 over a run. A population pads every member's ponder loop
to its slowest member's, which changes the order of some sums, so in float32 two schedules of one
run can drift apart over a long run, as two machines' BLAS kernels can):

- ``--engine population`` (the default): runs that share the shape of the computation are
  stacked into populations (``loop.train_population``): K networks take each step as one
  program of batched products, which is faster per network than K separate runs. The runs are
  split into shards of at most ``--population-size`` members, in the order tau by tau (members
  that halt early wait for the slowest one, so a shard of one tau wastes least); by default the
  shards are as even as possible, one per worker, within the memory free for them.
- ``--engine pool``: one process per run (the behaviour before populations).
- ``--workers`` shards (or runs) train side by side in worker processes with one thread each.
- ``--backend numpy|torch`` chooses the backend that trains every run (part of the sweep's
  settings: the two backends agree only to rounding). Runs train in float32 unless --dtype says
  otherwise, whichever the backend. ``--device`` (torch only): auto takes CUDA when there
  is one and the engine is population (a single network is faster on the CPU), else the CPU.
- ``--kernels``: the populations' ponder loop runs on the fused Triton kernels
  (``Population(kernels=True)``, act_engine.kernel_act) instead of CUDA graphs. It needs the torch
  backend (its default then), populations, a CUDA device, Triton (requirements-kernels.txt) and at
  most 128 hidden units, and is refused in one line before anything is written otherwise. Part of
  the sweep's settings: the kernels' backward is the hand-derived one, which agrees with autograd's
  only to rounding.

The shards and the workers are ``act_experiments.sweeps.workers``'s, the result files
``act_experiments.sweeps.writing``'; this module holds the options, the sweep's settings and its
lock, and ``main``.

A member's ``train_time_s`` is its share of its shard's training time: the shard's time
divided by its members. Runs are written to runs/sweeps/<name>/ (not committed); the sweep's
results go to results/<name>/ (committed):

    runs.csv        one row per run: tau (empty for no ACT), act, seed, final held-out sequence
                    error, mean and max ponder, loss, iterations, training seconds, fixed_ponder
                    (F for the fixed-computation control, else empty), the measured mean N and
                    mean R (rho = N + R), random_of (the τ whose N a random-schedule run draws)
    difficulty.csv  one row per run and difficulty: count, error, ponder, N (held-out set)
    N_counts.csv    one row per run and N: how many held-out steps took N updates
    weights.npz     --save-weights: every ACT run's final parameters, float16 (writing.load_weights)
    curves.csv      one row per run and evaluation: iteration, sequence error, mean ponder
    sweep.json      the command, the shared options, engine, backend, wall time, machine

For the task characters, bits per character replace sequence error, and classes.csv and
passage.csv replace difficulty.csv (``act_experiments.sweeps.per_byte``).

Extra options after the sweep's own are passed to every run unchanged (see ``python -m
scripts/train.py --help``); every run's options are checked before any worker starts, and the
results are written (each file in one step) only once every run has finished. Nothing is lost
or mixed up between runs of the script:

- A sweep that is stopped (Ctrl-C, SIGTERM, a crash) continues when run again with the same
  arguments: finished runs are kept, the others resume from their last checkpoint (a run whose
  summary, log or checkpoint is damaged counts as unfinished; one with nothing to resume from
  starts over). A shard's members checkpoint together, every --checkpoint-every seconds, at
  evaluations and on a signal, so a long sweep can be carried through many short sessions.
- runs/sweeps/<name>/sweep_config.json keeps what the sweep computes: task, taus, seeds,
  baseline, backend, kernels and every run's full config (not how it is scheduled: --engine, --workers,
  --population-size, --device and --checkpoint-every may change). Running the sweep again with
  other settings is refused with a message naming them; --force deletes its runs and starts over.
- runs/sweeps/<name>/sweep.lock is locked while a sweep runs, so two sweeps of one name cannot
  run at the same time.
"""

import fcntl
import json
import os
import shutil
import sys
import time

from act_experiments.cli import OneLineParser, checked, fail, number_list
from act_experiments.data import tasks
from act_experiments.data.text import corpus_facts
from act_experiments.files import ROOT
from act_experiments.training.checkpoints import WriteFailed
from act_experiments.training.cli import build_parser
from act_experiments.training.config import data_sha256, make_config, upgrade
from act_experiments.tables import write_json
from act_experiments.sweeps.reading import N_distribution
from act_experiments.sweeps.writing import collect, machine
from act_experiments.sweeps.workers import backend_classes, finished, plan_shards, run_shards
from act_numpy.checks import check_float, check_int

CONFIG_FILE, LOCK_FILE = "sweep_config.json", "sweep.lock"
ENGINES, BACKENDS = ("population", "pool"), ("numpy", "torch")
# how a run is carried out rather than what it computes: free to change between two sweeps
SCHEDULING = ("out", "device", "checkpoint_every")
# options the sweep sets for each run itself
SET_BY_SWEEP = ("task", "seed", "tau", "no_act", "fixed_ponder", "random_ponder", "out", "resume", "device")


def default_backend(device):
    """The faster backend for the device (docs/benchmarks_population.md): PyTorch on CUDA; NumPy on
    the CPU, where its populations of 16 took more network-steps per second than PyTorch's at
    logic's size and as many at parity's (with WORKER_ENV's malloc setting, which sweeps use)."""
    return "torch" if device.startswith("cuda") else "numpy"


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------


def parse_args(argv=None, script="sweep.py", task=None, root=None):
    """The sweep's own options and the tokens it passes on to every run.

    task: set for a script that runs one task only (characters.py); --task is then not taken.
    """
    ap = OneLineParser(prog=script, description=__doc__.splitlines()[0])
    ap.add_argument("--name", required=True, help="sweep name: results/<name>/ and runs/sweeps/<name>/")
    if task is None:
        ap.add_argument("--task", required=True, help=", ".join(tasks.ALL_TASKS))
    ap.add_argument("--taus", default="", help="comma-separated time penalties, e.g. 1e-4,1e-3")
    ap.add_argument("--fixed-ponders", default="", metavar="F[,F...]",
                    help="the fixed-computation control: runs with exactly F >= 2 updates per input and no "
                         "halting unit (fixedF-seedS), beside the tau and no-ACT runs (F = 1 is the no-ACT run)")
    ap.add_argument("--random-ponders", default="", metavar="SWEEP:TAU[,TAU...]",
                    help="the random-schedule control (randomTAU-seedS, NumPy): N drawn per input step from the "
                         "N_counts.csv of SWEEP's run tauTAU-seedS")
    ap.add_argument("--save-weights", action="store_true",
                    help="also write every ACT run's final parameters to results/<name>/weights.npz (float16)")
    ap.add_argument("--seeds", type=int, default=1 if task == "characters" else 3,
                    help="networks per tau (seeds 0..seeds-1)")
    ap.add_argument("--first-seed", type=int, default=0, metavar="S",
                    help="seeds S..S+seeds-1 instead: fresh seeds for a sweep that tests what others chose")
    ap.add_argument("--no-baseline", action="store_true", help="skip the no-ACT runs")
    ap.add_argument("--engine", choices=ENGINES, default="population",
                    help="population: runs stacked into populations (default); pool: one process per run")
    ap.add_argument("--backend", choices=BACKENDS,
                    help="backend of every run (default: numpy on the CPU, torch on CUDA)")
    ap.add_argument("--population-size", type=int, metavar="K",
                    help="most members in one population (default: even shards, one per worker, within memory)")
    ap.add_argument("--workers", type=int, default=None,
                    help="shards or runs trained side by side (default: the CPU count; 1 on CUDA, one population per GPU)")
    ap.add_argument("--device", default="auto",
                    help="torch backend: auto (CUDA for populations when present, else CPU), cpu, cuda, cuda:N")
    ap.add_argument("--kernels", action="store_true",
                    help="populations on the fused Triton kernels (torch backend, CUDA, requirements-kernels.txt, "
                         "hidden <= 128) instead of CUDA graphs")
    ap.add_argument("--passage-chunks", type=int, default=None,
                    help="characters: chunks of held-out text in the ponder passage (default 4)")
    ap.add_argument("--force", action="store_true",
                    help="delete every earlier run of a sweep of this name, finished or not, and start over")
    args, passthrough = ap.parse_known_args(argv)
    if task is not None:
        args.task = task
    args.taus = list(checked(ap, number_list, args.taus, "--taus", check_float, 0.0, empty=True))
    args.fixed_ponders = parse_fixed_ponders(ap, args.fixed_ponders)
    args.random_from, args.random_taus = parse_random_ponders(ap, args.random_ponders, root)
    if not (args.taus or args.fixed_ponders or args.random_taus):
        ap.error("need at least one tau or fixed ponder (or random ponder)")
    checked(ap, check_int, "--seeds", args.seeds)
    checked(ap, check_int, "--first-seed", args.first_seed, 0)
    for option, value in (("--workers", args.workers), ("--population-size", args.population_size)):
        if value is not None:
            checked(ap, check_int, option, value)
    ids = [f"tau{t:g}" for t in args.taus]
    if len(set(ids)) < len(ids):
        ap.error(f"--taus: two values name the same runs ({', '.join(ids)}); give each tau once")
    if args.passage_chunks is not None:
        if args.task != "characters":
            ap.error("--passage-chunks is for --task characters")
        checked(ap, check_int, "--passage-chunks", args.passage_chunks)
    if args.task == "characters" and args.passage_chunks is None:
        from act_experiments.sweeps.per_byte import PASSAGE_CHUNKS
        args.passage_chunks = PASSAGE_CHUNKS
    check_name(ap, args.name)
    if args.kernels:
        # the kernels run a population's ponder loop on the torch backend: nothing else can take them
        if args.engine != "population":
            ap.error("--kernels trains populations: leave out --engine pool")
        if args.backend == "numpy":
            ap.error("--kernels runs on the torch backend: leave out --backend numpy")
        args.backend = "torch"
    args.device = resolve_device(ap, args)
    if args.backend is None:
        args.backend = default_backend(args.device)
    if args.backend == "numpy" and args.device != "cpu":
        ap.error(f"the numpy backend runs on the CPU only; --device {args.device} needs --backend torch")
    if args.workers is None:
        args.workers = 1 if args.device.startswith("cuda") else (os.cpu_count() or 1)
    return args, passthrough


def parse_fixed_ponders(parser, text):
    """--fixed-ponders "10,3" -> [10, 3] (kept in the order given: the order the runs are planned
    in); one line for anything but distinct integers >= 2 (F = 1 is the no-ACT baseline)."""
    values = list(checked(parser, number_list, text, "--fixed-ponders", check_int, 2, empty=True))
    if len(set(values)) < len(values):
        parser.error(f"--fixed-ponders: give each F once, got {text}")
    return values


def parse_random_ponders(parser, text, root=None):
    """--random-ponders "parity16_measured:1e-3" -> ("parity16_measured", [0.001]); ("", []) for
    ""; one line for anything else, or for a sweep with no N_counts.csv (in <root>/results/)."""
    if not text:
        return "", []
    name, sep, taus = text.partition(":")
    if not sep or not name:
        parser.error(f"--random-ponders must be SWEEP:TAU[,TAU...], got {text!r}")
    check_name(parser, name)
    taus = list(checked(parser, number_list, taus, "--random-ponders", check_float, 0.0))
    if not ((root or ROOT) / "results" / name / "N_counts.csv").is_file():
        parser.error(f"--random-ponders: results/{name} has no N_counts.csv (a sweep that measured N)")
    return name, taus


def random_distribution(name, tau, seed, script="sweep.py", root=None):
    """reading.N_distribution of run tau<TAU>-seed<S> of <root>/results/<name>, or one line and exit 2."""
    try:
        return N_distribution((root or ROOT) / "results" / name, f"tau{tau:g}-seed{seed}")
    except ValueError as err:
        fail(script, f"--random-ponders: {err}")


def resolve_device(parser, args):
    """The device every run gets: auto becomes cuda or cpu; others are checked (one line if refused)."""
    if args.device == "auto":
        if args.backend == "numpy" or args.engine == "pool":
            return "cpu"
        import torch
        return "cuda" if torch.cuda.is_available() else "cpu"
    from act_experiments.training.backends import TorchBackend
    try:
        TorchBackend.check_config({"device": args.device})
    except ValueError as err:
        parser.error(str(err))
    return args.device


def check_name(parser, name):
    """A sweep's name becomes a folder under runs/sweeps/ and results/: refuse anything else."""
    if name in ("", ".", "..") or "/" in name or os.sep in name:
        parser.error(f"--name must be a plain folder name, got {name!r}")


def passthrough_options(tokens, backend="torch", script="sweep.py"):
    """['--bits', '16', '--lr', '1e-3'] -> {'bits': 16, 'lr': 0.001}, parsed by the training CLI.

    Options the sweep sets for each run itself are refused (one line, exit status 2).
    """
    backend_cls, _ = backend_classes(backend)
    shared = vars(build_parser(backend_cls, prog=script).parse_args(tokens))
    for key in SET_BY_SWEEP:
        if key in shared:
            fail(script, f"{script} sets --{key.replace('_', '-')} itself; leave it out")
    return shared


def jobs_for(args, shared, script="sweep.py", root=None):
    """(run_id, options) of every run of the sweep: each tau and seed, then each baseline seed,
    then each fixed ponder F and seed, then each random ponder's tau and seed."""
    jobs = []
    variants = ([("tau", tau) for tau in args.taus] + ([] if args.no_baseline else [("noact", None)])
                + [("fixed", F) for F in args.fixed_ponders] + [("random", tau) for tau in args.random_taus])
    for kind, value in variants:
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            name = ("noact" if kind == "noact" else f"fixed{value}" if kind == "fixed"
                    else f"{kind}{value:g}")                  # tau0.001, random0.001
            run_id = f"{name}-seed{seed}"
            options = dict(shared, task=args.task, seed=seed, out=str(run_folder(args.name, root) / run_id))
            if args.backend == "torch":
                options["device"] = args.device
            if kind == "tau":
                options["tau"] = value
            else:
                # the baseline is the cap M = 1 by definition, the control the cap M = F
                options.pop("max_ponder", None)
                if kind == "noact":
                    options["no_act"] = True
                elif kind == "fixed":
                    options["fixed_ponder"] = value
                else:
                    options["random_ponder"] = random_distribution(args.random_from, value, seed, script, root)
            jobs.append((run_id, options))
    return jobs


def check_kernels(device, configs, script="sweep.py"):
    """--kernels: one line and exit status 2 where the kernels cannot train these runs (no Triton,
    no CUDA device, more hidden units than they hold); the population would refuse the same in
    its worker, after the sweep's files were written."""
    from act_engine import kernel_act
    why = kernel_act.unavailable(device, max(c["hidden"] for c in configs))
    if why:
        fail(script, f"--kernels: {why}")


def check_jobs(jobs, backend="torch", script="sweep.py"):
    """Every job's full run config (config.make_config), or one line and exit status 2 if any is refused."""
    backend_cls, _ = backend_classes(backend)
    try:
        return [make_config(options, backend_cls) for _, options in jobs]
    except ValueError as err:
        fail(script, str(err))


def run_folder(name, root=None):
    """Where a sweep's runs live: <root, the checkout by default>/runs/sweeps/<name>/ (not committed)."""
    return (root or ROOT) / "runs" / "sweeps" / name


# ---------------------------------------------------------------------------------------------
# The sweep's settings and its lock
# ---------------------------------------------------------------------------------------------


def sweep_config(args, jobs, configs):
    """What a sweep computes, as stored in runs/sweeps/<name>/sweep_config.json: task, taus, seeds,
    baseline, backend, kernels (only when set), the text's sha256 (None for the synthetic tasks)
    and every run's config without the SCHEDULING options."""
    runs = {run_id: {k: v for k, v in c.items() if k not in SCHEDULING} for (run_id, _), c in zip(jobs, configs)}
    config = {"task": args.task, "taus": args.taus, "seeds": args.seeds, "baseline": not args.no_baseline,
              "backend": args.backend, "data_sha256": data_sha256(configs[0]), "runs": runs}
    if args.fixed_ponders:
        config["fixed_ponders"] = args.fixed_ponders
    if args.random_taus:
        config["random_ponders"] = args.random_ponders
    if args.first_seed:
        config["first_seed"] = args.first_seed
    if args.kernels:
        config["kernels"] = True
    return json.loads(json.dumps(config))     # as it reads back from the file


def differences(old, new):
    """The settings that differ between two sweep configs, as text: "--lr 0.001 before, 0.01 now"."""
    names = {"task": "--task", "taus": "--taus", "seeds": "--seeds", "baseline": "the baseline (--no-baseline)",
             "backend": "--backend", "fixed_ponders": "--fixed-ponders", "random_ponders": "--random-ponders",
             "kernels": "--kernels"}
    # a sweep stored before backends could be chosen was trained by PyTorch; one stored without
    # fixed or random ponders has none (and neither has a new one that asks for none); one stored
    # without kernels did not use them
    old = {"backend": "torch", "fixed_ponders": [], "random_ponders": "", "kernels": False, **old}
    new = {"fixed_ponders": [], "random_ponders": "", "kernels": False, **new}
    diffs = [(names[k], old.get(k), new[k]) for k in names if old.get(k) != new[k]]
    changed = {}
    for run_id in sorted(new["runs"].keys() & old.get("runs", {}).keys()):
        # a run stored before a config key existed had that key's old value (config.upgrade)
        flat_old, flat_new = (_flat(upgrade(c["runs"][run_id])) for c in (old, new))
        for k in sorted(flat_old.keys() | flat_new.keys()):
            if flat_old.get(k) != flat_new.get(k):
                changed.setdefault(k, (flat_old.get(k), flat_new.get(k)))
    diffs += [("--" + k.replace("_", "-"), *values) for k, values in changed.items()]
    text = [f"{name} {_show(a)} before, {_show(b)} now" for name, a, b in diffs]
    if old.get("data_sha256") != new["data_sha256"]:
        text.append("the text's content (sha256) differs")
    return "; ".join(text)


def _flat(config):
    """A run's config with its task options at the top level (as on the command line)."""
    return {**{k: v for k, v in config.items() if k != "task_options"}, **config.get("task_options", {})}


def _show(value):
    """A setting as on the command line: taus as 1e-3,1e-2; others as JSON."""
    return ",".join(f"{v:g}" for v in value) if isinstance(value, list) else json.dumps(value)


def open_sweep(folder, config, force=False, script="sweep.py"):
    """Lock a sweep's run folder and check its stored config (or store it); returns the lock's file.

    The lock (fcntl.flock on sweep.lock) is held while the returned file stays open: use it in a
    with block around the whole sweep. Refusals are one line: a lock held by another sweep
    (status 1), or settings that differ from the stored ones (status 2; --force deletes the old
    runs). A folder from before sweep_config.json existed is taken as it is.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = open(folder / LOCK_FILE, "a")
    except OSError as err:
        fail(script, f"cannot use the run folder {folder}: {err.strerror or err}", 1)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        fail(script, f"another sweep named {folder.name!r} is running (it holds {folder / LOCK_FILE}); "
                     "wait for it to end or choose another --name", 1)
    path = folder / CONFIG_FILE
    if force:
        for entry in folder.iterdir():
            if entry.is_dir():
                shutil.rmtree(entry)
            elif entry.name != LOCK_FILE:
                entry.unlink()
    elif path.exists():
        try:
            old = json.loads(path.read_text())
            diff = differences(old, config)
        except (ValueError, AttributeError, KeyError, TypeError):
            lock.close()
            fail(script, f"{path} is damaged: pass --force to delete this sweep's runs and start over")
        if diff:
            lock.close()
            fail(script, f"{folder} holds a sweep with other settings ({diff}): run it with its own "
                         "settings, choose another --name, or pass --force to delete its runs and start over")
    try:
        write_json(path, config)
    except BaseException:
        lock.close()        # a full disk, say: the lock goes with the sweep that cannot start
        raise
    return lock


def main(argv=None, script="sweep.py", task=None, root=None):
    """Entry point of scripts/sweep.py (and scripts/characters.py, with task="characters"); root: the
    folder to write results/<name>/ and runs/sweeps/<name>/ under, if not the checkout (a Path).
    Every failure ends in one line on stderr: 2 for options refused, 1 for a run or a file that
    stops the sweep, 130 or 143 after SIGINT or SIGTERM (see run_shards).
    """
    try:
        _sweep(argv, script, task, root or ROOT)
    except WriteFailed as err:
        # the sweep's own files, its settings and its results: each is replaced in one step, so
        # the old one stands, and the runs are kept
        fail(script, f"{err}; make room or fix the permissions, then run the same command again "
                     "(finished runs are kept)", 1)


def _sweep(argv, script, task, root):
    """The sweep of main: check, train what is missing, write the results."""
    args, tokens = parse_args(argv, script, task, root)
    shared = passthrough_options(tokens, args.backend, script)
    if args.task != "characters":
        shared.setdefault("eval_size", 1000)
    # float32 whichever the backend: the speed a sweep needs, and one dtype for both backends
    shared.setdefault("dtype", "float32")
    jobs = jobs_for(args, shared, script, root)
    configs = check_jobs(jobs, args.backend, script)
    if args.kernels:
        check_kernels(args.device, configs, script)
    with open_sweep(run_folder(args.name, root), sweep_config(args, jobs, configs), args.force, script):
        out_dir = root / "results" / args.name
        todo = [(job, config) for job, config in zip(jobs, configs) if not finished(job[1]["out"])]
        if args.engine == "pool":
            shards = [[job] for job, _ in todo]
        else:
            shards = plan_shards([j for j, _ in todo], [c for _, c in todo], args.workers,
                                 args.population_size, script=script) if todo else []
        sizes = sorted({len(s) for s in shards}) or [0]
        members = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
        plan = (f"{len(shards)} population(s) of {members}" if args.engine == "population"
                else f"{len(shards)} process(es)")
        engine = f"{args.backend} on the kernels" if args.kernels else args.backend
        print(f"{len(jobs)} runs of {args.task} ({len(todo)} to train: {plan}), {engine} on {args.device}, "
              f"{min(args.workers, max(1, len(shards)))} worker(s) -> {out_dir.relative_to(root)}", flush=True)
        start = time.perf_counter()
        trained = run_shards(shards, args.workers, args.engine, args.backend, script, kernels=args.kernels)
        train_wall = time.perf_counter() - start
        if args.task == "characters":
            from act_experiments.sweeps import per_byte
            import torch
            torch.set_num_threads(min(4, os.cpu_count() or 1))
            runs = per_byte.collect(jobs, out_dir, args.passage_chunks)
        else:
            random_of = {f"random{tau:g}-seed{seed}": tau for tau in args.random_taus
                         for seed in range(args.first_seed, args.first_seed + args.seeds)}
            runs = collect(jobs, out_dir, random_of, args.save_weights)
        analysis = time.perf_counter() - start - train_wall
        old = out_dir / "sweep.json"
        if not trained and old.exists():
            # nothing was trained this time (only the results were written again): keep the times
            before = json.loads(old.read_text())
            train_wall = before.get("train_wall_time_s", before.get("wall_time_s", train_wall))
        meta = {"command": f"python scripts/{script} " + " ".join(argv if argv is not None else sys.argv[1:]),
                "task": args.task, "taus": args.taus, "seeds": args.seeds, "baseline": not args.no_baseline,
                "engine": args.engine, "backend": args.backend, "device": args.device,
                "shared_options": shared, "runs": len(runs), "workers": args.workers,
                **({"fixed_ponders": args.fixed_ponders} if args.fixed_ponders else {}),
                **({"random_ponders": args.random_ponders} if args.random_taus else {}),
                **({"kernels": True} if args.kernels else {}),
                "train_wall_time_s": round(train_wall, 1), "wall_time_s": round(train_wall + analysis, 1),
                "machine": machine()}
        if args.first_seed:
            meta["first_seed"] = args.first_seed
        if args.task == "characters":
            meta.update(passage_chunks=args.passage_chunks, corpus=corpus_facts(shared.get("data")),
                        analysis_time_s=round(analysis, 1))
        write_json(out_dir / "sweep.json", meta)
    if args.task == "characters":
        for r in runs:
            tau = "no ACT" if not r["act"] else f"tau {r['tau']:g}"
            print(f"{tau:>12s} seed {r['seed']}: {r['bits_per_char']:.3f} bits/char, mean ponder {r['mean_ponder']:.2f}")
    print(f"{len(runs)} runs in {train_wall + analysis:.0f} s; results in {out_dir.relative_to(root)}")
