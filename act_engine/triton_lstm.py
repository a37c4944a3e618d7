"""The ponder loop of K stacked LSTMs as two Triton kernels: forward and hand-derived backward.

The LSTM's twin of ``act_engine.triton_rnn``, with its conventions and its shared pieces (_tanh,
_sigmoid, the block prologue _block, the tile of W_s, the halting bookkeeping), imported from
there. One program per (member k, block of BLOCK_B rows) runs that block's ponder steps for every
input step t, its rows stopping as they halt, until all have halted or met the member's cap M
(eqs 7, 13). The equations are those of ``act_numpy.act`` with the cell of ``act_numpy.cells``
(lstm_forward, lstm_backward); z holds the gate blocks in the order i, f, o, g:

    forward:  z^n = x_t W_in + delta_{n,1} w_flag + b_s + s^{n-1} W_s      eq. (3)
              i, f, o = sigmoid(z_i, z_f, z_o),  g = tanh(z_g)
              c^n = f c^{n-1} + i g,  s^n = o tanh(c^n)
              h^n = gate * sigmoid(s^n W_h + b_h)                            eq. (5)
              p^n, N(t), R(t) as act_numpy.halting.halting_update            eqs (6)-(8), (13)
              s_t = sum_n p^n s^n,  c_t = sum_n p^n c^n                      eq. (9)
    backward: dL/dp^n = dL/ds_t . s^n + dL/dc_t . c^n                        eq. (17)
              dL/dh^n = dL/dp^n - dL/dp^N for n < N, 0 at N                  eqs (18)-(20)
              dL/ds^n = p^n dL/ds_t + dL/dz_h^n W_h^T + dL/dz^{n+1} W_s^T     eqs (9), (5), (3)
              dL/dc^n = p^n dL/dc_t + f^{n+1} dL/dc^{n+1} + dL/ds^n o (1 - tanh^2 c^n)
              dL/dz^n = (dL/dc^n g i (1 - i), dL/dc^n c^{n-1} f (1 - f),
                         dL/ds^n tanh(c^n) o (1 - o), dL/dc^n i (1 - g^2))
    Step 1 reads the mean fields s_{t-1}, c_{t-1} (zeros at t = 0), so dL/ds_{t-1} and dL/dc_{t-1}
    are what step 1 sends back; the output reads s_t alone, so dL/dc_t comes only from t + 1.

Memory layout (row-major, every tensor contiguous), with G = 4H:

    xW (K, B, T, G)    x_t W_in + b_s, for every t (made outside, one batched product)
    w_flag (K, G), W_s (K, H, G), w_h (K, H), b_h (K,), threshold (K,) 1 - eps, cap (K,) int32 M,
    gate (K,) 1.0 for ACT, 0.0 for a fixed-computation member (h = 0: it runs to its cap)
    S, C (K, B, T, H) mean fields s_t and c_t;  N (K, B, T) int32;  R (K, B, T)
    Sn, Cn (K, T, L, B, H), An (K, T, L, B, G), Hn, Pn (K, T, L, B): s^n, c^n, the gate activations
    (i, f, o, g), h^n and p^n of every step a row took (n <= N(t)), kept for the backward; L >= every
    cap, so every step taken has its slot; the caller zeroes them.
    dZn (K, T, L, B, G), dZh (K, T, L, B): dL/dz^n and dL/dz_h^n, from which the weight gradients
    are one batched product each, and their sum over n one reduction (outside).

What the interpreter (TRITON_INTERPRET=1) does not check and the code keeps anyway: as in
triton_rnn, BLOCK_B and BLOCK_H are powers of two >= 16 (tl.dot's smallest tile), rows and units
beyond B and H are masked (padded rows count as halted from the start; padded units have z = 0, so
c = 0 and s = 0 there), every loop is bounded by the cap, and offsets are int64. W_s is (H, 4H):
256 KB in float32 at H = 128, more than a block's shared memory (227 KB on an H100), so it is never
held whole: each product reads it as four (BLOCK_H, BLOCK_H) tiles, one per gate block, none over
64 KB at H <= 128 (act_engine.kernel_act checks H), in a loop that keeps one tile live at a time
(_gates, _times_W_s_T); scripts/kernels_compile.py reports the registers and spills that remain.
The loops over t are while loops (see triton_rnn), and products use
tl.dot(..., input_precision="ieee").
"""

from __future__ import annotations     # tl.constexpr stays a string (Triton reads it so): see triton_rnn

# tl and jit are triton_rnn's: Triton's, or stand-ins that let this module import without Triton
from .triton_rnn import (_block, _halting_gradient, _halting_start, _halting_update, _sigmoid, _tanh, _tile, jit,
                         tl)


@jit
def _gates(prev_s, x_at, wf_at, first, W_s, k, H, G, cols, col_ok, tile):
    """The gates i, f, o, g (BLOCK_B, BLOCK_H) of one ponder step, from s^{n-1} (prev_s); x_at and
    wf_at point at gate block 0 of the rows' x_t W_in + b_s and of w_flag. Eq. (3) for gate block
    j: z_j = x_t W_in + b_s + delta_{n,1} w_flag (in block j) + s^{n-1} times W_s's (H, H) tile of
    block j; then i, f, o = sigmoid(z_i, z_f, z_o) and g = tanh(z_g), as act_numpy.cells.lstm_forward.

    W_s whole, (H, 4H), is more than a block's shared memory, and unrolled over j the four tiles'
    loads are issued together and spill (ptxas for sm_90, scripts/kernels_compile.py): the loop over
    j is a while loop, which the compiler keeps rolled, so that one tile is live at a time."""
    i = tl.zeros_like(prev_s)
    f, o, g = i, i, i
    j = 0
    while j < 4:
        z = (tl.load(x_at + j * H, mask=tile, other=0.0)
             + first * tl.load(wf_at + j * H, mask=col_ok, other=0.0)[None, :]
             + tl.dot(prev_s, _tile(W_s, k, H, G, j, cols, col_ok, False), input_precision="ieee"))
        a = tl.where(j == 3, _tanh(z), _sigmoid(z))
        i = tl.where(j == 0, a, i)
        f = tl.where(j == 1, a, f)
        o = tl.where(j == 2, a, o)
        g = tl.where(j == 3, a, g)
        j += 1
    return i, f, o, g


@jit
def _lstm_backward(ds, dc, c_prev, i, f, o, g, tc):
    """act_numpy.cells.lstm_backward on a block: ds = dL/ds^n, dc = dL/dc^n from outside s^n,
    c_prev = c^{n-1}, the gates i, f, o, g and tc = tanh(c^n) of step n. Returns dL/dz^n as its
    four gate blocks and dL/dc^{n-1}."""
    dc = dc + ds * o * (1.0 - tc * tc)              # c^n feeds s^n = o tanh(c^n)
    return (dc * g * i * (1.0 - i), dc * c_prev * f * (1.0 - f), ds * tc * o * (1.0 - o),
            dc * i * (1.0 - g * g), dc * f)


@jit
def _times_W_s_T(dz_i, dz_f, dz_o, dz_g, W_s, k, H, G, cols, col_ok):
    """dL/ds^{n-1} = dL/dz^n W_s^T (eq. 3 backwards), (BLOCK_B, BLOCK_H): one gate block's
    transposed (H, H) tile at a time, in a loop kept rolled (see _gates)."""
    ds = tl.zeros_like(dz_i)
    j = 0
    while j < 4:
        dz = tl.where(j == 0, dz_i, tl.where(j == 1, dz_f, tl.where(j == 2, dz_o, dz_g)))
        ds += tl.dot(dz, _tile(W_s, k, H, G, j, cols, col_ok, True), input_precision="ieee")
        j += 1
    return ds


@jit
def _store_gates(at, i, f, o, g, H, mask):
    """Store the four blocks of a row of G = 4H in z's order, i at ``at``, f at ``at + H``, o, g."""
    tl.store(at, i, mask=mask)
    tl.store(at + H, f, mask=mask)
    tl.store(at + 2 * H, o, mask=mask)
    tl.store(at + 3 * H, g, mask=mask)


@jit
def _load_gates(at, H, mask):
    """The four blocks _store_gates stored at ``at`` (0 where ``mask`` is False): i, f, o, g."""
    return (tl.load(at, mask=mask, other=0.0), tl.load(at + H, mask=mask, other=0.0),
            tl.load(at + 2 * H, mask=mask, other=0.0), tl.load(at + 3 * H, mask=mask, other=0.0))


@jit
def lstm_ponder_forward(xW, w_flag, W_s, w_h, b_h, threshold, cap, gate,
                        S, C, N, R, Sn, Cn, An, Hn, Pn,
                        B, T, H, L,
                        BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr):
    """ACT's forward for member program_id(0), rows program_id(1) * BLOCK_B + (0 .. BLOCK_B - 1)."""
    dtype = xW.dtype.element_ty
    k, rows, cols, row_ok, col_ok, tile = _block(B, H, BLOCK_B, BLOCK_H)
    G = 4 * H
    wh = tl.load(w_h + k * H + cols, mask=col_ok, other=0.0)
    bh = tl.load(b_h + k)
    thr = tl.load(threshold + k)
    M = tl.load(cap + k)
    on = tl.load(gate + k)

    s_t = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)          # the initial state (s, c): zeros
    c_t = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)
    t = 0
    while t < T:                         # a while, not range(T): see the note in triton_rnn
        at = (k * B + rows) * T + t                           # (k, b, t) in (K, B, T)
        x_at = xW + at[:, None] * G + cols[None, :]            # x_t W_in + b_s, gate block 0
        prev_s, prev_c = s_t, c_t
        mean_s = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)    # s_t and c_t, eq. (9)
        mean_c = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)
        cum, running, N_t, R_t = _halting_start(row_ok, BLOCK_B, dtype)
        n = 0
        # every row halts at n = M at the latest (eq. 13), so n < M bounds the loop
        while (n < M) & (tl.max(running.to(tl.int32), axis=0) > 0):
            n += 1
            first = tl.where(n == 1, 1.0, 0.0).to(dtype)     # the flag delta_{n,1}
            # eq. (3), one gate block at a time; then act_numpy.cells.lstm_forward
            i, f, o, g = _gates(prev_s, x_at, w_flag + k * G + cols, first, W_s, k, H, G, cols, col_ok, tile)
            c = f * prev_c + i * g
            s = o * _tanh(c)
            h = on * _sigmoid(tl.sum(s * wh[None, :], axis=1) + bh)                    # eq. (5)
            p, halt, cum, still = _halting_update(h, cum, running, n, M, thr)            # eqs (6)-(8), (13)
            mean_s += p[:, None] * s                                                   # eq. (9)
            mean_c += p[:, None] * c
            N_t = tl.where(halt, n, N_t)
            R_t = tl.where(halt, p, R_t)
            # keep the steps each row took (n <= N(t)) for the backward
            step = ((k * T + t) * L + n - 1) * B + rows
            kept = running[:, None] & col_ok[None, :]
            tl.store(Sn + step[:, None] * H + cols[None, :], s, mask=kept)
            tl.store(Cn + step[:, None] * H + cols[None, :], c, mask=kept)
            _store_gates(An + step[:, None] * G + cols[None, :], i, f, o, g, H, kept)
            tl.store(Hn + step, h, mask=running)
            tl.store(Pn + step, p, mask=running)
            running = still
            prev_s, prev_c = s, c
        s_t, c_t = mean_s, mean_c
        tl.store(S + at[:, None] * H + cols[None, :], mean_s, mask=tile)
        tl.store(C + at[:, None] * H + cols[None, :], mean_c, mask=tile)
        tl.store(N + at, N_t, mask=row_ok)
        tl.store(R + at, R_t, mask=row_ok)
        t += 1


@jit
def lstm_ponder_backward(dS, W_s, w_h, N, dponder, C, Sn, Cn, An, Hn, Pn,
                         dZn, dZh,
                         B, T, H, L,
                         BLOCK_B: tl.constexpr, BLOCK_H: tl.constexpr):
    """triton_rnn.rnn_ponder_backward for the LSTM: the same arguments, dZn with four gate blocks,
    and C (K, B, T, H), the mean fields c_t of the forward, from which step 1 reads c_{t-1}."""
    dtype = dS.dtype.element_ty
    k, rows, cols, row_ok, col_ok, tile = _block(B, H, BLOCK_B, BLOCK_H)
    G = 4 * H
    wh = tl.load(w_h + k * H + cols, mask=col_ok, other=0.0)

    ds_next = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)      # dL/ds_t and dL/dc_t arriving from t + 1
    dc_next = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)
    t = T - 1
    while t >= 0:
        at = (k * B + rows) * T + t
        ds_mean = tl.load(dS + at[:, None] * H + cols[None, :], mask=tile, other=0.0) + ds_next
        dc_mean = dc_next                      # the output reads s_t alone
        N_t = tl.load(N + at, mask=row_ok, other=0)
        dR = tl.load(dponder + at, mask=row_ok, other=0.0)
        # c_{t-1}, the cell state step 1 read (zeros at t = 0)
        c_before = tl.load(C + (at - 1)[:, None] * H + cols[None, :], mask=tile & (t > 0), other=0.0)
        base = (k * T + t) * L
        # eq. (17) at n = N, plus the ponder cost's dL/dR: R = p^N (eq. 18)
        last = (base + N_t - 1) * B + rows
        s_N = tl.load(Sn + last[:, None] * H + cols[None, :], mask=tile, other=0.0)
        c_N = tl.load(Cn + last[:, None] * H + cols[None, :], mask=tile, other=0.0)
        dp_N = tl.sum(s_N * ds_mean, axis=1) + tl.sum(c_N * dc_mean, axis=1) + dR
        ds_chain = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)   # dL/ds^n, dL/dc^n arriving from step n + 1
        dc_chain = tl.zeros((BLOCK_B, BLOCK_H), dtype=dtype)
        # from the block's last step down; N(t) <= M <= L bounds it
        n = tl.minimum(tl.max(N_t, axis=0), L)
        while n > 0:
            step = (base + n - 1) * B + rows
            taken = row_ok & (n <= N_t)        # a row past its N(t) reads 0: its gradient is 0
            mask = taken[:, None] & col_ok[None, :]
            s = tl.load(Sn + step[:, None] * H + cols[None, :], mask=mask, other=0.0)
            c = tl.load(Cn + step[:, None] * H + cols[None, :], mask=mask, other=0.0)
            i, f, o, g = _load_gates(An + step[:, None] * G + cols[None, :], H, mask)
            # c^{n-1}: the step before's cell state, or c_{t-1} at n = 1
            c_prev = tl.load(Cn + (step - B)[:, None] * H + cols[None, :], mask=mask & (n > 1), other=0.0)
            c_prev = tl.where(n > 1, c_prev, c_before)
            h = tl.load(Hn + step, mask=taken, other=0.0)
            p = tl.load(Pn + step, mask=taken, other=0.0)
            dp = tl.sum(s * ds_mean, axis=1) + tl.sum(c * dc_mean, axis=1)    # eq. (17)
            dzh = _halting_gradient(dp, dp_N, h, n, N_t)                      # eqs (19), (20), (5)
            # s^n feeds the mean field (eq. 9), its halting unit (eq. 5) and step n + 1 (eq. 3);
            # c^n the mean field, step n + 1 (dc_chain, from c^{n+1} = f c^n + i g) and s^n
            ds = p[:, None] * ds_mean + dzh[:, None] * wh[None, :] + ds_chain
            dc = p[:, None] * dc_mean + dc_chain
            dz_i, dz_f, dz_o, dz_g, dc_chain = _lstm_backward(ds, dc, c_prev, i, f, o, g, _tanh(c))
            _store_gates(dZn + step[:, None] * G + cols[None, :], dz_i, dz_f, dz_o, dz_g, H, tile)
            tl.store(dZh + step, dzh, mask=row_ok)
            ds_chain = _times_W_s_T(dz_i, dz_f, dz_o, dz_g, W_s, k, H, G, cols, col_ok)
            n -= 1
        ds_next = ds_chain                     # step 1 read s_{t-1} and c_{t-1}
        dc_next = dc_chain
        t -= 1
