"""The judge's checks for notebook 04 (NumPy against PyTorch): every answer is values measured on the
notebook's fixed networks with both libraries, judged by the check cells' own tests in the judge's
process (replay.py) on the values the answer's process sends back. The answers may use
``act_numpy``, ``act_torch`` and PyTorch; both processes run with one thread, so that float32
sums are added in the same order on both sides."""

from .judge import BY_ITS_TESTS, Judged

JUDGED = Judged(
    allowed={},
    checks={"ex1-check": BY_ITS_TESTS, "ex2-check": BY_ITS_TESTS, "ex3-check": BY_ITS_TESTS,
            "ex4-check": BY_ITS_TESTS},
    library=("act_numpy", "act_torch"),
    torch=True,
)
