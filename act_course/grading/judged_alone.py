"""The submissions the judge grades alone, without nbgrader (tests/test_judge.py): ``JUDGE_ONLY``.

Each would otherwise add an nbgrader course of its own to the attack suite: 02 and 03's (the
library called, or kept in a default argument, where the task is to write it; inf sent back as a
value), an honest deep copy in 02, 14's autograd where the gradient is by hand, 09's regular
expression, 15's course hull beside honest variants (a helper of the learner's own, SciPy), 11's
tests that say True or False whatever the piece, look at its identity or compare values alone,
beside one with Jacobians and a helper of its own, and 13's off-by-one counts beside a lambda in a
cell of the learner's own and SciPy.
"""

from .submissions import NB_02, NB_03, NB_09, NB_11, NB_13, NB_14, NB_15, Submission

JUDGE_ONLY = [
    Submission("03's eq19_gradient calls halting_backward", NB_03, {"ex4-solution": """
def eq19_gradient(ds_t, S, N, tau):
    return halting_backward(np.einsum("bh,bnh->bn", ds_t, S), np.full(len(N), tau), N)
"""}, "none"),
    Submission("03's eq19_gradient keeps halting_backward in a default argument", NB_03, {"ex4-solution": """
def eq19_gradient(ds_t, S, N, tau, backward=halting_backward):
    return backward(np.einsum("bh,bnh->bn", ds_t, S), np.full(len(N), tau), N)
"""}, "none"),
    Submission("02's rate = inf to crash the judge", NB_02, {"ex3-solution": """
rate, radius_Ws, radius_J = float("inf"), float("inf"), float("inf")
"""}, "none"),
    Submission("02's P_nopush made from a deep copy", NB_02, {"ex2-solution": """
import copy
P_nopush = copy.deepcopy(P)
P_nopush["W_x"][:-1] -= P_nopush["W_x"][:-1].mean(axis=0)
"""}, "full"),
]
JUDGE_ONLY += [
    Submission("14's st_gradient through autograd", NB_14, {"ex1-solution": """
import torch
def st_gradient(logits, noise, temperature=1.0):
    beta = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    y = torch.softmax((beta + torch.tensor(noise)) / temperature, dim=1)[:, 1]
    return torch.autograd.grad(y.sum(), beta)[0].numpy()
"""}, "none"),
    Submission("09's position_in_word with a regular expression", NB_09, {"ex4-solution": """
import re
def position_in_word(codes):
    text = bytes(int(c) for c in codes).decode("latin-1")
    out = np.zeros(len(text), dtype=int)
    for match in re.finditer(r"[A-Za-z]+", text):
        out[match.start():match.end()] = np.arange(1, match.end() - match.start() + 1)
    return out
"""}, "full"),
    Submission("15's lower_hull calls the course's frontier.lower_hull", NB_15, {"ex1-solution": """
def lower_hull(points):
    return frontier.lower_hull(points)
"""}, "none"),
    Submission("15's answers with a helper in a cell of the learner's own, no np.interp, scipy's binomtest", NB_15, {
        "ex1-added": "def turns_up(a, b, p):\n    return (b[1] - a[1]) * (p[0] - a[0]) < (p[1] - a[1]) * (b[0] - a[0])\n",
        "ex1-solution": """
def lower_hull(points):
    hull = []
    for p in sorted({(float(x), float(y)) for x, y in points}):
        if not hull or hull[-1][0] != p[0]:
            while len(hull) >= 2 and not turns_up(hull[-2], hull[-1], p):
                hull.pop()
            hull.append(p)
    return [list(v) for v in hull]
""", "ex2-solution": """
def shows_adaptation(point, hull, margin):
    N, error = point
    for (xa, ya), (xb, yb) in zip(hull, hull[1:]):
        if xa <= N <= xb:
            return error + margin <= ya + (yb - ya) * (N - xa) / (xb - xa)
    return False
""", "ex3-solution": """
from scipy.stats import binomtest
def paired_sign_p(a, b):
    d = np.subtract(a, b)
    n = int(np.count_nonzero(d))
    return binomtest(int((d < 0).sum()), n, alternative="greater").pvalue if n else 1.0
"""}, "full"),
]

# 11's test of halting distributions: what it returns is all the judge reads of it
VALUES_ONLY_11 = """
def catches(weights):
    for values, M in [(CASES["A"][0], 100), (CASES["B"][0], 100), (CASES["E"][0], 6),
                      ([[0.3] * 6, [0.995] + [0.2] * 5], 100)]:
        _, p, R = pf.halting_from_values(values, max_ponder=M, weights=weights)
        _, p_ref, R_ref = pf.halting_from_values(values, max_ponder=M)
        if not (torch.allclose(p, p_ref, atol=1e-12) and torch.allclose(R, R_ref, atol=1e-12)):
            return True
    return False
"""
JACOBIANS_11 = """
def outputs(weights, values, M):
    # p and R as functions of the halting values, for torch.autograd.functional.jacobian
    def both(h):
        _, p, R = pf.halting_from_values(h, max_ponder=M, weights=weights)
        return p, R
    h = torch.tensor(values, dtype=torch.float64)
    return list(both(h)) + list(torch.autograd.functional.jacobian(both, h))
"""
JUDGE_ONLY += [
    Submission("11's catches that calls every piece wrong", NB_11, {"ex1-solution": "catches = lambda weights: True\n"},
               "none"),
    Submission("11's catches that calls every piece right", NB_11, {"ex1-solution": """
def catches(weights):
    return False
"""}, "none"),
    Submission("11's catches that tells the course's piece by its identity", NB_11, {"ex1-solution": """
def catches(weights):
    return weights is not pf.remainder_weights
"""}, "none"),
    Submission("11's catches that compares values, not gradients", NB_11, {"ex1-solution": VALUES_ONLY_11}, "none"),
    Submission("11's catches with Jacobians, through a helper in a cell of the learner's own", NB_11, {
        "ex1-added": JACOBIANS_11, "ex1-solution": """
INPUTS = [([0.3] * 5, 100), ([0.2485] * 5, 100), ([0.02] * 6, 6), ([[0.3] * 6, [0.995] + [0.2] * 5], 100)]
catches = lambda weights: any(not torch.allclose(a, b, rtol=1e-9, atol=1e-12) for values, M in INPUTS
                              for a, b in zip(outputs(weights, values, M), outputs(pf.remainder_weights, values, M)))
"""}, "full"),
]
# 13's counts: an off-by-one in each, and honest answers with a lambda of the learner's own and SciPy
JUDGE_ONLY += [
    Submission("13's referent_order that misses the references to position 0", NB_13, {"ex1-solution": """
def referent_order(tokens, N, values):
    tokens, N = np.asarray(tokens), np.asarray(N)
    refers = tokens > values
    theirs = np.take_along_axis(N, np.where(refers, tokens - values, 0), axis=1)[refers]
    mine = N[refers]
    return float(np.mean(mine > theirs)), float(np.mean(mine == theirs)), float(np.mean(mine < theirs))
"""}, "none"),
    Submission("13's loop_cost that keeps the incomplete last batch", NB_13, {"ex3-solution": """
def loop_cost(N, batch_size):
    N = np.asarray(N)
    batches = [N[k:k + batch_size] for k in range(0, len(N), batch_size)]
    steps = np.array([b.max() for b in batches])
    return float(steps.mean()), float(N.sum() / sum(s * b.size for s, b in zip(steps, batches)))
"""}, "none"),
    Submission("13's answers with a lambda in a cell of the learner's own and scipy.ndimage", NB_13, {
        "ex1-added": "shares = lambda mine, theirs: tuple(float(np.mean(f(mine, theirs))) "
                     "for f in (np.greater, np.equal, np.less))\n",
        "ex1-solution": """
def referent_order(tokens, N, values):
    rows, columns = np.nonzero(np.asarray(tokens) >= values)
    N = np.asarray(N)
    return shares(N[rows, columns], N[rows, np.asarray(tokens)[rows, columns] - values])
""", "ex3-solution": """
from scipy import ndimage
def loop_cost(N, batch_size):
    N = np.asarray(N)
    kept = N[:N.shape[0] // batch_size * batch_size]
    labels = np.repeat(np.arange(len(kept)) // batch_size, N.shape[1]).reshape(kept.shape)
    steps = np.asarray(ndimage.maximum(kept, labels, np.arange(len(kept) // batch_size)))
    return float(steps.mean()), float(kept.sum() / (steps.sum() * batch_size * N.shape[1]))
"""}, "full"),
]
