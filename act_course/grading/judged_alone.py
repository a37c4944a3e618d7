"""The submissions the judge grades alone, without nbgrader (tests/test_judge.py): ``JUDGE_ONLY``.

Each would otherwise add an nbgrader course of its own to the attack suite: 02 and 03's (the
library called, or kept in a default argument, where the task is to write it; inf sent back as a
value), an honest deep copy in 02, 14's autograd where the gradient is by hand, 09's regular
expression, and 15's course hull beside honest variants (a helper of the learner's own, SciPy).
"""

from .submissions import NB_02, NB_03, NB_09, NB_14, NB_15, Submission

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
