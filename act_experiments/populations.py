"""The engine's populations built from training configs: what ``train_population`` and sweeps use.

    pop = TorchPopulation([config_0, config_1, ...])      # configs from config.make_config
    pop = NumpyPopulation([config_0, config_1, ...])

The engine (``act_engine``) takes each member's initial parameters and the read-out's loss; here
they come from the configs, exactly as a run trained alone gets them (config.init_parameters,
config.model_sizes), so that member k starts where run k starts.
"""

from act_engine import numpy_population, torch_population
from act_engine.members import check_members

from .config import init_parameters, model_sizes


def _engine_arguments(configs, shared):
    """The configs (checked to agree on ``shared``), their initial parameters, loss and heads."""
    configs = check_members(configs, shared)
    _, _, loss, heads = model_sizes(configs[0])
    return configs, [init_parameters(c) for c in configs], dict(loss=loss, heads=heads)


class NumpyPopulation(numpy_population.Population):
    """act_engine.numpy_population.Population of K training configs."""

    def __init__(self, configs):
        configs, inits, read_out = _engine_arguments(configs, numpy_population.SHARED)
        super().__init__(configs, inits, **read_out)


class TorchPopulation(torch_population.Population):
    """act_engine.torch_population.Population of K training configs (graphed: see the engine's)."""

    def __init__(self, configs, graphed=None):
        configs, inits, read_out = _engine_arguments(configs, torch_population.SHARED)
        super().__init__(configs, inits, graphed=graphed, **read_out)
