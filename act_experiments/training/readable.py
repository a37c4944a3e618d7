"""The training loop to read: one ACT network, start to end, in one short function.

    config = make_config({"task": "parity", "bits": 8, "iterations": 2000})
    params, history = train_readably(config)

``scripts/train.py --backend numpy`` trains through machinery that also resumes, stops on a
signal, writes logs and checkpoints, and steps populations of networks. ``train_readably`` does
what that machinery does for one network and nothing more: draw a batch, run ACT forward, take
the loss, run the hand-written backward pass, take an Adam step, and now and then evaluate on the
held-out set. Model, backward and Adam are act_numpy's. It draws from the same three random
streams as the machinery (initial parameters, training batches, held-out set), so with the same
config its parameters in float64 are the machinery's bit for bit (tests/test_readable_loop.py).

The config is ``make_config``'s (act_experiments.training.config): the same settings, the same
defaults. The fixed-computation and random-schedule controls are the machinery's only.
"""

import numpy as np

from act_experiments.data import tasks
from act_experiments.training.config import DATA_STREAM, EVAL_STREAM, init_parameters, model_sizes
from act_numpy.act import act_backward, act_forward
from act_numpy.model import objective, sequence_steps
from act_numpy.optim import Adam


def train_readably(config, report=print):
    """Train one ACT network as ``config`` says; returns (params, history).

    params: the seven trained parameters (act_numpy's names and shapes), in config["dtype"].
    history: one dict per evaluation (at iteration 0, every eval_every iterations and at the
    last): "iteration", "sequence_error" (fraction of held-out sequences with a wrong
    prediction), "mean_ponder" (mean rho = N + R over the sequences' steps) and "mean_N".
    report: called with a line of text after each evaluation (None: silent).
    """
    if config.get("fixed_ponder") is not None or config.get("random_ponder") is not None:
        raise ValueError("config: train_readably trains ACT itself; the controls train with loop.run")
    task, options, dtype = config["task"], config["task_options"], np.dtype(config["dtype"])
    _, _, loss, heads = model_sizes(config)
    act = dict(cell=config["cell"], epsilon=config["epsilon"], max_ponder=config["max_ponder"])
    cost = dict(loss=loss, heads=heads, tau=config["tau"])

    # the network: the seed's initial parameters, in the run's dtype, and Adam's moments for them
    params = {name: value.astype(dtype) for name, value in init_parameters(config).items()}
    adam = Adam(params, lr=config["lr"])
    # training batches from the run's own stream; the held-out set drawn once, from another
    data_rng = np.random.default_rng([config["seed"], DATA_STREAM])
    held_out = tasks.make_held_out(task, np.random.default_rng([config["eval_seed"], EVAL_STREAM]),
                                   config["eval_size"], **options)

    def evaluate(iteration):
        """The held-out set in chunks of a batch, forward only; one history entry."""
        x, y, mask = held_out
        errors = sum_rho = sum_N = n_steps = 0.0
        for rows in range(0, len(x), config["batch_size"]):
            part = slice(rows, rows + config["batch_size"])
            y_hat, N, R, _ = act_forward(x[part].astype(dtype), params, **act)
            _, _, _, stats = objective(y_hat, N, R, y[part], mask[part], **cost)
            in_sequence = sequence_steps(mask[part]) > 0    # the steps up to each sequence's last target
            errors += stats["wrong"].any(axis=1).sum()      # a sequence is wrong if any of its steps is
            sum_rho += stats["rho"][in_sequence].sum()
            sum_N += N[in_sequence].sum()
            n_steps += in_sequence.sum()
        entry = {"iteration": iteration, "sequence_error": errors / len(x), "mean_ponder": sum_rho / n_steps,
                 "mean_N": sum_N / n_steps}
        if report is not None:
            report(f"iteration {iteration}: held-out sequence error {entry['sequence_error']:.4f}, "
                   f"mean ponder {entry['mean_ponder']:.3f}")
        return entry

    history = [evaluate(0)]
    for iteration in range(1, config["iterations"] + 1):
        x, y, mask = tasks.make_batch(task, data_rng, config["batch_size"], **options)
        y_hat, N, R, cache = act_forward(x.astype(dtype), params, **act)       # eqs (3)-(9)
        total, dy, dponder, _ = objective(y_hat, N, R, y, mask, **cost)       # L + tau P, eqs (10)-(12)
        if not np.isfinite(total):
            raise FloatingPointError(f"the loss is {total} at iteration {iteration}; a smaller lr may help")
        grads = act_backward(dy, dponder, cache)                            # eqs (14)-(20), by hand
        adam.step(grads)
        if (config["eval_every"] and iteration % config["eval_every"] == 0) or iteration == config["iterations"]:
            history.append(evaluate(iteration))
    return params, history
