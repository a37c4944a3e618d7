"""The Universal Transformer's runs (notebook 13, scripts/universal_transformer.py): training, and the committed comparison.

    run = train_ut(depth=None, tau=1e-2, iterations=600, seed=0)   # ACT per position
    rows, meta = read_results("compute")                            # results/universal_transformer/

The model, its halting loop and its evaluation are ``act_beyond.universal_transformer``'s; this
module trains it and reads what scripts/universal_transformer.py wrote (act_experiments.experiments.runner).
"""

import time

import numpy as np
import torch

from act_beyond import universal_transformer as ut
from act_numpy.checks import check_float, check_int

from act_experiments.experiments import runner
from act_experiments.tables import RESULTS


def train_ut(*, depth=None, tau=1e-2, iterations=600, batch_size=64, lr=3e-3, epsilon=0.01, eval_every=100,
             eval_size=1000, seed=0, weights=ut.remainder_weights, dtype=torch.float32, task=None, model=None):
    """Train the encoder on ``ut.make_chains`` with Adam and return its log and parameters.

    depth=None: ACT per position with time penalty tau (eq. 12); depth=D: a fixed-depth UT
    (tau then multiplies the constant D and changes nothing). task: options of ut.make_chains
    (ut.TASK_DEFAULTS); model: options of ut.init_params (ut.MODEL_DEFAULTS; max_steps is ACT's cap M and
    the number of step embeddings). weights: the halting distribution (the paper's by default).

    Seeds: the parameters come from torch.Generator().manual_seed(seed), the training batches
    from np.random.default_rng([seed, 1]) and the held-out set (eval_size rows) from
    np.random.default_rng([seed, 2]): one seed gives an ACT run and fixed-depth runs the same
    initial layer and the same data. Returns {"config", "evals", "params", "train_time_s"}:
    evals is a list of ``ut.evaluate`` records with "iteration", at 0, every eval_every and at the
    end; params the trained tensors (detached).
    """
    task = {**ut.TASK_DEFAULTS, **(task or {})}
    model = {**ut.MODEL_DEFAULTS, **(model or {})}
    if set(task) != set(ut.TASK_DEFAULTS):
        raise ValueError(f"task takes only {sorted(ut.TASK_DEFAULTS)}, got {sorted(task)}")
    if set(model) != set(ut.MODEL_DEFAULTS):
        raise ValueError(f"model takes only {sorted(ut.MODEL_DEFAULTS)}, got {sorted(model)}")
    for name, value, low in (("iterations", iterations, 0), ("batch_size", batch_size, 1),
                             ("eval_every", eval_every, 1), ("eval_size", eval_size, 1), ("seed", seed, 0)):
        check_int(name, value, low)
    tau = check_float("tau", tau, 0.0)
    lr = check_float("lr", lr, 0.0, low_open=True)
    generator = torch.Generator().manual_seed(seed)
    P = ut.init_params(vocab=ut.vocab_size(task["length"], task["values"]), length=task["length"], out=task["values"],
                    generator=generator, dtype=dtype, **model)
    heads = model["heads"]
    opt = torch.optim.Adam(P.values(), lr=lr)
    data = np.random.default_rng([seed, 1])
    held_out = ut.make_chains(np.random.default_rng([seed, 2]), eval_size, **task)
    run = dict(heads=heads, epsilon=epsilon, weights=weights)
    evals = []

    def log(iteration):
        evals.append({"iteration": iteration, **ut.evaluate(P, *held_out, model_depth=depth, **run)})

    log(0)
    start = time.perf_counter()
    for it in range(1, iterations + 1):
        tokens, targets, _ = ut.make_chains(data, batch_size, **task)
        logits, r = ut.ut_forward(P, torch.as_tensor(tokens), depth=depth, **run)
        loss, _, _ = ut.loss_terms(logits, r, torch.as_tensor(targets), tau)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if it % eval_every == 0 or it == iterations:
            log(it)
    config = dict(depth=depth, tau=tau, iterations=iterations, batch_size=batch_size, lr=lr, epsilon=epsilon,
                  seed=seed, eval_size=eval_size, weights=getattr(weights, "__name__", str(weights)),
                  dtype=str(dtype).replace("torch.", ""), **task, **model)
    return {"config": config, "evals": evals, "params": {k: v.detach() for k, v in P.items()},
            "train_time_s": time.perf_counter() - start}


COMMITTED = RESULTS / "universal_transformer"


DEPTHS = range(ut.TASK_DEFAULTS["max_depth"] + 1)


FIELDS = ("error", "sequence_error", "ponder", "rho", "loop_steps", "capped", "weight_sum")


TEXT = ("entry", "kind", "weights")


def flat_eval(e):
    """An ``ut.evaluate`` record as one flat row: its fields, then error_d<k> and ponder_d<k> per depth k."""
    row = {k: e[k] for k in ("iteration",) + FIELDS}
    for r in e["by_depth"]:
        row[f"error_d{r['depth']}"] = r["error"]
        row[f"ponder_d{r['depth']}"] = r["ponder"]
    return row


def read_results(name, folder=None):
    """(rows, meta) of the committed experiment ``name`` ("compute" or "cap"): one row per evaluation
    of every run (entry, kind, tau, depth, max_steps, weights, seed, iteration, the FIELDS, error_d<k>,
    ponder_d<k>), numbers as floats or ints (None where empty), and the settings it ran with."""
    return runner.read(name, COMMITTED if folder is None else folder, TEXT, "scripts/universal_transformer.py")


def final_rows(rows):
    """The last evaluation of every (entry, seed), in the order the entries first appear."""
    return runner.final_rows(rows, key="entry")


def summarise(rows, columns=None):
    """{entry: {column: (mean, lowest, highest) over the seeds' last evaluations, "seeds": n, and the
    entry's kind, tau, depth, max_steps and weights}}, entries in the order of the rows."""
    ends = final_rows(rows)
    columns = columns or [c for c in rows[0] if c not in TEXT + ("tau", "depth", "max_steps", "seed", "iteration")]
    out = {}
    for entry in dict.fromkeys(r["entry"] for r in ends):
        mine = [r for r in ends if r["entry"] == entry]
        s = {k: mine[0][k] for k in ("kind", "tau", "depth", "max_steps", "weights")}
        for c in columns:
            values = [r[c] for r in mine if r.get(c) is not None]
            if values:
                s[c] = (sum(values) / len(values), min(values), max(values))
        s["seeds"] = len(mine)
        out[entry] = s
    return out
