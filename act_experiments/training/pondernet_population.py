"""PonderNet's population: K PonderNets on parity trained as one program, and saved and restored exactly.

    pop = PonderNetPopulation([{"seed": 0, "beta": 0.01}, {"seed": 1}], task_options={"bits": 8})
    stats = pop.train_step()                      # one Adam step of every member: (K,) arrays
    pop.save("runs/pondernet/x/pondernet.npz");  pop.restore(...)   # continues exactly

The model and its loss are ``act_beyond.pondernet``'s; the optimiser is the engine's per-member Adam
(``act_engine.adam.MemberAdam``). ``act_experiments.experiments.pondernet`` trains it beside ACT's
population in its comparison.
"""

import numpy as np
import torch

from act_beyond import pondernet as pn
from act_engine.adam import MemberAdam
from act_engine.members import check_member
from act_experiments.data import tasks
from act_experiments.training import config
from act_experiments.training.checkpoints import load_checkpoint, save_checkpoint
from act_numpy.checks import check_float, check_int
from act_numpy.params import PARAM_NAMES

# what the header of a population's checkpoint holds at least
HEADER = ("iteration", "data_rng", "members", "shared")


def initial_params(D, H, O, seed, *, cell="rnn", halting_bias=0.0):
    """Initial parameters of seed ``seed``: ``act_experiments.training.config.seed_parameters``, the
    weights an ACT run of that seed starts from, so a PonderNet and an ACT run of one seed start
    from the same weights; only b_h is set here (``halting_bias``). Float64 NumPy arrays."""
    seed = check_int("seed", seed, low=0)
    return config.seed_parameters(seed, cell, D, H, O, halting_bias)


class PonderNetPopulation:
    """K PonderNets on parity trained as one program: parameters stacked on a leading axis, torch's
    Adam per member (``act_engine.adam.MemberAdam``, the optimiser of the engine's populations),
    each member with its own seed, beta, lambda_p and learning rate.

    members: a list of dicts with "seed" and optionally "beta" (0.01), "lambda_p" (0.2), "lr"
    (1e-3), "halting_bias" (0.0). The shared settings: bits and the training range of non-zero
    counts (``task_options``, as ``tasks.make_batch`` takes them), hidden, max_steps, batch_size,
    cell, dtype. Member k draws its batches from default_rng([seed, 1]), the stream an ACT run
    of that seed reads in ``act_experiments.training.loop``, so the two see the same data.
    """

    def __init__(self, members, *, task_options, hidden=64, max_steps=20, batch_size=128, cell="rnn",
                 dtype="float32"):
        if not isinstance(members, (list, tuple)) or not members:
            raise ValueError("members must be a non-empty list of dicts with a 'seed'")
        if dtype not in pn.DTYPES:
            raise ValueError(f"dtype must be one of {sorted(pn.DTYPES)}, got {dtype!r}")
        if cell not in ("rnn", "lstm"):
            raise ValueError(f"cell must be 'rnn' or 'lstm', got {cell!r}")
        self.task_options = tasks.resolve_options("parity", **dict(task_options))   # checks them
        self.hidden = check_int("hidden", hidden)
        self.max_steps = check_int("max_steps", max_steps)
        self.batch_size = check_int("batch_size", batch_size)
        self.cell, self.dtype = cell, pn.DTYPES[dtype]
        self.members = []
        allowed = {"seed", "beta", "lambda_p", "lr", "halting_bias"}
        for m in members:
            if not isinstance(m, dict) or "seed" not in m or set(m) - allowed:
                raise ValueError(f"each member must be a dict with 'seed' and only {sorted(allowed)}, got {m!r}")
            self.members.append({"seed": check_int("seed", m["seed"], low=0),
                                 "beta": check_float("beta", m.get("beta", 0.01), 0.0),
                                 "lambda_p": check_float("lambda_p", m.get("lambda_p", 0.2), 0.0, 1.0, low_open=True, high_open=True),
                                 "lr": check_float("lr", m.get("lr", 1e-3), 0.0, 1.0, low_open=True, high_open=True),
                                 "halting_bias": float(m.get("halting_bias", 0.0))})
        self.K = len(self.members)
        D = tasks.input_size("parity", **self.task_options)
        inits = [initial_params(D, self.hidden, 1, m["seed"], cell=cell, halting_bias=m["halting_bias"])
                 for m in self.members]
        self.params = {k: torch.tensor(np.stack([p[k] for p in inits]), dtype=self.dtype).requires_grad_()
                       for k in PARAM_NAMES}
        self.beta = torch.tensor([m["beta"] for m in self.members], dtype=self.dtype)
        self.lambda_p = torch.tensor([m["lambda_p"] for m in self.members], dtype=torch.float64)
        self.data_rngs = [np.random.default_rng([m["seed"], config.DATA_STREAM]) for m in self.members]
        self.adam = MemberAdam(self.params, [m["lr"] for m in self.members])
        self.iteration = 0

    def batch(self):
        """Each member's next training batch: x (K, B, 1, D), y (K, B) float."""
        batches = [tasks.make_batch("parity", rng, self.batch_size, **self.task_options) for rng in self.data_rngs]
        x = np.stack([b[0] for b in batches])
        y = np.stack([b[1][:, 0, 0] for b in batches])
        return x, y

    def train_step(self):
        """One Adam step of every member on its own batch; returns a dict of (K,) NumPy arrays:
        "loss", "reconstruction", "kl", "steps" (batch mean of E[n])."""
        x, y = self.batch()
        for p in self.params.values():
            p.grad = None
        x = torch.as_tensor(x, dtype=self.dtype)
        if self.K == 1:
            # one network takes the 2-D products of a single run (a batched product over one
            # member gains nothing, and with several threads on a busy machine it can cost a lot);
            # the member axis is put back for the loss
            alone = {k: p[0] for k, p in self.params.items()}
            out = pn.PonderOutput(*(v[None] for v in pn.ponder_forward(x[0], alone, max_steps=self.max_steps,
                                                                  cell=self.cell)))
        else:
            out = pn.ponder_forward(x, self.params, max_steps=self.max_steps, cell=self.cell)
        loss, parts = pn.pondernet_loss(out, torch.as_tensor(y, dtype=self.dtype), beta=self.beta,
                                     lambda_p=self.lambda_p)
        loss.sum().backward()                 # members share no parameter: each its own gradient
        self.adam.step({k: p.grad for k, p in self.params.items()})
        self.iteration += 1
        return {"loss": loss.detach().numpy().astype(np.float64),
                **{k: v.numpy().astype(np.float64) for k, v in parts.items()}}

    def _shared(self):
        """The settings every member shares, as a checkpoint's header holds them."""
        return {"task_options": self.task_options, "hidden": self.hidden, "max_steps": self.max_steps,
                "batch_size": self.batch_size, "cell": self.cell, "dtype": str(self.dtype)}

    def save(self, path, **extra):
        """Write the population's state to ``path``, an .npz replaced in one step
        (``checkpoints.save_checkpoint``): the stacked parameters, MemberAdam's moments and step
        counts, every member's data-generator state, the iteration, the members and the shared
        settings; ``extra`` (JSON values) goes into the header too."""
        state = {"adam_t": self.adam.t.copy()}
        for name, p in self.params.items():
            state[f"param/{name}"] = p.detach().numpy().copy()
            state[f"adam_m/{name}"] = self.adam.m[name].numpy().copy()
            state[f"adam_v/{name}"] = self.adam.v[name].numpy().copy()
        meta = {"iteration": self.iteration, "data_rng": [rng.bit_generator.state for rng in self.data_rngs],
                "members": self.members, "shared": self._shared(), **extra}
        save_checkpoint(path, state, meta)

    @torch.no_grad()
    def restore(self, path):
        """Continue from the checkpoint ``save`` wrote to ``path``: the next step is the one the
        saved population would have taken. Returns its header. Raises ValueError when it holds
        other members or settings, and checkpoints.Damaged (a ValueError) naming a damaged file."""
        state, meta = load_checkpoint(path, needs=HEADER)
        if meta["members"] != self.members or meta["shared"] != self._shared():
            raise ValueError(f"{path} holds another population: its members or settings differ")
        for name, p in self.params.items():
            p.copy_(torch.as_tensor(state[f"param/{name}"]))
            self.adam.m[name].copy_(torch.as_tensor(state[f"adam_m/{name}"]))
            self.adam.v[name].copy_(torch.as_tensor(state[f"adam_v/{name}"]))
        self.adam.t[:] = state["adam_t"]
        for rng, saved in zip(self.data_rngs, meta["data_rng"]):
            rng.bit_generator.state = saved
        self.iteration = meta["iteration"]
        return meta

    def member_params(self, k):
        """Member k's parameters as float64 NumPy arrays (one network's shapes)."""
        k = check_member(k, self.K)
        return {name: p[k].detach().numpy().astype(np.float64) for name, p in self.params.items()}

    def evaluate(self, x, y, *, max_steps=None, mode="sample", seed=0, threshold=0.5):
        """Every member's ``pn.evaluate_pondernet`` on one batch (x (B, 1, D), y (B, 1, 1)); the coin
        flips of mode "sample" come from torch.Generator().manual_seed(seed), one per member.
        max_steps None: the training limit. Returns a list of K dicts."""
        steps = self.max_steps if max_steps is None else max_steps
        return [pn.evaluate_pondernet(self.member_params(k), x, y, max_steps=steps, cell=self.cell, mode=mode,
                                   generator=torch.Generator().manual_seed(seed), threshold=threshold,
                                   dtype=self.dtype)
                for k in range(self.K)]
