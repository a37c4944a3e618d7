"""The judge's checks for notebook 12 (ACT as attention, and PonderNet).

Exercise 2's ``kl_logit_gradient`` is the KL term's gradient by hand, so it runs as 03b's pieces
do (``by_hand``): with NumPy alone, without the lesson, the course's packages and PyTorch
(autograd with it) out of reach. The references are autograd's gradients through
``act_beyond.pondernet.kl_divergence``, computed here, on halting distributions drawn at grading
time. Exercises 1 and 3 are values worked out from the notebook's fixed inputs (PonderNet's
halting probabilities, the prior's mean; ``BY_ITS_TESTS``): the answer's process sends back the
values, and the check cells' own tests decide in the judge's process (replay.py), against
``pn.generalised_geometric``, ``pn.choose_halting_step`` and ``pn.geometric_prior`` run there.
Those answers may use ``pn`` (the exercise's hint does) and PyTorch: the answer's process gets
read-only copies of ``act_beyond`` and of the two packages it imports, ``act_torch`` and
``act_numpy``.
"""

import numpy as np
import torch

from act_beyond import pondernet as pn
from .exchange import returned
from .judge import BY_ITS_TESTS, Judged, by_hand, same, shaped


@by_hand
def ex2(rng):
    """kl_logit_gradient against autograd through pn.kl_divergence, N = 1 to 10."""
    calls, refs = [], []
    for N in (1, 2, 3, 4, 6, 10):
        for lambda_p in (0.1, 0.3, 0.6):
            lam = rng.uniform(0.05, 0.95, size=N)
            z = torch.logit(torch.tensor(lam, dtype=torch.float64)).requires_grad_(True)
            prior = pn.geometric_prior(lambda_p, N)
            (want,) = torch.autograd.grad(pn.kl_divergence(pn.generalised_geometric(torch.sigmoid(z)), prior), z,
                                          allow_unused=True)
            want = np.zeros(N) if want is None else want.numpy()
            lam = torch.sigmoid(z).detach().numpy().copy()
            calls.append(("kl_logit_gradient", [lam, prior.numpy().copy()]))
            refs.append((f"N = {N}, lambda = {np.round(lam, 3).tolist()}, lambda_p = {lambda_p}", want))

    def verify(entries):
        worst = 0.0
        for entry, (where, want) in zip(entries, refs, strict=True):
            mine = shaped(f"{where}: your gradient", returned(entry), want.shape)
            worst = max(worst, same(f"{where}: dKL/dz", mine, want, source="autograd",
                                    hint="The last entry is 0: p_N holds no lambda_N."))
        return (f"kl_logit_gradient agrees with autograd through pn.kl_divergence on {len(refs)} halting "
                f"distributions drawn at grading time (N = 1 to 10): max |difference| {worst:.1e} <= 1e-10")
    return calls, verify


JUDGED = Judged(
    allowed={2: ()},
    checks={"ex1-check": BY_ITS_TESTS, "ex2-check": ex2, "ex3-check": BY_ITS_TESTS},
    why="exercise 2 asks for the gradient by hand, with NumPy: the course's code and PyTorch (autograd with "
        "it) are out of reach there; exercises 1 and 3 may use act_beyond, act_torch and act_numpy, not the "
        "rest of the course",
    modules={"np": "numpy", "numpy": "numpy", "math": "math", "torch": "torch", "F": "torch.nn.functional"},
    library=("act_numpy", "act_torch", "act_beyond"),
    torch=True,
)
