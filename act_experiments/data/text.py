"""Character prediction on raw bytes, the paper's Wikipedia experiment (Graves 2016, section 3.5).

The paper reads Wikipedia (enwik8) as raw bytes, XML markup included, in sequences of 500 bytes
whose state is reset at the start of each, and predicts the next byte with a 256-way softmax.
Nothing may be downloaded here, so the default text is one every Python installation ships: the
documentation topics of the standard-library module ``pydoc_data.topics`` (about 460 KB of
English prose and code examples). Any other file can stand in for it (``data="enwik8"``).

    train, held_out = split(data)                     # uint8 arrays, the last 10 % held out
    x, y, mask = make_batch(rng, 32, seq_len=100)     # random chunks of the training part

Batches (B = batch size, T = seq_len)::

    x     (B, T, 256) float32   one-hot of bytes s .. s+T-1 of a chunk starting at a random s
    y     (B, T)      int64     the next byte at every step: bytes s+1 .. s+T
    mask  (B, T)      float64   all ones: every step predicts a byte

Every chunk is its own sequence: the network starts each row from the zero state, so nothing is
carried from one chunk to the next, as in the paper. ``x`` is float32 rather than the synthetic
tasks' float64 because a held-out set of one-hot bytes is large (200 chunks of 100 bytes take
20 MB in float32); a one-hot is exact in either type and both backends cast it on arrival.

Choices this course makes where the paper is silent or too large for a laptop: chunks start at
uniform random offsets (training and held-out alike); the held-out part is the last 10 % of the
bytes (for enwik8 that is the usual last 10 MB, validation and test together); sequences are
100 bytes by default instead of 500. The metric is bits per character: the cross-entropy in
nats, divided by ln 2, averaged over the predicted bytes (8 bits is a uniform guess).
"""

import functools
import hashlib
import os
import string

import numpy as np

VOCAB = 256                  # raw bytes: inputs are 256-way one-hots, outputs a 256-way softmax
HELD_OUT_FRACTION = 0.10     # the last 10 % of the text is never trained on
SPLITS = ("train", "held_out")

# Byte classes for the ponder analysis (paper: ponder rises at spaces, more at punctuation).
# Codes start at 1 because the training summary groups only positive difficulties.
BYTE_CLASSES = ("letter", "digit", "space", "newline", "punctuation", "other")


def _class_table():
    table = np.full(VOCAB, BYTE_CLASSES.index("other") + 1, dtype=np.int64)
    for chars, name in ((string.ascii_letters, "letter"), (string.digits, "digit"), (" ", "space"),
                        ("\n", "newline"), (string.punctuation, "punctuation")):
        table[[ord(c) for c in chars]] = BYTE_CLASSES.index(name) + 1
    return table


CLASS_OF_BYTE = _class_table()   # byte value -> class code 1..6 (tabs, \r, non-ASCII: "other")


# ---------------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------------


def default_text():
    """The bytes of ``pydoc_data.topics``: its ``topics`` values joined in sorted-key order, UTF-8.

    The text comes with the Python installation, so its exact size differs a little between
    Python versions (466,117 bytes on 3.11.7).
    """
    from pydoc_data.topics import topics
    return "".join(topics[key] for key in sorted(topics)).encode("utf-8")


def check_data(data):
    """The ``data`` option checked: None (the default text) or the path of an existing file, as a str."""
    if data is None:
        return None
    if isinstance(data, bytes) or not isinstance(data, (str, os.PathLike)):
        raise ValueError(f"option 'data' must be a file path or None, got {type(data).__name__}")
    path = os.fspath(data)
    if not os.path.isfile(path):
        raise ValueError(f"option 'data': no such file {path!r}")
    return path


@functools.lru_cache(maxsize=4)
def _load(data, mtime):
    # mtime is part of the cache key only, so that an edited file is read again
    raw = default_text() if data is None else open(data, "rb").read()
    corpus = np.frombuffer(raw, dtype=np.uint8)
    corpus.flags.writeable = False     # shared by every caller: nobody may change it
    return corpus


def corpus(data=None):
    """The whole text as a read-only uint8 array (cached: a large file is read once)."""
    data = check_data(data)
    return _load(data, None if data is None else os.path.getmtime(data))


def corpus_sha256(data=None):
    """sha256 (hex) of the text's bytes: it names the content, whatever the file is called."""
    return hashlib.sha256(corpus(data)).hexdigest()


def split(data=None):
    """(train, held_out): the text cut once, the last HELD_OUT_FRACTION of the bytes held out."""
    text = corpus(data)
    cut = len(text) - int(round(HELD_OUT_FRACTION * len(text)))
    return text[:cut], text[cut:]


def check_seq_len(seq_len, data=None):
    """Raise ValueError unless both parts of the text hold a chunk of seq_len + 1 bytes."""
    for name, part in zip(SPLITS, split(data)):
        if len(part) <= seq_len:
            raise ValueError(f"seq_len {seq_len} is too long for the {name} text ({len(part)} bytes)")


# ---------------------------------------------------------------------------------------------
# Batches
# ---------------------------------------------------------------------------------------------


def one_hot(codes):
    """(...,) bytes -> (..., 256) float32 one-hot."""
    codes = np.asarray(codes, dtype=np.int64)
    out = np.zeros(codes.shape + (VOCAB,), dtype=np.float32)
    np.put_along_axis(out, codes[..., None], 1.0, axis=-1)
    return out


def sequences(chunks):
    """Turn byte chunks (B, T + 1) into a batch: inputs are bytes 0..T-1, targets bytes 1..T."""
    chunks = np.asarray(chunks, dtype=np.int64)
    if chunks.ndim != 2 or chunks.shape[1] < 2:
        raise ValueError(f"chunks must have shape (B, T + 1) with T >= 1, got {chunks.shape}")
    x = one_hot(chunks[:, :-1])
    y = chunks[:, 1:].copy()
    mask = np.ones(y.shape, dtype=np.float64)
    return x, y, mask


def make_batch(rng, batch_size, seq_len=100, data=None, split_name="train"):
    """B random chunks of ``split_name`` ("train" or "held_out") as (x, y, mask), see the module doc.

    rng: np.random.Generator, the only source of randomness. A chunk needs seq_len + 1 bytes
    (the last input's target), so the part must be longer than seq_len.
    """
    if split_name not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split_name!r}")
    check_seq_len(seq_len, data)
    part = split(data)[SPLITS.index(split_name)]
    starts = rng.integers(0, len(part) - seq_len, size=batch_size)   # start + seq_len is a valid index
    return sequences(part[starts[:, None] + np.arange(seq_len + 1)])


# ---------------------------------------------------------------------------------------------
# Analysis helpers
# ---------------------------------------------------------------------------------------------


def byte_class(codes):
    """Class code 1..len(BYTE_CLASSES) of every byte (see BYTE_CLASSES), same shape as ``codes``."""
    return CLASS_OF_BYTE[np.asarray(codes, dtype=np.int64)]


def unigram_bits(train, held_out):
    """Bits per byte of ``held_out`` under the byte frequencies of ``train`` (add-one smoothing).

    The simplest model that ignores context: a network that predicts no better than this has
    learnt only how common each byte is.
    """
    counts = np.bincount(np.asarray(train, dtype=np.int64), minlength=VOCAB) + 1.0
    logp = np.log2(counts / counts.sum())
    return float(-logp[np.asarray(held_out, dtype=np.int64)].mean())


def bigram_bits(train, held_out):
    """Bits per byte of ``held_out`` given the previous byte, counts from ``train`` (add-one).

    One byte of context; the first held-out byte is not scored.
    """
    train, held_out = np.asarray(train, dtype=np.int64), np.asarray(held_out, dtype=np.int64)
    counts = np.ones((VOCAB, VOCAB))
    np.add.at(counts, (train[:-1], train[1:]), 1.0)
    logp = np.log2(counts / counts.sum(axis=1, keepdims=True))
    return float(-logp[held_out[:-1], held_out[1:]].mean())


def show(codes):
    """Bytes as printable text: newline as a pilcrow, other control and non-ASCII bytes as a dot."""
    return "".join("\u00b6" if c == 10 else chr(c) if 32 <= c < 127 else "\u00b7" for c in np.asarray(codes))


# Finer classes for comparing with the paper's remarks (spaces between words, commas, full
# stops). A space that follows another space or a newline is layout (indentation, alignment),
# not a word boundary, so it gets its own class.
DETAIL_CLASSES = ("letter", "digit", "space after a word", "space in a run", "newline", "comma",
                  "full stop", "other punctuation", "other")


def detail_class(chunks):
    """Index into DETAIL_CLASSES of every byte of (B, T) or (T,) chunks (the first byte of a row
    has no byte before it and counts as following a newline)."""
    codes = np.asarray(chunks, dtype=np.int64)
    squeeze = codes.ndim == 1
    codes = np.atleast_2d(codes)
    before = np.concatenate([np.full((codes.shape[0], 1), ord("\n")), codes[:, :-1]], axis=1)
    coarse = np.array(BYTE_CLASSES)[CLASS_OF_BYTE[codes] - 1]
    index = {name: i for i, name in enumerate(DETAIL_CLASSES)}
    out = np.full(codes.shape, index["other"], dtype=np.int64)
    out[coarse == "letter"] = index["letter"]
    out[coarse == "digit"] = index["digit"]
    out[coarse == "newline"] = index["newline"]
    out[coarse == "punctuation"] = index["other punctuation"]
    out[codes == ord(",")] = index["comma"]
    out[codes == ord(".")] = index["full stop"]
    space = codes == ord(" ")
    in_run = (before == ord(" ")) | (before == ord("\n"))
    out[space & in_run] = index["space in a run"]
    out[space & ~in_run] = index["space after a word"]
    return out[0] if squeeze else out


def passage(data=None, length=300, after=1000):
    """A fixed piece of held-out text for ponder plots: ``length`` bytes from the first paragraph
    that starts at least ``after`` bytes into the held-out part (uint8 array).

    Paragraphs are found by a blank line; with none, the passage starts at ``after``. With the
    default text it opens on the description of ``dict.get``.
    """
    held_out = bytes(split(data)[1])
    if len(held_out) < length:
        raise ValueError(f"the held-out text ({len(held_out)} bytes) is shorter than {length}")
    start = held_out.find(b"\n\n", after)
    start = min(after, len(held_out) - length) if start < 0 else start + 2
    while start < len(held_out) - length and held_out[start] in b" \n":
        start += 1                      # skip the blank line's indentation
    start = min(start, len(held_out) - length)
    return np.frombuffer(held_out[start:start + length], dtype=np.uint8)


def corpus_facts(data):
    """Size, sha256 and the unigram and bigram baselines (bits per byte) of the text."""
    train, held_out = split(data)
    return {"data": data or "pydoc_data.topics", "bytes": int(len(train) + len(held_out)),
            "held_out_bytes": int(len(held_out)), "sha256": corpus_sha256(data),
            "unigram_bits": round(unigram_bits(train, held_out), 4),
            "bigram_bits": round(bigram_bits(train, held_out), 4)}
