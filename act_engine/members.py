"""What every population shares: the members' agreement, a member's index, and the checkpoint layout.

A checkpoint holds one network's parameters and Adam state under flat names, the same for a run
trained alone (either backend) and for a member of a population, so that a member resumes as a
single run and a single run as a member:

    "param/<name>"   the parameter, the single network's shape (act_numpy.params)
    "adam_m/<name>"  Adam's first moment of it
    "adam_v/<name>"  Adam's second moment
    "adam_t"         Adam's step count, a 0-d integer array
"""

import numpy as np

from act_numpy.checks import check_int

# what the members of a population must share: the shape of the computation
SHARED = ("task", "task_options", "cell", "hidden", "batch_size", "dtype")


def check_members(configs, shared):
    """The members' configs as a list, once they agree on every key in ``shared``.

    ValueError for an empty list, or naming the first key on which two members differ.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("configs must hold at least one member's config")
    for key in shared:
        missing = [i for i, c in enumerate(configs) if key not in c]
        if missing:
            raise ValueError(f"the config of member {missing[0]} has no {key!r}: members need full "
                             "training configs of one backend")
        values = {repr(c[key]) for c in configs}
        if len(values) > 1:
            raise ValueError(f"the members of a population must share {key!r}; got {sorted(values)}")
    return configs


def halting_mask(configs, shape, dtype):
    """What multiplies every member's halting units: None when every member is ACT (nothing to
    multiply, so ACT's numbers are untouched), else an array of ``shape`` (K first) holding 1.0
    for an ACT member and 0.0 for a fixed-computation one (config ``fixed_ponder`` F: h = 0, so
    it runs to its cap M = F; and for a random-schedule one, ``random_ponder``, whose caps are its
    drawn numbers of updates: ``random_members``). Configs from before either existed are ACT."""
    fixed = [c.get("fixed_ponder") is not None or c.get("random_ponder") is not None for c in configs]
    if not any(fixed):
        return None
    return np.array([0.0 if f else 1.0 for f in fixed], dtype=dtype).reshape(shape)


def random_members(configs, shape):
    """None when no member is a random-schedule control (config ``random_ponder``), else a bool
    array of ``shape`` (K first), True for those members: their caps are the numbers of updates
    drawn for each row and input step, and with h = 0 each row takes exactly that many."""
    scheduled = [c.get("random_ponder") is not None for c in configs]
    return np.array(scheduled).reshape(shape) if any(scheduled) else None


def check_member(k, K):
    """k as an int once it is a member's index in [0, K); ValueError naming k otherwise."""
    return check_int("k", k, 0, K - 1)


def pack_state(params, m, v, t):
    """One network's checkpoint state: params, m, v dicts of arrays (copied) and step count t."""
    state = {"adam_t": np.array(int(t))}
    for name in params:
        state[f"param/{name}"] = np.array(params[name], copy=True)
        state[f"adam_m/{name}"] = np.array(m[name], copy=True)
        state[f"adam_v/{name}"] = np.array(v[name], copy=True)
    return state


def unpack_state(state, names):
    """The inverse of pack_state: (params, m, v, t) for the parameters ``names``."""
    params = {name: state[f"param/{name}"] for name in names}
    m = {name: state[f"adam_m/{name}"] for name in names}
    v = {name: state[f"adam_v/{name}"] for name in names}
    return params, m, v, int(state["adam_t"])
