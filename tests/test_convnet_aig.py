"""act_beyond.convnet_aig: the straight-through Gumbel gate, the target-rate loss, the gated
residual network (a closed gate is the identity, skipping equals masking), and the experiment's
training loop (act_experiments.experiments.convnet_aig.train)."""

import json
import math

import numpy as np
import pytest
import torch

from act_beyond import convnet_aig as aig
from act_experiments.experiments import convnet_aig as aig_experiment
from act_experiments.tables import read_csv


def small_net(gates="hard", blocks=3, channels=4, seed=0, dtype=torch.float64, **kwargs):
    return aig.build(gates, blocks=blocks, channels=channels, seed=seed, **kwargs).to(dtype)


def images(B=6, seed=0, dtype=torch.float64):
    return torch.rand(B, 1, 8, 8, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# ---------------------------------------------------------------------------------------------
# the Gumbel-softmax gate
# ---------------------------------------------------------------------------------------------

def test_open_bias_is_the_logit_of_the_open_fraction():
    assert aig.open_bias(0.85) == pytest.approx(math.log(0.85 / 0.15))
    assert aig.open_bias(0.5) == 0.0
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="open_fraction"):
            aig.open_bias(bad)


def test_hard_gumbel_softmax_is_the_one_hot_argmax_with_the_soft_gradient():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(50, 2, generator=g, dtype=torch.float64)
    noise = aig.gumbel_noise((50, 2), torch.Generator().manual_seed(1), dtype=torch.float64)
    weights = torch.randn(50, 2, generator=g, dtype=torch.float64)
    hard_in = logits.clone().requires_grad_(True)
    hard = aig.gumbel_softmax(hard_in, noise=noise, hard=True)
    soft_in = logits.clone().requires_grad_(True)
    soft = aig.gumbel_softmax(soft_in, noise=noise, hard=False)
    # forward: exactly one-hot, at the argmax of logits + noise
    assert set(hard.detach().unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(hard.detach().argmax(1), (logits + noise).argmax(1))
    assert torch.equal(hard.detach().sum(1), torch.ones(50, dtype=torch.float64))
    # backward: the gradient of the soft sample (straight-through)
    (hard * weights).sum().backward()
    (soft * weights).sum().backward()
    assert torch.allclose(hard_in.grad, soft_in.grad, rtol=0, atol=1e-15)


def test_soft_gumbel_softmax_passes_gradcheck_in_float64():
    logits = torch.randn(4, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2), requires_grad=True)
    noise = aig.gumbel_noise((4, 2), torch.Generator().manual_seed(3), dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda l: aig.gumbel_softmax(l, temperature=0.7, noise=noise, hard=False),
                                    (logits,))


def test_the_gumbel_max_trick_opens_a_gate_with_the_softmax_probability():
    n, b = 200_000, aig.open_bias(0.85)
    logits = torch.tensor([[0.0, b]]).expand(n, 2)
    z = aig.gumbel_softmax(logits, generator=torch.Generator().manual_seed(0))[:, aig.EXECUTE]
    # binomial standard deviation sqrt(0.85 * 0.15 / n) = 8e-4
    assert abs(z.mean().item() - 0.85) < 0.004


def test_gumbel_softmax_refuses_bad_arguments():
    with pytest.raises(ValueError, match="temperature"):
        aig.gumbel_softmax(torch.zeros(2, 2), temperature=0.0)
    with pytest.raises(ValueError, match="noise"):
        aig.gumbel_softmax(torch.zeros(2, 2), noise=torch.zeros(3, 2))


def test_gumbel_noise_is_finite_at_the_ends_of_the_uniform():
    g = aig.gumbel_noise((100_000,), torch.Generator().manual_seed(0))
    assert torch.isfinite(g).all()
    # mean of the standard Gumbel distribution: the Euler-Mascheroni constant
    assert abs(g.mean().item() - 0.5772) < 0.02


def test_gate_modes_and_the_initial_open_fraction():
    gate = aig.Gate(4, hidden=16, open_fraction=0.85).double()
    with torch.no_grad():           # no weights: every image gets the bias alone
        gate.fc2.weight.zero_()
    x = images(4000).expand(4000, 4, 8, 8).contiguous()
    gen = torch.Generator().manual_seed(0)
    z_soft, logits = gate(x, "soft")
    assert logits.shape == (4000, 2) and torch.allclose(z_soft, torch.full_like(z_soft, 0.85))
    z = gate(x, "sample", gen)[0]
    assert set(z.unique().tolist()) <= {0.0, 1.0} and abs(z.mean().item() - 0.85) < 0.03
    assert torch.equal(gate(x, "argmax")[0], torch.ones(4000, dtype=torch.float64))
    assert torch.equal(gate(x, "open")[0], torch.ones(4000, dtype=torch.float64))
    with pytest.raises(ValueError, match="mode"):
        gate(x, "maybe")


@pytest.mark.slow
def test_most_gates_of_a_new_network_start_open():
    net = small_net(blocks=6, channels=8).train()
    _, z = net(images(512), generator=torch.Generator().manual_seed(0))
    assert z.shape == (512, 6)
    assert 0.7 < z.mean().item() < 0.95


# ---------------------------------------------------------------------------------------------
# the target-rate loss
# ---------------------------------------------------------------------------------------------

def test_target_rate_loss_by_hand_and_its_gradient():
    z = torch.tensor([[1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0]],
                     dtype=torch.float64, requires_grad=True)
    # zbar = (1, 0.25, 0.25); t = 0.5: (0.5)^2 + (0.25)^2 + (0.25)^2
    loss = aig.target_rate_loss(z, 0.5)
    assert loss.item() == pytest.approx(0.375)
    assert aig.target_rate_loss(z, 0.5, reduction="mean").item() == pytest.approx(0.125)
    loss.backward()
    expected = -2 * (0.5 - torch.tensor([1.0, 0.25, 0.25], dtype=torch.float64)) / 4
    assert torch.allclose(z.grad, expected.expand(4, 3))
    # a block executed too often is pushed closed (positive gradient: descent lowers z), too rarely open
    assert (z.grad[:, 0] > 0).all() and (z.grad[:, 1:] < 0).all()


@pytest.mark.slow
def test_target_rate_loss_is_zero_at_the_target_and_passes_gradcheck():
    z = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    assert aig.target_rate_loss(z, 0.5).item() == 0.0
    soft = torch.rand(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0), requires_grad=True)
    assert torch.autograd.gradcheck(lambda s: aig.target_rate_loss(s, 0.3), (soft,))


def test_target_rate_loss_refuses_bad_arguments():
    z = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="target"):
        aig.target_rate_loss(z, 1.5)
    with pytest.raises(ValueError, match="z must be"):
        aig.target_rate_loss(torch.zeros(3), 0.5)
    with pytest.raises(ValueError, match="reduction"):
        aig.target_rate_loss(z, 0.5, reduction="max")


# ---------------------------------------------------------------------------------------------
# the network
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("convs", [1, 2])
def test_a_closed_gate_is_the_identity_and_open_gates_are_a_resnet(convs):
    net = small_net("hard", blocks=3, convs=convs).eval()
    plain = small_net("none", blocks=3, convs=convs).eval()
    plain.load_state_dict({k: v for k, v in net.state_dict().items() if not k.startswith("gate_units.")})
    x = images()
    # every gate open: the plain ResNet with the same weights
    assert torch.allclose(net(x, mode="open")[0], plain(x)[0], rtol=0, atol=1e-12)
    # the gates of block 1 closed for every image: the network without block 1
    for gate in net.gate_units:
        with torch.no_grad():
            gate.fc2.weight.zero_()
    with torch.no_grad():
        net.gate_units[1].fc2.bias.copy_(torch.tensor([5.0, -5.0]))
    logits, z = net(x, mode="argmax")
    assert torch.equal(z, torch.tensor([[1.0, 0.0, 1.0]], dtype=torch.float64).expand(6, 3))
    without = small_net("none", blocks=2, convs=convs).eval()
    state = {k: v for k, v in plain.state_dict().items() if not k.startswith(("blocks.1.", "blocks.2."))}
    state.update({k.replace("blocks.2.", "blocks.1."): v for k, v in plain.state_dict().items()
                  if k.startswith("blocks.2.")})
    without.load_state_dict(state)
    assert torch.allclose(logits, without(x)[0], rtol=0, atol=1e-12)


def test_skipping_closed_blocks_gives_what_masking_gives():
    net = small_net("hard", blocks=4, channels=6)
    with torch.no_grad():             # spread the gates' decisions over the images
        for gate in net.gate_units:
            gate.fc2.weight.mul_(40.0)
            gate.fc2.bias.zero_()
    net.eval()
    x = images(64)
    masked, z = net(x, mode="argmax")
    skipped, z_skip = net(x, mode="argmax", skip=True)
    assert 0.1 < z.mean().item() < 0.9, "the test needs some gates open and some closed"
    assert torch.equal(z, z_skip)
    assert torch.allclose(masked, skipped, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="skip"):
        net(x, mode="soft", skip=True)


@pytest.mark.slow
def test_gate_values_per_mode_and_shapes():
    net = small_net("hard", blocks=3).train()
    x = images(32)
    logits, z = net(x, generator=torch.Generator().manual_seed(0))
    assert logits.shape == (32, 10) and z.shape == (32, 3)
    assert set(z.detach().unique().tolist()) <= {0.0, 1.0}
    _, z_soft = net(x, mode="soft")
    assert ((z_soft > 0) & (z_soft < 1)).all()
    assert net.eval().default_mode() == "argmax"
    assert small_net("soft").default_mode() == "soft" and small_net("none").default_mode() == "open"
    assert small_net("none", blocks=0)(x)[1].shape == (32, 0)


def test_the_straight_through_gradient_reaches_the_gates():
    net = small_net("hard", blocks=3).train()
    logits, z = net(images(16), generator=torch.Generator().manual_seed(0))
    (logits.square().sum() + aig.target_rate_loss(z, 0.2)).backward()
    for gate in net.gate_units:
        assert gate.fc2.weight.grad.abs().sum() > 0


def test_build_is_seeded_and_leaves_the_global_generator_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    a, b, c = small_net(seed=5), small_net(seed=5), small_net(seed=6)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters()))


def test_the_network_refuses_bad_arguments():
    with pytest.raises(ValueError, match="gates"):
        aig.AIGNet(gates="sometimes")
    with pytest.raises(ValueError, match="convs"):
        aig.AIGNet(convs=3)
    with pytest.raises(ValueError, match="blocks"):
        aig.AIGNet(blocks=-1)
    with pytest.raises(ValueError, match="x must be"):
        small_net()(torch.zeros(8, 8))
    with pytest.raises(ValueError, match="mode"):
        small_net()(images(), mode="coin")
    with pytest.raises(ValueError, match="no gates"):
        small_net("none")(images(), mode="argmax")


def test_block_and_gate_costs():
    assert aig.block_macs(16, 8, convs=2) == 2 * 64 * 16 * 16 * 9
    assert aig.block_macs(8, 8, convs=1) == 64 * 8 * 8 * 9
    assert aig.gate_macs(8, 16, 8) == 64 * 8 + 8 * 16 + 16 * 2
    # a gate costs a few per cent of the block it decides about
    assert aig.gate_macs(8) < 0.05 * aig.block_macs(8, convs=1)


# ---------------------------------------------------------------------------------------------
# data, training, evaluation
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def digits():
    return aig.load_digits_split(seed=0)


def test_the_digits_split(digits):
    assert digits["x_train"].shape == (1348, 1, 8, 8) and digits["x_test"].shape == (449, 1, 8, 8)
    assert digits["x_train"].dtype == torch.float32 and digits["y_train"].dtype == torch.int64
    assert 0.0 == digits["x_train"].min().item() and digits["x_train"].max().item() == 1.0
    assert set(digits["y_test"].tolist()) == set(range(10))
    again, other = aig.load_digits_split(seed=0), aig.load_digits_split(seed=1)
    assert torch.equal(again["y_test"], digits["y_test"]) and not torch.equal(other["y_test"], digits["y_test"])
    # train and test are disjoint: no image of one appears in the other
    train_rows = {tuple(r) for r in digits["x_train"].flatten(1).tolist()}
    shared = sum(tuple(r) in train_rows for r in digits["x_test"].flatten(1).tolist())
    assert shared <= 2, "the digits data holds very few duplicate images; a leak would give many"
    with pytest.raises(ValueError, match="test_fraction"):
        aig.load_digits_split(test_fraction=1.0)


@pytest.mark.slow
def test_training_learns_and_pulls_the_rate_towards_the_target(digits):
    small = {"x_train": digits["x_train"][:256], "y_train": digits["y_train"][:256]}
    plain = aig.build("none", blocks=2, channels=4, seed=0, convs=1)
    history = aig_experiment.train(plain, small, iterations=60, batch_size=64, lr=3e-2, seed=0, log_every=20)
    assert [h["iteration"] for h in history] == [20, 40, 60]
    # seeds 0-2 end at 1.0-1.3
    assert history[-1]["ce"] < 0.75 * math.log(10), "the cross-entropy should fall well below chance's log 10"
    assert all(h["rate_loss"] == 0.0 and h["executed"] == 1.0 for h in history)
    assert not plain.training
    # about 85% of the gates start open; a target of 0.1 closes most of them
    net = aig.build("hard", blocks=3, channels=4, seed=0, convs=1)
    history = aig_experiment.train(net, small, target_rate=0.1, rate_weight=4.0, iterations=40, batch_size=64, lr=1e-2,
                        seed=0, log_every=20)
    assert history[-1]["executed"] < 0.3
    again = aig.build("hard", blocks=3, channels=4, seed=0, convs=1)
    assert aig_experiment.train(again, small, target_rate=0.1, rate_weight=4.0, iterations=40, batch_size=64, lr=1e-2,
                     seed=0, log_every=20) == history
    result = aig.evaluate(net, digits["x_test"][:100], digits["y_test"][:100])
    assert result["z"].shape == (100, 3) and result["predictions"].shape == (100,)
    assert result["executed"] == result["computed"]          # hard gates: computed exactly when open
    assert 0 <= result["accuracy"] <= 1


def test_soft_gates_compute_every_block(digits):
    net = aig.build("soft", blocks=2, channels=4, seed=0, convs=1)
    result = aig.evaluate(net, digits["x_test"][:50], digits["y_test"][:50])
    assert result["computed"] == 1.0 and 0 < result["executed"] < 1


def test_train_refuses_bad_arguments(digits):
    net = aig.build("hard", blocks=1, channels=2)
    for kwargs, name in ((dict(iterations=0), "iterations"), (dict(rate_weight=-1.0), "rate_weight"),
                         (dict(target_rate=2.0), "target_rate"), (dict(batch_size=1), "batch_size")):
        with pytest.raises(ValueError, match=name):
            aig_experiment.train(net, digits, **kwargs)


def test_class_block_usage():
    z = np.array([[1, 0], [1, 1], [0, 0], [1, 0]])
    labels = np.array([0, 0, 2, 2])
    usage = aig.class_block_usage(z, labels, classes=3)
    assert usage.shape == (3, 2)
    assert np.array_equal(usage[0], [1.0, 0.5]) and np.array_equal(usage[2], [0.5, 0.0])
    assert np.isnan(usage[1]).all()
    with pytest.raises(ValueError, match="labels"):
        aig.class_block_usage(z, labels[:3])


# ---------------------------------------------------------------------------------------------
# the sweep's command line
# ---------------------------------------------------------------------------------------------

def load_script():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parent.parent / "scripts" / "convnet_aig.py"
    spec = importlib.util.spec_from_file_location("convnet_aig_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv, message", [
    (["--seeds", "a,b"], "--seeds must be a comma-separated list"),
    (["--rates", "0.5,1.5"], "each of --rates must be in [0, 1], got 1.5"),
    (["--depths", "9"], "each of --depths must be an integer in 0..6, got 9"),
    (["--iterations", "0"], "--iterations must be an integer >= 1"),
])
def test_the_sweep_refuses_bad_options_in_one_line(argv, message, tmp_path, capsys):
    script = load_script()
    with pytest.raises(SystemExit) as stop:
        script.main(argv + ["--out", str(tmp_path / "sweep")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "sweep").exists()


@pytest.mark.slow
def test_the_sweep_redraws_its_figures_from_the_committed_csvs(tmp_path, capsys):
    script = load_script()
    with pytest.raises(SystemExit):
        script.main(["--plot-only", "--out", str(tmp_path / "none")])
    script.main(["--plot-only", "--figures", str(tmp_path)])
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["convnet_aig_tradeoff.png", "convnet_aig_usage.png"]
    out = capsys.readouterr().out
    assert "hard" in out and "static" in out and "soft" in out


def tiny_sweep(out, monkeypatch, stop_at=None, iterations=3, **kw):
    """The sweep of seed 0, rate 0.5 and depth 0 at 3 iterations (three networks) through run();
    returns the networks trained. A KeyboardInterrupt stops it as it starts network ``stop_at``."""
    real, calls = aig_experiment.run_one, []

    def counted(kind, seed, data, target_rate=None, blocks=None, settings=None):
        if len(calls) + 1 == stop_at:
            raise KeyboardInterrupt                  # a stop in the middle of a network
        calls.append(kind)
        return real(kind, seed, data, target_rate=target_rate, blocks=blocks, settings=settings)

    monkeypatch.setattr(aig_experiment, "run_one", counted)
    try:
        aig_experiment.run({"seeds": (0,), "rates": (0.5,), "depths": (0,), "iterations": iterations}, out,
                           log=lambda line: None, **kw)
    finally:
        monkeypatch.undo()
    return calls


def without_time(path):
    return [{k: v for k, v in row.items() if k != "cpu_s"} for row in read_csv(path)]


@pytest.mark.slow
def test_a_stopped_sweep_resumes_with_the_same_rows_and_other_settings_are_refused(tmp_path, monkeypatch, capsys):
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    assert tiny_sweep(straight, monkeypatch) == ["static", "hard", "soft"]
    with pytest.raises(KeyboardInterrupt):
        tiny_sweep(stopped, monkeypatch, stop_at=3)
    assert len(read_csv(stopped / "runs.csv")) == 2 and len(read_csv(stopped / "usage.csv")) == 10
    assert tiny_sweep(stopped, monkeypatch) == ["soft"]            # only what was missing
    for name in ("runs.csv", "usage.csv"):
        assert without_time(stopped / name) == without_time(straight / name)
    assert (stopped / "usage.csv").read_text() == (straight / "usage.csv").read_text()
    record = json.loads((stopped / "sweep.json").read_text())
    assert record["settings"]["iterations"] == 3 and record["wall_time_s"] >= 0 and "data" in record
    assert tiny_sweep(stopped, monkeypatch) == []                  # nothing left to do
    before = (stopped / "runs.csv").read_text()
    with pytest.raises(SystemExit) as stop:
        load_script().main(["--out", str(stopped), "--seeds", "0", "--rates", "0.5", "--depths", "0",
                            "--iterations", "4"])
    message = capsys.readouterr().err
    assert stop.value.code == 1 and "other settings" in message and "--force" in message, message
    assert message.count("\n") == 1, message
    assert (stopped / "runs.csv").read_text() == before           # a refused sweep writes nothing
    assert len(tiny_sweep(stopped, monkeypatch, iterations=4, force=True)) == 3
    assert len(read_csv(stopped / "runs.csv")) == 3
