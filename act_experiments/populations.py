"""The engine's populations built from training configs: what ``train_population`` and sweeps use.

    pop = TorchPopulation([config_0, config_1, ...])      # configs from config.make_config
    pop = NumpyPopulation([config_0, config_1, ...])

TorchPopulation lives in ``act_experiments.torch_populations`` and loads on first use, so that
PyTorch is imported only by what trains with it.

The engine (``act_engine``) takes each member's initial parameters and the read-out's loss; here
they come from the configs, exactly as a run trained alone gets them (config.init_parameters,
config.model_sizes), so that member k starts where run k starts.
"""

from act_engine import numpy_population
from .config import population_arguments


class NumpyPopulation(numpy_population.Population):
    """act_engine.numpy_population.Population of K training configs."""

    def __init__(self, configs):
        configs, inits, read_out = population_arguments(configs, numpy_population.SHARED)
        super().__init__(configs, inits, **read_out)


def __getattr__(name):
    """TorchPopulation, importing PyTorch on first use: a NumPy sweep's workers start without it."""
    if name == "TorchPopulation":
        from .torch_populations import TorchPopulation
        return TorchPopulation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
