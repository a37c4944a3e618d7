"""TorchPopulation: the engine's PyTorch population built from training configs (see populations.py)."""

from act_engine import torch_population

from .config import population_arguments


class TorchPopulation(torch_population.Population):
    """act_engine.torch_population.Population of K training configs (graphed, kernels: see the engine's)."""

    def __init__(self, configs, graphed=None, kernels=False):
        configs, inits, read_out = population_arguments(configs, torch_population.SHARED)
        super().__init__(configs, inits, graphed=graphed, kernels=kernels, **read_out)
