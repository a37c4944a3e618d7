"""The judge's checks for notebook 05 (parity): exercises 1 to 3 are values worked out from the
notebook's fixed inputs (the target and difficulty of one input ``v``, two inputs of one sum and
different targets, the ponder of a step whose halting units are all sigma(1)), exercise 4 values
read from the committed sweep ``parity16_seeds`` (the tau of the lowest mean error and of the best
single network); all ``BY_ITS_TESTS``. The answer's process runs the lesson's cells the answers
need (the setup cell, for ``tasks``, ``load_sweep`` and ``stats``) with read-only copies of
``act_experiments``, ``act_engine`` (reading a sweep goes through the training configuration) and
``act_numpy`` beside it, and of that sweep inside the copy of ``act_experiments``
(``Judged.committed``), and sends back the values; the check cells' own tests decide in the judge's
process (replay.py), against ``tasks.difficulty`` and the repository's sweep. PyTorch is out of
reach there, so exercise 3's measurement of untrained networks (``loop.run`` with
``iterations=0``) stops in that process, noted and costing nothing: its check, ``ex3-check-b``,
stays a self-check (act_course.grading.checks_table).
"""

from .judge import BY_ITS_TESTS, Judged

JUDGED = Judged(
    allowed={},
    checks={"ex1-check": BY_ITS_TESTS, "ex2-check": BY_ITS_TESTS, "ex3-check": BY_ITS_TESTS,
            "ex4-check": BY_ITS_TESTS},
    library=("act_experiments", "act_numpy", "act_engine"),
    committed=("parity16_seeds",),
    why="the judge works out your values outside your notebook with act_experiments, act_engine, act_numpy and the "
        "committed sweep parity16_seeds: the rest of the course, PyTorch and the networks trained there are out of "
        "reach (the statements that use them cost nothing)",
)
