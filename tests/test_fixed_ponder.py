"""The fixed-computation control (--fixed-ponder F): ACT without its halting unit, F updates per input.

Each layer is checked as ACT is: the hand backward against finite differences and autograd, the
engine against the core, a population member against its run alone (test_population.py and
test_numpy_population.py carry a fixed member), the command lines' refusals in one line, and
runs and sweeps saved before the option existed still resuming.
"""

import csv
import json

import numpy as np
import pytest
import torch

from act_engine import numpy_act
from act_experiments.training import cli, loop
from act_experiments.sweeps import stats
from act_experiments.sweeps import reading
from act_experiments.training.backends import NumpyBackend
from act_numpy import act
from act_numpy.gradcheck import check_act_gradients
from act_numpy.model import ACTModel
from conftest import autograd, make_problem

from act_engine import torch_act
from act_experiments.sweeps import launch
from act_experiments.training.backends import TorchBackend
from act_torch import act as torch_core

BACKENDS = {"numpy": NumpyBackend, "torch": TorchBackend}
SMALL = dict(task="logic", max_vectors=3, max_gates=3, cell="lstm", hidden=8, batch_size=4, iterations=6,
             eval_every=3, eval_size=16, log_every=2, lr=1e-2)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
@pytest.mark.parametrize("F", [1, 3])
def test_every_row_takes_exactly_F_updates_and_reads_the_last_state(cell, F):
    x, params, _, _ = make_problem(cell, B=4, T=3, halting_bias=8.0)   # ACT itself would stop at N = 1
    y, N, R, cache = act.fixed_forward(x, params, cell=cell, fixed_ponder=F)
    assert np.all(N == F) and np.all(R == 1.0)                          # rho = F + 1
    for st in cache["steps"]:
        assert np.all(st.h == 0.0) and np.all(st.p[:, :-1] == 0.0) and np.all(st.p[:, -1] == 1.0)
    S_last = np.stack([st.s[:, -1] for st in cache["steps"]], axis=1)   # s^F of every input step
    np.testing.assert_allclose(y, S_last @ params["W_y"] + params["b_y"], rtol=0, atol=1e-14)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_F_of_one_is_the_no_act_baseline_exactly(cell):
    x, params, dy, dponder = make_problem(cell, T=3)
    y1, N1, R1, c1 = act.fixed_forward(x, params, cell=cell, fixed_ponder=1)
    y0, N0, R0, c0 = act.act_forward(x, params, cell=cell, max_ponder=1)
    assert np.array_equal(y1, y0) and np.array_equal(N1, N0) and np.array_equal(R1, R0)
    g1, g0 = act.act_backward(dy, dponder, c1), act.act_backward(dy, dponder, c0)
    assert all(np.array_equal(g1[k], g0[k]) for k in g0)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_hand_gradients_match_finite_differences(cell):
    x, params, dy, dponder = make_problem(cell, T=3)
    report = check_act_gradients(x, params, dy, dponder, cell=cell, fixed_ponder=3, forward=act.fixed_forward,
                                 max_coords=40, rng=np.random.default_rng(1))
    for name, r in report.items():
        assert r["skipped"] == 0, name                    # N = F whatever the weights: nothing jumps
        assert r["rel_error"] < 1e-6, (name, r)
    grads = act.act_backward(dy, dponder, act.fixed_forward(x, params, cell=cell, fixed_ponder=3)[3])
    assert not grads["W_h"].any() and not grads["b_h"].any()       # nothing reads the halting unit


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_numpy_and_autograd_agree_and_the_engine_matches_the_core(cell):
    x, params, dy, dponder = make_problem(cell, T=3)
    y, N, R, cache = act.fixed_forward(x, params, cell=cell, fixed_ponder=4)
    grads = act.act_backward(dy, dponder, cache)
    for forward in (torch_core.fixed_forward, torch_act.fixed_forward):
        y_t, N_t, R_t, by_autograd = autograd(forward, x, params, dy, dponder, cell=cell, fixed_ponder=4)
        assert np.array_equal(N_t, N) and np.array_equal(R_t, R)
        np.testing.assert_allclose(y_t, y, rtol=0, atol=1e-12)
        for k in params:
            np.testing.assert_allclose(by_autograd[k], grads[k], rtol=0, atol=1e-10, err_msg=k)


def test_a_stacked_fixed_member_leaves_its_act_neighbour_untouched():
    """The engine's NumPy path with one ACT member and one fixed member: each equals the core."""
    x, params, dy, dponder = make_problem("lstm", T=3, halting_bias=-1.0)
    P = {k: np.stack([v, v]) for k, v in params.items()}
    y, N, R, cache = numpy_act.forward_pass(np.stack([x, x]), P, "lstm", np.array([[0.01], [0.01]]),
                                            np.array([[8], [3]]), halting=np.array([[1.0], [0.0]]))
    grads = numpy_act.backward_pass(np.stack([dy, dy]), np.stack([dponder, dponder]), cache)
    for k, (forward, kwargs) in enumerate([(act.act_forward, dict(max_ponder=8)),
                                           (act.fixed_forward, dict(fixed_ponder=3))]):
        y_k, N_k, R_k, cache_k = forward(x, params, cell="lstm", **kwargs)
        g_k = act.act_backward(dy, dponder, cache_k)
        assert np.array_equal(N[k], N_k)
        np.testing.assert_allclose(y[k], y_k, rtol=0, atol=1e-12)
        for name in params:
            np.testing.assert_allclose(grads[name][k], g_k[name], rtol=0, atol=1e-10, err_msg=(k, name))
    assert len(np.unique(N[0])) > 1, "the ACT member should halt at different steps"


@pytest.mark.parametrize("bad", [0, -2, 2.5, True, "3"])
def test_a_bad_F_is_refused_naming_it(bad):
    x, params, _, _ = make_problem()
    for forward in (act.fixed_forward, torch_core.fixed_forward):
        arg = x if forward is act.fixed_forward else torch.tensor(x)
        with pytest.raises(ValueError, match="fixed_ponder"):
            forward(arg, params, fixed_ponder=bad)
    with pytest.raises(ValueError, match="fixed_ponder"):
        loop.make_config({"fixed_ponder": bad}, NumpyBackend)


@pytest.mark.parametrize("argv, words", [
    (["--fixed-ponder", "0"], ["fixed_ponder"]),
    (["--fixed-ponder", "x"], ["--fixed-ponder"]),
    (["--fixed-ponder", "3", "--no-act"], ["--no-act", "--fixed-ponder"]),
    (["--fixed-ponder", "3", "--max-ponder", "5"], ["--max-ponder"]),
])
def test_the_cli_refuses_a_bad_F_in_one_line(tmp_path, capsys, argv, words):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--backend", "numpy", "--out", str(tmp_path / "run"), *argv])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_a_run_takes_F_updates_everywhere_and_F_one_equals_no_act(tmp_path, backend):
    summary = loop.run({**SMALL, "fixed_ponder": 3, "out": str(tmp_path / "f3")}, BACKENDS[backend],
                           progress=False)
    assert summary["config"]["max_ponder"] == 3
    log = loop.read_log(tmp_path / "f3" / "log.jsonl")
    assert all(r["max_N"] == 3 and r["mean_ponder"] == 4.0 for r in log)      # N = 3, rho = N + 1
    f1 = loop.run({**SMALL, "fixed_ponder": 1, "out": str(tmp_path / "f1")}, BACKENDS[backend], progress=False)
    f0 = loop.run({**SMALL, "no_act": True, "out": str(tmp_path / "f0")}, BACKENDS[backend], progress=False)
    assert f1["final_eval"]["loss"] == f0["final_eval"]["loss"]
    assert f1["final_eval"]["sequence_error"] == f0["final_eval"]["sequence_error"]


def test_the_default_out_folder_names_F():
    assert loop.make_config({"fixed_ponder": 5}, NumpyBackend)["out"].endswith("seed0-fixed5")


def test_a_run_saved_before_the_option_existed_still_resumes(tmp_path):
    out = tmp_path / "old"
    loop.run({**SMALL, "iterations": 3, "out": str(out)}, NumpyBackend, progress=False)
    state, meta = loop.load_checkpoint(out / "checkpoint.npz")
    assert meta["config"]["fixed_ponder"] is None
    # as a checkpoint from before: its config has no fixed_ponder key
    from act_experiments.training.checkpoints import save_checkpoint
    meta["config"].pop("fixed_ponder")
    save_checkpoint(out / "checkpoint.npz", state, meta)
    summary = loop.run({"out": str(out), "iterations": 6}, NumpyBackend, resume=True, progress=False)
    assert summary["iterations"] == 6


# ---------------------------------------------------------------------------------------------
# Sweeps: fixedF-seedS runs, the runs.csv column, old files
# ---------------------------------------------------------------------------------------------

TINY = ["--task", "parity", "--bits", "3", "--hidden", "4", "--batch-size", "4", "--iterations", "4",
        "--eval-every", "2", "--eval-size", "8", "--seeds", "1", "--workers", "1", "--backend", "numpy"]


def sweep_status(capsys, root, *argv):
    """launch.main on argv, writing runs/ and results/ under root; returns (exit status, stderr)."""
    try:
        launch.main(list(argv), root=root)
        return 0, capsys.readouterr().err
    except SystemExit as exit_info:
        return exit_info.code, capsys.readouterr().err


def test_a_control_sweep_of_its_own_names_its_runs_and_adds_the_column(tmp_path, capsys):
    status, err = sweep_status(capsys, tmp_path, "--name", "ctl", *TINY, "--fixed-ponders", "3,2", "--no-baseline")
    assert status == 0, err
    with open(tmp_path / "results" / "ctl" / "runs.csv") as f:
        rows = list(csv.DictReader(f))
    # the measured columns come after fixed_ponder, iterations to solve last; the control's N is F
    # and its remainder 1
    assert list(rows[0])[-5:] == ["fixed_ponder", "mean_N", "mean_R", "random_of", "iterations_to_98"]
    assert [(float(r["mean_N"]), float(r["mean_R"]), r["random_of"]) for r in rows] == [(3.0, 1.0, ""), (2.0, 1.0, "")]
    with open(tmp_path / "results" / "ctl" / "curves.csv") as f:
        curves = list(csv.DictReader(f))
    for r in rows:       # the first evaluation of the run's curve at or below 0.02, else empty
        solved = [c["iteration"] for c in curves if c["run"] == r["run"] and float(c["sequence_error"]) <= 0.02]
        assert r["iterations_to_98"] == (solved[0] if solved else "")
    assert [(r["run"], r["act"], r["tau"], r["fixed_ponder"]) for r in rows] == [
        ("fixed3-seed0", "0", "", "3"), ("fixed2-seed0", "0", "", "2")]
    assert [float(r["mean_ponder"]) for r in rows] == [4.0, 3.0]
    sweep = reading.load_sweep(tmp_path / "results" / "ctl")
    assert stats.keys(sweep) == [reading.fixed_key(2), reading.fixed_key(3)]
    assert json.loads((tmp_path / "results" / "ctl" / "sweep.json").read_text())["fixed_ponders"] == [3, 2]
    # the same command again trains nothing; other fixed ponders are refused in one line
    assert sweep_status(capsys, tmp_path, "--name", "ctl", *TINY, "--fixed-ponders", "3,2", "--no-baseline")[0] == 0
    status, err = sweep_status(capsys, tmp_path, "--name", "ctl", *TINY, "--fixed-ponders", "3,5", "--no-baseline")
    assert status == 2 and "--fixed-ponders" in err and len(err.strip().splitlines()) == 1


def test_tau_runs_baseline_and_control_in_one_sweep(tmp_path, capsys):
    status, err = sweep_status(capsys, tmp_path, "--name", "all", *TINY, "--taus", "1e-2", "--fixed-ponders", "2")
    assert status == 0, err
    sweep = reading.load_sweep(tmp_path / "results" / "all")
    assert [r["run"] for r in sweep["runs"]] == ["tau0.01-seed0", "noact-seed0", "fixed2-seed0"]
    assert stats.keys(sweep) == [0.01, reading.NO_ACT, reading.fixed_key(2)]


@pytest.mark.parametrize("value, words", [("1", ["--fixed-ponders", ">= 2, got 1"]), ("2,2", ["once"]),
                                          ("x", ["--fixed-ponders"]),
                                          ("", ["at least one tau or fixed ponder"])])
def test_bad_fixed_ponders_are_refused_in_one_line(tmp_path, capsys, value, words):
    status, err = sweep_status(capsys, tmp_path, "--name", "bad", *TINY, "--fixed-ponders", value)
    assert status == 2 and len(err.strip().splitlines()) == 1 and all(w in err for w in words), err
    assert not (tmp_path / "runs").exists()


def test_a_sweep_stored_before_the_option_existed_is_the_same_sweep(tmp_path, capsys):
    assert sweep_status(capsys, tmp_path, "--name", "old", *TINY, "--taus", "1e-2", "--iterations", "2")[0] == 0
    path = launch.run_folder("old", tmp_path) / launch.CONFIG_FILE
    stored = json.loads(path.read_text())
    for config in stored["runs"].values():
        config.pop("fixed_ponder")
    path.write_text(json.dumps(stored))
    status, err = sweep_status(capsys, tmp_path, "--name", "old", *TINY, "--taus", "1e-2", "--iterations", "2")
    assert status == 0, err


def test_an_old_runs_csv_without_the_column_reads_as_act_and_baseline(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "runs.csv").write_text("run,tau,act,seed,sequence_error,mean_ponder\n"
                                     "tau0.01-seed0,0.01,1,0,0.5,3.0\nnoact-seed0,,0,0,0.6,2.0\n")
    sweep = reading.load_sweep(folder, tables=())
    assert [(r["key"], r["fixed_ponder"]) for r in sweep["runs"]] == [(0.01, None), (reading.NO_ACT, None)]


# ---------------------------------------------------------------------------------------------
# act_experiments.experiments.controls: an ACT sweep beside its control, seed by seed
# ---------------------------------------------------------------------------------------------

def write_sweep(folder, runs):
    """A sweep's three CSVs from (run, tau or None, fixed or None, seed, error, rho) rows."""
    folder.mkdir()
    with open(folder / "runs.csv", "w") as f:
        f.write("run,tau,act,seed,sequence_error,mean_ponder,fixed_ponder\n")
        for run, tau, F, seed, error, rho in runs:
            act = int(tau is not None)
            f.write(f"{run},{'' if tau is None else tau},{act},{seed},{error},{rho},{'' if F is None else F}\n")
    with open(folder / "difficulty.csv", "w") as f:
        f.write("run,difficulty,count,error,ponder\n")
        for run, *_, error, rho in runs:
            f.write(f"{run},1,10,{error},{rho}\n{run},2,30,{error},{rho}\n")
    (folder / "curves.csv").write_text("run,iteration,sequence_error,mean_ponder\n")
    return reading.load_sweep(folder)


def test_paired_compares_seed_by_seed_and_the_ladder_counts_updates(tmp_path):
    from act_experiments.experiments.controls import Control, ladder, paired
    act_sweep = write_sweep(tmp_path / "act", [
        ("tau0.001-seed1", 0.001, None, 1, 0.10, 3.5), ("tau0.001-seed2", 0.001, None, 2, 0.30, 3.7),
        ("tau0.001-seed3", 0.001, None, 3, 0.20, 3.6), ("noact-seed1", None, None, 1, 0.5, 2.0)])
    fixed_sweep = write_sweep(tmp_path / "fixed", [
        ("fixed3-seed1", None, 3, 1, 0.20, 4.0), ("fixed3-seed2", None, 3, 2, 0.35, 4.0),
        ("fixed3-seed3", None, 3, 3, 0.30, 4.0), ("fixed3-seed9", None, 3, 9, 0.90, 4.0)])
    pair = {"control": Control("act", "fixed", 1e-3, 3), "act": act_sweep, "fixed": fixed_sweep}
    d = paired(pair)
    assert d["seeds"] == [1, 2, 3]                                    # seed 9 has no partner
    assert d["differences"] == pytest.approx([-0.10, -0.05, -0.10])
    diffs = np.array([-0.10, -0.05, -0.10])
    assert d["mean"] == pytest.approx(diffs.mean()) and d["se"] == pytest.approx(diffs.std(ddof=1) / np.sqrt(3))
    assert d["holds"] == (diffs.mean() < -2 * diffs.std(ddof=1) / np.sqrt(3))
    rows = {r["key"]: r for r in ladder(pair)}
    assert (rows[0.001]["updates_low"], rows[0.001]["updates_high"]) == pytest.approx((2.6, 3.6))
    assert (rows[reading.NO_ACT]["updates_low"], rows[reading.fixed_key(3)]["updates_high"]) == (1.0, 3.0)
    with pytest.raises(ValueError, match="share no seed"):
        paired(pair, tau=0.5)
