"""Tests for act_experiments.data.tasks: shapes, seeds, and every target recomputed independently."""

import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from act_experiments.data import tasks
from act_experiments.data.tasks import make_batch

SEEDS = st.integers(0, 2**32 - 1)
SMALL_OPTIONS = {
    "parity": {"bits": 8},
    "logic": {"max_vectors": 3, "max_gates": 4},
    "addition": {"max_numbers": 3, "max_digits": 2},
    "sort": {"max_length": 5},
}


def rng(seed=0):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------------------
# Shapes, dtypes, seeds, helpers
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("task, x_shape, y_shape, y_dtype, mask_shape", [
    ("parity", (7, 1, 64), (7, 1, 1), np.float64, (7, 1)),
    ("logic", (7, 10, 102), (7, 10, 1), np.float64, (7, 10)),
    ("addition", (7, 5, 50), (7, 5, 6), np.int64, (7, 5)),
    ("sort", (7, 30, 2), (7, 30), np.int64, (7, 30)),
])
def test_default_shapes_and_dtypes(task, x_shape, y_shape, y_dtype, mask_shape):
    x, y, mask = make_batch(task, rng(), 7)
    assert x.shape == x_shape and x.dtype == np.float64
    assert y.shape == y_shape and y.dtype == y_dtype
    assert mask.shape == mask_shape and mask.dtype == np.float64
    assert set(np.unique(mask)) <= {0.0, 1.0}


@pytest.mark.parametrize("task", tasks.TASKS)
def test_small_options_shapes_match_helpers(task):
    opts = SMALL_OPTIONS[task]
    x, y, mask = make_batch(task, rng(1), 5, **opts)
    assert x.shape[0] == y.shape[0] == mask.shape[0] == 5
    assert x.shape[2] == tasks.input_size(task, **opts)
    assert mask.shape == x.shape[:2]
    if task == "addition":
        assert y.shape == (5, 3, 3)
        assert tasks.output_size(task, **opts) == 3 * 11
        assert tasks.num_heads(task, **opts) == 3
    if task == "sort":
        assert x.shape[1] == 10
        assert tasks.output_size(task, **opts) == 5


def test_helper_values_with_defaults():
    assert tasks.TASKS == ("parity", "logic", "addition", "sort")
    assert [tasks.output_size(t) for t in tasks.TASKS] == [1, 1, 66, 15]
    assert [tasks.num_heads(t) for t in tasks.TASKS] == [1, 1, 6, 1]
    assert [tasks.input_size(t) for t in tasks.TASKS] == [64, 102, 50, 2]
    assert [tasks.loss_kind(t) for t in tasks.TASKS] == ["sigmoid", "sigmoid", "softmax", "softmax"]
    assert tasks.output_size("parity", bits=5) == 1
    assert tasks.output_size("addition", max_digits=3) == 44
    assert tasks.output_size("sort", max_length=9) == 9


@pytest.mark.parametrize("task", tasks.TASKS)
def test_same_seed_same_batch_other_seed_other_batch(task):
    a = make_batch(task, rng(123), 16)
    b = make_batch(task, rng(123), 16)
    c = make_batch(task, rng(124), 16)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[0], c[0])


def test_generator_state_advances_between_batches():
    g = rng(5)
    first = make_batch("parity", g, 8)[0]
    second = make_batch("parity", g, 8)[0]
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("task", tasks.TASKS)
def test_targets_are_zero_where_mask_is_zero(task):
    x, y, mask = make_batch(task, rng(2), 64)
    y_flat = y.reshape(y.shape[0], y.shape[1], -1)
    assert np.all(y_flat[mask == 0] == 0)


# ---------------------------------------------------------------------------------------
# Parity
# ---------------------------------------------------------------------------------------

@settings(deadline=None, max_examples=40)
@given(seed=SEEDS, bits=st.integers(1, 70), batch=st.integers(1, 20))
def test_parity_inputs_and_labels(seed, bits, batch):
    x, y, mask = make_batch("parity", rng(seed), batch, bits=bits)
    assert x.shape == (batch, 1, bits)
    assert np.all(mask == 1)
    for row, label in zip(x[:, 0, :], y[:, 0, 0]):
        assert set(np.unique(row)) <= {-1.0, 0.0, 1.0}
        nonzero = sum(1 for v in row if v != 0)
        assert 1 <= nonzero <= bits
        plus_ones = sum(1 for v in row if v == 1.0)
        assert label == (1.0 if plus_ones % 2 == 1 else 0.0)


def test_parity_covers_every_count_and_both_signs():
    x, y, _ = make_batch("parity", rng(3), 3000, bits=4)
    counts = np.count_nonzero(x[:, 0, :], axis=1)
    assert set(counts) == {1, 2, 3, 4}
    assert np.any(x == 1) and np.any(x == -1)
    assert set(np.unique(y)) == {0.0, 1.0}
    # every position gets used, also with all bits set
    assert np.all(np.count_nonzero(x[:, 0, :], axis=0) > 0)
    assert np.all(x[counts == 4, 0, :] != 0)


def test_parity_nonzero_range_defaults_change_nothing():
    # left at their defaults, min_nonzero and max_nonzero draw the very same batches, and they stay
    # out of the resolved options (saved runs and sweeps keep their task_options)
    for bits, seed in ((1, 0), (7, 1), (64, 2)):
        plain = make_batch("parity", rng(seed), 40, bits=bits)
        spelled = make_batch("parity", rng(seed), 40, bits=bits, min_nonzero=1, max_nonzero=bits)
        for u, v in zip(plain, spelled):
            np.testing.assert_array_equal(u, v)
    assert tasks.resolve_options("parity") == {"bits": 64}
    assert tasks.resolve_options("parity", bits=8, max_nonzero=4) == {"bits": 8, "max_nonzero": 4}


def test_parity_nonzero_range_train_and_test_split():
    # PonderNet's extrapolation test: train on 1..k non-zero entries, test on k+1..bits
    x, y, _ = make_batch("parity", rng(4), 2000, bits=8, max_nonzero=3)
    assert set(np.count_nonzero(x[:, 0, :], axis=1)) == {1, 2, 3}
    x, y, _ = make_batch("parity", rng(5), 2000, bits=8, min_nonzero=4)
    counts = np.count_nonzero(x[:, 0, :], axis=1)
    assert set(counts) == {4, 5, 6, 7, 8}
    assert np.array_equal(y[:, 0, 0], (np.count_nonzero(x[:, 0, :] > 0, axis=1) % 2).astype(float))
    x, _, _ = make_batch("parity", rng(6), 50, bits=6, min_nonzero=2, max_nonzero=2)
    assert np.all(np.count_nonzero(x[:, 0, :], axis=1) == 2)


@pytest.mark.parametrize("options, message", [
    ({"bits": 8, "min_nonzero": 0}, "min_nonzero"),
    ({"bits": 8, "min_nonzero": 9}, "min_nonzero"),
    ({"bits": 8, "max_nonzero": 0}, "max_nonzero"),
    ({"bits": 8, "max_nonzero": 9}, "max_nonzero"),
    ({"max_nonzero": 65}, "max_nonzero"),
    ({"bits": 8, "min_nonzero": 5, "max_nonzero": 4}, "min_nonzero"),
    ({"bits": 8, "max_nonzero": "bits"}, "max_nonzero"),
    ({"bits": 8, "min_nonzero": 1.0}, "min_nonzero"),
])
def test_parity_nonzero_range_refused(options, message):
    with pytest.raises(ValueError, match=message):
        make_batch("parity", rng(), 4, **options)


def test_parity_nonzero_range_in_training_configs():
    from act_experiments.training import loop
    config = loop.make_config({"task": "parity", "bits": 8, "max_nonzero": 4})
    assert config["task_options"] == {"bits": 8, "max_nonzero": 4}
    assert loop.make_config({"task": "parity", "bits": 8})["task_options"] == {"bits": 8}
    with pytest.raises(ValueError, match="belongs to task 'parity'"):
        loop.make_config({"task": "sort", "max_nonzero": 3})


def test_parity_default_draw_is_the_one_drawn_before_skew_existed():
    # pinned before the option existed: with it off, no stream draws one number more or other
    x, y, _ = make_batch("parity", rng(0), 4, bits=5)
    assert x[:, 0, :].tolist() == [[-1, 1, 1, 1, -1], [1, 1, 0, -1, 1], [0, 1, -1, 1, 0], [0, 0, 0, 1, -1]]
    assert y[:, 0, 0].tolist() == [1, 1, 0, 1]
    pinned = {(("bits", 16),): "40d49008e2aca0fb", (("bits", 16), ("max_nonzero", 2)): "7dd4f506c083805e",
              (("bits", 64),): "340bbe71f138b59a",
              (("bits", 8), ("min_nonzero", 3), ("max_nonzero", 5)): "5ab8329591a3789a"}
    for options, digest in pinned.items():
        for spelled in ({}, {"skew": None}):           # None is off, as if not given
            stream, h = rng(2016), hashlib.sha256()
            for _ in range(2):
                for a in make_batch("parity", stream, 64, **dict(options), **spelled):
                    h.update(np.ascontiguousarray(a).tobytes())
            h.update(stream.random(1).tobytes())        # and the stream is left where it was
            assert h.hexdigest()[:16] == digest, (options, spelled)


def test_parity_skew_mixes_in_the_hard_range_at_its_fraction():
    x, y, mask = make_batch("parity", rng(7), 20000, bits=16, max_nonzero=2, skew="0.1:13-16")
    counts = np.count_nonzero(x[:, 0, :], axis=1)
    hard = counts >= 13
    assert abs(hard.mean() - 0.1) < 0.01                       # s.e. of the fraction 0.002
    assert set(counts[hard]) == {13, 14, 15, 16} and set(counts[~hard]) == {1, 2}
    assert np.array_equal(y[:, 0, 0], (np.count_nonzero(x[:, 0, :] > 0, axis=1) % 2).astype(float))
    # the difficulty is still the number of non-zero bits
    assert np.array_equal(tasks.difficulty("parity", x, y, mask), counts)
    # the other bounds: min..max for the rest, LO..HI overlapping them, and the fractions 0 and 1
    counts = np.count_nonzero(make_batch("parity", rng(8), 4000, bits=8, min_nonzero=3, max_nonzero=4,
                                         skew="0.5:4-6")[0][:, 0, :], axis=1)
    assert set(counts) == {3, 4, 5, 6} and abs(np.mean(counts >= 5) - 0.5 * 2 / 3) < 0.04
    for fraction, expected in (("0", {1, 2}), ("1", {7, 8})):
        x, _, _ = make_batch("parity", rng(9), 500, bits=8, max_nonzero=2, skew=f"{fraction}:7-8")
        assert set(np.count_nonzero(x[:, 0, :], axis=1)) == expected


def test_parity_skew_draws_the_paper_counts_first_and_is_seeded():
    # the hard rows replace counts drawn as without skew: at fraction 0 every row's count is the
    # plain draw's, and the same generator state gives the same batch
    plain = make_batch("parity", rng(3), 50, bits=8)[0]
    none_hard = make_batch("parity", rng(3), 50, bits=8, skew="0:8-8")[0]
    assert np.array_equal(np.count_nonzero(plain[:, 0, :], axis=1), np.count_nonzero(none_hard[:, 0, :], axis=1))
    for u, v in zip(make_batch("parity", rng(4), 30, bits=8, skew="0.3:6-8"),
                    make_batch("parity", rng(4), 30, bits=8, skew="0.3:6-8")):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("options, message", [
    ({"bits": 16, "skew": "1.5:13-16"}, "skew.*fraction"),
    ({"bits": 16, "skew": "-0.1:13-16"}, "skew.*fraction"),
    ({"bits": 16, "skew": "nan:13-16"}, "skew.*fraction"),
    ({"bits": 16, "skew": "0.1:0-3"}, "skew.*LO"),
    ({"bits": 16, "skew": "0.1:13-17"}, "skew.*HI.*bits = 16"),
    ({"skew": "0.1:13-65"}, "skew.*HI.*bits = 64"),
    ({"bits": 16, "skew": "0.1:14-13"}, "skew.*LO must not exceed HI"),
    ({"bits": 16, "skew": "0.1"}, "skew.*F:LO-HI"),
    ({"bits": 16, "skew": "0.1:13"}, "skew.*F:LO-HI"),
    ({"bits": 16, "skew": "0.1:13-14-15"}, "skew.*F:LO-HI"),
    ({"bits": 16, "skew": "a:13-16"}, "skew.*F:LO-HI"),
    ({"bits": 16, "skew": ""}, "skew.*F:LO-HI"),
    ({"bits": 16, "skew": 0.1}, "skew.*F:LO-HI"),
])
def test_parity_skew_refused_naming_it(options, message):
    with pytest.raises(ValueError, match=message):
        make_batch("parity", rng(), 4, **options)


def test_parity_skew_in_training_configs():
    from act_experiments.training import config as run_config, loop
    # off, it stays out of the resolved options: runs and sweeps saved before it keep their
    # task_options, so they resume
    assert tasks.resolve_options("parity", bits=8) == {"bits": 8}
    assert tasks.resolve_options("parity", bits=8, skew=None) == {"bits": 8}
    config = loop.make_config({"task": "parity", "bits": 16, "max_nonzero": 2, "skew": "0.10:13-16"})
    assert config["task_options"] == {"bits": 16, "max_nonzero": 2, "skew": "0.1:13-16"}   # written one way
    assert loop.make_config(run_config.options_of(config)) == config
    with pytest.raises(ValueError, match="belongs to task 'parity'"):
        loop.make_config({"task": "logic", "skew": "0.1:1-2"})


# ---------------------------------------------------------------------------------------
# Logic
# ---------------------------------------------------------------------------------------

# Table 1 of the paper, spelled out row by row: gate -> {(P, Q): T(P, Q)}.
T, F = 1, 0
PAPER_TABLE_1 = {
    "NOR":     {(T, T): F, (T, F): F, (F, T): F, (F, F): T},
    "Xq":      {(T, T): F, (T, F): F, (F, T): T, (F, F): F},
    "ABJ":     {(T, T): F, (T, F): T, (F, T): F, (F, F): F},
    "XOR":     {(T, T): F, (T, F): T, (F, T): T, (F, F): F},
    "NAND":    {(T, T): F, (T, F): T, (F, T): T, (F, F): T},
    "AND":     {(T, T): T, (T, F): F, (F, T): F, (F, F): F},
    "XNOR":    {(T, T): T, (T, F): F, (F, T): F, (F, F): T},
    "if/then": {(T, T): T, (T, F): F, (F, T): T, (F, F): T},
    "then/if": {(T, T): T, (T, F): T, (F, T): F, (F, F): T},
    "OR":      {(T, T): T, (T, F): T, (F, T): T, (F, F): F},
}
PAPER_ORDER = ["NOR", "Xq", "ABJ", "XOR", "NAND", "AND", "XNOR", "if/then", "then/if", "OR"]


def test_gate_order_is_table_1():
    assert list(tasks.GATE_NAMES) == PAPER_ORDER


@pytest.mark.parametrize("index, name", list(enumerate(PAPER_ORDER)))
def test_truth_table_row_by_row(index, name):
    for (p, q), expected in PAPER_TABLE_1[name].items():
        assert tasks.TRUTH_TABLE[index, p, q] == expected, (name, p, q)


def test_truth_table_matches_boolean_formulas():
    formulas = {
        "NOR": lambda p, q: not (p or q),
        "Xq": lambda p, q: (not p) and q,
        "ABJ": lambda p, q: p and not q,
        "XOR": lambda p, q: p != q,
        "NAND": lambda p, q: not (p and q),
        "AND": lambda p, q: p and q,
        "XNOR": lambda p, q: p == q,
        "if/then": lambda p, q: (not p) or q,
        "then/if": lambda p, q: p or not q,
        "OR": lambda p, q: p or q,
    }
    for index, name in enumerate(PAPER_ORDER):
        for p in (0, 1):
            for q in (0, 1):
                assert tasks.TRUTH_TABLE[index, p, q] == int(bool(formulas[name](p, q)))


def decode_logic_vector(vec):
    """Gate indices (0..9) in the order of their chunks, read from one input vector."""
    chunks = vec[2:].reshape(10, 10)
    return [int(np.argmax(c)) for c in chunks if c.any()]


def reference_logic(x_seq, n_valid):
    """Targets of one sequence by a plain loop over eq. (21) with the test's own Table 1."""
    targets = []
    previous = None
    for t in range(n_valid):
        b_old = int(x_seq[t, 0]) if t == 0 else previous
        b_new = int(x_seq[t, 1])
        for g in decode_logic_vector(x_seq[t]):
            b_old, b_new = b_new, PAPER_TABLE_1[PAPER_ORDER[g]][(b_new, b_old)]
        targets.append(b_new)
        previous = b_new
    return targets


@settings(deadline=None, max_examples=30)
@given(seed=SEEDS, max_vectors=st.integers(1, 6), max_gates=st.integers(1, 10))
def test_logic_recursion_matches_reference_loop(seed, max_vectors, max_gates):
    x, y, mask = make_batch("logic", rng(seed), 6, max_vectors=max_vectors, max_gates=max_gates)
    assert x.shape == (6, max_vectors, 102)
    for b in range(6):
        n_valid = int(mask[b].sum())
        assert 1 <= n_valid <= max_vectors
        np.testing.assert_array_equal(mask[b, :n_valid], 1)  # real vectors come first
        np.testing.assert_array_equal(mask[b, n_valid:], 0)
        assert np.all(x[b, n_valid:] == 0)  # padding is zeros
        assert list(y[b, :n_valid, 0]) == reference_logic(x[b], n_valid)


def test_logic_input_layout():
    x, y, mask = make_batch("logic", rng(4), 500)
    valid = mask == 1
    assert set(np.unique(x)) <= {0.0, 1.0}
    # from the second vector on, b0 is written as 0
    assert np.all(x[:, 1:, 0] == 0)
    # the first vector's b0 and every b1 are random bits, both values show up
    assert set(np.unique(x[:, 0, 0])) == {0.0, 1.0}
    assert set(np.unique(x[valid][:, 1])) == {0.0, 1.0}
    chunks = x[:, :, 2:].reshape(500, 10, 10, 10)
    per_chunk = chunks.sum(axis=3)  # 1 for a used chunk, 0 for an unused one
    assert set(np.unique(per_chunk)) <= {0.0, 1.0}
    n_gates = per_chunk.sum(axis=2)
    # used chunks come first: chunk j is used exactly when j < number of gates
    used_expected = np.arange(10)[None, None, :] < n_gates[:, :, None]
    np.testing.assert_array_equal(per_chunk == 1, used_expected)
    assert set(n_gates[valid]) == set(range(1, 11))
    assert np.all(n_gates[~valid] == 0)
    assert set(mask.sum(axis=1)) == set(range(1, 11))
    np.testing.assert_array_equal(tasks.difficulty("logic", x, y, mask), n_gates)


def test_logic_later_b0_is_previous_target():
    # a single NOR gate on a vector is T(b1, b0): flipping the hidden b0 must matter, so the
    # reference loop only agrees if b0 really is the previous target
    x, y, mask = make_batch("logic", rng(9), 200, max_vectors=4, max_gates=1)
    for b in range(200):
        for t in range(1, int(mask[b].sum())):
            g = decode_logic_vector(x[b, t])[0]
            p, q = int(x[b, t, 1]), int(y[b, t - 1, 0])
            assert y[b, t, 0] == PAPER_TABLE_1[PAPER_ORDER[g]][(p, q)]


def test_logic_max_gates_caps_gates():
    x, y, mask = make_batch("logic", rng(5), 300, max_gates=3)
    n_gates = tasks.difficulty("logic", x, y, mask)
    assert n_gates[mask == 1].min() == 1 and n_gates[mask == 1].max() == 3
    assert np.all(x[:, :, 2 + 30:] == 0)


# ---------------------------------------------------------------------------------------
# Addition
# ---------------------------------------------------------------------------------------

def decode_number(vec, max_digits):
    """(value, number of digits) of one input vector; digits least significant first."""
    blocks = vec.reshape(max_digits, 10)
    present = blocks.sum(axis=1)
    assert set(np.unique(present)) <= {0.0, 1.0}
    n = int(present.sum())
    assert np.all(present[:n] == 1) and np.all(present[n:] == 0)  # used blocks come first
    value = sum(int(np.argmax(blocks[k])) * 10**k for k in range(n))
    return value, n


def decode_sum(digits):
    """Integer from target classes (least significant first, 10 = past the end)."""
    value = 0
    for k, d in enumerate(digits):
        if d == 10:
            assert all(e == 10 for e in digits[k:])  # nothing after the end marker
            return value
        value += int(d) * 10**k
    return value


@settings(deadline=None, max_examples=30)
@given(seed=SEEDS, max_numbers=st.integers(1, 10), max_digits=st.integers(1, 6))
def test_addition_targets_are_running_sums(seed, max_numbers, max_digits):
    batch = 8
    x, y, mask = make_batch("addition", rng(seed), batch,
                            max_numbers=max_numbers, max_digits=max_digits)
    assert x.shape == (batch, max_numbers, 10 * max_digits)
    assert y.shape == (batch, max_numbers, max_digits + 1)
    assert np.all(mask[:, 0] == 0)  # no target at the first step
    assert y.min() >= 0 and y.max() <= 10
    for b in range(batch):
        n_valid = sum(1 for t in range(max_numbers) if x[b, t].any())
        assert n_valid >= 1
        assert np.all(x[b, n_valid:] == 0)
        assert list(mask[b]) == [0.0] + [1.0] * (n_valid - 1) + [0.0] * (max_numbers - n_valid)
        total = 0
        for t in range(n_valid):
            value, n = decode_number(x[b, t], max_digits)
            assert 1 <= n <= max_digits
            assert len(str(value)) == n  # no leading zero
            total += value
            if t == 0:
                continue
            expected = [int(c) for c in reversed(str(total))]
            expected += [10] * (max_digits + 1 - len(expected))
            assert list(y[b, t]) == expected
            assert decode_sum(y[b, t]) == total


def test_addition_digit_order_is_least_significant_first():
    x, y, mask = make_batch("addition", rng(6), 2000)
    for b, t in zip(*np.nonzero(mask)):
        value, n = decode_number(x[b, t], 5)
        if n >= 2:
            # block 0 is the units digit, the top used block the leading (non-zero) digit
            assert np.argmax(x[b, t, 0:10]) == value % 10
            assert np.argmax(x[b, t, 10 * (n - 1):10 * n]) == int(str(value)[0]) != 0
            break
    else:
        pytest.fail("no multi-digit number drawn")


def test_addition_class_10_placement_and_distribution():
    x, y, mask = make_batch("addition", rng(7), 3000)
    counted = 0
    for b, t in zip(*np.nonzero(mask)):
        total = sum(decode_number(x[b, s], 5)[0] for s in range(t + 1))
        n = len(str(total))
        assert np.all(y[b, t, :n] < 10) and np.all(y[b, t, n:] == 10)
        assert y[b, t, n - 1] != 0 or total == 0  # top digit of the sum is never a padding 0
        counted += 1
        if counted > 500:
            break
    digits = tasks.difficulty("addition", x, y, mask)
    assert digits.shape == (3000, 5)
    assert set(digits[x.any(axis=2)]) == {1, 2, 3, 4, 5}
    assert np.all(digits[~x.any(axis=2)] == 0)
    assert set((mask.sum(axis=1) + 1).astype(int)) == {1, 2, 3, 4, 5}  # lengths 1..5
    assert np.any(y[mask == 1][:, 5] < 10)  # six-digit sums do occur


def test_addition_first_step_only_sequence_has_no_target():
    x, y, mask = make_batch("addition", rng(8), 20, max_numbers=1)
    assert np.all(mask == 0) and np.all(y == 0)
    assert np.all(x.any(axis=2))


# ---------------------------------------------------------------------------------------
# Sort
# ---------------------------------------------------------------------------------------

@settings(deadline=None, max_examples=40)
@given(seed=SEEDS, max_length=st.integers(2, 20), batch=st.integers(1, 10))
def test_sort_targets_sort_the_inputs(seed, max_length, batch):
    x, y, mask = make_batch("sort", rng(seed), batch, max_length=max_length)
    T = 2 * max_length
    assert x.shape == (batch, T, 2) and y.shape == (batch, T)
    K = tasks.difficulty("sort", x, y, mask)
    for b in range(batch):
        k = int(np.nonzero(x[b, :, 1])[0][0]) + 1  # flag marks the last input
        assert k == K[b] and 2 <= k <= max_length
        assert list(x[b, :, 1]) == [0.0] * (k - 1) + [1.0] + [0.0] * (T - k)
        assert np.all(x[b, k:] == 0)  # no input after the end
        assert list(mask[b]) == [0.0] * k + [1.0] * k + [0.0] * (T - 2 * k)
        values = x[b, :k, 0]
        indices = y[b, k:2 * k]
        assert sorted(indices) == list(range(k))  # a permutation of the inputs
        assert list(values[indices]) == sorted(values)  # ascending


def test_sort_lengths_and_values_distribution():
    x, y, mask = make_batch("sort", rng(10), 4000)
    K = tasks.difficulty("sort", x, y, mask)
    assert set(K) == set(range(2, 16))
    assert y.max() <= 14 and y.min() >= 0
    values = np.concatenate([x[b, :K[b], 0] for b in range(4000)])
    assert abs(values.mean()) < 0.05 and abs(values.std() - 1) < 0.05


# ---------------------------------------------------------------------------------------
# Difficulty of parity
# ---------------------------------------------------------------------------------------

def test_parity_difficulty_is_count_of_nonzero_bits():
    x, y, mask = make_batch("parity", rng(11), 50, bits=10)
    d = tasks.difficulty("parity", x, y, mask)
    assert d.shape == (50,)
    assert list(d) == [sum(1 for v in x[b, 0] if v != 0) for b in range(50)]


# ---------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("task, options, message", [
    ("parity", {"bits": 0}, "bits"),
    ("parity", {"bits": -3}, "bits"),
    ("parity", {"bits": 2.5}, "bits"),
    ("parity", {"bits": "8"}, "bits"),
    ("parity", {"bits": True}, "bits"),
    ("parity", {"max_length": 4}, "unknown option"),
    ("parity", {"bitz": 4}, "unknown option"),
    ("logic", {"max_vectors": 0}, "max_vectors"),
    ("logic", {"max_gates": 0}, "max_gates"),
    ("logic", {"max_gates": 11}, "max_gates"),
    ("logic", {"max_gates": None}, "max_gates"),
    ("addition", {"max_numbers": 0}, "max_numbers"),
    ("addition", {"max_numbers": 11}, "max_numbers"),
    ("addition", {"max_digits": 0}, "max_digits"),
    ("addition", {"max_digits": 18}, "max_digits"),
    ("addition", {"bits": 3}, "unknown option"),
    ("sort", {"max_length": 1}, "max_length"),
    ("sort", {"max_length": 3.0}, "max_length"),
])
def test_invalid_options_raise(task, options, message):
    with pytest.raises(ValueError, match=message):
        make_batch(task, rng(), 4, **options)
    with pytest.raises(ValueError, match=message):
        tasks.output_size(task, **options)  # the helpers check options the same way


def test_numpy_integer_options_are_accepted():
    x, _, _ = make_batch("parity", rng(), np.int64(3), bits=np.int32(5))
    assert x.shape == (3, 1, 5)


@pytest.mark.parametrize("batch_size", [0, -1, 2.0, "4", None, True])
def test_invalid_batch_size_raises(batch_size):
    with pytest.raises(ValueError, match="batch_size"):
        make_batch("parity", rng(), batch_size)


@pytest.mark.parametrize("bad_rng", [0, None, np.random.RandomState(0)])
def test_rng_must_be_a_generator(bad_rng):
    with pytest.raises(ValueError, match="rng"):
        make_batch("sort", bad_rng, 4)


@pytest.mark.parametrize("call", [
    lambda: make_batch("copy", rng(), 4),
    lambda: make_batch("Parity", rng(), 4),
    lambda: tasks.output_size("wiki"),
    lambda: tasks.loss_kind("wiki"),
    lambda: tasks.num_heads("wiki"),
    lambda: tasks.input_size("wiki"),
    lambda: tasks.difficulty("wiki", np.zeros((1, 1, 1)), np.zeros((1, 1)), np.ones((1, 1))),
])
def test_unknown_task_raises(call):
    with pytest.raises(ValueError, match="unknown task"):
        call()


def test_one_table_describes_every_task():
    from act_experiments.training import config
    assert tuple(tasks.TASK_TABLE) == tasks.ALL_TASKS
    assert tasks.TEXT_TASKS == tuple(name for name, t in tasks.TASK_TABLE.items() if t.text)
    assert config.TASK_DEFAULTS == {name: t.train for name, t in tasks.TASK_TABLE.items()}
    for name, t in tasks.TASK_TABLE.items():
        opts = tasks.resolve_options(name, **({"seq_len": 8} if name == "characters" else {}))
        x, y, mask = t.held_out(np.random.default_rng(0), 3, **opts)
        assert x.shape[2] == t.input_size(opts) and mask.shape == x.shape[:2]
        assert t.loss in ("sigmoid", "softmax") and t.heads(opts) >= 1
