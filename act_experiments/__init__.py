"""The experiment side of the course, shared by the NumPy and PyTorch backends.

``tasks``, ``text``: the paper's four synthetic tasks and the character corpus (the data).
``training``: one training loop for both backends, for one run or a population, over
``config`` (options, defaults, seed streams), ``checkpoints`` (logs and checkpoints written in
one step), ``evaluation`` (what a run measures) and ``stopping`` (signals, divergence);
``backends``: how NumPy and PyTorch hold a model; ``cli``: the command line of scripts/train.py.
``sweeps``: tau x seed sweeps (their shards and workers in ``sweep_workers``, their results files
in ``sweep_results``);
``characters``: what a characters sweep measures byte by byte. ``results``, ``sweep_stats``:
reading the committed sweeps and their numbers per tau. ``plots``: the figures, one module per
experiment; ``figures``: where figures are written. ``course``: what every notebook's setup and
check cells use (the settings a learner or CI may change from outside, and checks that record
their margin).
"""
