"""Cross-check act_torch against the NumPy reference: ``python -m act_torch.check``.

For each cell and a spread of settings (T > 1, N = 1, N at the cap, mixed N in a batch, several
epsilon), both implementations get the same weights, inputs and upstream gradients. The scalar

    loss = sum(dy * y) + sum(dponder * (N + R))

is backpropagated by autograd in PyTorch and by ``act_numpy.act.act_backward`` in NumPy. The table
shows, per case, whether N agreed exactly and the relative difference (``rel_error``: max |a - b|
over the largest magnitude) of y, R and the gradient of every parameter and of x.

Rows: float64 on the CPU always; on a CUDA device also float64 there and float32 there, both
against float64 NumPy. The tests in tests/test_torch_act.py use the same cases.
"""

import sys

import numpy as np
import torch

from act_numpy.act import act_backward, act_forward as np_act_forward
from act_numpy.gradcheck import rel_error
from act_numpy.params import PARAM_NAMES, init_params

from .act import act_forward

# Tolerances on rel_error. float64: both sides round at 1.1e-16 per operation and sum in different
# orders; a few hundred chained operations stay far below 1e-10. float32 against float64: unit
# roundoff 6e-8, grown by sums over H and by up to N*T chained steps, and the gradient of eq. (19)
# subtracts nearby states. float32 on the CPU measured at most 9e-6 over 160 random cases.
TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-4}

# name -> settings. Every case: batch B, T input steps, sizes D, H, O; the halting bias b_h and a
# scale on W_h decide how long the network ponders.
SETTINGS = {
    "T>1":         dict(B=4, T=5, D=3, H=6, O=2, halting_bias=1.0, w_h_scale=1.0, epsilon=0.01, max_ponder=100),
    "N=1":         dict(B=4, T=3, D=3, H=6, O=2, halting_bias=10.0, w_h_scale=1.0, epsilon=0.01, max_ponder=100),
    "N at cap":    dict(B=4, T=3, D=3, H=6, O=2, halting_bias=-10.0, w_h_scale=1.0, epsilon=0.01, max_ponder=4),
    "mixed N":     dict(B=8, T=3, D=3, H=6, O=2, halting_bias=-1.0, w_h_scale=6.0, epsilon=0.01, max_ponder=12),
    "long ponder": dict(B=4, T=2, D=3, H=6, O=1, halting_bias=-3.0, w_h_scale=0.3, epsilon=0.01, max_ponder=100),
    "eps=0.001":   dict(B=5, T=3, D=3, H=6, O=2, halting_bias=0.0, w_h_scale=2.0, epsilon=0.001, max_ponder=100),
    "eps=0.1":     dict(B=5, T=3, D=3, H=6, O=2, halting_bias=0.0, w_h_scale=2.0, epsilon=0.1, max_ponder=100),
    "eps=0.5":     dict(B=5, T=3, D=3, H=6, O=2, halting_bias=0.0, w_h_scale=2.0, epsilon=0.5, max_ponder=100),
}


def make_case(cell, setting, seed=0):
    """One random problem in float64: x, params, dy, dponder and the act keyword arguments."""
    s = SETTINGS[setting]
    rng = np.random.default_rng(seed)
    params = init_params(cell, s["D"], s["H"], s["O"], rng, halting_bias=s["halting_bias"])
    params["W_h"] *= s["w_h_scale"]
    # non-trivial biases, so that every gradient entry is exercised
    for name in ("b_s", "b_y"):
        params[name] += rng.normal(0.0, 0.3, params[name].shape)
    x = rng.normal(0.0, 1.0, (s["B"], s["T"], s["D"]))
    dy = rng.normal(0.0, 1.0, (s["B"], s["T"], s["O"]))
    dponder = rng.uniform(0.0, 0.1, (s["B"], s["T"]))
    kwargs = dict(cell=cell, epsilon=s["epsilon"], max_ponder=s["max_ponder"])
    return dict(x=x, params=params, dy=dy, dponder=dponder, kwargs=kwargs)


def numpy_result(case):
    """y, N, R and the gradients (keys of params plus "x") from the NumPy reference."""
    y, N, R, cache = np_act_forward(case["x"], case["params"], **case["kwargs"])
    grads = act_backward(case["dy"], case["dponder"], cache)
    return dict(y=y, N=N, R=R, grads=grads, cache=cache)


def torch_result(case, device="cpu", dtype=torch.float64):
    """The same quantities from act_torch, gradients by autograd, as float64 NumPy arrays."""
    def tensor(a):
        return torch.tensor(a, dtype=dtype, device=device)

    x = tensor(case["x"]).requires_grad_()
    params = {k: tensor(v).requires_grad_() for k, v in case["params"].items()}
    y, N, R = act_forward(x, params, **case["kwargs"])
    loss = (tensor(case["dy"]) * y).sum() + (tensor(case["dponder"]) * (N + R)).sum()
    loss.backward()

    def out(t):
        return t.detach().cpu().numpy().astype(np.float64)

    # a parameter that took no part (W_s when T = 1 and M = 1) has grad None: its gradient is 0
    grads = {k: out(v.grad) if v.grad is not None else np.zeros(v.shape) for k, v in params.items()}
    grads["x"] = out(x.grad)
    return dict(y=out(y), N=N.cpu().numpy(), R=out(R), grads=grads, N_dtype=N.dtype,
                N_requires_grad=N.requires_grad)


def halting_margin(np_res, epsilon, max_ponder):
    """Smallest |sum_{k<=n} h^k - (1 - epsilon)| over the halting tests that decided N.

    A float32 run can only disagree on N where this margin is within its rounding (~1e-6).
    """
    margin = np.inf
    N = np_res["N"]
    for t, st in enumerate(np_res["cache"]["steps"]):
        cum = np.cumsum(st.h, axis=1)                   # (B, n_steps), as h
        steps = np.arange(1, cum.shape[1] + 1)
        decided = (steps <= N[:, t, None]) & (steps < max_ponder)  # tests not forced by the cap
        if decided.any():
            margin = min(margin, float(np.abs(cum - (1.0 - epsilon))[decided].min()))
    return margin


def compare(case, device="cpu", dtype=torch.float64, np_res=None):
    """rel_error of y, R and every gradient, and whether N agreed exactly. Returns a dict."""
    np_res = np_res if np_res is not None else numpy_result(case)
    th = torch_result(case, device, dtype)
    diffs = {"y": rel_error(th["y"], np_res["y"]), "R": rel_error(th["R"], np_res["R"])}
    for name in PARAM_NAMES + ("x",):
        diffs[name] = rel_error(th["grads"][name], np_res["grads"][name])
    return dict(diffs=diffs, N_equal=bool(np.array_equal(th["N"], np_res["N"])), N=np_res["N"])


def run(seeds=(0, 1, 2), out=sys.stdout):
    """Print the comparison table; return True when every row is within its tolerance."""
    runs = [("cpu", torch.float64)]
    if torch.cuda.is_available():
        runs += [("cuda", torch.float64), ("cuda", torch.float32)]
        print(f"device: {torch.cuda.get_device_name()}", file=out)
    else:
        print("device: CPU only (no CUDA device found)", file=out)
    cols = ["y", "R"] + list(PARAM_NAMES) + ["x"]
    head = f"{'cell':5} {'setting':12} {'device':5} {'dtype':7} {'N range':8} {'N ok':4} " + \
        " ".join(f"{c:>7}" for c in cols) + f" {'max':>7}  {'tol':>5} ok"
    print("max relative difference against act_numpy (float64), worst over seeds " + str(tuple(seeds)), file=out)
    print(head, file=out)
    print("-" * len(head), file=out)
    all_ok = True
    for cell in ("rnn", "lstm"):
        for setting in SETTINGS:
            cases = [make_case(cell, setting, seed) for seed in seeds]
            np_results = [numpy_result(c) for c in cases]
            Ns = np.concatenate([r["N"].ravel() for r in np_results])
            for device, dtype in runs:
                worst = {c: 0.0 for c in cols}
                N_ok = True
                for case, np_res in zip(cases, np_results):
                    res = compare(case, device, dtype, np_res)
                    N_ok &= res["N_equal"]
                    for c in cols:
                        worst[c] = max(worst[c], res["diffs"][c])
                big = max(worst.values())
                tol = TOLERANCE[dtype]
                ok = N_ok and big < tol
                all_ok &= ok
                dname = str(dtype).replace("torch.", "")
                print(f"{cell:5} {setting:12} {device:5} {dname:7} {f'{Ns.min()}-{Ns.max()}':8} "
                      f"{'yes' if N_ok else 'NO':4} " + " ".join(f"{worst[c]:7.1e}" for c in cols)
                      + f" {big:7.1e}  {tol:5.0e} {'ok' if ok else 'FAIL'}", file=out)
    print("all rows within tolerance" if all_ok else "SOME ROWS FAILED", file=out)
    return all_ok


if __name__ == "__main__":
    sys.exit(0 if run() else 1)
