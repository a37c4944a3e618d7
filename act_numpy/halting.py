"""From halting units h^n to the halting distribution p^n, and the gradient back (eqs 6-8, 13-20).

This module knows nothing about cells or weights: it only turns a sequence of halting values
into N(t), R(t) and p, which makes it easy to test against hand-worked cases.

Arrays are batch-first with the ponder step last: ``h (B, n_steps)``, the layout of act_forward's
cache too (``act.PonderSteps``); epsilon and the cap M are numbers.
"""

import numpy as np


def halting_update(h, cum, running, n, epsilon, max_ponder):
    """Advance the halting bookkeeping by one ponder step n (1-based).

    h (B,)        halting unit h^n of this step, eq. (5)
    cum (B,)      sum_{k<n} h^k over the steps already taken
    running (B,)  bool, True for rows that have not halted before step n
    Returns p (B,) the weight p^n (0 for rows that halted earlier), halt (B,) bool marking
    rows whose N(t) is n, and the updated ``cum`` and ``running``. (The engine calls this with
    K networks' rows (K, B) and an epsilon and max_ponder per network, arrays of shape (K, 1).)
    """
    threshold = h.dtype.type(1.0 - epsilon)       # compared in h's dtype, float32 too
    # eq. (7) with the cap of eq. (13): stop at the first n where the sum reaches 1 - epsilon
    halt = running & ((cum + h >= threshold) | (n >= max_ponder))
    # eq. (6): p^n = h^n before the halting step, p^N = R(t) = 1 - sum_{k<N} h^k (eq. 8)
    p = np.where(halt, 1.0 - cum, np.where(running, h, 0.0))
    cum = np.where(running & ~halt, cum + h, cum)
    return p, halt, cum, running & ~halt


def forced_update(h, cum, running, n, N):
    """halting_update with N(t) given instead of found: every row halts at its own step N.

    h, cum, running, n as in halting_update; N (B,) int, the step each row halts at (1 <= N).
    Before N the weights are ACT's, p^n = h^n (eq. 6); at N the remainder 1 - sum_{k<N} h^k
    (eq. 8), clipped at 0: a forced N may lie past the step where ACT would have halted, where
    the sum already exceeds 1. Where N is ACT's own N(t) the sum is below 1 - epsilon, nothing
    is clipped, and p is ACT's exactly. With h = 0 (no halting unit) p^N = 1: the output reads the
    N-th state alone, as the fixed-computation control's does.
    Returns p, halt, cum, running as halting_update does.
    """
    halt = running & (n >= N)
    p = np.where(halt, np.maximum(1.0 - cum, 0.0), np.where(running, h, 0.0))
    cum = np.where(running & ~halt, cum + h, cum)
    return p, halt, cum, running & ~halt


def halting_weights(h, epsilon=0.01, max_ponder=100):
    """N(t), p and R(t) for halting values that are known in advance.

    h (B, n_steps) with n_steps >= the number of steps needed (at most max_ponder are read).
    Returns N (B,) int, p (B, n_steps) with zeros after N, R (B,).
    """
    h = np.asarray(h, dtype=float)
    if h.ndim == 1:
        h = h[None, :]
    B, n_steps = h.shape
    cum = np.zeros(B)
    running = np.ones(B, dtype=bool)
    N = np.zeros(B, dtype=np.int64)
    R = np.zeros(B)
    p = np.zeros((B, n_steps))
    for n in range(1, n_steps + 1):
        p[:, n - 1], halt, cum, running = halting_update(h[:, n - 1], cum, running, n, epsilon, max_ponder)
        N[halt] = n
        R[halt] = p[halt, n - 1]
        if not running.any():
            break
    if running.any():
        raise ValueError(f"h has {n_steps} steps but some rows have not halted; give at least max_ponder")
    return N, p, R


def halting_backward(dp, dR, N):
    """Gradient of the loss with respect to every halting unit, eqs (14)-(20).

    dp (B, n_steps)  dL/dp^n with p treated as free variables
    dR (B,)          extra gradient on R(t) = p^N, e.g. tau * dL/drho from the ponder cost
    N (B,) int       halting step of each row (held constant, as in the paper)
    Returns dh (B, n_steps): for n < N, dL/dh^n = dL/dp^n - dL/dp^N - ... (eq. 19), and
    dL/dh^N = 0 (eq. 20) because h^N appears nowhere in p, nor in R.
    """
    N = np.asarray(N)[..., None]                     # (B, 1)
    n_range = np.arange(1, dp.shape[-1] + 1)         # (n_steps,): the ponder steps n = 1, 2, ...
    # p^N = R = 1 - sum_{n<N} h^n, so every h^n with n < N moves p^N by -1 (eq. 18)
    dpN = np.take_along_axis(dp, N - 1, axis=-1) + np.asarray(dR)[..., None]
    return np.where(n_range < N, dp - dpN, 0.0)
