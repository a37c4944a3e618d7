"""Synthetic tasks of Graves (2016), section 3: parity, logic, addition and sort.

Every task is generated online from a passed-in ``np.random.Generator``::

    x, y, mask = make_batch(task, rng, batch_size, **options)

``x`` is float64 with shape (B, T, D); ``mask`` is float64 with shape (B, T), 1 where a target
exists and 0 elsewhere. Sequences shorter than T are followed by zero padding with mask 0, and
targets are 0 wherever the mask is 0, so a batch never carries stray labels. The same generator
state always gives the same batch.

Shapes per task with the default options (B = batch size)::

    task      x             y                     mask     loss
    parity    (B, 1, 64)    (B, 1, 1) float 0/1   (B, 1)   sigmoid (one unit)
    logic     (B, 10, 102)  (B, 10, 1) float 0/1  (B, 10)  sigmoid (one unit)
    addition  (B, 5, 50)    (B, 5, 6) int 0..10   (B, 5)   softmax, 6 heads of 11 classes
    sort      (B, 30, 2)    (B, 30) int 0..14     (B, 30)  softmax, 15 classes

Options shrink a task for quick experiments (parity ``bits``; logic ``max_vectors`` and
``max_gates``; addition ``max_numbers`` and ``max_digits``; sort ``max_length``), or reshape
parity's difficulties (``min_nonzero``, ``max_nonzero``, ``skew``). Anything unknown or out of
range raises ``ValueError`` naming the option.

Conventions the paper leaves open, chosen here
----------------------------------------------
parity
    The count of non-zero entries is uniform on 1..bits, their positions are distinct and
    uniform, and each sign is +1 or -1 with probability 1/2. Target 1 when the number of +1
    entries is odd. The options ``min_nonzero`` and ``max_nonzero`` (default 1 and ``bits``)
    narrow the count to min_nonzero..max_nonzero, for an extrapolation test (PonderNet's):
    train on 1..k non-zero entries, test on k+1..bits. Left at their defaults they draw exactly
    the batches drawn without them, and they stay out of the resolved options unless given.
    The option ``skew``, text "F:LO-HI" (default None: off), mixes in a second range: each
    input is hard with probability F, and a hard input draws its count uniformly from LO..HI
    instead (1 <= LO <= HI <= bits). ``bits=16, max_nonzero=2, skew="0.1:13-16"``: about 90%
    of the inputs have 1 or 2 non-zero entries, about 10% have 13 to 16, for asking when
    adapting the computation pays. The hard draws come after the paper's, so that without
    ``skew`` every stream is the one drawn before it existed; the difficulty is still the
    number of non-zero entries.
logic
    Input vector: ``[b0, b1, chunk 1, ..., chunk 10]`` with chunks of 10 units, so the width is
    102 whatever ``max_gates`` is (``max_gates`` only caps how many chunks are used, 1..10).
    Chunk j one-hot encodes gate T_j by its index in Table 1 (unit 0 = NOR, ..., unit 9 = OR).
    The number of gates is uniform on 1..max_gates for every vector, each gate uniform over
    the ten. Eq. (21): b_{i+1} = T_i(b_i, b_{i-1}), so P = b_i (the newer bit) and
    Q = b_{i-1}; the target is b_{B+1}. From the second vector on, b0 is the previous target
    for the computation but is written as 0 in the input. The sequence length is uniform on
    1..max_vectors and T = max_vectors.
addition
    A number with D digits (D uniform on 1..max_digits) is written in D one-hot blocks of 10
    units, **least significant digit first**: block 0 holds the units digit, block 1 the tens,
    and so on; blocks D..max_digits-1 are zero. The input width is 10 * max_digits (50 by
    default), so a smaller version really is smaller. Digits are uniform on 0..9 except the
    most significant one of a number with D > 1, which is uniform on 1..9: a D-digit number
    has no leading zero, so D is the true length and a fair difficulty measure.
    The target at step t is the running sum of inputs 0..t written with max_digits + 1
    digits (6 by default) in the same order; every digit position past the sum's most
    significant digit gets class 10 ("beyond the end of the number"). A sum of 0 is written
    as one digit "0". There is no target at t = 0 (mask 0). Because at most 10 numbers of
    max_digits digits always sum to less than 10 ** (max_digits + 1), ``max_numbers`` is
    limited to 1..10; ``max_digits`` is limited to 1..17 so that sums fit in int64.
    The sequence length is uniform on 1..max_numbers and T = max_numbers.
sort
    n (uniform on 2..max_length) numbers drawn from N(0, 1) are shown at steps 0..n-1 with
    input ``(value, flag)``; the end-of-input flag is 1 **on the last number** (step n-1), so
    the network knows the input has ended at the same step it sees the last value. Then come
    n output steps t = n..2n-1 with zero input, where the target at t = n + j is the index
    (0..n-1) of the j-th smallest input (ascending). T = 2 * max_length; the tail after the
    outputs is zero padding. Only the n output steps have mask 1. The output is a
    max_length-way softmax (15 by default). The course's texts and figures call the length n
    too: K is the engine's number of stacked networks.

The paper's character prediction experiment is registered here as a fifth task, "characters"
(options ``seq_len`` and ``data``; x (B, seq_len, 256) one-hot bytes, y (B, seq_len) the next
byte, softmax over 256 classes); its corpus and batches live in ``text.py``. ``TASKS`` keeps
the four synthetic tasks; ``ALL_TASKS`` adds "characters". Its held-out set comes from the end
of the text: draw it with ``make_held_out``, which for the synthetic tasks is make_batch.
"""

from typing import Callable, NamedTuple, Optional

import numpy as np

from act_experiments.data import text
from act_numpy.checks import check_float, check_int

TASKS = ("parity", "logic", "addition", "sort")
TEXT_TASKS = ("characters",)     # the tasks that read a text (their TASK_TABLE entry says text=True)
ALL_TASKS = TASKS + TEXT_TASKS

# Default option values per task; also the set of options each task accepts.
DEFAULTS = {
    "parity": {"bits": 64, "min_nonzero": 1, "max_nonzero": "bits",    # "bits": the value of bits
               "skew": None},                                          # None: off (parse_skew)
    "logic": {"max_vectors": 10, "max_gates": 10},
    "addition": {"max_numbers": 5, "max_digits": 5},
    "sort": {"max_length": 15},
    "characters": {"seq_len": 100, "data": None},   # data None: the pydoc_data.topics text
}

# Allowed range (inclusive) of every option; None means no upper limit.
_LIMITS = {
    "bits": (1, None),
    "max_vectors": (1, None),
    "max_gates": (1, 10),
    "max_numbers": (1, 10),
    "max_digits": (1, 17),
    "max_length": (2, None),
    "seq_len": (1, None),
    "min_nonzero": (1, None),     # and at most bits (_parity_check)
    "max_nonzero": (1, None),
}

# Options left out of a task's resolved options unless given: at their defaults they change no
# batch, so the task_options of every run and sweep saved before they existed stay the same.
UNLESS_GIVEN = ("min_nonzero", "max_nonzero", "skew")

# Options that are not ints, with their type (the command line uses it).
OPTION_TYPES = {"data": str, "skew": str}

# Table 1 of the paper. Gate names in the paper's order (index 0 here is gate 1 there), and
# each gate's output for the rows (P, Q) = (T, T), (T, F), (F, T), (F, F), as in the table.
GATE_NAMES = ("NOR", "Xq", "ABJ", "XOR", "NAND", "AND", "XNOR", "if/then", "then/if", "OR")
_TABLE1_ROWS = {
    "NOR": "FFFT",
    "Xq": "FFTF",
    "ABJ": "FTFF",
    "XOR": "FTTF",
    "NAND": "FTTT",
    "AND": "TFFF",
    "XNOR": "TFFT",
    "if/then": "TFTT",
    "then/if": "TTFT",
    "OR": "TTTF",
}


def _truth_tables():
    """Table 1 as an int array ``table[gate, P, Q]`` with gate 0..9 and P, Q in {0, 1}."""
    table = np.zeros((len(GATE_NAMES), 2, 2), dtype=np.int64)
    row_order = ((1, 1), (1, 0), (0, 1), (0, 0))
    for g, name in enumerate(GATE_NAMES):
        for (p, q), out in zip(row_order, _TABLE1_ROWS[name]):
            table[g, p, q] = out == "T"
    return table


TRUTH_TABLE = _truth_tables()

NUM_GATE_CHUNKS = 10  # logic input always has 10 chunks of 10 units after b0 and b1
LOGIC_WIDTH = 2 + NUM_GATE_CHUNKS * len(GATE_NAMES)  # 102
END_CLASS = 10  # addition: class for "beyond the end of the number"


# ----------------------------------------------------------------------------------------
# Argument checks
# ----------------------------------------------------------------------------------------

def _check_task(task):
    if task not in ALL_TASKS:
        raise ValueError(f"unknown task {task!r}; expected one of {ALL_TASKS}")


def resolve_options(task, **options):
    """Check ``options`` for ``task`` and return them merged with the defaults (a new dict)."""
    _check_task(task)
    allowed = DEFAULTS[task]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(
            f"unknown option(s) {unknown} for task {task!r}; allowed: {sorted(allowed)}")
    merged = {name: value for name, value in allowed.items() if name not in UNLESS_GIVEN}
    for name, value in options.items():
        if name == "data":
            merged[name] = text.check_data(value)   # None or an existing file
        elif name == "skew":
            if value is not None:                   # None is off, as if not given
                # kept as text, written one way, so that a saved config compares and resumes as given
                merged[name] = skew_text(*parse_skew(value))
        else:
            merged[name] = check_int(f"option {name!r}", value, *_LIMITS[name])
    if TASK_TABLE[task].check is not None:
        TASK_TABLE[task].check(merged)
    return merged


# ----------------------------------------------------------------------------------------
# Small helpers for models, training and plots
# ----------------------------------------------------------------------------------------

def input_size(task, **options):
    """Width D of ``x``: parity ``bits``, logic 102, addition ``10 * max_digits``, sort 2, characters 256."""
    opts = resolve_options(task, **options)     # checks the task first
    return TASK_TABLE[task].input_size(opts)


def output_size(task, **options):
    """Output units: parity 1, logic 1, addition (max_digits+1)*11, sort max_length, characters 256."""
    opts = resolve_options(task, **options)     # checks the task first
    return TASK_TABLE[task].output_size(opts)


def loss_kind(task):
    """"sigmoid" (binary cross-entropy) for parity/logic, "softmax" for addition/sort/characters."""
    _check_task(task)
    return TASK_TABLE[task].loss


def num_heads(task, **options):
    """Independent softmax groups in the output: addition max_digits + 1, every other task 1."""
    opts = resolve_options(task, **options)     # checks the task first
    return TASK_TABLE[task].heads(opts)


def difficulty(task, x, y, mask):
    """Difficulty of each sequence (or step) of a batch made by ``make_batch``; int64.

    parity   (B,)    number of non-zero input bits
    logic    (B, T)  number of gates in each vector (0 on padding)
    addition (B, T)  number of digits of each input number (0 on padding)
    sort     (B,)    sequence length n (how many numbers to sort)
    characters (B, T) class of the input byte, 1..6 (text.BYTE_CLASSES: letter, digit, space, ...)
    """
    _check_task(task)
    return TASK_TABLE[task].difficulty(np.asarray(x), np.asarray(y), np.asarray(mask))


def _parity_difficulty(x, y, mask):
    return np.count_nonzero(x[:, 0, :], axis=1).astype(np.int64)


def _logic_difficulty(x, y, mask):
    return np.rint(x[:, :, 2:].sum(axis=2)).astype(np.int64)     # each used chunk holds exactly one 1


def _addition_difficulty(x, y, mask):
    return np.rint(x.sum(axis=2)).astype(np.int64)               # each used digit block holds one 1


def _sort_difficulty(x, y, mask):
    return np.rint(mask.sum(axis=1)).astype(np.int64)


def _characters_difficulty(x, y, mask):
    return text.byte_class(x.argmax(axis=2))


# ----------------------------------------------------------------------------------------
# Generators, one per task
# ----------------------------------------------------------------------------------------

def parse_skew(value):
    """Parity's option ``skew``, "F:LO-HI" (e.g. "0.1:13-16"), as (F, LO, HI): a fraction F in
    [0, 1] of the inputs draw their number of non-zero entries from LO..HI, 1 <= LO <= HI.
    ValueError naming the option for anything else; that HI fits in bits is _parity_check's."""
    form = (f"option 'skew' must read F:LO-HI (a fraction F of the inputs with LO..HI non-zero bits, "
            f"e.g. 0.1:13-16), got {value!r}")
    if not isinstance(value, str):
        raise ValueError(form)
    fraction, colon, counts = value.partition(":")
    low, dash, high = counts.partition("-")
    try:
        fraction, low, high = float(fraction), int(low), int(high)
    except ValueError:
        raise ValueError(form) from None
    if not (colon and dash):
        raise ValueError(form)
    fraction = check_float("option 'skew': the fraction F", fraction, 0.0, 1.0)
    check_int("option 'skew': LO", low, 1)
    if high < low:
        raise ValueError(f"option 'skew': LO must not exceed HI, got {value!r}")
    return fraction, low, high


def skew_text(fraction, low, high):
    """(F, LO, HI) as the option ``skew`` is written: (0.1, 13, 16) -> "0.1:13-16"."""
    return f"{fraction!r}:{low}-{high}"


def _parity_check(options):
    # each option is already an int >= 1 (_LIMITS), skew already read (parse_skew); here they
    # meet bits and each other
    high = check_int("option 'max_nonzero'", options.get("max_nonzero", options["bits"]), 1, options["bits"])
    check_int("option 'min_nonzero'", options.get("min_nonzero", 1), 1, high)
    if options.get("skew") is not None:
        _, _, hard_high = parse_skew(options["skew"])
        if hard_high > options["bits"]:
            raise ValueError(f"option 'skew': HI must be at most bits = {options['bits']}, got {options['skew']!r}")


def _parity(rng, batch, bits, min_nonzero=1, max_nonzero=None, skew=None):
    high = bits if max_nonzero is None else max_nonzero
    count = rng.integers(min_nonzero, high + 1, size=batch)  # non-zero entries per row, 1..bits by default
    if skew is not None:
        # drawn after the paper's counts, so that without skew the stream is the paper's own
        fraction, hard_low, hard_high = parse_skew(skew)
        hard = rng.random(batch) < fraction
        count = np.where(hard, rng.integers(hard_low, hard_high + 1, size=batch), count)
    # rank of each position in a random order: the `count` lowest ranks are the chosen ones
    ranks = np.argsort(np.argsort(rng.random((batch, bits)), axis=1), axis=1)
    chosen = ranks < count[:, None]
    signs = 2.0 * rng.integers(0, 2, size=(batch, bits)) - 1.0
    bits_in = np.where(chosen, signs, 0.0)
    positives = np.count_nonzero(bits_in > 0, axis=1)
    x = bits_in[:, None, :]
    y = (positives % 2).astype(np.float64)[:, None, None]
    mask = np.ones((batch, 1))
    return x, y, mask


def _logic(rng, batch, max_vectors, max_gates):
    T = max_vectors
    length = rng.integers(1, max_vectors + 1, size=batch)
    valid = np.arange(T)[None, :] < length[:, None]  # (B, T)
    n_gates = rng.integers(1, max_gates + 1, size=(batch, T))
    gates = rng.integers(0, len(GATE_NAMES), size=(batch, T, max_gates))
    b0_first = rng.integers(0, 2, size=batch)
    b1 = rng.integers(0, 2, size=(batch, T))

    x = np.zeros((batch, T, LOGIC_WIDTH))
    y = np.zeros((batch, T, 1))
    x[:, 0, 0] = b0_first  # later vectors keep b0 written as 0
    x[:, :, 1] = b1
    # gate j of vector t is one-hot in chunk j, if the vector has more than j gates
    used = np.arange(max_gates)[None, None, :] < n_gates[:, :, None]      # (B, T, max_gates)
    b, t, j = np.nonzero(used)
    x[b, t, 2 + 10 * j + gates[b, t, j]] = 1.0
    b0 = b0_first  # b0 used in the computation: random at t = 0, previous target afterwards
    for t in range(T):
        older, newer = b0, b1[:, t]  # (b_{i-1}, b_i) with i = 1
        for j in range(max_gates):
            # eq. (21): b_{i+1} = T_i(P = b_i, Q = b_{i-1}); unused gates leave the bits alone
            nxt = TRUTH_TABLE[gates[:, t, j], newer, older]
            older, newer = np.where(used[:, t, j], newer, older), np.where(used[:, t, j], nxt, newer)
        y[:, t, 0] = newer
        b0 = newer
    x *= valid[:, :, None]
    y *= valid[:, :, None]
    return x, y, valid.astype(np.float64)


def _addition(rng, batch, max_numbers, max_digits):
    T = max_numbers
    length = rng.integers(1, max_numbers + 1, size=batch)
    valid = np.arange(T)[None, :] < length[:, None]  # (B, T)
    n_digits = rng.integers(1, max_digits + 1, size=(batch, T))
    digits = rng.integers(0, 10, size=(batch, T, max_digits))  # least significant first
    leading = rng.integers(1, 10, size=(batch, T))

    position = np.arange(max_digits)[None, None, :]
    is_top = (position == (n_digits - 1)[:, :, None]) & (n_digits[:, :, None] > 1)
    digits = np.where(is_top, leading[:, :, None], digits)
    present = (position < n_digits[:, :, None]) & valid[:, :, None]  # (B, T, max_digits)
    digits = np.where(present, digits, 0)

    # one-hot blocks: block k holds digit k (units first)
    x = np.zeros((batch, T, max_digits, 10))
    b, t, k = np.nonzero(present)
    x[b, t, k, digits[b, t, k]] = 1.0
    x = x.reshape(batch, T, 10 * max_digits)

    powers = 10 ** np.arange(max_digits + 1, dtype=np.int64)
    values = (digits * powers[:max_digits]).sum(axis=2)  # (B, T); 0 on padding
    sums = np.cumsum(values, axis=1)
    sum_digits = (sums[:, :, None] // powers) % 10  # (B, T, max_digits + 1)
    # length of the sum in digits (0 counts as one digit)
    sum_len = 1 + (sums[:, :, None] >= powers[1:]).sum(axis=2)
    past_end = np.arange(max_digits + 1)[None, None, :] >= sum_len[:, :, None]
    y = np.where(past_end, END_CLASS, sum_digits).astype(np.int64)

    mask = valid.copy()
    mask[:, 0] = False  # no target for the first number
    y *= mask[:, :, None]
    return x, y, mask.astype(np.float64)


def _sort(rng, batch, max_length):
    T = 2 * max_length
    n = rng.integers(2, max_length + 1, size=batch)      # (B,) how many numbers each row sorts
    values = rng.standard_normal((batch, max_length))
    shown = np.arange(max_length)[None, :] < n[:, None]
    values = np.where(shown, values, 0.0)

    x = np.zeros((batch, T, 2))
    x[:, :max_length, 0] = values
    rows = np.arange(batch)
    x[rows, n - 1, 1] = 1.0  # end-of-input flag on the last number

    # unused slots sort to the end, so the first n entries of each order are the answer
    order = np.argsort(np.where(shown, values, np.inf), axis=1, kind="stable")
    y = np.zeros((batch, T), dtype=np.int64)
    mask = np.zeros((batch, T))
    b, j = np.nonzero(shown)  # j-th output of row b, for j < n[b]
    y[b, n[b] + j] = order[b, j]
    mask[b, n[b] + j] = 1.0
    return x, y, mask


def _checked(task, rng, batch_size, options):
    """The task's options merged with the defaults, once rng and batch_size are checked too."""
    opts = resolve_options(task, **options)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a np.random.Generator, got {type(rng).__name__}")
    check_int("batch_size", batch_size)
    return opts


def make_batch(task, rng, batch_size, **options):
    """Draw a batch of ``task``; returns ``(x, y, mask)`` as described in the module docstring.

    task: one of ALL_TASKS. rng: np.random.Generator (the only source of randomness).
    batch_size: int >= 1. options: task options (see DEFAULTS), checked by resolve_options.
    """
    opts = _checked(task, rng, batch_size, options)
    return TASK_TABLE[task].batch(rng, int(batch_size), **opts)


def make_held_out(task, rng, batch_size, **options):
    """A run's held-out set: make_batch, except that "characters" draws from the held-out text.

    The synthetic tasks are generated online, so fresh batches are held-out data; a text has
    to keep its held-out part apart from the part the network trains on.
    """
    opts = _checked(task, rng, batch_size, options)
    return TASK_TABLE[task].held_out(rng, int(batch_size), **opts)


# ----------------------------------------------------------------------------------------
# The table: everything the rest of the course needs to know of a task, in one place
# ----------------------------------------------------------------------------------------


def _characters_batch(rng, batch, seq_len, data):
    return text.make_batch(rng, batch, seq_len=seq_len, data=data, split_name="train")


def _characters_held_out(rng, batch, seq_len, data):
    return text.make_batch(rng, batch, seq_len=seq_len, data=data, split_name="held_out")


def _characters_check(options):
    text.check_seq_len(options["seq_len"], options["data"])      # chunks must fit in the text


class Task(NamedTuple):
    """One task as the training loop sees it. Functions take the task's checked options as a dict.

    train: the paper's training settings for the task (section 3), merged into a run's config
    by ``config.make_config``. held_out draws a run's held-out set: the batch generator for
    the synthetic tasks (generated online, so a fresh batch is unseen data), the held-out end
    of the text for characters. text: the task reads a text, so its records add bits per char
    and a run keeps the text's sha256.
    """
    train: dict
    input_size: Callable[[dict], int]
    output_size: Callable[[dict], int]
    loss: str
    heads: Callable[[dict], int]
    difficulty: Callable
    batch: Callable
    held_out: Callable
    check: Optional[Callable] = None
    text: bool = False


def _one(options):
    return 1


TASK_TABLE = {
    "parity": Task({"cell": "rnn", "hidden": 128, "batch_size": 128, "max_ponder": 100},
                   lambda o: o["bits"], _one, "sigmoid", _one, _parity_difficulty, _parity, _parity,
                   check=_parity_check),
    "logic": Task({"cell": "lstm", "hidden": 128, "batch_size": 16, "max_ponder": 100},
                  lambda o: LOGIC_WIDTH, _one, "sigmoid", _one, _logic_difficulty, _logic, _logic),
    "addition": Task({"cell": "lstm", "hidden": 512, "batch_size": 32, "max_ponder": 20},
                     lambda o: 10 * o["max_digits"], lambda o: (o["max_digits"] + 1) * 11, "softmax",
                     lambda o: o["max_digits"] + 1, _addition_difficulty, _addition, _addition),
    "sort": Task({"cell": "lstm", "hidden": 512, "batch_size": 16, "max_ponder": 100},
                 lambda o: 2, lambda o: o["max_length"], "softmax", _one, _sort_difficulty, _sort, _sort),
    # the paper: LSTM 1500 on 500-byte sequences (batch not given); smaller here (text.py)
    "characters": Task({"cell": "lstm", "hidden": 256, "batch_size": 32, "max_ponder": 100, "eval_size": 200},
                       lambda o: text.VOCAB, lambda o: text.VOCAB, "softmax", _one, _characters_difficulty,
                       _characters_batch, _characters_held_out, check=_characters_check, text=True),
}
