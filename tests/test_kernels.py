"""The Triton kernels of the ponder loop (tanh RNN and LSTM) against the engine and the one-network core.

act_engine.kernel_act runs K stacked networks' ponder loops in the kernels of act_engine.triton_rnn
and act_engine.triton_lstm: the forward until every row has halted or met its member's cap, and
the course's hand-derived backward step by step. Member by member, y, N, R and every gradient must be those of
act_engine.numpy_act (the same equations on a leading K axis), of act_numpy.act (one network
alone) and of autograd through act_engine.torch_act. The members cover every halting case: rows
halting at step 1, rows stopped by the cap, rows halting in between, members with their own
epsilon and M, and a fixed-computation member (halting mask 0: h = 0, it runs to its cap). Each
check runs for both cells.

On a CPU the kernels run under Triton's interpreter (TRITON_INTERPRET=1, set here before triton
is imported); on a CUDA device they compile. Float64 checks the maths to rounding; float32 is the
kernels' own precision (tl.dot with input_precision="ieee"). Triton is not in requirements.txt
(requirements-kernels.txt): without it these tests skip, and CI sets ACT_KERNELS_REQUIRED=1,
which turns the skip into a failure. The interpreter is slow (the LSTM's kernels most: four gate
blocks), so the problems are small, and each kernel run is made once and shared by the tests
that read it (run_once).
"""

import functools
import importlib.util
import os

import numpy as np
import pytest
import torch

if importlib.util.find_spec("triton") is None:
    if os.environ.get("ACT_KERNELS_REQUIRED") == "1":
        pytest.fail("triton is not installed (ACT_KERNELS_REQUIRED=1): pip install -r requirements-kernels.txt",
                    pytrace=False)
    pytest.skip("triton is not installed (pip install -r requirements-kernels.txt)", allow_module_level=True)
if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"      # read when the kernels are defined, at import

from act_engine import kernel_act, numpy_act, torch_act  # noqa: E402
from act_numpy.act import act_backward, act_forward, fixed_forward  # noqa: E402
from conftest import make_problem  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
NAMES = ("W_x", "W_s", "b_s", "W_h", "b_h", "W_y", "b_y")

# four members, one per halting case: (halting bias, epsilon, cap M, halting mask)
MEMBERS = [
    (-1.0, 0.01, 6, 1.0),     # halts in between, at different steps for different rows
    (6.0, 0.2, 4, 1.0),       # h^1 > 1 - eps: every row halts at step 1
    (-8.0, 0.05, 5, 1.0),     # h ~ 3e-4: every row is stopped by its cap M = 5
    (0.0, 0.01, 3, 0.0),      # fixed computation: h = 0, three updates
]


def stacked_problem(cell="rnn", B=5, T=3, D=4, H=6, O=2, members=MEMBERS, dtype=np.float64):
    """K = len(members) networks' problems (tests/conftest.make_problem) stacked on a leading axis,
    with each member's epsilon, M and halting mask as (K, 1) arrays."""
    problems = [make_problem(cell, B=B, T=T, D=D, H=H, O=O, seed=k, halting_bias=bias, dtype=dtype)
                for k, (bias, *_) in enumerate(members)]
    x = np.stack([p[0] for p in problems])
    P = {name: np.stack([p[1][name] for p in problems]) for name in NAMES}
    dy = np.stack([p[2] for p in problems]).astype(dtype)
    dponder = np.stack([p[3] for p in problems]).astype(dtype)
    column = lambda i, kind: np.array([[m[i]] for m in members], dtype=kind)   # noqa: E731
    return x, P, dy, dponder, column(1, np.float64), column(2, np.int64), column(3, dtype)


def on_device(*arrays):
    return [torch.tensor(a, device=DEVICE) for a in arrays]


def kernel_run(cell, x, P, dy, dponder, epsilon, cap, gate, block_rows=16):
    """forward_pass and backward_pass of the kernels on NumPy inputs; NumPy results."""
    tx, tdy, tdp, tthr, tcap, tgate = on_device(x, dy, dponder, 1.0 - epsilon, cap, gate)
    tP = {name: torch.tensor(v, device=DEVICE) for name, v in P.items()}
    y, N, R, cache = kernel_act.forward_pass(tx, tP, cell, tthr, tcap, tgate, block_rows=block_rows)
    grads = kernel_act.backward_pass(tdy, tdp, cache)
    as_np = lambda t: t.detach().cpu().numpy()     # noqa: E731
    return as_np(y), as_np(N), as_np(R), {name: as_np(g) for name, g in grads.items()}


def run_once(cell, B, H, block_rows=16, dtype="float64"):
    """stacked_problem(cell, B=B, H=H) and the kernels' y, N, R and gradients on it, made once per
    setting and shared by the tests that read them (which must not write into them)."""
    return _run_once(cell, B, H, block_rows, dtype)      # one cache key per setting, defaults or not


@functools.lru_cache(maxsize=None)
def _run_once(cell, B, H, block_rows, dtype):
    problem = stacked_problem(cell, B=B, H=H, dtype=np.dtype(dtype).type)
    return problem, kernel_run(cell, *problem, block_rows=block_rows)


def assert_grads_close(got, want, rtol, atol):
    assert set(got) == set(want)
    for name, g in want.items():
        assert got[name].shape == g.shape, name
        np.testing.assert_allclose(got[name], g, rtol=rtol, atol=atol, err_msg=name)


# cell, B, H, block_rows: rows and units padded inside one block; two blocks of rows, the second
# one partly padded; a block of 32 rows and H that fills its tile exactly. The LSTM (slower under
# the interpreter): padded rows and units in one block, and in two.
SIZES = [("rnn", 5, 6, 16), ("rnn", 20, 16, 16), ("rnn", 20, 32, 32), ("lstm", 5, 6, 16), ("lstm", 20, 6, 16)]
CELLS = ("rnn", "lstm")


@pytest.mark.slow
@pytest.mark.parametrize("cell, B, H, block_rows", SIZES)
def test_float64_kernels_are_the_engine(cell, B, H, block_rows):
    """In float64 the kernels' y, N, R and gradients are act_engine.numpy_act's, to rounding."""
    (x, P, dy, dponder, epsilon, cap, gate), (yk, Nk, Rk, gk) = run_once(cell, B, H, block_rows)
    y, N, R, cache = numpy_act.forward_pass(x, P, cell, epsilon, cap, halting=gate)
    grads = numpy_act.backward_pass(dy, dponder, cache)
    np.testing.assert_array_equal(Nk, N)
    np.testing.assert_allclose(yk, y, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(Rk, R, rtol=1e-12, atol=1e-13)
    assert_grads_close(gk, grads, rtol=1e-10, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("cell", CELLS)
def test_members_cover_every_halting_case(cell):
    """The problem's members halt as their names say: in between, at step 1, at the cap, fixed."""
    (x, P, dy, dponder, epsilon, cap, gate), (_, N, R, gk) = run_once(cell, 20, 6)
    # member 0: rows of one block halt at different steps, some in between, some at the cap
    assert len(np.unique(N[0])) > 2 and ((N[0] > 1) & (N[0] < cap[0, 0])).any()
    assert (N[1] == 1).all()                                           # halting at step 1
    assert (N[2] == cap[2, 0]).all() and (R[2] < 1).all()              # stopped by the cap
    assert (N[3] == cap[3, 0]).all() and (R[3] == 1).all()             # fixed: p^M = R = 1 (eq. 8)
    # the fixed member never reads its halting unit, and h^N has no gradient (eq. 20): a member
    # whose rows all halt at step 1 gets none either
    for k in (1, 3):
        assert not gk["W_h"][k].any() and not gk["b_h"][k].any()
    assert gk["W_h"][0].any() and gk["W_h"][2].any()


@pytest.mark.slow
@pytest.mark.parametrize("cell", CELLS)
def test_each_member_is_its_own_network(cell):
    """Member k of the kernels is act_numpy.act's one network with that member's epsilon and M
    (fixed_forward for the fixed-computation member), values and gradients, in float64."""
    (x, P, dy, dponder, epsilon, cap, gate), (yk, Nk, Rk, gk) = run_once(cell, 5, 6)
    for k in range(len(MEMBERS)):
        params = {name: v[k] for name, v in P.items()}
        if gate[k, 0] == 0.0:
            y, N, R, cache = fixed_forward(x[k], params, cell=cell, fixed_ponder=int(cap[k, 0]))
        else:
            y, N, R, cache = act_forward(x[k], params, cell=cell, epsilon=float(epsilon[k, 0]),
                                         max_ponder=int(cap[k, 0]))
        np.testing.assert_array_equal(Nk[k], N)
        np.testing.assert_allclose(yk[k], y, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(Rk[k], R, rtol=1e-12, atol=1e-13)
        assert_grads_close({name: g[k] for name, g in gk.items()}, act_backward(dy[k], dponder[k], cache),
                           rtol=1e-10, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("cell, B", [("rnn", 20), ("lstm", 5)])
def test_float32_kernels_are_the_float32_engine(cell, B):
    """In float32, the kernels' own precision, they agree with act_engine.numpy_act in float32: the
    same N everywhere, values and gradients within float32 rounding."""
    (x, P, dy, dponder, epsilon, cap, gate), (yk, Nk, Rk, gk) = run_once(cell, B, 16, dtype="float32")
    y, N, R, cache = numpy_act.forward_pass(x, P, cell, epsilon, cap, halting=gate)
    grads = numpy_act.backward_pass(dy, dponder, cache)
    assert yk.dtype == np.float32 and gk["W_s"].dtype == np.float32
    np.testing.assert_array_equal(Nk, N)
    np.testing.assert_allclose(yk, y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(Rk, R, rtol=1e-5, atol=1e-6)
    assert_grads_close(gk, grads, rtol=1e-4, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("cell", CELLS)
def test_autograd_through_the_kernels_is_autograd_through_the_engine(cell):
    """kernel_act.ponder_until_halted, the population's entry, takes the arguments of
    torch_act.ponder_until_halted and gives the same y, N, R and, by backward(), the gradients
    autograd finds through the engine's PyTorch loop: a check independent of the hand backward."""
    x, P, dy, dponder, epsilon, cap, gate = stacked_problem(cell, B=5, H=16)
    column = (len(MEMBERS), 1, 1)
    tx, tdy, tdp = on_device(x, dy, dponder)
    threshold = torch.tensor(1.0 - epsilon, device=DEVICE).view(column)
    tcap = torch.tensor(cap, device=DEVICE).view(column)
    tgate = torch.tensor(gate, device=DEVICE).view(column)
    results = []
    for module in (kernel_act, torch_act):
        tP = {name: torch.tensor(v, device=DEVICE, requires_grad=True) for name, v in P.items()}
        xg = tx.clone().requires_grad_()
        y, N, R = module.ponder_until_halted(xg, tP, cell, threshold, tcap, int(cap.max()), halting=tgate)
        ((y * tdy).sum() + (R * tdp).sum()).backward()     # dL/dy = dy, dL/drho = dL/dR = dponder
        results.append((y, N, R, {"x": xg.grad, **{name: p.grad for name, p in tP.items()}}))
    (yk, Nk, Rk, gk), (ye, Ne, Re, ge) = results
    assert torch.equal(Nk, Ne)
    torch.testing.assert_close(yk, ye, rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(Rk, Re, rtol=1e-12, atol=1e-13)
    for name in ge:
        torch.testing.assert_close(gk[name], ge[name], rtol=1e-10, atol=1e-12, msg=name)


@pytest.mark.parametrize("cell", CELLS)
def test_cap_of_one_and_a_single_input_step(cell):
    """M = 1 for every member (the paper's no-ACT baseline) and T = 1: one ponder step, p = R = 1."""
    members = [(-1.0, 0.01, 1, 1.0), (2.0, 0.1, 1, 1.0)]
    problem = stacked_problem(cell, T=1, members=members)
    x, P, dy, dponder, epsilon, cap, gate = problem
    y, N, R, cache = numpy_act.forward_pass(x, P, cell, epsilon, cap, halting=gate)
    grads = numpy_act.backward_pass(dy, dponder, cache)
    yk, Nk, Rk, gk = kernel_run(cell, *problem)
    assert (Nk == 1).all() and (Rk == 1).all()
    np.testing.assert_allclose(yk, y, rtol=1e-12, atol=1e-13)
    assert_grads_close(gk, grads, rtol=1e-10, atol=1e-12)


def test_bad_arguments_are_refused_by_name():
    """A ValueError that names the argument: a cell the course has not, parameters of the other
    cell, a record, a block that is no power of two >= 16, a state wider than one tile, integer x,
    and settings without one value per member."""
    x, P, dy, dponder, epsilon, cap, gate = stacked_problem()
    tx, tthr, tcap = on_device(x, 1.0 - epsilon, cap)
    tP = {name: torch.tensor(v, device=DEVICE) for name, v in P.items()}
    wide = torch.zeros(4, 129, 4 * 129, dtype=tx.dtype, device=DEVICE)
    cases = [
        (lambda: kernel_act.ponder_until_halted(tx, tP, "gru", tthr, tcap, 6), "cell"),
        (lambda: kernel_act.ponder_until_halted(tx, tP, "lstm", tthr, tcap, 6), "W_s"),   # the RNN's shapes
        (lambda: kernel_act.ponder_until_halted(tx, tP, "rnn", tthr, tcap, 6, record={}), "record"),
        (lambda: kernel_act.forward_pass(tx, tP, "rnn", tthr, tcap, block_rows=24), "block_rows"),
        (lambda: kernel_act.forward_pass(tx, tP, "rnn", tthr, tcap, block_rows=8), "block_rows"),
        (lambda: kernel_act.forward_pass(tx.long(), tP, "rnn", tthr, tcap), "x"),
        (lambda: kernel_act.forward_pass(tx, tP, "rnn", tthr[:2], tcap), "threshold"),
        (lambda: kernel_act.forward_pass(tx, tP, "rnn", tthr, tcap[:3]), "cap"),
        (lambda: kernel_act.forward_pass(tx, tP, "rnn", tthr, tcap, longest=2), "longest"),
        (lambda: kernel_act.forward_pass(tx, {**tP, "b_h": tP["b_h"][:, 0]}, "rnn", tthr, tcap), "b_h"),
        (lambda: kernel_act.forward_pass(tx, {**tP, "W_s": wide[..., :129]}, "rnn", tthr, tcap), "W_s"),
        (lambda: kernel_act.forward_pass(tx, {**tP, "W_s": wide}, "lstm", tthr, tcap), "W_s"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()


# ---------------------------------------------------------------------------------------------
# The population's option: kernels=True (act_engine.torch_population)
# ---------------------------------------------------------------------------------------------

# the population's tasks, small: parity on the tanh RNN, logic on the LSTM (three vectors)
POPULATION_TASKS = {"rnn": dict(task="parity", bits=6), "lstm": dict(task="logic", max_vectors=3, max_gates=2)}


def population_configs(device, dtype="float64", cell="rnn"):
    """Four members of the cell's task, as tests/test_population.py's: ACT with its own tau, epsilon
    and lr, a no-ACT baseline (M = 1) and a fixed-computation control (F = 3, halting mask 0)."""
    from act_experiments.training import loop
    from act_experiments.training.backends import TorchBackend
    shared = dict(**POPULATION_TASKS[cell], hidden=16, batch_size=16, dtype=dtype, device=device, lr=1e-2,
                  out="unused")
    members = [dict(seed=0, tau=1e-3), dict(seed=1, tau=1e-2, epsilon=0.05, lr=3e-3),
               dict(seed=2, no_act=True, lr=1e-3), dict(seed=3, fixed_ponder=3, lr=3e-3)]
    return [loop.make_config({**shared, **m}, TorchBackend) for m in members]


def population_batches(configs, steps):
    """steps batches for every member, stacked: (x, y, mask) per step."""
    from act_experiments.data import tasks
    rngs = [np.random.default_rng(c["seed"]) for c in configs]
    out = []
    for _ in range(steps):
        per = [tasks.make_batch(c["task"], r, c["batch_size"], **c["task_options"]) for c, r in zip(configs, rngs)]
        out.append(tuple(np.stack([b[j] for b in per]) for j in range(3)))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("cell", CELLS)
def test_population_trains_the_same_on_the_kernels(cell):
    """Population.forward with the kernels (eager, autograd through kernel_act) trains every member
    as the population without them, step for step: the same N, losses and parameters. The option
    is used as a caller would: on a CUDA device, or on the CPU under the interpreter."""
    from act_experiments.training.populations import TorchPopulation
    configs, steps = population_configs(DEVICE, cell=cell), 4 if cell == "rnn" else 2
    plain = TorchPopulation(configs, graphed=False)
    fused = TorchPopulation(configs, kernels=True)
    assert fused.kernels is True and fused.graph_step is None
    pondered = 0
    for i, (x, y, mask) in enumerate(population_batches(configs, steps)):
        for k, (a, b) in enumerate(zip(plain.train_step(x, y, mask), fused.train_step(x, y, mask))):
            assert np.array_equal(a["N"], b["N"]), (i, k)
            assert b["loss"] == pytest.approx(a["loss"], rel=1e-10, abs=1e-12), (i, k)
            pondered = max(pondered, int(a["N"].max()) if k < 2 else 0)
    assert pondered > 1, "the ACT members should ponder"
    for k in range(len(configs)):
        for name, value in plain.member_params(k).items():
            np.testing.assert_allclose(fused.member_params(k)[name], value, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{k} {name}")


@pytest.mark.slow
def test_population_option_is_refused_where_it_cannot_run():
    """kernels=True is refused by name: with graphed=True, anything but a bool, more hidden units
    than a tile holds, and on the CPU without the interpreter (in a process of its own); where the
    kernels run it takes both cells. kernels=False (the default) leaves the population as it was."""
    from act_experiments.training import loop
    from act_experiments.training.backends import TorchBackend
    from act_experiments.training.populations import TorchPopulation
    configs = population_configs(DEVICE)
    with pytest.raises(ValueError, match="kernels"):
        TorchPopulation(configs, kernels="yes")
    with pytest.raises(ValueError, match="graphed"):
        TorchPopulation(configs, graphed=True, kernels=True)
    wide = loop.make_config(dict(task="parity", bits=3, hidden=kernel_act.MAX_H + 1, device=DEVICE, out="unused"),
                            TorchBackend)
    with pytest.raises(ValueError, match=f"kernels=True: .*{kernel_act.MAX_H + 1}"):
        TorchPopulation([wide], kernels=True)
    for cell in CELLS:
        assert TorchPopulation(population_configs(DEVICE, cell=cell), kernels=True).kernels is True
    assert TorchPopulation(configs).kernels is False
    code = ("from act_experiments.training import loop\n"
            "from act_experiments.training.backends import TorchBackend\n"
            "from act_experiments.training.populations import TorchPopulation\n"
            "c = loop.make_config(dict(task='parity', bits=3, hidden=4, device='cpu', out='unused'), TorchBackend)\n"
            "try:\n"
            "    TorchPopulation([c], kernels=True)\n"
            "except ValueError as e:\n"
            "    print(e)\n")
    assert "kernels=True: the kernels need a CUDA device, not cpu" in run_uninterpreted(code)


def run_uninterpreted(code):
    """Run Python code in a process of its own, the repository on its path and Triton's
    interpreter off; returns its stdout (the test fails when it exits non-zero)."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_without_triton_the_engine_imports_and_the_kernels_say_what_to_install():
    """Triton is optional: with it hidden, every module of act_engine still imports (as
    tests/test_layers.py imports them all), and the kernels refuse with a ValueError that names
    requirements-kernels.txt."""
    code = (
        "import sys, importlib, pkgutil\n"
        "sys.modules['triton'] = None\n"                         # import triton now raises ImportError
        "import act_engine, torch\n"
        "for info in pkgutil.walk_packages(act_engine.__path__, 'act_engine.'):\n"
        "    importlib.import_module(info.name)\n"
        "from act_engine import kernel_act\n"
        "assert not kernel_act.available()\n"
        "try:\n"
        "    kernel_act.forward_pass(torch.zeros(1, 2, 1, 3), {}, 'rnn', 0.99, 3)\n"
        "except ValueError as e:\n"
        "    print(e)\n"
    )
    assert "requirements-kernels.txt" in run_uninterpreted(code)


# ---------------------------------------------------------------------------------------------
# A sweep on the kernels: scripts/sweep.py --kernels (act_experiments.sweeps.launch)
# ---------------------------------------------------------------------------------------------

# tests/test_sweep.py's tiny sweep, in float64 so that the two engines agree to rounding
TINY_SWEEP = ["--task", "parity", "--bits", "3", "--hidden", "4", "--batch-size", "4", "--iterations", "4",
              "--eval-every", "2", "--eval-size", "8", "--taus", "1e-2", "--seeds", "2", "--workers", "1",
              "--dtype", "float64", "--device", DEVICE]


def sweep_main(capsys, root, *args):
    """launch.main on args, writing runs/ and results/ under root; returns (exit status, stderr)."""
    from act_experiments.sweeps import launch
    try:
        launch.main(list(args), root=root)
        status = 0
    except SystemExit as exit_info:
        status = exit_info.code
    return status, capsys.readouterr().err.strip()


@pytest.mark.slow
def test_a_sweep_trains_on_the_kernels_as_without_them(tmp_path, capsys):
    """scripts/sweep.py --kernels end to end (on the CPU its worker inherits TRITON_INTERPRET=1):
    the runs' numbers are those of the same sweep without the kernels, to rounding in float64;
    sweep.json says so; and the sweep's settings hold the option, so a rerun without it, or with
    more hidden units than the kernels hold, is refused in one line."""
    import csv
    import json
    for name, extra in (("fused", ["--kernels"]), ("plain", ["--backend", "torch"])):
        assert sweep_main(capsys, tmp_path, "--name", name, *TINY_SWEEP, *extra) == (0, "")
    rows = {name: list(csv.DictReader(open(tmp_path / "results" / name / "runs.csv")))
            for name in ("fused", "plain")}
    assert len(rows["fused"]) == 4                    # two tau runs and two no-ACT runs
    for a, b in zip(rows["fused"], rows["plain"]):
        assert a["run"] == b["run"]
        for column in ("sequence_error", "mean_ponder", "loss"):
            assert float(a[column]) == pytest.approx(float(b[column]), rel=1e-9, abs=1e-12), column
    meta = json.loads((tmp_path / "results" / "fused" / "sweep.json").read_text())
    assert meta["kernels"] is True and meta["backend"] == "torch"

    status, err = sweep_main(capsys, tmp_path, "--name", "fused", *TINY_SWEEP)
    assert status == 2 and "--kernels true before, false now" in err and len(err.splitlines()) == 1
    status, err = sweep_main(capsys, tmp_path, "--name", "wide", *TINY_SWEEP, "--kernels", "--hidden", "129")
    assert status == 2 and "--kernels" in err and "129" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "runs" / "sweeps" / "wide").exists()


# ---------------------------------------------------------------------------------------------
# The offline compile: scripts/kernels_compile.py (act_engine.kernel_report)
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_every_kernel_compiles_with_the_warps_it_is_launched_with():
    """Every kernel compiles for a CUDA GPU at every tile width (sm_90 where there is no GPU), with
    the warps kernel_act launches it with; for sm_90 the spills at BLOCK_H = 128 stay below 2 KB a
    thread (with 8 warps they were 2.5 to 6.8 KB: docs/benchmarks_population.md). In a process
    without the interpreter, whose kernels cannot be compiled."""
    import re
    out = run_uninterpreted("import sys\nfrom act_engine import kernel_report\nsys.exit(kernel_report.main())\n")
    header, *lines = out.strip().splitlines()
    assert len(lines) == 4 * 4, lines
    for line in lines:
        block_h = int(re.search(r"'BLOCK_H': (\d+)", line).group(1))
        assert f"num_warps {kernel_act.num_warps(block_h)}:" in line, line
        stack = int(re.search(r"STACK:(\d+)", line).group(1))
        if "arch=90" in header and block_h == 128:
            assert stack < 2048, line
