"""PyTorch's CPU thread count for the course's networks: OMP_NUM_THREADS, or one thread.

    torch_threads()      # in a notebook's setup cell, or before an experiment trains

Shared by the notebooks and by the experiments that train PyTorch networks of their own
(``universal_transformer``, ``convnet_aig``); it sits here, below both, so that each imports it
from one place.
"""

import os


def torch_threads():
    """Set and return PyTorch's CPU thread count: OMP_NUM_THREADS, or 1.

    These networks are small: one thread is as fast as two, and two thread pools fighting over
    two busy cores are far slower.
    """
    import torch
    value = os.environ.get("OMP_NUM_THREADS", "")
    threads = int(value) if value.isdigit() and int(value) > 0 else 1
    torch.set_num_threads(threads)
    return threads
