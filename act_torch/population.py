"""A population: K ACT networks of one shape trained as one program, their parameters stacked.

    pop = Population([config_0, config_1, ...])      # training configs (act_experiments.training)
    stats = pop.train_step(x, y, mask)               # x (K, B, T, D): one batch per member

Training many small networks one at a time wastes the machine: every operation is a tiny matrix
product, or on a GPU a tiny kernel launch. Stacking the K networks of a sweep on a leading axis
turns K products of (B, H) x (H, G) into one batched product of (K, B, H) x (K, H, G), so the
whole population takes one step for about the price of a few networks.

Each member keeps everything that makes it its own run: its seed (initial parameters, through
``training.init_parameters``), time penalty tau, halting threshold epsilon, cap M (a no-ACT
baseline is the member with M = 1), halting bias and learning rate. What the members share is
the shape of the computation: task and task options, cell, hidden size, batch size, dtype and
device. Halting, masks and ponder cost are per member and per sequence, exactly as in a single
run; the ponder loop goes on while any row of any member is still running, and the steps a row
takes after it halted get weight p = 0, as in ``act.act_forward``.

Member k trained here follows the same run trained alone by ``act_torch.train.TorchBackend``:
the same forward (eqs 3-13), the same loss (eq. 12, batch means) and torch's Adam, written out
on the stacked tensors so that every member keeps its own learning rate. In float64 the two
agree to rounding (tests/test_population.py).
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

from act_experiments import training
from act_numpy.model import sequence_steps
from act_numpy.params import PARAM_NAMES

from .act import _lstm_cell, _rnn_cell, halting_distribution

# what the members must share: the shape of the computation
SHARED = ("task", "task_options", "cell", "hidden", "batch_size", "dtype", "device")
DTYPES = {"float32": torch.float32, "float64": torch.float64}
# torch.optim.Adam's defaults, which TorchBackend uses
BETA1, BETA2, ADAM_EPS = 0.9, 0.999, 1e-8


class Population:
    """K networks and their Adam states on stacked tensors, built from K training configs.

    configs: full configs (``training.make_config``) that agree on SHARED. params[name] is
    (K, *shape of the single network's parameter), e.g. W_s (K, H, G).
    """

    name = "torch"

    def __init__(self, configs):
        configs = list(configs)
        if not configs:
            raise ValueError("configs must hold at least one member's config")
        for key in SHARED:
            values = {repr(c[key]) for c in configs}
            if len(values) > 1:
                raise ValueError(f"the members of a population must share {key!r}; got {sorted(values)}")
        first = configs[0]
        self.K = len(configs)
        self.cell = first["cell"]
        _, _, self.loss_kind, self.heads = training.model_sizes(first)
        device = first.get("device", "cpu")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device, self.dtype = torch.device(device), DTYPES[first["dtype"]]
        as_t = dict(dtype=self.dtype, device=self.device)
        inits = [training.init_parameters(c) for c in configs]       # float64 NumPy, as TorchBackend
        self.params = {k: torch.tensor(np.stack([p[k] for p in inits]), **as_t).requires_grad_()
                       for k in PARAM_NAMES}
        column = (self.K, 1, 1)
        self.tau = torch.tensor([c["tau"] for c in configs], **as_t)
        self.threshold = torch.tensor([1.0 - c["epsilon"] for c in configs], **as_t).view(column)
        self.max_ponder = torch.tensor([c["max_ponder"] for c in configs], device=self.device).view(column)
        self.lr = torch.tensor([float(c["lr"]) for c in configs], dtype=torch.float64)
        # Adam's step count per member: members may resume from checkpoints of different ages
        self.adam_t = np.zeros(self.K, dtype=np.int64)
        self.adam_m = {k: torch.zeros_like(p) for k, p in self.params.items()}
        self.adam_v = {k: torch.zeros_like(p) for k, p in self.params.items()}

    # -----------------------------------------------------------------------------------------
    # Forward
    # -----------------------------------------------------------------------------------------

    def forward(self, x):
        """y (K, B, T, O), N (K, B, T) int64 and R (K, B, T) for inputs x (K, B, T, D) (a tensor)."""
        P = self.params
        K, B, T, D = x.shape
        H, G = P["W_s"].shape[1:]
        lstm = self.cell == "lstm"
        cell_fn = _lstm_cell if lstm else _rnn_cell
        W_h_test, b_h_test = P["W_h"].detach(), P["b_h"].detach()[:, None, :]
        cap = int(self.max_ponder.max())
        # x~ W_x for every t at once, with b_s folded in; the flag row only on the first ponder step
        xW = torch.baddbmm(P["b_s"][:, None, :], x.reshape(K, B * T, D), P["W_x"][:, :D]).view(K, B, T, G)
        xW_first = xW + P["W_x"][:, D][:, None, None, :]
        xW, xW_first = xW.unbind(2), xW_first.unbind(2)

        def step(z, prev):
            # the cells work on (rows, features): the K members' rows side by side
            flat = (prev[0].reshape(K * B, H), prev[1].reshape(K * B, H)) if lstm else prev.reshape(K * B, H)
            s, new = cell_fn(z.reshape(K * B, G), flat)
            new = (new[0].view(K, B, H), new[1].view(K, B, H)) if lstm else new.view(K, B, H)
            return s.view(K, B, H), new

        zeros = x.new_zeros(K, B, H)
        state = (zeros, zeros) if lstm else zeros
        steps = torch.arange(1, min(cap, 32) + 1, device=x.device)
        means, Ns, Rs = [], [], []
        for t in range(T):
            cum = x.new_zeros(K, B, 1)
            running, states, cells = [], [], []
            prev = state
            for n in range(1, cap + 1):
                x_part = xW_first[t] if n == 1 else xW[t]
                s_prev = prev[0] if lstm else prev
                z = x_part if (t == 0 and n == 1) else torch.baddbmm(x_part, s_prev, P["W_s"])   # eq. (3)
                s, prev = step(z, prev)
                states.append(s)
                if lstm:
                    cells.append(prev[1])
                cum = cum + torch.sigmoid(torch.baddbmm(b_h_test, s.detach(), W_h_test))       # eqs (5), (7)
                # a row takes step n + 1 iff its sum is still below 1 - eps and its member's cap
                # M allows another step (eq. 13)
                go_on = (cum < self.threshold) & (n < self.max_ponder)
                running.append(go_on)
                if not bool(go_on.any()):                      # the one host sync per step
                    break
            n_steps = len(states)
            N = torch.cat(running, dim=2).sum(dim=2).add_(1)    # (K, B)
            S_n = torch.stack(states, dim=2)                    # (K, B, n, H)
            h = torch.sigmoid(torch.baddbmm(P["b_h"][:, None, :], S_n.view(K, B * n_steps, H), P["W_h"]))
            if n_steps > len(steps):
                steps = torch.arange(1, min(2 * n_steps, cap) + 1, device=x.device)
            p, R = halting_distribution(h.view(K * B, n_steps), N.view(K * B), steps[:n_steps])   # eqs (6), (8)
            p, R = p.view(K, B, n_steps, 1), R.view(K, B)
            mean_s = (p * S_n).sum(dim=2)                       # eq. (9)
            if lstm:
                mean_c = (p * torch.stack(cells, dim=2)).sum(dim=2)
            state = (mean_s, mean_c) if lstm else mean_s
            means.append(mean_s)
            Ns.append(N)
            Rs.append(R)
        S = torch.stack(means, dim=2)                           # (K, B, T, H)
        y = torch.baddbmm(P["b_y"][:, None, :], S.view(K, B * T, H), P["W_y"]).view(K, B, T, -1)
        return y, torch.stack(Ns, dim=2), torch.stack(Rs, dim=2)

    # -----------------------------------------------------------------------------------------
    # Loss, step, evaluation
    # -----------------------------------------------------------------------------------------

    def _forward(self, x, y, mask):
        """Per-member losses (K,) with gradient, and per-member statistics as NumPy arrays."""
        x, y, mask = np.asarray(x), np.asarray(y), np.asarray(mask)
        if x.ndim != 4 or x.shape[0] != self.K or mask.shape != x.shape[:3]:
            raise ValueError(f"x must be (K={self.K}, B, T, D) with mask (K, B, T); got x {x.shape}, mask {mask.shape}")
        K, B, T = mask.shape
        as_t = dict(dtype=self.dtype, device=self.device)
        y_hat, N, R = self.forward(torch.as_tensor(x, **as_t))
        live = torch.as_tensor(mask, **as_t)
        if self.loss_kind == "sigmoid":
            z, target = y_hat[..., 0], torch.as_tensor(y.reshape(K, B, T), **as_t)
            per_step = F.binary_cross_entropy_with_logits(z, target, reduction="none")
            data_loss = (per_step * live).sum(dim=(1, 2)) / B
            wrong = ((z > 0) != (target > 0.5)) & (live > 0)
        else:
            C = y_hat.shape[3] // self.heads
            logp = F.log_softmax(y_hat.reshape(K, B, T, self.heads, C), dim=-1)
            labels = np.where(mask[..., None] > 0, y.reshape(K, B, T, self.heads), 0)
            labels = torch.as_tensor(labels, dtype=torch.int64, device=self.device)
            picked = logp.gather(-1, labels[..., None])[..., 0]
            data_loss = -(picked * live[..., None]).sum(dim=(1, 2, 3)) / B
            wrong = (logp.argmax(dim=-1) != labels).any(dim=-1) & (live > 0)
        steps = torch.as_tensor(np.stack([sequence_steps(m) for m in mask]), **as_t)
        rho = (N.to(self.dtype) + R) * steps                    # eq. (10) on the sequences' steps
        loss = data_loss + self.tau * rho.sum(dim=(1, 2)) / B   # eq. (12), per member
        wrong, rho, N = wrong.cpu().numpy(), rho.detach().cpu().numpy(), N.cpu().numpy()
        return loss, [{"wrong": wrong[k], "rho": rho[k], "N": N[k]} for k in range(K)]

    def train_step(self, x, y, mask):
        """One Adam step of every member on its own batch: x (K, B, T, D), y, mask (K, B, T).

        Returns K stats dicts, each as TorchBackend.train_step's: loss, wrong, rho, N.
        """
        for p in self.params.values():
            p.grad = None
        loss, stats = self._forward(x, y, mask)
        loss.sum().backward()            # the members share no parameter: each gets its own gradient
        self._adam()
        return [{"loss": float(v), **s} for v, s in zip(loss.detach().cpu().tolist(), stats)]

    @torch.no_grad()
    def evaluate(self, x, y, mask):
        """The same statistics as train_step, without a gradient or an update."""
        loss, stats = self._forward(x, y, mask)
        return [{"loss": float(v), **s} for v, s in zip(loss.cpu().tolist(), stats)]

    @torch.no_grad()
    def _adam(self):
        """torch.optim.Adam's update (its defaults), every member with its own learning rate and
        step count. The per-member factors are computed in float64 on the host, as torch's Adam
        computes its scalars in Python floats."""
        self.adam_t += 1
        bias1 = 1 - BETA1 ** self.adam_t.astype(np.float64)
        bias2_sqrt = np.sqrt(1 - BETA2 ** self.adam_t.astype(np.float64))
        step_size = -self.lr.numpy() / bias1
        for k, p in self.params.items():
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            m, v = self.adam_m[k], self.adam_v[k]
            m.lerp_(g, 1 - BETA1)
            v.mul_(BETA2).addcmul_(g, g, value=1 - BETA2)
            column = (-1,) + (1,) * (p.dim() - 1)
            step = torch.tensor(step_size, dtype=p.dtype, device=p.device).view(column)
            root = torch.tensor(bias2_sqrt, dtype=p.dtype, device=p.device).view(column)
            denom = (v.sqrt() / root).add_(ADAM_EPS)
            p.add_(step * m / denom)

    def member_params(self, k):
        """Member k's parameters as float64 NumPy arrays (the single network's shapes)."""
        return {name: p[k].detach().cpu().numpy().astype(np.float64) for name, p in self.params.items()}

    def member_state(self, k):
        """Member k's parameters and Adam state in the layout of TorchBackend.state_dict(), so a
        member's checkpoint resumes as a single run and a single run's as a member."""
        state = {"adam_t": np.array(int(self.adam_t[k]))}
        for name, p in self.params.items():
            state[f"param/{name}"] = p[k].detach().cpu().numpy().copy()
            state[f"adam_m/{name}"] = self.adam_m[name][k].cpu().numpy().copy()
            state[f"adam_v/{name}"] = self.adam_v[name][k].cpu().numpy().copy()
        return state

    def load_member_state(self, k, state):
        """Set member k from a state dict of TorchBackend.state_dict()'s layout."""
        as_t = dict(dtype=self.dtype, device=self.device)
        with torch.no_grad():
            for name, p in self.params.items():
                p[k].copy_(torch.as_tensor(state[f"param/{name}"], **as_t))
                self.adam_m[name][k].copy_(torch.as_tensor(state[f"adam_m/{name}"], **as_t))
                self.adam_v[name][k].copy_(torch.as_tensor(state[f"adam_v/{name}"], **as_t))
        self.adam_t[k] = int(state["adam_t"])
