"""The ponder loop of K stacked tanh RNNs as two Triton kernels: forward and hand-derived backward.

One program per (member k, block of BLOCK_B rows); it runs that block's ponder steps for every
input step t, its rows stopping as they halt, and the block stops when all of its rows have halted
or met the member's cap M (eqs 7, 13). These are the equations of ``act_numpy.act`` (forward_pass,
ponder, backward_pass) with one member's block of rows in registers:

    forward:  z^n = x_t W_in + delta_{n,1} w_flag + b_s + s^{n-1} W_s     eq. (3)
              s^n = tanh(z^n),  h^n = gate * sigmoid(s^n W_h + b_h)        eq. (5)
              p^n, N(t), R(t) as act_numpy.halting.halting_update         eqs (6)-(8), (13)
              s_t = sum_n p^n s^n                                           eq. (9)
    backward: dL/dh^n = dL/dp^n - dL/dp^N for n < N, 0 at N                 eqs (17)-(20)
              dL/ds^n = p^n dL/ds_t + dL/dz_h^n W_h^T + dL/dz^{n+1} W_s^T    eqs (9), (5), (3)
              dL/dz^n = dL/ds^n (1 - (s^n)^2)

Memory layout (row-major, every tensor contiguous):

    xW (K, B, T, H)    x_t W_in + b_s, for every t (made outside, one batched product)
    w_flag (K, H), W_s (K, H, H), w_h (K, H), b_h (K,), threshold (K,) 1 - eps, cap (K,) int32 M,
    gate (K,) 1.0 for ACT, 0.0 for a fixed-computation member (h = 0: it runs to its cap)
    S (K, B, T, H) mean-field states s_t;  N (K, B, T) int32;  R (K, B, T)
    Sn (K, T, L, B, H), Hn, Pn (K, T, L, B): s^n, h^n, p^n of every step a row took (n <= N(t)),
    kept for the backward; L >= every cap, so every step taken has its slot; the caller zeroes them.
    dZn (K, T, L, B, H), dZh (K, T, L, B): dL/dz^n and dL/dz_h^n, from which the weight gradients
    are one batched product each, and their sum over n one reduction (outside).

What the interpreter (TRITON_INTERPRET=1) does not check and the code keeps anyway: BLOCK_B and
BLOCK_H are powers of two >= 16 (tl.dot's smallest tile), rows and units beyond B and H are masked
(padded rows count as halted from the start, padded units are 0), every loop is bounded by the cap,
and offsets are int64 (K T L B H may pass 2^31). W_s is one (BLOCK_H, BLOCK_H) tile per program:
64 KB in float32 at H = 128, which is why H is kept <= 128 here (act_engine.kernel_act checks it).
The loops over t are while loops, not range(T): Triton 3.6's interpreter turns a runtime bound of
range into an index through a conversion that NumPy >= 2.4 refuses; a while loop compiles the same.
Products use tl.dot(..., input_precision="ieee"): on a GPU float32 products otherwise run in TF32,
and the course's numbers are true float32.

The pieces every cell's kernels share live here (act_engine.triton_lstm imports them): _tanh,
_sigmoid, the block prologue _block, a tile of W_s (_tile), and the halting bookkeeping forward
(_halting_update) and backward (_halting_gradient).
"""

from __future__ import annotations     # tl.constexpr stays a string (Triton reads it so): see below

try:
    import triton
    import triton.language as tl
    jit = triton.jit
except ImportError:
    # Triton is optional (requirements-kernels.txt). Without it this module still imports, as every
    # module of the engine does, and its kernels are plain functions that nothing launches:
    # act_engine.kernel_act refuses with a ValueError that says what to install.
    triton = tl = None

    def jit(fn):
        return fn


@jit
def _tanh(z):
    """tanh through e = exp(-2|z|), which never overflows: tanh(z) = sign(z) (1 - e) / (1 + e)."""
    e = tl.exp(-2.0 * tl.abs(z))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(z < 0.0, -t, t)


@jit
def _sigmoid(z):
    """The logistic function as act_numpy.cells.sigmoid writes it, through tanh."""
    return 0.5 * (1.0 + _tanh(0.5 * z))


@jit
def _block(B, H, BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr):
    """This program's member k, its rows and the units, with their masks: rows beyond B and units
    beyond H are padding (int64 indices: offsets may pass 2^31)."""
    k = tl.program_id(0).to(tl.int64)
    rows = tl.program_id(1).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    cols = tl.arange(0, BLOCK_H)
    row_ok = rows < B
    col_ok = cols < H
    return k, rows, cols, row_ok, col_ok, row_ok[:, None] & col_ok[None, :]


@jit
def _tile(W_s, k, H, G, j, cols, col_ok, TRANSPOSED: tl.constexpr):
    """Member k's (BLOCK_H, BLOCK_H) tile of W_s (K, H, G) at columns j H .. j H + H - 1: all of
    W_s for the tanh RNN (G = H, j = 0), gate block j of the LSTM's (G = 4H). TRANSPOSED reads the
    tile's transpose, for dL/ds^{n-1} = dL/dz^n W_s^T. Padded units read 0."""
    if TRANSPOSED:
        at = cols[None, :] * G + j * H + cols[:, None]
    else:
        at = cols[:, None] * G + j * H + cols[None, :]
    return tl.load(W_s + k * H * G + at, mask=col_ok[:, None] & col_ok[None, :], other=0.0)


@jit
def _halting_start(row_ok, BLOCK_B: tl.constexpr, dtype: tl.constexpr):
    """The halting bookkeeping of a block of rows at the start of an input step: cum = sum_{k<n} h^k
    = 0, running (the real rows; padded rows never run), N(t) = 0 and R(t) = 0."""
    return (tl.zeros((BLOCK_B,), dtype=dtype), row_ok, tl.zeros((BLOCK_B,), dtype=tl.int32),
            tl.zeros((BLOCK_B,), dtype=dtype))


@jit
def _halting_update(h, cum, running, n, M, thr):
    """act_numpy.halting.halting_update for a block of rows at ponder step n: h, cum = sum_{k<n} h^k
    and running (BLOCK_B,). Returns p^n, halt (the rows whose N(t) is n), and cum and running after
    step n."""
    # eq. (7) with the cap of eq. (13); eq. (6); eq. (8): p^N = R = 1 - sum_{n<N} h^n
    halt = running & ((cum + h >= thr) | (n >= M))
    p = tl.where(halt, 1.0 - cum, tl.where(running, h, 0.0))
    cum = tl.where(running & ~halt, cum + h, cum)
    return p, halt, cum, running & ~halt


@jit
def _halting_gradient(dp, dp_N, h, n, N_t):
    """dL/dz_h^n (BLOCK_B,) at ponder step n from dL/dp^n and dL/dp^N (R's share included):
    eqs (19), (20), then through the sigmoid of eq. (5). 0 from each row's N(t) on."""
    return tl.where(n < N_t, dp - dp_N, 0.0) * h * (1.0 - h)


@jit
def rnn_ponder_forward(xW, w_flag, W_s, w_h, b_h, threshold, cap, gate,
                       S, N, R, Sn, Hn, Pn,
                       B, T, H, L,
                       BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr):
    """ACT's forward for member program_id(0), rows program_id(1) * BLOCK_B + (0 .. BLOCK_B - 1)."""
    dtype = xW.dtype.element_ty
    k, rows, cols, row_ok, col_ok, tile = _block(B, H, BLOCK_B, BLOCK_H)
    # member k's weights, loaded once for all its ponder steps; padded units read 0
    W = _tile(W_s, k, H, H, 0, cols, col_ok, False)
    wf = tl.load(w_flag + k * H + cols, mask=col_ok, other=0.0)
    wh = tl.load(w_h + k * H + cols, mask=col_ok, other=0.0)
    bh = tl.load(b_h + k)
    thr = tl.load(threshold + k)
    M = tl.load(cap + k)
    g = tl.load(gate + k)

    s_t = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)          # the initial state: zeros
    t = 0
    while t < T:                         # a while, not range(T): see the note at the top of the file
        at = (k * B + rows) * T + t                           # (k, b, t) in (K, B, T)
        x_t = tl.load(xW + at[:, None] * H + cols[None, :], mask=tile, other=0.0)
        prev = s_t
        mean = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)      # s_t, eq. (9)
        cum, running, N_t, R_t = _halting_start(row_ok, BLOCK_B, dtype)
        n = 0
        # every row halts at n = M at the latest (eq. 13), so n < M bounds the loop
        while (n < M) & (tl.max(running.to(tl.int32), axis=0) > 0):
            n += 1
            first = tl.where(n == 1, 1.0, 0.0).to(dtype)     # the flag delta_{n,1}
            z = x_t + first * wf[None, :] + tl.dot(prev, W, input_precision="ieee")   # eq. (3)
            s = _tanh(z)
            h = g * _sigmoid(tl.sum(s * wh[None, :], axis=1) + bh)                     # eq. (5)
            p, halt, cum, still = _halting_update(h, cum, running, n, M, thr)            # eqs (6)-(8), (13)
            mean += p[:, None] * s
            N_t = tl.where(halt, n, N_t)
            R_t = tl.where(halt, p, R_t)
            # keep the steps each row took (n <= N(t)) for the backward
            step = ((k * T + t) * L + n - 1) * B + rows
            tl.store(Sn + step[:, None] * H + cols[None, :], s, mask=running[:, None] & col_ok[None, :])
            tl.store(Hn + step, h, mask=running)
            tl.store(Pn + step, p, mask=running)
            running = still
            prev = s
        s_t = mean
        tl.store(S + at[:, None] * H + cols[None, :], mean, mask=tile)
        tl.store(N + at, N_t, mask=row_ok)
        tl.store(R + at, R_t, mask=row_ok)
        t += 1


@jit
def rnn_ponder_backward(dS, W_s, w_h, N, dponder, Sn, Hn, Pn,
                        dZn, dZh,
                        B, T, H, L,
                        BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr):
    """act_numpy.act.backward_pass's recurrence for member program_id(0), one block of rows.

    dS (K, B, T, H) = dL/ds_t through the output (dy W_y^T); dponder (K, B, T) = dL/drho_t.
    Writes dZn, dZh: every step's dL/dz^n and dL/dz_h^n.
    """
    dtype = dS.dtype.element_ty
    k, rows, cols, row_ok, col_ok, tile = _block(B, H, BLOCK_B, BLOCK_H)
    # W_s^T, read transposed from W_s: dL/ds^{n-1} = dL/dz^n W_s^T (eq. 3 backwards)
    W_T = _tile(W_s, k, H, H, 0, cols, col_ok, True)
    wh = tl.load(w_h + k * H + cols, mask=col_ok, other=0.0)

    ds_next = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)      # dL/ds_t arriving from t + 1
    t = T - 1
    while t >= 0:
        at = (k * B + rows) * T + t
        ds_mean = tl.load(dS + at[:, None] * H + cols[None, :], mask=tile, other=0.0) + ds_next
        N_t = tl.load(N + at, mask=row_ok, other=0)
        dR = tl.load(dponder + at, mask=row_ok, other=0.0)
        base = (k * T + t) * L
        # eq. (17) at n = N, plus the ponder cost's dL/dR: R = p^N (eq. 18)
        last = (base + N_t - 1) * B + rows
        s_N = tl.load(Sn + last[:, None] * H + cols[None, :], mask=tile, other=0.0)
        dp_N = tl.sum(s_N * ds_mean, axis=1) + dR
        ds_chain = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)   # dL/ds^n arriving from step n + 1
        # from the block's last step down; N(t) <= M <= L bounds it
        n = tl.minimum(tl.max(N_t, axis=0), L)
        while n > 0:
            step = (base + n - 1) * B + rows
            taken = row_ok & (n <= N_t)        # a row past its N(t) reads 0: its gradient is 0
            s = tl.load(Sn + step[:, None] * H + cols[None, :], mask=taken[:, None] & col_ok[None, :],
                        other=0.0)
            h = tl.load(Hn + step, mask=taken, other=0.0)
            p = tl.load(Pn + step, mask=taken, other=0.0)
            dp = tl.sum(s * ds_mean, axis=1)                                  # eq. (17)
            dzh = _halting_gradient(dp, dp_N, h, n, N_t)                      # eqs (19), (20), (5)
            # s^n feeds the mean field (eq. 9), its halting unit (eq. 5) and step n + 1 (eq. 3)
            ds = p[:, None] * ds_mean + dzh[:, None] * wh[None, :] + ds_chain
            dz = ds * (1.0 - s * s)                                           # through tanh
            tl.store(dZn + step[:, None] * H + cols[None, :], dz, mask=tile)
            tl.store(dZh + step, dzh, mask=row_ok)
            ds_chain = tl.dot(dz.to(dtype), W_T, input_precision="ieee")
            n -= 1
        ds_next = ds_chain                     # step 1 read s_{t-1}
        t -= 1
