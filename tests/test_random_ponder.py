"""Measured N and the random-schedule control (--random-ponder): the computation ACT used, spread at random.

Each layer is checked as ACT is: the hand backward against finite differences and autograd, a
one-point schedule against the fixed-computation control bit for bit, the shuffle probe's forced
halting against ACT itself, the engine's per-row caps against single runs, the loop's streams
(resume is exact), the sweep's option that reads an ACT sweep's N_counts, and the refusals in one
line.
"""

import csv

import numpy as np
import pytest
import torch

from act_engine import numpy_act
from act_experiments.experiments import measured
from act_experiments.sweeps import probe
from act_experiments.sweeps import launch, reading
from act_experiments.sweeps.writing import load_weights
from act_experiments.training import cli, loop
from act_experiments.training.backends import NumpyBackend, TorchBackend
from act_experiments.training.config import draw_schedule
from act_experiments.training.evaluation import N_counts, Tally
from act_experiments.training.populations import NumpyPopulation
from act_numpy import act
from act_numpy.gradcheck import check_act_gradients
from act_numpy.halting import forced_update, halting_update
from act_torch import act as torch_core
from conftest import autograd, make_problem

SMALL = dict(task="parity", bits=4, hidden=8, batch_size=8, iterations=6, eval_every=3, eval_size=24,
             log_every=2, lr=1e-2, dtype="float64")
PROBABILITIES = [0.2, 0.5, 0.3]


def schedule(B=3, T=3, M=4, seed=5):
    return np.random.default_rng(seed).integers(1, M + 1, size=(B, T))


# ---------------------------------------------------------------------------------------------
# The core and its twin
# ---------------------------------------------------------------------------------------------


def test_forced_halting_by_hand():
    h = np.array([[0.3, 0.6, 0.7], [0.9, 0.2, 0.6], [0.5, 0.5, 0.5]])      # h^n of three rows, n = 1, 2, 3
    cum, running = np.zeros(3), np.ones(3, dtype=bool)
    N = np.array([1, 2, 3])
    p = []
    for n in (1, 2, 3):
        p_n, halt, cum, running = forced_update(h[n - 1], cum, running, n, N)
        p.append(p_n)
        assert np.array_equal(halt, N == n)
    # row 0 halts at once (p = 1); row 1 takes h^1 then 1 - h^1; row 2's sum passes 1 before its
    # forced N = 3, and its remainder 1 - 0.7 - 0.6 < 0 is clipped to 0
    np.testing.assert_allclose(np.array(p).T, [[1.0, 0, 0], [0.6, 0.4, 0], [0.7, 0.6, 0.0]], atol=1e-15)
    assert not running.any()


def test_with_no_halting_unit_forced_halting_is_the_cap():
    h, cum, running = np.zeros(4), np.zeros(4), np.ones(4, dtype=bool)
    N = np.array([1, 2, 2, 3])
    for n in (1, 2, 3):
        a = forced_update(h, cum, running, n, N)
        b = halting_update(h, cum, running, n, 0.01, N)
        assert all(np.array_equal(u, v) for u, v in zip(a, b))
        _, _, cum, running = a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_one_point_schedule_is_the_fixed_control_bit_for_bit(cell, dtype):
    x, params, dy, dponder = make_problem(cell, T=3, dtype=dtype)
    fixed = act.fixed_forward(x, params, cell=cell, fixed_ponder=3)
    scheduled = act.scheduled_forward(x, params, cell=cell, N=np.full((3, 3), 3))
    assert all(np.array_equal(a, b) for a, b in zip(fixed[:3], scheduled[:3]))
    g_f, g_s = (act.act_backward(dy.astype(dtype), dponder.astype(dtype), c[3]) for c in (fixed, scheduled))
    assert all(np.array_equal(g_f[k], g_s[k]) for k in g_f)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_forcing_acts_own_N_is_act_exactly(cell):
    x, params, _, _ = make_problem(cell, B=6, T=3, halting_bias=-1.0)
    y, N, R, _ = act.act_forward(x, params, cell=cell, max_ponder=8)
    assert len(np.unique(N)) > 1
    y_f, N_f, R_f, _ = act.scheduled_forward(x, params, cell=cell, N=N, halting=True)
    assert np.array_equal(y, y_f) and np.array_equal(N, N_f) and np.array_equal(R, R_f)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_each_row_takes_its_N_and_reads_that_update(cell):
    x, params, _, _ = make_problem(cell, B=3, T=3)
    N = schedule()
    y, N_out, R, cache = act.scheduled_forward(x, params, cell=cell, N=N)
    assert np.array_equal(N_out, N) and np.all(R == 1.0)
    S_read = np.stack([st.s[np.arange(3), N[:, t] - 1] for t, st in enumerate(cache["steps"])], axis=1)
    np.testing.assert_allclose(y, S_read @ params["W_y"] + params["b_y"], rtol=0, atol=1e-14)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_hand_gradients_match_finite_differences_and_autograd(cell):
    x, params, dy, dponder = make_problem(cell, T=3)
    N = schedule()
    report = check_act_gradients(x, params, dy, dponder, cell=cell, N=N, forward=act.scheduled_forward,
                                 max_coords=30, rng=np.random.default_rng(2))
    for name, r in report.items():
        assert r["skipped"] == 0 and r["rel_error"] < 1e-6, (name, r)
    grads = act.act_backward(dy, dponder, act.scheduled_forward(x, params, cell=cell, N=N)[3])
    assert not grads["W_h"].any() and not grads["b_h"].any()
    _, N_t, _, by_autograd = autograd(torch_core.scheduled_forward, x, params, dy, dponder, cell=cell, N=N)
    assert np.array_equal(N_t, N)
    for k in params:
        np.testing.assert_allclose(by_autograd[k], grads[k], rtol=0, atol=1e-10, err_msg=k)


def test_the_engine_takes_per_row_caps_as_the_core():
    """An ACT member, a fixed member and a random-schedule member stacked: each equals the core."""
    x, params, dy, dponder = make_problem("lstm", T=3, halting_bias=-1.0)
    N = schedule()
    P = {k: np.stack([v, v, v]) for k, v in params.items()}
    caps = np.stack([np.full((3, 3), 8), np.full((3, 3), 3), N])
    y, N_out, R, cache = numpy_act.forward_pass(np.stack([x, x, x]), P, "lstm", 0.01, None,
                                                halting=np.array([[1.0], [0.0], [0.0]]), caps=caps)
    grads = numpy_act.backward_pass(np.stack([dy] * 3), np.stack([dponder] * 3), cache)
    runs = [act.act_forward(x, params, cell="lstm", max_ponder=8),
            act.fixed_forward(x, params, cell="lstm", fixed_ponder=3),
            act.scheduled_forward(x, params, cell="lstm", N=N)]
    for k, (y_k, N_k, R_k, cache_k) in enumerate(runs):
        g_k = act.act_backward(dy, dponder, cache_k)
        assert np.array_equal(N_out[k], N_k)
        np.testing.assert_allclose(y[k], y_k, rtol=0, atol=1e-12)
        for name in params:
            np.testing.assert_allclose(grads[name][k], g_k[name], rtol=0, atol=1e-10, err_msg=(k, name))


@pytest.mark.parametrize("bad", [np.zeros((3, 3), dtype=int), np.full((3, 3), 2.0), np.ones((3, 2), dtype=int),
                                 np.ones(3, dtype=int)])
def test_a_bad_N_is_refused_naming_it(bad):
    x, params, _, _ = make_problem()
    for forward, arg in ((act.scheduled_forward, x), (torch_core.scheduled_forward, torch.tensor(x))):
        with pytest.raises(ValueError, match="^N "):
            forward(arg, params, N=bad)


# ---------------------------------------------------------------------------------------------
# Measured N
# ---------------------------------------------------------------------------------------------


def test_the_tally_splits_rho_into_N_and_R():
    mask = np.array([[1, 1, 0], [1, 0, 0]])            # the second sequence lives for one step
    N = np.array([[2, 3, 9], [1, 9, 9]])
    rho = np.array([[2.5, 3.25, 0.0], [1.75, 0.0, 0.0]])
    tally = Tally()
    tally.add({"loss": 1.0, "wrong": np.zeros((2, 3), bool), "rho": rho, "N": N}, mask)
    fields = tally.fields()
    assert fields["mean_N"] == 2.0 and fields["mean_R"] == pytest.approx(0.5)
    assert fields["mean_N"] + fields["mean_R"] == pytest.approx(fields["mean_ponder"])
    assert N_counts(N, mask) == [[1, 1], [2, 1], [3, 1]]


def test_a_run_records_measured_N_and_a_window_saved_before_it_still_reads():
    fields = Tally({"loss": 2.0, "batches": 1, "rows": 2, "errors": 0, "rho": 5.0, "steps": 2, "max_N": 2,
                    "targets": 2.0}).fields()             # sums saved before N was counted
    assert fields["mean_ponder"] == 2.5 and fields["mean_N"] == 0.0


# ---------------------------------------------------------------------------------------------
# Training: configs, streams, populations, resume
# ---------------------------------------------------------------------------------------------


def test_probabilities_are_normalised_and_set_the_cap():
    config = loop.make_config({"random_ponder": [1, 3]}, NumpyBackend)
    assert config["random_ponder"] == [0.25, 0.75] and config["max_ponder"] == 2
    assert config["out"].endswith("seed0-random")
    draws = draw_schedule(config["random_ponder"], np.random.default_rng(0), (4000,))
    assert set(np.unique(draws)) == {1, 2} and abs(np.mean(draws == 2) - 0.75) < 0.03


@pytest.mark.parametrize("options, word", [
    ({"random_ponder": []}, "random_ponder"), ({"random_ponder": [0.5, -0.1]}, r"random_ponder\[1\]"),
    ({"random_ponder": [1, 0]}, "last N"), ({"random_ponder": "0.5"}, "random_ponder"),
    ({"random_ponder": [1], "fixed_ponder": 2}, "--fixed-ponder"),
    ({"random_ponder": [1, 1], "max_ponder": 5}, "--max-ponder"),
])
def test_a_bad_distribution_is_refused_naming_it(options, word):
    with pytest.raises(ValueError, match=word):
        loop.make_config(options, NumpyBackend)


def test_the_torch_backend_refuses_the_random_schedule():
    with pytest.raises(ValueError, match="random_ponder"):
        loop.make_config({"random_ponder": [1, 1]}, TorchBackend)


@pytest.mark.parametrize("argv, words", [(["--random-ponder", "x"], ["--random-ponder"]),
                                         (["--random-ponder", "0.5,-1"], ["--random-ponder", "got -1.0"]),
                                         (["--random-ponder", "1,1", "--no-act"], ["--no-act"])])
def test_the_cli_refuses_a_bad_distribution_in_one_line(tmp_path, capsys, argv, words):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--backend", "numpy", "--out", str(tmp_path / "run"), *argv])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    assert not (tmp_path / "run").exists()


def test_a_random_run_draws_its_own_N_and_resumes_exactly(tmp_path):
    options = {**SMALL, "random_ponder": PROBABILITIES}
    straight = loop.run({**options, "out": str(tmp_path / "a")}, NumpyBackend, progress=False)
    final = straight["final_eval"]
    assert final["max_N"] <= 3 and final["mean_R"] == 1.0                 # p^N = 1: rho = N + 1
    assert {N for N, _ in final["N_counts"]} == {1, 2, 3}
    assert sum(c for _, c in final["N_counts"]) == SMALL["eval_size"]      # parity: one step per row
    loop.run({**options, "iterations": 3, "out": str(tmp_path / "b")}, NumpyBackend, progress=False)
    resumed = loop.run({"iterations": 6, "out": str(tmp_path / "b")}, NumpyBackend, resume=True, progress=False)
    assert resumed["final_eval"] == final
    # the same seed's ACT run sees the same batches: its data stream is untouched by the draws
    act_run = loop.run({**SMALL, "out": str(tmp_path / "act")}, NumpyBackend, progress=False)
    assert act_run["final_eval"]["N_counts"] != final["N_counts"]


def test_a_population_member_equals_its_run_alone(tmp_path):
    variants = {"random": {"random_ponder": PROBABILITIES}, "act": {}, "fixed": {"fixed_ponder": 2}}
    alone = {name: loop.run({**SMALL, **v, "out": str(tmp_path / name)}, NumpyBackend, progress=False)
             for name, v in variants.items()}
    configs = [loop.make_config({**SMALL, **v, "out": str(tmp_path / f"pop-{name}")}, NumpyBackend)
               for name, v in variants.items()]
    together = loop.train_population(configs, NumpyBackend, NumpyPopulation, progress=False)
    for name, summary in zip(variants, together):
        a, b = summary["final_eval"], alone[name]["final_eval"]
        assert a["N_counts"] == b["N_counts"] and a["loss"] == pytest.approx(b["loss"], rel=1e-12), name


# ---------------------------------------------------------------------------------------------
# Sweeps: --random-ponders SWEEP:TAU, the new columns and tables
# ---------------------------------------------------------------------------------------------

TINY = ["--task", "parity", "--bits", "3", "--hidden", "4", "--batch-size", "4", "--iterations", "4",
        "--eval-every", "2", "--eval-size", "16", "--seeds", "2", "--workers", "1", "--backend", "numpy",
        "--no-baseline"]


def sweep_status(capsys, root, *argv):
    """launch.main on argv, writing runs/ and results/ under root; returns (exit status, stderr)."""
    try:
        launch.main(list(argv), root=root)
        return 0, capsys.readouterr().err
    except SystemExit as exit_info:
        return exit_info.code, capsys.readouterr().err


def test_a_random_sweep_draws_each_seed_from_its_act_run(tmp_path, capsys):
    status, err = sweep_status(capsys, tmp_path, "--name", "act", *TINY, "--taus", "1e-2", "--max-ponder", "4",
                               "--save-weights")
    assert status == 0, err
    act_sweep = reading.load_sweep(tmp_path / "results" / "act", tables=("difficulty", "N_counts"))
    assert all(r["mean_N"] + r["mean_R"] == pytest.approx(r["mean_ponder"]) for r in act_sweep["runs"])
    assert all("N" in d for d in act_sweep["difficulty"])
    with np.load(tmp_path / "results" / "act" / "weights.npz") as w:
        assert sorted({k.split("/")[0] for k in w.files}) == ["tau0.01-seed0", "tau0.01-seed1"]
        assert w["tau0.01-seed0/W_s"].dtype == np.float16
    status, err = sweep_status(capsys, tmp_path, "--name", "rnd", *TINY, "--random-ponders", "act:1e-2")
    assert status == 0, err
    sweep = reading.load_sweep(tmp_path / "results" / "rnd", tables=("N_counts",))
    assert [(r["run"], r["key"], r["random_of"]) for r in sweep["runs"]] == [
        ("random0.01-seed0", reading.random_key(0.01), 0.01), ("random0.01-seed1", reading.random_key(0.01), 0.01)]
    configs = [loop.load_checkpoint(tmp_path / "runs" / "sweeps" / "rnd" / r["run"] / "checkpoint.npz")[1]["config"]
               for r in sweep["runs"]]
    for seed, config in enumerate(configs):
        with open(tmp_path / "results" / "act" / "N_counts.csv") as f:
            counts = {int(r["N"]): int(r["count"]) for r in csv.DictReader(f) if r["run"] == f"tau0.01-seed{seed}"}
        total = sum(counts.values())
        assert config["random_ponder"] == pytest.approx([counts.get(N, 0) / total for N in range(1, max(counts) + 1)])
    # a sweep or a τ it cannot read is refused in one line, before anything is written
    for value in ("nope:1e-2", "act:1e-3", "act"):
        status, err = sweep_status(capsys, tmp_path, "--name", "bad", *TINY, "--random-ponders", value)
        assert status == 2 and len(err.strip().splitlines()) == 1 and "--random-ponders" in err, (value, err)
    assert not (tmp_path / "runs" / "sweeps" / "bad").exists()


# ---------------------------------------------------------------------------------------------
# The shuffle probe on committed weights
# ---------------------------------------------------------------------------------------------


def test_the_probe_reads_committed_weights_and_forcing_N_itself_changes_nothing(tmp_path, capsys):
    status, err = sweep_status(capsys, tmp_path, "--name", "act", *TINY, "--taus", "1e-2", "--max-ponder", "4",
                               "--save-weights", "--halting-bias", "-2")
    assert status == 0, err
    folder = tmp_path / "results" / "act"
    rows = probe.probe(folder)
    assert [r["run"] for r in rows] == ["tau0.01-seed0", "tau0.01-seed1"] and probe.read(folder) == rows
    sweep = reading.load_sweep(folder, tables=())
    weights = load_weights(folder / "weights.npz")
    for run, row in zip(sweep["runs"], rows):
        config = probe.run_config(sweep, run)
        data = probe.held_out(config)
        error, N = probe.sequence_error(config, weights[run["run"]], data)
        forced_error, forced_N = probe.sequence_error(config, weights[run["run"]], data, N)
        assert forced_error == error and np.array_equal(forced_N, N)          # N' = N is ACT exactly
        shuffled, at_mean = probe.forced_schedules(N, data[2])
        assert sorted(shuffled.ravel()) == sorted(N.ravel()) and np.all(at_mean == row["rounded_mean_N"])
        assert row["error"] == error and 0 <= row["shuffled"] <= 1 and 0 <= row["at_mean"] <= 1
    with pytest.raises(SystemExit) as exit_info:
        probe.main([str(tmp_path / "nope")])
    assert exit_info.value.code == 1 and len(capsys.readouterr().err.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# The measured control's registered test and figure
# ---------------------------------------------------------------------------------------------


def test_the_registered_test_says_holds_refuted_or_not_shown():
    act_errors = [0.10, 0.20, 0.15, 0.30, 0.05, 0.12, 0.22, 0.18]
    better = measured.paired_test(act_errors, [e + 0.05 + 0.01 * (i % 3) for i, e in enumerate(act_errors)])
    assert better["verdict"] == "holds" and better["wins"] == 8 and better["sign_p"] == pytest.approx(1 / 256)
    assert better["t_p"] < 1e-6 and better["interval"][1] < 0
    worse = measured.paired_test(act_errors, [e - 0.01 - 0.002 * (i % 2) for i, e in enumerate(act_errors)])
    assert worse["verdict"] == "refuted" and worse["wins"] == 0
    small = measured.paired_test(act_errors, [e + (0.01 if i % 2 else -0.005) for i, e in enumerate(act_errors)])
    assert small["verdict"] == "not shown" and small["interval"][0] < small["mean"] < small["interval"][1]
    # the t-test and the sign test against SciPy's own, on these numbers
    from scipy import stats as scipy_stats
    assert better["t_p"] == pytest.approx(scipy_stats.ttest_1samp(better["differences"], 0, alternative="less").pvalue)


def test_the_ladder_is_read_at_measured_N_on_the_line_between_its_rungs():
    rungs = {2: {0: 0.30}, 3: {0: 0.10}, 5: {0: 0.02}}
    assert measured.ladder_at(rungs, 0, 2.5) == pytest.approx(0.20)
    assert measured.ladder_at(rungs, 0, 4.0) == pytest.approx(0.06)
    assert measured.ladder_at(rungs, 0, 3) == pytest.approx(0.10)
    assert measured.ladder_at(rungs, 0, 1.5) is None and measured.ladder_at(rungs, 0, 6) is None


def test_the_no_act_network_is_the_ladders_first_rung():
    """A sweep with its no-ACT baseline (skewed parity's) reads an N below 2 between F = 1, the
    one-update network, and F = 2; a sweep without it starts at its lowest fixed F."""
    from act_experiments.sweeps.reading import NO_ACT
    runs = [{"key": NO_ACT, "fixed_ponder": None, "seed": 0, "sequence_error": 0.40},
            {"key": "F2", "fixed_ponder": 2, "seed": 0, "sequence_error": 0.30},
            {"key": "F3", "fixed_ponder": 3, "seed": 0, "sequence_error": 0.10},
            {"key": 1e-3, "fixed_ponder": None, "seed": 0, "sequence_error": 0.05}]
    rungs = measured.fixed_ladder({"runs": runs})
    assert list(rungs) == [1, 2, 3] and rungs[1] == {0: 0.40}
    assert measured.ladder_at(rungs, 0, 1.5) == pytest.approx(0.35)
    assert list(measured.fixed_ladder({"runs": runs[1:]})) == [2, 3]


@pytest.mark.slow
def test_a_measured_control_reads_tests_and_draws(tmp_path, capsys):
    args = [*TINY, "--seeds", "3", "--halting-bias", "-2"]
    assert sweep_status(capsys, tmp_path, "--name", "act", *args, "--taus", "1e-2", "--max-ponder", "4",
                        "--fixed-ponders", "2,4", "--save-weights")[0] == 0
    assert sweep_status(capsys, tmp_path, "--name", "rnd", *args, "--random-ponders", "act:1e-2")[0] == 0
    results = tmp_path / "results"
    # neither is a τ sweep: the time-penalty figures and parity's largest sweep pass them over
    assert reading.find_sweeps(results, verbose=False) == [] and not capsys.readouterr().out
    probe.probe(results / "act")
    m = measured.load("tiny", {"tiny": measured.Measured(str(results / "act"), str(results / "rnd"), 1e-2)})
    assert len(m["probe"]) == 3
    v = measured.verdict(m)
    assert v["seeds"] == [0, 1, 2] and v["verdict"] in ("holds", "refuted", "not shown")
    assert v["other"] == [r["sequence_error"] for r in m["random"]["runs"]]
    ladder = measured.verdict(m, against="ladder")
    assert set(ladder["seeds"]) <= {0, 1, 2}
    lo, hi = measured.N_percentiles(m["act"], "tau0.01-seed0")
    assert 1 <= lo <= hi <= 4
    (path,) = measured.plot({"tiny": m}, tmp_path / "figures")
    assert path.name == "control_tiny_measured.png" and path.stat().st_size > 10_000
    assert "against the random" in measured.describe("tiny", m)
