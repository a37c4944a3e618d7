"""The engine's populations built from training configs: what ``train_population`` and sweeps use.

    pop = TorchPopulation([config_0, config_1, ...])      # configs from config.make_config
    pop = NumpyPopulation([config_0, config_1, ...])

TorchPopulation is built on first use, so that PyTorch is imported only by what trains with it.

The engine (``act_engine``) takes each member's initial parameters and the read-out's loss; here
they come from the configs, exactly as a run trained alone gets them (config.init_parameters,
config.model_sizes), so that member k starts where run k starts.
"""

import functools

from act_engine import numpy_population
from act_experiments.training.config import population_arguments


class NumpyPopulation(numpy_population.Population):
    """act_engine.numpy_population.Population of K training configs."""

    def __init__(self, configs):
        configs, inits, read_out = population_arguments(configs, numpy_population.SHARED)
        super().__init__(configs, inits, **read_out)


def __getattr__(name):
    """TorchPopulation, importing PyTorch on first use: a NumPy sweep's workers start without it."""
    if name == "TorchPopulation":
        return _torch_population()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _torch_population():
    """TorchPopulation, built the first time it is asked for: PyTorch loads here."""
    from act_engine import torch_population

    class TorchPopulation(torch_population.Population):
        """act_engine.torch_population.Population of K training configs (graphed, kernels: see the engine's)."""

        def __init__(self, configs, graphed=None, kernels=False):
            configs, inits, read_out = population_arguments(configs, torch_population.SHARED)
            super().__init__(configs, inits, graphed=graphed, kernels=kernels, **read_out)

    TorchPopulation.__qualname__ = "TorchPopulation"
    return TorchPopulation
