"""Adaptive Computation Time (Graves 2016) in plain NumPy, with a hand-derived backward pass.

Flow of the package: cells + act (model) -> losses -> act_backward -> optim -> train. The data
(tasks, text) and the training loop live in ``act_experiments``, shared with ``act_torch``.
"""
