"""The judge's check for notebook 11 (pitfalls), exercise 4: ``kl_directions`` with ``F.kl_div``,
called on halting distributions drawn at grading time (PyTorch tensors, as in the notebook) and
compared with the course's two KL functions, here. PyTorch is there, the point of the exercise;
the course's code is out of reach. The other checks are values from the notebook's runs: they stay
self-checks (act_course.grading.checks_table)."""

import numpy as np
import torch

from act_beyond import pitfalls as pf

from .exchange import Tensor, returned
from .judge import Judged, same, unpack


def ex4(rng):
    """kl_directions: (KL(p || p_G), KL(p_G || p)) on six distributions, five drawn now."""
    lambdas = [np.array([0.1, 0.3, 0.6, 0.2, 0.5, 0.9])] + [rng.uniform(0.05, 0.95, size=6) for _ in range(5)]
    calls, refs = [], []
    for k, lam in enumerate(lambdas):
        p = pf.halting_from_lambdas(torch.tensor(lam, dtype=torch.float64))
        prior = pf.geometric_prior(0.3 if k == 0 else float(rng.uniform(0.1, 0.6)), 6)
        calls.append(("kl_directions", [Tensor(p.numpy()), Tensor(np.asarray(prior, dtype=float))]))
        refs.append((np.round(lam, 3).tolist(), float(pf.kl_halting_to_prior(p, prior)),
                     float(pf.kl_prior_to_halting(p, prior))))

    def verify(entries):
        worst = 0.0
        for entry, (lam, want_paper, want_public) in zip(entries, refs, strict=True):
            paper, public = unpack(returned(entry), 2, "kl_directions")
            worst = max(worst, same(f"lambda = {lam}: the first value, KL(p || p_G)", paper, want_paper, tol=1e-12,
                                    source="pf.kl_halting_to_prior"),
                        same(f"lambda = {lam}: the second value, what KLDivLoss(p.log(), p_G) returns", public,
                             want_public, tol=1e-12, source="pf.kl_prior_to_halting"))
        return (f"kl_directions gives both directions of the KL on {len(refs)} halting distributions, "
                f"{len(refs) - 1} drawn at grading time: max |difference| {worst:.1e} <= 1e-12")
    return [c for c in calls], verify


JUDGED = Judged(
    allowed={4: ()},
    checks={"ex4-check": ex4},
    torch=True,
    modules={"np": "numpy", "numpy": "numpy", "math": "math", "torch": "torch", "F": "torch.nn.functional"},
    why="this exercise asks for F.kl_div: the course's own KL functions are out of reach (the notebook's own "
        "statements that use the course cost nothing)",
)
