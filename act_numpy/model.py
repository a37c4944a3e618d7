"""An ACT network plus its task loss: a batch in, (loss, grads, stats) out.

    model = ACTModel("rnn", D=64, H=128, O=1, loss="sigmoid", tau=1e-3, rng=np.random.default_rng(0))
    loss, grads, stats = model.loss(x, y, mask)
    Adam(model.params, lr=1e-3).step(grads)

The objective is the paper's L^ = L + tau * P (eq. 12), both terms averaged over the batch:
L is the cross-entropy summed over the steps that have targets, and P = sum_t rho_t over the
steps of each sequence (eq. 11). A sequence's steps are those up to its last target, so the
zero padding after a short sequence costs no ponder time.
"""

import numpy as np

from .act import act_backward, act_forward, fixed_forward, scheduled_forward
from .checks import check_float
from .losses import LOSSES, task_loss
from .params import init_params


def sequence_steps(mask):
    """(B, T) mask of the steps that belong to each sequence: every step up to its last target.

    mask (B, T), 1 where a target exists; leading axes pass through, e.g. (K, B, T)."""
    mask = np.asarray(mask) > 0
    # a step belongs to the sequence if some target exists at or after it
    return np.flip(np.maximum.accumulate(np.flip(mask, axis=-1), axis=-1), axis=-1).astype(np.float64)


def objective(y_hat, N, R, targets, mask, *, loss, heads, tau):
    """The paper's L^ = L + tau P (eqs 10-12) of a batch, each term averaged over the batch.

    y_hat (B, T, O), N and R (B, T) from act_forward; targets and mask (B, T) as the task gives
    them; loss "sigmoid" or "softmax" with ``heads`` groups. Leading axes pass through (K
    networks: y_hat (K, B, T, O) and tau an array (K, 1, 1), one value per network).
    Returns (total, dy, dponder, stats): total = L + tau P; dy = dL^/dy_hat and dponder =
    dL^/drho_t (B, T), what act_backward takes; stats: "data_loss" (L), "ponder_cost" (tau P),
    "rho" (B, T) with zeros outside each sequence, "wrong" (B, T) bool.
    """
    B = np.shape(mask)[-2]
    data_loss, dy, wrong = task_loss(loss, y_hat, targets, mask, heads)
    in_sequence = sequence_steps(mask)
    rho = (N + R) * in_sequence                               # eq. (10), only where the sequence lives
    ponder_cost = np.sum(tau * rho, axis=(-2, -1)) / B        # tau * P, eqs (11)-(12)
    stats = {"data_loss": data_loss, "ponder_cost": ponder_cost, "rho": rho, "wrong": wrong}
    dponder = (tau * in_sequence / B).astype(y_hat.dtype)     # d(tau P)/drho_t, in the network's dtype
    return data_loss + ponder_cost, dy, dponder, stats


class ACTModel:
    """ACT over a tanh RNN or LSTM with a sigmoid or softmax read-out.

    cell: "rnn" or "lstm"; D, H, O: input, state and output sizes; loss: "sigmoid" or "softmax";
    heads: number of softmax groups in the O outputs (addition: 6); tau: time penalty;
    epsilon, max_ponder: halting threshold and cap M (max_ponder=1 is the no-ACT baseline:
    one update per input). fixed_ponder: None for ACT, or F for the fixed-computation control
    (act.fixed_forward: exactly F updates per input, no halting unit; max_ponder is then F).
    scheduled: True for the random-schedule control (act.scheduled_forward: no halting unit,
    and every forward, loss and evaluate is given the numbers of updates N (B, T) to take).
    params: existing parameters, or None to draw them from rng.
    """

    def __init__(self, cell, D, H, O, *, loss="sigmoid", heads=1, tau=1e-3, epsilon=0.01,
                 max_ponder=100, halting_bias=1.0, rng=None, params=None, dtype=np.float64,
                 fixed_ponder=None, scheduled=False):
        if loss not in LOSSES:
            raise ValueError(f"unknown loss {loss!r}; expected one of {tuple(LOSSES)}")
        check_float("tau", tau, 0.0)
        self.cell, self.loss_kind, self.heads = cell, loss, heads
        self.tau, self.epsilon, self.max_ponder = tau, epsilon, max_ponder
        self.fixed_ponder, self.scheduled = fixed_ponder, scheduled
        if fixed_ponder is not None:
            self.max_ponder = fixed_ponder
        if params is None:
            rng = rng if rng is not None else np.random.default_rng(0)
            params = init_params(cell, D, H, O, rng, halting_bias=halting_bias, dtype=dtype)
        self.params = params

    def forward(self, x, N=None):
        """y (B, T, O), N (B, T), R (B, T), cache: act_forward with this model's settings (or
        fixed_forward for the fixed-computation control, scheduled_forward with the N (B, T)
        given for the random-schedule control)."""
        if self.scheduled != (N is not None):
            raise ValueError("N: the random-schedule control takes N (B, T), and only it"
                             if self.scheduled else "N is taken by the random-schedule control only")
        if self.scheduled:
            return scheduled_forward(x, self.params, cell=self.cell, N=N)
        if self.fixed_ponder is not None:
            return fixed_forward(x, self.params, cell=self.cell, fixed_ponder=self.fixed_ponder)
        return act_forward(x, self.params, cell=self.cell, epsilon=self.epsilon, max_ponder=self.max_ponder)

    def _objective(self, y_hat, N, R, y, mask):
        return objective(y_hat, N, R, y, mask, loss=self.loss_kind, heads=self.heads, tau=self.tau)

    def loss(self, x, y, mask, N=None):
        """Loss, gradients (keys of params, plus "x") and statistics for one batch.

        x (B, T, D), y targets as the task gives them, mask (B, T); N (B, T) for the
        random-schedule control only.
        stats: "data_loss", "ponder_cost" (tau * mean P), "N", "R", "rho" (B, T) with zeros
        outside each sequence, "wrong" (B, T) bool, "sequence_error" (B,) bool,
        "mean_ponder" (mean rho over the sequences' steps), "max_ponder" (largest N).
        """
        y_hat, N, R, cache = self.forward(x, N)
        total, dy, dponder, stats = self._objective(y_hat, N, R, y, mask)
        grads = act_backward(dy, dponder, cache)
        in_sequence = sequence_steps(mask)
        stats.update(N=N, R=R, sequence_error=stats["wrong"].any(axis=1),
                     mean_ponder=float(stats["rho"].sum() / max(in_sequence.sum(), 1.0)),
                     max_ponder=int((N * in_sequence).max()))
        return float(total), grads, stats

    def evaluate(self, x, y, mask, N=None):
        """The loss L + tau P and its statistics ("data_loss", "ponder_cost", "rho", "wrong",
        "N"), forward only: no gradient."""
        y_hat, N, R, _ = self.forward(x, N)
        total, _, _, stats = self._objective(y_hat, N, R, y, mask)
        return float(total), dict(stats, N=N)
