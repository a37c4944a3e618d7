"""The judge's checks for notebook 11 (pitfalls): exercise 1's test ``catches``, exercise 4's
``kl_directions``, and exercises 2 and 3, values worked out from the notebook's fixed inputs
(halting values on which the two halting tests differ or agree; the cases where ``public_halting``
is wrong and the gallery's entry it implements; ``BY_ITS_TESTS``): the answer's process runs the
lesson's cells they need (the setup cell for ``pf``, section 2's for ``CASES`` and ``results``)
with PyTorch and read-only copies of ``act_beyond``, ``act_torch`` and ``act_numpy`` beside it, as
for exercise 1, and sends back the values; the check cells' own tests decide in the judge's
process (replay.py), against ``pf.halting_from_values`` and the gallery run there.

Exercise 1's answer is a test: ``catches(weights)`` runs a halting distribution, a piece
``weights(h, N, capped) -> (p, R)``, through ``pf.halting_from_values`` and says whether it breaks
eqs (6) and (8). The judge hands it pieces, right and wrong, and decides on the truth values it
returns. How a function crosses to the answer's process: as its source (``exchange.Piece``), which
the runner compiles there in a namespace of its own holding PyTorch and NumPy alone, every piece
under the one name ``piece``, without a comment. None of them is the course's own function, so
``weights is pf.remainder_weights`` and the gallery's names tell the answer nothing, and the
labels (which piece is wrong, and why) never leave this process. Why not a module of pieces that
the answer imports: that would be a file beside it, which it could read, naming each piece and
what is wrong with it; the job holds the sources alone, unlabelled, and an answer that walks the
runner's frames to read them learns only what calling them tells it. The pieces:

- right (``RIGHT``): eqs (6) and (8) as the course writes them; through ``cumsum`` (the notebook's
  hidden piece); a loop over rows; masks multiplied in; and R from a sum rescaled by a factor
  drawn now, so that it differs from the course's in the last bits, as the exercise warns;
- wrong (``WRONG``): the gallery's four and the three of the notebook's hidden tests, and seven it
  has not shown: R from the batch's first halt, R through M at the cap, R's gradient scaled by a
  factor drawn now, h^N in R's gradient, the weights before N detached, the first row's R for
  every row, and weights normalised by their sum. Each is caught by an ordinary row or by one of
  the inputs the exercise's hint names (a sum that stops short of 1, the cap, two rows that halt
  at different steps, the gradients of a weighted sum of p and of N + R), so the notebook's
  solution passes.

The order is shuffled at grading time. The answer runs after the lesson's cells it needs (the
setup cell for ``pf``, section 2's for ``CASES``), with read-only copies of ``act_beyond``,
``act_torch`` and ``act_numpy`` beside it and PyTorch there, as the exercise has it call
``pf.halting_from_values`` and compare with ``pf.remainder_weights``. Its limit: an answer that
held a copy of this module could recognise the pieces by their code rather than test them; the
written test in the answer cell is what the teacher reads.

Exercise 4's ``kl_directions`` is called on halting distributions drawn at grading time (PyTorch
tensors, as in the notebook) and compared with the course's two KL functions, here. It runs
``apart``: PyTorch is there, the point of the exercise, the lesson and the course's code are not.
"""

import numpy as np
import torch

from act_beyond import pitfalls as pf

from .exchange import Piece, Tensor, returned
from .judge import BY_ITS_TESTS, Judged, Wrong, apart, same, truth, unpack

HEAD = "def piece(h, N, capped):\n    steps = torch.arange(1, h.shape[-1] + 1)\n"
BEFORE = "    before = torch.where(steps < N[:, None], h, 0.0)\n"
LAST = "    return torch.where(steps == N[:, None], R[:, None], before), R\n"
H_N = "    h_N = h.gather(-1, (N - 1)[:, None])[:, 0]\n"
THROUGH = "    total = torch.where(steps <= N[:, None], h, 0.0).sum(dim=-1)\n"
REMAINDER = HEAD + BEFORE + "    R = 1.0 - before.sum(dim=-1)\n"

# name -> source; SCALE is a factor drawn at grading time
RIGHT = {
    "eqs (6) and (8) as the course writes them": REMAINDER + LAST,
    "R = 1 - (sum_{n<=N} h^n - h^N), through cumsum": HEAD + BEFORE
    + "    last = (N - 1)[:, None]\n"
      "    R = 1.0 - (torch.cumsum(h, dim=-1).gather(-1, last)[:, 0] - h.gather(-1, last)[:, 0])\n" + LAST,
    "a loop over the rows": "def piece(h, N, capped):\n    rows, remainders = [], []\n"
                            "    for b in range(h.shape[0]):\n        n = int(N[b])\n"
                            "        R = 1.0 - h[b, :n - 1].sum()\n"
                            "        rows.append(torch.cat([h[b, :n - 1], R[None], torch.zeros_like(h[b, n:])]))\n"
                            "        remainders.append(R)\n    return torch.stack(rows), torch.stack(remainders)\n",
    "masks multiplied in": HEAD + "    before = (steps < N[:, None]).to(h.dtype)\n"
                                  "    at = (steps == N[:, None]).to(h.dtype)\n"
                                  "    R = 1.0 - (h * before).sum(dim=-1)\n    return h * before + R[:, None] * at, R\n",
    "R from a rescaled sum, equal to the last bits": HEAD + BEFORE
    + "    R = 1.0 - (before * SCALE).sum(dim=-1) / SCALE\n" + LAST,
}
# name -> (source, what it takes to catch it)
CAP = "a row stopped by the cap (case E)"
BATCH = "a batch of two rows that halt at different steps"
GRAD_P = "the gradient of a weighted sum of p with respect to the halting values"
GRAD_R = "the gradient of N + R with respect to the halting values"
WRONG = {
    "overshoot remainder": (HEAD + BEFORE + THROUGH + H_N + "    R = h_N - torch.relu(total - 1.0)\n" + LAST,
                            "a row whose sum stops between 1 - epsilon and 1 (case B)"),
    "R through N": (HEAD + BEFORE + THROUGH + "    R = 1.0 - total\n" + LAST, "any ordinary row, comparing p and R"),
    "cap drops R": (REMAINDER + H_N + "    R = torch.where(capped, h_N, R)\n" + LAST, CAP),
    "cap zero R": (REMAINDER + "    R = torch.where(capped, torch.zeros_like(R), R)\n" + LAST, CAP),
    "batch remainder (R up to the batch's last halt)":
        (HEAD + BEFORE + "    R = 1.0 - torch.where(steps < N.max(), h, 0.0).sum(dim=-1)\n" + LAST, BATCH),
    "R detached": (REMAINDER + "    return torch.where(steps == N[:, None], R[:, None], before), R.detach()\n", GRAD_R),
    "last weight detached": (REMAINDER + "    return torch.where(steps == N[:, None], R.detach()[:, None], before), R\n",
                             GRAD_P),
    "R up to the batch's first halt":
        (HEAD + BEFORE + "    R = 1.0 - torch.where(steps < N.min(), h, 0.0).sum(dim=-1)\n" + LAST, BATCH),
    "R through M at the cap": (REMAINDER + THROUGH + "    R = torch.where(capped, 1.0 - total, R)\n" + LAST, CAP),
    "R's gradient scaled": (REMAINDER + "    R = R.detach() + SCALE * (R - R.detach())\n" + LAST, GRAD_R),
    "h^N in R's gradient": (REMAINDER + H_N + "    R = R + (h_N - h_N.detach())\n" + LAST, GRAD_R),
    "the weights before N detached": (REMAINDER + "    before = before.detach()\n" + LAST, GRAD_P),
    "the first row's R for every row": (REMAINDER + "    R = R[:1].expand(R.shape[0])\n" + LAST, BATCH),
    "the weights normalised by their sum": (HEAD + "    p = torch.where(steps <= N[:, None], h, 0.0)\n"
                                            "    p = p / p.sum(dim=-1, keepdim=True)\n"
                                            "    return p, p.gather(-1, (N - 1)[:, None])[:, 0]\n",
                                            "any ordinary row whose sum passes 1 (case A)"),
}
SHOWN = {"eqs (6) and (8) as the course writes them", "R = 1 - (sum_{n<=N} h^n - h^N), through cumsum",
         "overshoot remainder", "R through N", "cap drops R", "cap zero R",
         "batch remainder (R up to the batch's last halt)", "R detached", "last weight detached"}


def pieces(rng):
    """[(name, source, None for a right piece or what it takes to catch a wrong one)], shuffled, the
    factors drawn now: a rescaling in [0.3, 3] for the right piece, a gradient scale in [0.3, 0.8]."""
    found = [(name, source.replace("SCALE", repr(float(rng.uniform(0.3, 3.0)))), None)
             for name, source in RIGHT.items()]
    found += [(name, source.replace("SCALE", repr(float(rng.uniform(0.3, 0.8)))), needs)
              for name, (source, needs) in WRONG.items()]
    return [found[k] for k in rng.permutation(len(found))]


def ex1(rng):
    """catches: False on the right pieces, True on the wrong ones, in an order drawn now."""
    drawn = pieces(rng)

    def verify(entries):
        for entry, (name, _, needs) in zip(entries, drawn, strict=True):
            got = returned(entry)
            mine = truth(got)
            if mine is None:
                raise Wrong(f"catches should return True or False, not {got!r}"[:200])
            if needs is None and mine:
                raise Wrong(f"your test calls a right piece wrong ({name}): run it and pf.remainder_weights on the "
                            "same inputs and compare the same outputs and gradients, with a tolerance (a right piece "
                            "written another way can differ in the last bits)")
            if needs is not None and not mine:
                raise Wrong(f"your test lets a wrong piece through ({name}); it takes {needs} to catch it")
        wrong = sum(needs is not None for _, _, needs in drawn)
        unseen = sum(name not in SHOWN for name, _, _ in drawn)
        return (f"catches finds all {wrong} wrong pieces and passes all {len(drawn) - wrong} right ones, in an order "
                f"drawn at grading time; {unseen} of them the notebook does not show")
    return [("catches", [Piece(source)]) for _, source, _ in drawn], verify


@apart
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
    checks={"ex1-check": ex1, "ex2-check": BY_ITS_TESTS, "ex3-check": BY_ITS_TESTS, "ex4-check": ex4},
    torch=True,
    modules={"np": "numpy", "numpy": "numpy", "math": "math", "torch": "torch", "F": "torch.nn.functional"},
    library=("act_numpy", "act_torch", "act_beyond"),
    why="exercise 4 asks for F.kl_div: the course's own KL functions are out of reach there (the notebook's own "
        "statements that use the course cost nothing); exercises 1 to 3 may use act_beyond, act_torch and act_numpy, "
        "not the rest of the course",
)
