"""The losses the tasks use, each returning (loss, dlogits, wrong), with masks for missing targets.

Conventions: ``logits (B, T, O)``; ``mask (B, T)`` is 1 where a target exists. The loss is summed
over time steps and heads and averaged over the batch, i.e. the mean per-sequence cross-entropy,
so adding ``tau * sum_t rho_t`` (averaged the same way) gives the paper's L^ = L + tau P (eq. 12).
``wrong (B, T)`` marks steps whose prediction is wrong (0 where there is no target); a sequence
is in error when any of its steps is (the paper's sequence error rate).

Leading axes pass through: a population of K networks (population.py) sends logits
(K, B, T, O) and gets one loss per network, (K,).
"""

import numpy as np


def _check_mask(mask, shape):
    mask = np.asarray(mask, dtype=np.float64)
    if mask.shape != shape:
        raise ValueError(f"mask must have shape {shape}, got {mask.shape}")
    return mask


def sigmoid_cross_entropy(logits, targets, mask):
    """Binary targets with one sigmoid unit (parity, logic).

    logits (B, T, 1), targets (B, T, 1) in {0, 1}, mask (B, T).
    The prediction is 1 where the logit is > 0 (a probability above 0.5): thresholding the logit
    at 0.5 instead is a common mistake.
    """
    B = logits.shape[-3]
    mask = _check_mask(mask, logits.shape[:-1])
    z = logits[..., 0]
    t = np.asarray(targets, dtype=logits.dtype).reshape(z.shape)
    # log(1 + e^z) - t z, written so it never overflows
    per_step = np.maximum(z, 0) - t * z + np.log1p(np.exp(-np.abs(z)))
    loss = np.sum(per_step * mask, axis=(-2, -1)) / B
    prob = 0.5 * (1.0 + np.tanh(0.5 * z))
    dlogits = ((prob - t) * mask / B)[..., None].astype(logits.dtype)
    wrong = ((z > 0) != (t > 0.5)) & (mask > 0)
    return loss, dlogits, wrong


def softmax_cross_entropy(logits, targets, mask, heads=1):
    """Several independent softmax heads side by side (addition: 6 digits; sort, characters: 1).

    logits (B, T, heads * C), targets (B, T, heads) or (B, T) integer classes in [0, C), mask (B, T).
    A step is wrong when any head's argmax misses its class.
    """
    *rows, O = logits.shape
    B = logits.shape[-3]
    if O % heads:
        raise ValueError(f"output size {O} is not divisible by heads={heads}")
    C = O // heads
    mask = _check_mask(mask, tuple(rows))
    targets = np.asarray(targets).reshape(*rows, heads).astype(np.int64)
    z = logits.reshape(*rows, heads, C)
    z = z - z.max(axis=-1, keepdims=True)      # shift for a stable log-sum-exp
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    live = mask > 0
    safe_targets = np.where(live[..., None], targets, 0)[..., None]   # padding may hold any value
    if live.any() and (targets[live].min() < 0 or targets[live].max() >= C):
        raise ValueError(f"targets must be classes in [0, {C}) where mask is 1")
    picked = np.take_along_axis(logp, safe_targets, axis=-1)[..., 0]   # (B, T, heads)
    loss = -np.sum(picked * mask[..., None], axis=(-3, -2, -1)) / B
    # d(-log softmax_target)/dz = softmax - one_hot(target)
    grad = np.exp(logp)
    np.put_along_axis(grad, safe_targets, np.take_along_axis(grad, safe_targets, -1) - 1.0, -1)
    dlogits = (grad * (mask / B)[..., None, None]).reshape(logits.shape).astype(logits.dtype)
    wrong = (logp.argmax(axis=-1) != safe_targets[..., 0]).any(axis=-1) & live
    return loss, dlogits, wrong


LOSSES = {"sigmoid": sigmoid_cross_entropy, "softmax": softmax_cross_entropy}


def task_loss(kind, logits, targets, mask, heads=1):
    """The loss of a task's kind (tasks.loss_kind): "sigmoid" (parity, logic) or "softmax"."""
    if kind == "sigmoid":
        return sigmoid_cross_entropy(logits, targets, mask)
    return softmax_cross_entropy(logits, targets, mask, heads=heads)
