"""Tests for act_experiments.data.text and the "characters" task: corpus, split, batches, options, training."""

import json
import math

import numpy as np
import pytest

from act_experiments.training import cli, evaluation, loop
from act_experiments.data import tasks, text
from act_experiments.training.backends import NumpyBackend


def rng(seed=0):
    return np.random.default_rng(seed)


def contains(haystack, needle):
    """Whether the byte string needle occurs in haystack (both uint8 arrays)."""
    return bytes(needle) in bytes(haystack)


@pytest.fixture
def small_file(tmp_path):
    """A 2,000-byte file: 'abcdefghij' repeated, so every next byte is known."""
    path = tmp_path / "tiny.txt"
    path.write_bytes(b"abcdefghij" * 200)
    return str(path)


# ---------------------------------------------------------------------------------------------
# The corpus and its split
# ---------------------------------------------------------------------------------------------


def test_default_corpus_is_the_pydoc_topics_text():
    from pydoc_data.topics import topics
    corpus = text.corpus()
    assert corpus.dtype == np.uint8 and not corpus.flags.writeable
    assert bytes(corpus) == "".join(topics[k] for k in sorted(topics)).encode("utf-8")
    assert 300_000 < len(corpus) < 1_000_000       # about 460 KB; it varies a little with Python
    assert text.corpus() is corpus                 # cached


def test_split_holds_out_the_last_tenth():
    train, held_out = text.split()
    corpus = text.corpus()
    assert len(train) + len(held_out) == len(corpus)
    assert bytes(train) + bytes(held_out) == bytes(corpus)
    assert abs(len(held_out) / len(corpus) - text.HELD_OUT_FRACTION) < 1e-4


def test_baselines_on_the_default_text():
    train, held_out = text.split()
    uni, bi = text.unigram_bits(train, held_out), text.bigram_bits(train, held_out)
    assert 3.5 < uni < 6.0 and 2.0 < bi < uni < 8.0
    # a uniform text has a unigram cost of exactly 8 bits
    uniform = np.arange(256, dtype=np.uint8).repeat(4)
    assert text.unigram_bits(uniform, uniform) == pytest.approx(8.0)


def test_byte_classes():
    codes = np.frombuffer(b"a1 \n.\xff", dtype=np.uint8)
    names = [text.BYTE_CLASSES[c - 1] for c in text.byte_class(codes)]
    assert names == ["letter", "digit", "space", "newline", "punctuation", "other"]
    assert text.show(codes) == "a1 \u00b6.\u00b7"


# ---------------------------------------------------------------------------------------------
# Batches
# ---------------------------------------------------------------------------------------------


def test_batch_shapes_and_next_byte_targets():
    x, y, mask = tasks.make_batch("characters", rng(), 5, seq_len=30)
    assert x.shape == (5, 30, 256) and x.dtype == np.float32
    assert y.shape == (5, 30) and y.dtype == np.int64
    assert mask.shape == (5, 30) and mask.dtype == np.float64 and np.all(mask == 1.0)
    assert np.all(x.sum(axis=2) == 1.0)                           # one-hot
    inputs = x.argmax(axis=2)
    np.testing.assert_array_equal(y[:, :-1], inputs[:, 1:])        # the target is the next byte
    train, held_out = text.split()
    for row in range(5):
        chunk = np.append(inputs[row], y[row][-1]).astype(np.uint8)
        assert contains(train, chunk)                              # a contiguous piece of the training text


def test_held_out_batches_come_from_the_held_out_text():
    x, y, mask = tasks.make_held_out("characters", rng(1), 4, seq_len=40)
    train, held_out = text.split()
    for row in range(4):
        chunk = np.append(x[row].argmax(axis=1), y[row][-1]).astype(np.uint8)
        assert contains(held_out, chunk)
    # the synthetic tasks have no text to hold out: the same as make_batch
    for u, v in zip(tasks.make_held_out("sort", rng(2), 3), tasks.make_batch("sort", rng(2), 3)):
        np.testing.assert_array_equal(u, v)


def test_same_seed_same_batch():
    a = tasks.make_batch("characters", rng(7), 3, seq_len=10)
    b = tasks.make_batch("characters", rng(7), 3, seq_len=10)
    c = tasks.make_batch("characters", rng(8), 3, seq_len=10)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a[1], c[1])


def test_data_option_reads_any_file(small_file):
    x, y, mask = tasks.make_batch("characters", rng(), 6, seq_len=12, data=small_file)
    inputs = x.argmax(axis=2)
    # in "abcdefghij" repeated, every byte is followed by the next letter (j by a)
    expected = (inputs - ord("a") + 1) % 10 + ord("a")
    np.testing.assert_array_equal(y, expected)
    train, held_out = text.split(small_file)
    assert (len(train), len(held_out)) == (1800, 200)


def test_helpers_for_the_characters_task():
    assert tasks.TASKS == ("parity", "logic", "addition", "sort")     # the synthetic four, unchanged
    assert "characters" in tasks.ALL_TASKS
    assert tasks.input_size("characters") == tasks.output_size("characters") == 256
    assert tasks.loss_kind("characters") == "softmax" and tasks.num_heads("characters") == 1
    x, y, mask = text.sequences(np.frombuffer(b"ab 1.\n", dtype=np.uint8)[None])
    np.testing.assert_array_equal(tasks.difficulty("characters", x, y, mask), [[1, 1, 3, 2, 5]])


@pytest.mark.parametrize("options, message", [
    ({"seq_len": 0}, "seq_len"),
    ({"seq_len": 2.5}, "seq_len"),
    ({"seq_len": True}, "seq_len"),
    ({"data": "/no/such/file.txt"}, "no such file"),
    ({"data": 42}, "data"),
    ({"bits": 8}, "unknown option"),
    ({"seq_len": 10**9}, "too long"),
])
def test_bad_options_raise(options, message):
    with pytest.raises(ValueError, match=message):
        tasks.make_batch("characters", rng(), 2, **options)


def test_bad_training_options_raise(small_file):
    with pytest.raises(ValueError, match="belongs to task 'characters'"):
        loop.make_config({"task": "parity", "seq_len": 10}, NumpyBackend)
    with pytest.raises(ValueError, match="no such file"):
        loop.make_config({"task": "characters", "data": "/no/such/file"}, NumpyBackend)
    with pytest.raises(ValueError, match="too long for the held_out text"):   # 200 bytes < 301
        loop.make_config({"task": "characters", "data": small_file, "seq_len": 300}, NumpyBackend)


# ---------------------------------------------------------------------------------------------
# Training: bits per character in the log, the CLI, resume, learning
# ---------------------------------------------------------------------------------------------


def test_bits_per_char_is_the_cross_entropy_without_the_ponder_cost():
    tau, ce = 0.01, 3.0                                   # 3 nats per step over 2 x 4 steps
    mask = np.ones((2, 4))
    rho = np.full((2, 4), 2.5)
    loss = (ce * 8 + tau * rho.sum()) / 2                  # L + tau P, averaged over the batch
    tally = evaluation.Tally()
    tally.add({"loss": loss, "wrong": np.zeros((2, 4), bool), "rho": rho, "N": np.full((2, 4), 2)}, mask)
    assert tally.fields(tau)["bits_per_char"] == pytest.approx(ce / math.log(2))
    assert "bits_per_char" not in tally.fields()           # only asked for on text


def test_cli_trains_on_a_file_and_resumes_exactly(tmp_path, small_file, capsys):
    def main(argv):
        return cli.main(["--backend", "numpy", *argv])

    common = ["--task", "characters", "--data", small_file, "--seq-len", "8", "--hidden", "8",
              "--batch-size", "4", "--eval-size", "6", "--eval-every", "2", "--log-every", "1",
              "--lr", "1e-2", "--no-progress"]
    whole = main(common + ["--iterations", "4", "--out", str(tmp_path / "whole")])
    assert "bits/char" in capsys.readouterr().out
    main(common + ["--iterations", "2", "--out", str(tmp_path / "part")])
    resumed = main(common + ["--iterations", "4", "--out", str(tmp_path / "part"), "--resume"])
    assert resumed["config"]["task_options"] == {"seq_len": 8, "data": small_file}
    assert resumed["final_eval"]["bits_per_char"] == whole["final_eval"]["bits_per_char"]
    log = [json.loads(line) for line in open(tmp_path / "whole" / "log.jsonl")]
    assert all("bits_per_char" in r for r in log)
    assert [d["difficulty"] for d in whole["final_eval"]["by_difficulty"]] == [1]   # letters only


@pytest.mark.slow
def test_a_short_training_run_beats_the_uniform_guess(tmp_path):
    """8 bits per byte at the start (a uniform softmax); clearly fewer after 20 Adam steps.

    tau = 0.1 keeps the ponder near its minimum: with a small tau the ponder of so short a run
    can climb towards the cap just as the network gets past byte frequencies, which only costs time.
    """
    summary = loop.run({"task": "characters", "seq_len": 16, "hidden": 32, "batch_size": 16,
                            "lr": 1e-2, "tau": 0.1, "iterations": 20, "eval_every": 0, "eval_size": 32,
                            "out": str(tmp_path / "run")}, NumpyBackend, progress=False)
    evals = [r for r in loop.read_log(tmp_path / "run" / "log.jsonl") if r["kind"] == "eval"]
    assert abs(evals[0]["bits_per_char"] - 8.0) < 0.1
    assert summary["final_eval"]["bits_per_char"] < 6.0
    classes = {d["difficulty"] for d in summary["final_eval"]["by_difficulty"]}
    assert {1, 3} <= classes                               # letters and spaces were seen
