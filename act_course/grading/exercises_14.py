"""The judge's checks for notebook 14 (ConvNet-AIG): two functions written by hand with NumPy, called
on inputs drawn at grading time. ``st_gradient`` (exercise 1) is compared with autograd through
``convnet_aig.gumbel_softmax`` and ``expected_rate_loss`` (exercise 2) with the average of
``target_rate_loss`` over every outcome of the gates, both worked out here; exercise 2's two
values are read back by name. Both run as 03b's pieces do (``by_hand``): the lesson, the course's
code and PyTorch (autograd with it) out of reach of the answers.

Exercise 3 is values worked out from the gates ``Z8`` that its answer cell hands in (a PyTorch
tensor): the target-rate loss, the blocks that descent pushes open and closed, and the ponder steps
that ACT's cost pushes towards more computation (``BY_ITS_TESTS``). The answer's process runs the
lesson's cells the answers need (the setup cell, for ``torch`` and ``aig``) with PyTorch and
read-only copies of ``act_beyond``, ``act_torch`` and ``act_numpy`` beside it, and sends back the
values, sets as sets; the check cells' own tests decide in the judge's process (replay.py), against
autograd through ``aig.target_rate_loss`` run there."""

import itertools

import numpy as np
import torch

from act_beyond import convnet_aig as aig

from .exchange import Read, returned
from .judge import BY_ITS_TESTS, Judged, Wrong, by_hand, same, shaped


@by_hand
def ex1(rng):
    """st_gradient against autograd through aig.gumbel_softmax, 96 noisy gates at T = 0.5, 1, 3."""
    gen = torch.Generator().manual_seed(int(rng.integers(2 ** 31)))
    calls, refs = [("st_gradient", [np.zeros((1, 2)), np.zeros((1, 2)), 1.0])], [(1.0, np.array([[-0.25, 0.25]]))]
    for temperature in (0.5, 1.0, 3.0):
        beta = (2 * torch.randn(32, 2, generator=gen, dtype=torch.float64)).requires_grad_(True)
        g = aig.gumbel_noise((32, 2), gen, dtype=torch.float64)
        (want,) = torch.autograd.grad(aig.gumbel_softmax(beta, temperature=temperature, noise=g)[:, aig.EXECUTE].sum(),
                                      beta)
        calls.append(("st_gradient", [beta.detach().numpy().copy(), g.numpy().copy(), temperature]))
        refs.append((temperature, want.numpy()))

    def verify(entries):
        worst = 0.0
        for entry, (temperature, want) in zip(entries, refs, strict=True):
            mine = shaped(f"T = {temperature}: st_gradient", returned(entry), want.shape)
            worst = max(worst, same(f"T = {temperature}: d y_exec / d beta", mine, want, tol=1e-12, source="autograd",
                                    hint="The factor 1/T?" if temperature != 1 else ""))
        return (f"st_gradient agrees with autograd through aig.gumbel_softmax on 96 noisy gates drawn at grading time "
                f"(T = 0.5, 1 and 3): max |difference| {worst:.1e} <= 1e-12")
    return calls, verify


def _number(value):
    """``value`` as a float when it is one number (a float, an int or a 0-d array), else None."""
    array = np.asarray(value) if not isinstance(value, (list, dict, str, type(None))) else None
    return float(array) if array is not None and array.shape == () and array.dtype.kind in "iuf" else None


def by_outcomes(P, t):
    """The expected target-rate loss: its average over all 2^(B L) outcomes of the gates."""
    P = torch.as_tensor(P, dtype=torch.float64)
    total = 0.0
    for bits in itertools.product((0.0, 1.0), repeat=P.numel()):
        Z = torch.tensor(bits, dtype=torch.float64).view(P.shape)
        total += float(torch.prod(torch.where(Z > 0, P, 1 - P))) * float(aig.target_rate_loss(Z, t))
    return total


@by_hand
def ex2(rng):
    """expected_rate_loss against the average over every outcome; loss_unsure and loss_decisive."""
    cases = [((2, 1), 0.5), ((3, 2), float(rng.uniform(0.1, 0.9))), ((2, 3), float(rng.uniform(0.1, 0.9))),
             ((4, 2), float(rng.uniform(0.1, 0.9))), ((1, 1), float(rng.uniform(0.1, 0.9))),
             ((6, 2), float(rng.uniform(0.1, 0.9)))]
    inputs = [(np.full(shape, 0.5) if k == 0 else rng.uniform(0, 1, size=shape), t) for k, (shape, t) in enumerate(cases)]
    refs = [(P, t, by_outcomes(P, t)) for P, t in inputs]
    P_big = rng.uniform(0, 1, size=(64, 6))
    refs.append((P_big, 0.5, float(((0.5 - P_big.mean(0)) ** 2 + (P_big * (1 - P_big)).sum(0) / 64 ** 2).sum())))
    calls = [("expected_rate_loss", [P, t]) for P, t, _ in refs] + [Read("loss_unsure"), Read("loss_decisive")]

    def verify(entries):
        for entry, (P, t, want) in zip(entries, refs):
            mine = _number(returned(entry))
            if mine is None or abs(mine - want) >= 1e-12:
                raise Wrong(f"P of shape {P.shape}, t = {t:.3f}: your expected loss is {mine!r}, the average over "
                            f"all outcomes of the gates is {want:.10f}")
        unsure, decisive = (_number(returned(e)) for e in entries[len(refs):])
        for name, value, want in (("loss_unsure", unsure, 0.0625), ("loss_decisive", decisive, 0.0)):
            if value is None or abs(value - want) >= 1e-12:
                raise Wrong(f"{name} = {value!r} is not the expected loss of its gates ({want})")
        return (f"expected_rate_loss is the exact average over every outcome of the gates on {len(refs) - 1} batches "
                "drawn at grading time and right for 64 images and 6 blocks; loss_unsure and loss_decisive are right")
    return calls, verify


JUDGED = Judged(
    allowed={1: ()},
    checks={"ex1-check": ex1, "ex2-check": ex2, "ex3-check": BY_ITS_TESTS, "ex3-check-b": BY_ITS_TESTS},
    why="exercises 1 and 2 ask for the piece by hand, with NumPy: the course's code and PyTorch (autograd with "
        "it) are out of reach there; exercise 3 may use act_beyond, act_torch and act_numpy, not the rest of the "
        "course",
    modules={"np": "numpy", "numpy": "numpy", "math": "math", "torch": "torch"},
    library=("act_numpy", "act_torch", "act_beyond"),
    torch=True,
)
