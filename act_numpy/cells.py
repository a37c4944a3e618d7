"""The two state-transition functions S of the paper, one forward/backward pair each.

A cell maps a pre-activation ``z = x~ W_x + s W_s + b_s`` (computed by the caller, because the
caller knows how to add the input part cheaply) and the previous state to the next state.

State conventions (same in act_torch):
- ``rnn``:  the state is one array ``s (B, H)``;  ``s' = tanh(z)`` with ``z (B, H)``.
- ``lstm``: the state is a pair ``(s, c)`` of ``(B, H)`` arrays, the output s (what LSTM papers call
  the hidden state h; here h is only ever the halting unit) and the memory c; ``z (B, 4H)`` holds
  the gate blocks in the order i, f, o, g:  ``c' = sigma(f) c + sigma(i) tanh(g)``,
  ``s' = sigma(o) tanh(c')``. The halting unit and the output read ``s``, never ``c``.

Every forward has the form of act_torch's cells, ``s, state, cache = cell_forward(z, state)``:
the new s' (what the halting unit and the output read), the cell's whole new state (s' itself
for the RNN, the pair (s', c') for the LSTM) and a cache for the backward. Every backward takes
the gradient with respect to the *new* state and returns the gradient with respect to ``z`` and
to the *previous* state. The cells work on the last axis only, so any
leading axes pass through: the engine's K stacked networks send ``z (K, B, G)``.
"""

import numpy as np

CELLS = ("rnn", "lstm")


def sigmoid(z):
    """Logistic function, written through tanh so it never overflows for large |z|."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def gate_size(cell, H):
    """Width G of the pre-activation z for a state of H units: H (rnn) or 4H (lstm)."""
    if cell == "rnn":
        return H
    if cell == "lstm":
        return 4 * H
    raise ValueError(f"unknown cell {cell!r}; expected one of {CELLS}")


# --------------------------------------------------------------------------- tanh RNN
def rnn_forward(z, state):
    """s' = tanh(z).  z (B, H) -> s', the new state (s' itself) and the cache (s' again:
    tanh' = 1 - s'^2). The previous state s (B, H) only enters through z."""
    s = np.tanh(z)
    return s, s, s


def rnn_backward(ds, cache):
    """ds (B, H) = dL/ds'  ->  dz (B, H); the previous state only enters through z."""
    s = cache
    return ds * (1.0 - s * s)


# --------------------------------------------------------------------------- LSTM
def lstm_forward(z, state):
    """One LSTM update.

    z (B, 4H) gate pre-activations in block order i, f, o, g; state = (s, c), each (B, H).
    Returns s', the new state (s', c') and a cache for lstm_backward.
    """
    _, c_prev = state
    H = c_prev.shape[-1]
    gates = sigmoid(z[..., :3 * H])          # i, f, o in one call: the three sigmoid blocks
    i, f, o = gates[..., :H], gates[..., H:2 * H], gates[..., 2 * H:]
    g = np.tanh(z[..., 3 * H:])
    c = f * c_prev + i * g
    tc = np.tanh(c)
    s = o * tc
    return s, (s, c), (i, f, o, g, c_prev, tc)


def lstm_backward(dstate, cache):
    """dstate = (ds', dc') each (B, H)  ->  dz (B, 4H) and dc_prev (B, H).

    (ds_prev is not returned: s_prev only reaches the new state through z, whose gradient the
    caller sends back through W_s.)
    """
    ds, dc = dstate
    i, f, o, g, c_prev, tc = cache
    do = ds * tc
    dc = dc + ds * o * (1.0 - tc * tc)      # c' feeds s' through tanh
    di = dc * g
    df = dc * c_prev
    dg = dc * i
    dc_prev = dc * f
    dz = np.concatenate(
        [di * i * (1.0 - i), df * f * (1.0 - f), do * o * (1.0 - o), dg * (1.0 - g * g)], axis=-1
    )
    return dz, dc_prev
