"""The data: the paper's four synthetic tasks and the character corpus.

``tasks``: parity, logic, addition, sort and characters as batches (``make_batch``) and their
per-task tables (options, defaults, difficulty). ``text``: the character corpus, its held-out
split and its checksum.
"""
