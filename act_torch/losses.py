"""The training objective of ACT in torch (eq. 12), for one network or K stacked networks.

    target, live, in_sequence = loss_inputs(y, mask, "sigmoid", 1, dtype=torch.float64, device="cpu")
    loss, wrong, rho = act_loss(y_hat, N, R, target, live, in_sequence, kind="sigmoid", heads=1, tau=1e-3)

The normalisation is ``act_numpy.losses``': the task loss is cross-entropy summed over the steps
that have targets (and over the heads of a multi-head softmax), then averaged over the batch;
the ponder cost is tau * sum_t rho_t over each sequence's steps, averaged over the batch.
Every shape may carry leading dimensions: (B, T) for one network, (K, B, T) for a population,
where tau is then a number or a (K,) tensor (one time penalty per member) and the loss is (K,).
"""

import numpy as np
import torch
import torch.nn.functional as F

from act_numpy.model import sequence_steps

KINDS = ("sigmoid", "softmax")


def loss_inputs(y, mask, kind, heads, *, dtype, device):
    """A batch's targets and masks as tensors, computed once per batch (no gradient).

    y: NumPy targets, (..., B, T, 1) or (..., B, T) floats 0/1 for "sigmoid", (..., B, T, heads)
    or (..., B, T) integer labels for "softmax"; mask (..., B, T), 1 where a target exists.
    Returns target ((..., B, T) float, or (..., B, T, heads) int64 with class 0 wherever the mask
    is 0: padding may hold any label, and the mask removes it anyway), live (..., B, T) the mask,
    and in_sequence (..., B, T): 1 on every step up to the sequence's last target, where its ponder
    cost counts (``act_numpy.model.sequence_steps``).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    mask = np.asarray(mask)
    if mask.ndim < 2:
        raise ValueError(f"mask must be (..., B, T), got shape {mask.shape}")
    T = mask.shape[-1]
    as_t = dict(dtype=dtype, device=device)
    in_sequence = sequence_steps(mask.reshape(-1, T)).reshape(mask.shape)   # row by row along T
    if kind == "sigmoid":
        target = torch.as_tensor(np.asarray(y).reshape(mask.shape), **as_t)
    else:
        labels = np.where(mask[..., None] > 0, np.asarray(y).reshape(mask.shape + (heads,)), 0)
        target = torch.as_tensor(labels, dtype=torch.int64, device=device)
    return target, torch.as_tensor(mask, **as_t), torch.as_tensor(in_sequence, **as_t)


def act_loss(y_hat, N, R, target, live, in_sequence, *, kind, heads, tau):
    """The loss of eq. (12) per network, and the statistics the training loop logs.

    y_hat (..., B, T, O) outputs; N (..., B, T) int64 and R (..., B, T) from the ponder loop;
    target, live, in_sequence from ``loss_inputs``; tau a number or a tensor of the leading shape (...).
    Returns loss (...) with gradient (0-d for one network), wrong (..., B, T) bool: a step with a
    target whose prediction is wrong (any head wrong, for a softmax), and rho (..., B, T) with
    gradient: the ponder cost N + R on the sequence's steps, 0 after them.
    """
    B = live.shape[-2]
    if kind == "sigmoid":
        z = y_hat[..., 0]
        per_step = F.binary_cross_entropy_with_logits(z, target, reduction="none")
        data_loss = (per_step * live).sum(dim=(-2, -1)) / B
        wrong = ((z > 0) != (target > 0.5)) & (live > 0)      # logit > 0 <=> probability > 0.5
    elif kind == "softmax":
        C = y_hat.shape[-1] // heads
        logp = F.log_softmax(y_hat.unflatten(-1, (heads, C)), dim=-1)     # (..., B, T, heads, C)
        picked = logp.gather(-1, target[..., None])[..., 0]              # (..., B, T, heads)
        data_loss = -(picked * live[..., None]).sum(dim=(-3, -2, -1)) / B
        wrong = (logp.argmax(dim=-1) != target).any(dim=-1) & (live > 0)
    else:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rho = (N.to(R.dtype) + R) * in_sequence                   # eq. (10) on the sequence's steps
    loss = data_loss + tau * rho.sum(dim=(-2, -1)) / B        # eq. (12): L + tau P, batch means
    return loss, wrong, rho


def statistics(wrong, rho, N):
    """wrong, rho and N as NumPy arrays (no gradient), as the training loop logs them."""
    return {"wrong": wrong.cpu().numpy(), "rho": rho.detach().cpu().numpy(), "N": N.cpu().numpy()}
