"""ACT's ponder loop for K stacked tanh RNNs or LSTMs on the Triton kernels of ``triton_rnn`` and
``triton_lstm``.

    y, N, R, cache = forward_pass(x, P, cell, threshold, cap, halting, longest)   # tensors, K in front
    grads = backward_pass(dy, dponder, cache)                                     # as act_engine.numpy_act
    y, N, R = ponder_until_halted(x, P, cell, threshold, cap, longest, halting=halting)   # with autograd

The kernels run the recurrence: the ponder steps in the forward, and the course's hand-derived
backward (act_numpy.act.backward_pass) step by step. What is no recurrence stays plain torch, one
batched product each, as act_numpy computes it: x_t W_in + b_s for every t before the loop; after
it the output y = S W_y + b_y, and the weight gradients, dW = a^T dz over the rows (t, n, b) of
every ponder step the kernels kept; all of this is the same for both cells. ``ponder_until_halted``
takes the arguments of ``act_engine.torch_act.ponder_until_halted`` for K members, so a population
can call either.

Shapes: x (K, B, T, D); P the seven parameters stacked on the member axis (W_s (K, H, G) with
G = H for the tanh RNN and 4H for the LSTM, W_h (K, H, 1), b_h (K, 1), ...); threshold 1 - eps,
cap M and halting (1.0 ACT, 0.0 fixed) one value per member, any shape with K elements (the
population's (K, 1, 1)). Tensors on a CUDA
device compile the kernels; on the CPU they run under Triton's interpreter (TRITON_INTERPRET=1
before triton is imported), which is how the tests check them.
"""

import torch

from act_numpy.cells import gate_size
from act_numpy.checks import check_int

from . import triton_rnn
from .triton_lstm import lstm_ponder_backward, lstm_ponder_forward
from .triton_rnn import rnn_ponder_backward, rnn_ponder_forward

MAX_H = 128      # a program holds (H, H) tiles of W_s (the LSTM's four in turn): 64 KB in float32 at 128
BLOCK_B = 16     # rows per program: tl.dot's smallest tile


def num_warps(block_h):
    """Warps per program for a tile of block_h units (the interpreter ignores it).

    In float32 (input_precision="ieee") tl.dot is a sum of products that every thread computes in
    registers, holding its rows of s^{n-1} and its columns of W_s along the whole of H. At
    BLOCK_H = 128 that is more than a thread's registers and ptxas spills: 2.5 to 6.8 KB a thread
    with 8 warps, 0.7 to 1.2 KB with 32 (1024 threads, the most a program may have), where each
    thread holds fewer columns. Narrower tiles stay with 8: at BLOCK_H 16 and 32 nothing spills,
    and at 64 the four kernels spill 624 bytes in all with 8 warps against 1168 with 32 and 1576
    with 16. Figures: ptxas for sm_90, compiled offline (scripts/kernels_compile.py,
    docs/benchmarks_population.md).
    """
    return 32 if block_h >= 128 else 8


def available():
    """Is Triton installed (requirements-kernels.txt), so that the kernels can run?"""
    return triton_rnn.triton is not None


def unavailable(device, hidden):
    """Why the kernels cannot train a population of ``hidden`` units on ``device``: one sentence
    (a ValueError's or a command line's message), or None when they can. They need Triton, a CUDA
    device (the CPU only under Triton's interpreter, as the tests run them) and H <= MAX_H."""
    if not available():
        return "the kernels need Triton: pip install -r requirements-kernels.txt"
    kind = torch.device(device).type
    if kind != "cuda" and not (kind == "cpu" and _interpreted()):
        return (f"the kernels need a CUDA device, not {device} (on the CPU they run only under "
                "Triton's interpreter, TRITON_INTERPRET=1, which is for tests)")
    if hidden > MAX_H:
        return f"the kernels hold at most {MAX_H} hidden units, not {hidden}"
    return None


def _interpreted():
    """Are the kernels run by Triton's interpreter (TRITON_INTERPRET=1 when triton_rnn was imported)?"""
    from triton.runtime.interpreter import InterpretedFunction
    return isinstance(rnn_ponder_forward, InterpretedFunction)


def _blocks(n):
    """The tile width for n units: the smallest power of two >= n, and at least 16 (tl.dot's smallest)."""
    return max(16, 1 << (n - 1).bit_length())


def _grid(K, B, block_rows):
    """One program per (member, block of rows)."""
    return (K, -(-B // block_rows))


def _per_member(name, value, K, dtype, device):
    """A per-member setting (threshold, cap, halting) as a contiguous (K,) tensor."""
    v = torch.as_tensor(value, device=device)
    if v.numel() != K:
        raise ValueError(f"{name} must have one value per member (K = {K}), got shape {tuple(v.shape)}")
    return v.reshape(K).to(dtype).contiguous()


def _check(x, P, cell, block_rows):
    """Shapes, dtype and device of the kernels' inputs; ValueError naming the argument otherwise."""
    if not available():
        raise ValueError("the kernels need Triton: pip install -r requirements-kernels.txt")
    if not isinstance(x, torch.Tensor) or x.dim() != 4:
        raise ValueError(f"x must be a (K, B, T, D) tensor, got {getattr(x, 'shape', type(x))}")
    if x.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"x must be float32 or float64, got {x.dtype}")
    K, B, T, D = x.shape
    W_s = P["W_s"]
    H = W_s.shape[-2]
    G = gate_size(cell, H)
    if W_s.shape != (K, H, G):
        raise ValueError(f"P['W_s'] must be (K, H, {'H' if cell == 'rnn' else '4H'}) for the {cell}, "
                         f"got {tuple(W_s.shape)}")
    if H > MAX_H:
        raise ValueError(f"P['W_s']: H = {H} > {MAX_H}, more than one tile of W_s per program holds")
    want = {"W_x": (K, D + 1, G), "b_s": (K, G), "W_h": (K, H, 1), "b_h": (K, 1),
            "W_y": (K, H, P["W_y"].shape[-1]), "b_y": (K, P["W_y"].shape[-1])}
    for name, shape in want.items():
        if tuple(P[name].shape) != shape:
            raise ValueError(f"P[{name!r}] must have shape {shape}, got {tuple(P[name].shape)}")
        if P[name].dtype != x.dtype or P[name].device != x.device:
            raise ValueError(f"P[{name!r}] must be {x.dtype} on {x.device} as x is")
    if x.device.type == "cpu" and not _interpreted():
        raise ValueError("x is on the CPU: the kernels run there only under TRITON_INTERPRET=1")
    if check_int("block_rows", block_rows, 16) & (block_rows - 1):
        raise ValueError(f"block_rows must be a power of two >= 16, got {block_rows!r}")


def forward_pass(x, P, cell, threshold, cap, halting=None, longest=None, block_rows=BLOCK_B):
    """The forward of K stacked tanh RNNs (cell "rnn") or LSTMs ("lstm"), pondering until every row
    has halted or met its cap.

    x (K, B, T, D); P, threshold, cap, halting: see the module's docstring. longest: the largest
    cap (an int; None reads it from cap). block_rows: rows per program (a power of two >= 16).
    Returns y (K, B, T, O), N (K, B, T) int64, R (K, B, T) and the cache for backward_pass.
    No gradient is recorded: backward_pass is the gradient.
    """
    _check(x, P, cell, block_rows)
    K, B, T, D = x.shape
    H, G = P["W_s"].shape[-2:]
    dev, dt = x.device, x.dtype
    with torch.no_grad():
        cap = _per_member("cap", cap, K, torch.int32, dev)
        check_int("cap", int(cap.min()))          # the smallest member's cap: every one must be >= 1
        L = check_int("longest", int(cap.max()) if longest is None else int(longest), int(cap.max()))
        threshold = _per_member("threshold", threshold, K, dt, dev)
        gate = torch.ones(K, dtype=dt, device=dev) if halting is None else _per_member("halting", halting, K, dt, dev)
        W_x = P["W_x"]
        # eq. (3)'s input part and bias, for every t at once: the same for every ponder step
        xW = torch.baddbmm(P["b_s"].unsqueeze(1), x.reshape(K, B * T, D), W_x[:, :D]).view(K, B, T, G)
        S = torch.empty(K, B, T, H, dtype=dt, device=dev)
        N = torch.empty(K, B, T, dtype=torch.int32, device=dev)
        R = torch.empty(K, B, T, dtype=dt, device=dev)
        # every step a row may take has its slot; the slots of steps not taken stay 0 (the weight
        # gradients' products read them, and 0 * 0 adds nothing)
        kept = {"Sn": torch.zeros(K, T, L, B, H, dtype=dt, device=dev),
                "Hn": torch.zeros(K, T, L, B, dtype=dt, device=dev),
                "Pn": torch.zeros(K, T, L, B, dtype=dt, device=dev)}
        weights = (xW.contiguous(), W_x[:, D].contiguous(), P["W_s"].contiguous(),
                   P["W_h"][..., 0].contiguous(), P["b_h"][:, 0].contiguous(), threshold, cap, gate)
        sizes = dict(B=B, T=T, H=H, L=L, BLOCK_B=block_rows, BLOCK_H=_blocks(H), num_warps=num_warps(_blocks(H)))
        if cell == "rnn":
            rnn_ponder_forward[_grid(K, B, block_rows)](*weights, S, N, R, kept["Sn"], kept["Hn"], kept["Pn"],
                                                        **sizes)
        else:
            # the LSTM's cell states c_t and c^n, and its gate activations (i, f, o, g) at every step
            kept.update(C=torch.empty(K, B, T, H, dtype=dt, device=dev),
                        Cn=torch.zeros(K, T, L, B, H, dtype=dt, device=dev),
                        An=torch.zeros(K, T, L, B, G, dtype=dt, device=dev))
            lstm_ponder_forward[_grid(K, B, block_rows)](*weights, S, kept["C"], N, R, kept["Sn"], kept["Cn"],
                                                         kept["An"], kept["Hn"], kept["Pn"], **sizes)
        # eq. (9): y_t = W_y s_t + b_y, every (b, t) of a member in one product
        y = torch.baddbmm(P["b_y"].unsqueeze(1), S.view(K, B * T, H), P["W_y"]).view(K, B, T, -1)
    N = N.long()
    cache = {"x": x, "P": P, "cell": cell, "S": S, "N": N, "block_rows": block_rows, **kept}
    return y, N, R, cache


def backward_pass(dy, dponder, cache):
    """act_numpy.act.backward_pass for the K members of forward_pass: dy (K, B, T, O), dponder
    (K, B, T) = dL/drho_t. Returns a dict with the gradient of every parameter (the stacked shapes
    of P) and of x (K, B, T, D)."""
    x, P, cell, S, N, Sn = (cache[k] for k in ("x", "P", "cell", "S", "N", "Sn"))
    K, B, T, D = x.shape
    H, G = P["W_s"].shape[-2:]
    if tuple(dy.shape) != (K, B, T, P["W_y"].shape[-1]):
        raise ValueError(f"dy must have shape {(K, B, T, P['W_y'].shape[-1])}, got {tuple(dy.shape)}")
    try:
        dponder = torch.broadcast_to(torch.as_tensor(dponder, dtype=x.dtype, device=x.device), (K, B, T))
    except RuntimeError:
        raise ValueError(f"dponder must broadcast to {(K, B, T)}, got shape {tuple(dponder.shape)}") from None
    dy = dy.to(x.dtype)
    g = {}
    with torch.no_grad():
        dy_rows = dy.reshape(K, B * T, -1)
        # the output y_t = W_y s_t + b_y (eq. 9)
        g["W_y"] = S.view(K, B * T, H).mT @ dy_rows
        g["b_y"] = dy.sum(dim=(1, 2))
        dS = (dy_rows @ P["W_y"].mT).view(K, B, T, H).contiguous()   # dL/ds_t through the output

        L = Sn.shape[2]
        dZn = torch.zeros(K, T, L, B, G, dtype=x.dtype, device=x.device)
        dZh = torch.zeros_like(cache["Hn"])
        block_rows = cache["block_rows"]
        inputs = (dS, P["W_s"].contiguous(), P["W_h"][..., 0].contiguous(), N.to(torch.int32).contiguous(),
                  dponder.contiguous())
        sizes = dict(B=B, T=T, H=H, L=L, BLOCK_B=block_rows, BLOCK_H=_blocks(H), num_warps=num_warps(_blocks(H)))
        if cell == "rnn":
            rnn_ponder_backward[_grid(K, B, block_rows)](*inputs, Sn, cache["Hn"], cache["Pn"], dZn, dZh,
                                                         **sizes)
        else:
            lstm_ponder_backward[_grid(K, B, block_rows)](*inputs, cache["C"], Sn, cache["Cn"], cache["An"],
                                                          cache["Hn"], cache["Pn"], dZn, dZh, **sizes)

        # every ponder step used the same W_s, W_h and b_h: one product over all the rows (t, n, b)
        # of every step adds up their gradients. Only the first n_max = max N(t) slots hold steps
        # (the rest are zeros, which add nothing), so the products read those.
        n_max = int(N.max())
        Sn, dZn, dZh = Sn[:, :, :n_max], dZn[:, :, :n_max], dZh[:, :, :n_max]
        # step n read s^{n-1}, and step 1 read s_{t-1} (zeros at t = 0)
        S_prev = torch.cat([torch.zeros_like(S[:, :, :1]), S[:, :, :-1]], dim=2)     # (K, B, T, H)
        S_in = torch.cat([S_prev.transpose(1, 2).unsqueeze(2), Sn[:, :, :-1]], dim=2)   # (K, T, n_max, B, H)
        g["W_s"] = S_in.reshape(K, -1, H).mT @ dZn.reshape(K, -1, G)
        g["W_h"] = Sn.reshape(K, -1, H).mT @ dZh.reshape(K, -1, 1)
        g["b_h"] = dZh.sum(dim=(1, 2, 3)).unsqueeze(1)

        # eq. (3)'s input part: z^n = x_t W_in + flag * w_flag + ... + b_s, for every n: its
        # gradient is dZ = sum_n dL/dz^n per (b, t); the flag only at n = 1
        dZ = dZn.sum(dim=2).transpose(1, 2)                      # (K, B, T, G)
        dZ_rows = dZ.reshape(K, B * T, G)
        g["b_s"] = dZ.sum(dim=(1, 2))
        dflag = dZn[:, :, 0].sum(dim=(1, 2))                     # (K, G)
        g["W_x"] = torch.cat([x.reshape(K, B * T, D).mT @ dZ_rows, dflag.unsqueeze(1)], dim=1)
        g["x"] = (dZ_rows @ P["W_x"][:, :D].mT).view(K, B, T, D)
    return g


NAMES = ("W_x", "W_s", "b_s", "W_h", "b_h", "W_y", "b_y")


class _Ponder(torch.autograd.Function):
    """forward_pass and backward_pass as one autograd node: y, N, R from x and the parameters."""

    @staticmethod
    def forward(ctx, cell, threshold, cap, halting, longest, block_rows, x, *params):
        y, N, R, cache = forward_pass(x, dict(zip(NAMES, params)), cell, threshold, cap, halting, longest,
                                      block_rows)
        ctx.cache = cache
        ctx.mark_non_differentiable(N)
        return y, N, R

    @staticmethod
    def backward(ctx, dy, dN, dR):
        cache = ctx.cache
        y_shape = (*cache["S"].shape[:3], cache["P"]["W_y"].shape[-1])
        x = cache["x"]
        dy = torch.zeros(y_shape, dtype=x.dtype, device=x.device) if dy is None else dy
        dR = torch.zeros(y_shape[:3], dtype=x.dtype, device=x.device) if dR is None else dR
        g = backward_pass(dy, dR, cache)        # rho = N + R and N has no gradient: dL/drho = dL/dR
        ctx.cache = None
        return (None, None, None, None, None, None, g["x"], *(g[name] for name in NAMES))


def ponder_until_halted(x, P, cell, threshold, cap, longest, record=None, halting=None,
                        block_rows=BLOCK_B):
    """act_engine.torch_act.ponder_until_halted for K stacked tanh RNNs or LSTMs, on the kernels,
    with autograd: y (K, B, T, O), N (K, B, T) int64 and R (K, B, T). record must be None (the
    kernels keep no per-step record for plots)."""
    if record is not None:
        raise ValueError("record must be None: the kernels keep no record of h and p")
    return _Ponder.apply(cell, threshold, cap, halting, longest, block_rows, x, *(P[name] for name in NAMES))
