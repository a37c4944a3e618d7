"""The judge's checks for notebook 02 (the binary flag): every answer is values (parameters, rates)
worked out from the notebook's fixed networks, judged by the check cells' own tests in the judge's
process (replay.py) on the values the answer's process sends back; the answers may use ``act_numpy``."""

from .judge import BY_ITS_TESTS, Judged

JUDGED = Judged(
    allowed={},
    checks={"ex1-check": BY_ITS_TESTS, "ex2-check": BY_ITS_TESTS, "ex3-check": BY_ITS_TESTS},
    library=("act_numpy",),
)
