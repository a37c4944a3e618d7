"""Adaptive Computation Time (Graves 2016) in plain NumPy, with a hand-derived backward pass.

Flow of the package: tasks (data) -> cells + act (model) -> losses -> act_backward -> optim -> train.
"""
