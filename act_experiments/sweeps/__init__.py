"""τ x seed sweeps of the paper's tasks, from the command line to the numbers in the figures.

``launch``: scripts/sweep.py's command line, planning and running a sweep (what it writes:
``sweep.json`` and the tables); ``workers``: its shards and worker processes; ``writing``:
collects finished runs into results/<name>/runs.csv (writes); ``per_byte``: what a characters
sweep measures byte by byte (writes classes.csv, passage.csv); ``reading``: a sweep folder as
plain Python data (reads); ``stats``: means, standard errors and difficulty bins of a sweep that
was read (computes); ``progress``: what unfinished sweeps have learned so far, from their logs
(scripts/sweep_progress.py).
"""
