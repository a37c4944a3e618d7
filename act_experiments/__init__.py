"""The experiment side of the course, shared by the NumPy and PyTorch backends, by job.

``data``: the data. ``tasks`` (the paper's four synthetic tasks and characters, ``make_batch``),
``text`` (the character corpus).

``training``: the training machinery, one loop for both backends, for one run or a population.
``config`` (options, defaults, seed streams), ``checkpoints`` (logs and checkpoints written in
one step; the files' names at their edge), ``evaluation`` (what a run measures), ``stopping``
(signals, divergence), ``loop`` (the loop), ``backends`` (how NumPy and PyTorch hold one network),
``populations`` (the engine's populations from training configs), ``pondernet_population``
(PonderNet's population, saved and restored exactly), ``cli`` (scripts/train.py's command line).

``sweeps``: τ x seed sweeps. ``launch`` (scripts/sweep.py: plan, run, collect), ``workers`` (shards
and worker processes); ``writing`` writes runs.csv and its tables, ``per_byte`` writes what a
characters sweep measures byte by byte, ``reading`` reads a sweep folder, ``stats`` computes its
numbers per τ, ``progress`` reads what unfinished sweeps have logged.

``experiments``: one module per experiment with ``run``, ``read``, ``plot`` and ``main``:
``parity``, ``logic_addition``, ``sort``, ``characters``, ``time_penalty``, ``controls``,
``pitfalls``, ``pondernet``, ``universal_transformer``, ``convnet_aig``; ``runner`` runs the four
beyond the paper, each a plan of units that a rerun resumes.

``cli``: what every script's command line shares (``OneLineParser``, whose errors are one line,
and the option checks ``checked`` and ``number_list``).

``plots``: what several figures share (``style``, ``tau_sweep``, ``architecture``, ``pondernet``).
``figures``: where and how figures are written (byte for byte the same). ``tables``: where the
committed results are (``RESULTS``) and CSV / JSON files written in one step, through ``files``
(any file written whole, ``atomic_write``; the repository's ``ROOT``). ``threads``: PyTorch's CPU
thread count, for the notebooks and the experiments alike. What the notebooks share, grading,
upkeep and the lab run no experiment: they are act_course, the layer above this one.

Adding an experiment: one new module in ``experiments`` with ``run``, ``read``, ``plot`` and
``main`` (its model, if it has one, in act_beyond); see ``act_experiments.experiments`` and
docs/adding_an_experiment.md.
"""
