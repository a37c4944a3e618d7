"""Losses, Adam and the ACTModel objective, each checked against an independent computation."""

import numpy as np
import pytest
import torch

from act_numpy.gradcheck import rel_error
from act_numpy.losses import sigmoid_cross_entropy, softmax_cross_entropy
from act_numpy.model import ACTModel, objective, sequence_steps
from act_numpy.optim import Adam


def numeric_grad(f, z, delta=1e-6):
    g = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        zp, zm = z.copy(), z.copy()
        zp[i] += delta
        zm[i] -= delta
        g[i] = (f(zp) - f(zm)) / (2 * delta)
    return g


def test_sigmoid_cross_entropy_gradient_mask_and_threshold():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(3, 4, 1)) * 3
    t = (rng.random((3, 4, 1)) > 0.5).astype(float)
    mask = (rng.random((3, 4)) > 0.3).astype(float)
    loss, dz, wrong = sigmoid_cross_entropy(z, t, mask)
    assert rel_error(dz, numeric_grad(lambda v: sigmoid_cross_entropy(v, t, mask)[0], z)) < 1e-7
    ref = -(t * np.log(1 / (1 + np.exp(-z))) + (1 - t) * np.log(1 - 1 / (1 + np.exp(-z))))[..., 0]
    assert loss == pytest.approx((ref * mask).sum() / 3)
    # a logit of 0.3 means p = 0.57 > 0.5: predicted 1 (thresholding the logit at 0.5 would say 0)
    _, _, w = sigmoid_cross_entropy(np.array([[[0.3]]]), np.array([[[1.0]]]), np.ones((1, 1)))
    assert not w.any()
    assert not (wrong & (mask == 0)).any()


def test_softmax_cross_entropy_matches_torch_with_heads_and_mask():
    rng = np.random.default_rng(1)
    B, T, heads, C = 2, 3, 4, 5
    z = rng.normal(size=(B, T, heads * C))
    t = rng.integers(0, C, size=(B, T, heads))
    mask = np.array([[0, 1, 1], [1, 1, 0]], dtype=float)
    loss, dz, wrong = softmax_cross_entropy(z, t, mask, heads=heads)
    zt = torch.tensor(z, requires_grad=True)
    per = torch.nn.functional.cross_entropy(zt.reshape(-1, C), torch.tensor(t).reshape(-1), reduction="none")
    ref = (per.reshape(B, T, heads) * torch.tensor(mask)[..., None]).sum() / B
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=1e-12)
    assert rel_error(dz, zt.grad.numpy()) < 1e-12
    pred = z.reshape(B, T, heads, C).argmax(-1)
    np.testing.assert_array_equal(wrong, (pred != t).any(-1) & (mask > 0))


def test_softmax_rejects_bad_targets_and_heads():
    with pytest.raises(ValueError, match="heads"):
        softmax_cross_entropy(np.zeros((1, 1, 5)), np.zeros((1, 1, 2), dtype=int), np.ones((1, 1)), heads=2)
    with pytest.raises(ValueError, match="targets"):
        softmax_cross_entropy(np.zeros((1, 1, 3)), np.array([[7]]), np.ones((1, 1)))


def test_adam_matches_torch():
    rng = np.random.default_rng(2)
    w0 = rng.normal(size=(3, 2))
    params = {"w": w0.copy()}
    opt = Adam(params, lr=1e-2)
    wt = torch.tensor(w0, requires_grad=True)
    topt = torch.optim.Adam([wt], lr=1e-2)
    for _ in range(5):
        g = rng.normal(size=(3, 2))
        opt.step({"w": g})
        wt.grad = torch.tensor(g)
        topt.step()
    np.testing.assert_allclose(params["w"], wt.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_adam_state_round_trip_continues_exactly():
    rng = np.random.default_rng(3)
    grads = [{"w": rng.normal(size=4)} for _ in range(6)]
    a = {"w": np.ones(4)}
    opt = Adam(a, lr=0.1)
    for g in grads:
        opt.step(g)
    b = {"w": np.ones(4)}
    opt_b = Adam(b, lr=0.1)
    for g in grads[:3]:
        opt_b.step(g)
    saved, saved_w = opt_b.state_dict(), b["w"].copy()
    c = {"w": saved_w}
    opt_c = Adam(c, lr=0.1)
    opt_c.load_state_dict(saved)
    for g in grads[3:]:
        opt_c.step(g)
    np.testing.assert_array_equal(a["w"], c["w"])


def test_sequence_steps_covers_everything_up_to_the_last_target():
    mask = np.array([[0, 1, 0, 0], [0, 0, 0, 1], [1, 1, 0, 0]])
    np.testing.assert_array_equal(sequence_steps(mask), [[1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 0, 0]])


@pytest.mark.parametrize("loss,O,heads", [("sigmoid", 1, 1), ("softmax", 6, 2)])
def test_model_gradient_is_the_gradient_of_its_loss(loss, O, heads):
    """The whole objective L + tau P, padding and all, against finite differences."""
    rng = np.random.default_rng(4)
    model = ACTModel("lstm", 3, 4, O, loss=loss, heads=heads, tau=0.05, halting_bias=-0.5,
                     epsilon=0.05, max_ponder=6, rng=rng)
    x = rng.normal(size=(3, 4, 3))
    mask = np.array([[1, 1, 0, 0], [0, 1, 1, 1], [1, 0, 1, 0]], dtype=float)
    y = (rng.random((3, 4, 1)) > 0.5).astype(float) if loss == "sigmoid" else rng.integers(0, 3, (3, 4, heads))
    total, grads, stats = model.loss(x, y, mask)
    assert total == pytest.approx(stats["data_loss"] + stats["ponder_cost"])
    assert model.evaluate(x, y, mask)[0] == total          # the same objective, forward only
    assert np.all(stats["rho"][0, 2:] == 0)               # padding after the last target costs nothing
    N0 = stats["N"]
    for name in ["W_h", "b_h", "W_y", "b_s"]:
        def f(v, name=name):
            saved = model.params[name]
            model.params = dict(model.params, **{name: v})
            value, _, s = model.loss(x, y, mask)
            model.params = dict(model.params, **{name: saved})
            assert np.array_equal(s["N"], N0), "nudge crossed a halting discontinuity"
            return value
        assert rel_error(grads[name], numeric_grad(f, model.params[name].copy())) < 1e-6, name


@pytest.mark.parametrize("loss,O,heads", [("sigmoid", 1, 1), ("softmax", 6, 2)])
def test_losses_and_objective_take_a_leading_axis_of_networks(loss, O, heads):
    """Stacked as (K, B, T, O), with tau (K, 1, 1), every network gets what it gets alone."""
    rng = np.random.default_rng(5)
    K, B, T = 3, 4, 5
    y_hat = rng.normal(size=(K, B, T, O))
    y = (rng.random((K, B, T, 1)) > 0.5).astype(float) if loss == "sigmoid" else rng.integers(0, 3, (K, B, T, heads))
    mask = (rng.random((K, B, T)) > 0.4).astype(float)
    N, R = rng.integers(1, 5, (K, B, T)), rng.random((K, B, T))
    tau = np.array([1e-3, 1e-2, 0.0])
    total, dy, dponder, stats = objective(y_hat, N, R, y, mask, loss=loss, heads=heads, tau=tau.reshape(K, 1, 1))
    assert total.shape == (K,)
    for k in range(K):
        ref = objective(y_hat[k], N[k], R[k], y[k], mask[k], loss=loss, heads=heads, tau=tau[k])
        assert total[k] == pytest.approx(ref[0], rel=1e-12)
        np.testing.assert_allclose(dy[k], ref[1], rtol=1e-12)
        np.testing.assert_allclose(dponder[k], ref[2], rtol=1e-12)
        for name in ("data_loss", "ponder_cost", "rho", "wrong"):
            np.testing.assert_allclose(stats[name][k], ref[3][name], rtol=1e-12, err_msg=name)
