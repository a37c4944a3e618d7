"""Every experiment of the course, in one list: its module, its smallest settings and its folder.

    for entry in EXPERIMENTS.values():
        module = entry.module()                    # act_experiments.experiments.<entry.module_name>
        out = module.run(entry.smallest, tmp / entry.name)
        module.plot(module.read(out), figures=tmp / "figures")

Every experiment has the same four functions (tests/test_experiment_contract.py runs each one
through them at ``smallest``):

    run(settings, out)       train what ``out`` lacks at ``settings`` and write the results files there
    read(out)                the results files in ``out`` as plain Python data
    plot(data, figures)      draw the figures of ``read``'s data into ``figures`` (default figures/)
    main(argv)               the command line (``SCRIPT``; one line and a non-zero status on bad input)

``out`` is the experiment's output folder: a τ sweep's own folder (results/parity8/), or, for the
experiments that read several sweeps, the folder of sweeps (results/), where ``run`` trains the one
``settings["name"]`` names. ``folder`` says which, relative to the checkout: the committed results
that ``read`` takes by default (None where the module chooses among several sweeps: parity's
largest, sort's and logic's and addition's fullest, characters'). ``reads``: "own" when ``read(out)``
reads what ``run`` wrote, "committed" when the experiment reads other experiments' sweeps and is
drawn from the committed ones (``run`` trains one more of them).

``smallest`` is what the contract test and scripts/golden.py (act_course.upkeep.golden, through
``python -m act_experiments.experiments.registry NAME OUT``) both run: a few iterations of the
smallest network, one size for both, so that nothing trains twice at two sizes.
The modules are imported only when asked for (``Experiment.module``), so that listing the
experiments loads none of them.
"""

import importlib
from dataclasses import dataclass, field

# A τ sweep a few seconds long: one τ and the no-ACT run, one seed, four iterations.
TINY_SWEEP = {"hidden": 8, "batch_size": 8, "iterations": 4, "eval_every": 2, "eval_size": 16, "taus": "1e-2",
              "seeds": 1, "workers": 1, "backend": "numpy"}


@dataclass(frozen=True)
class Experiment:
    """One experiment: its name, its module's name, ``run``'s smallest settings, its committed folder."""

    name: str
    module_name: str
    smallest: dict = field(hash=False)
    folder: str | None = None
    reads: str = "own"

    def module(self):
        """The experiment's module, imported."""
        return importlib.import_module(f"act_experiments.experiments.{self.module_name}")


def _sweep(task, **options):
    """The smallest settings of a τ sweep of ``task``: the task's own smallest options and TINY_SWEEP."""
    return {"task": task, **options, **TINY_SWEEP}


def _one_more(name):
    """The smallest settings of an experiment that reads several sweeps: one tiny parity sweep named ``name``."""
    return {"name": name, **_sweep("parity", bits=4)}


EXPERIMENTS = {e.name: e for e in (
    Experiment("parity", "parity", _sweep("parity", bits=4)),
    Experiment("logic", "logic_addition", _sweep("logic", max_vectors=2, max_gates=2)),
    Experiment("addition", "logic_addition", _sweep("addition", max_numbers=2, max_digits=1)),
    Experiment("sort", "sort", _sweep("sort", max_length=3)),
    Experiment("characters", "characters",
               {**TINY_SWEEP, "seq_len": 16, "eval_size": 32, "max_ponder": 4, "passage_chunks": 1}),
    Experiment("time_penalty", "time_penalty", _one_more("parity_tiny"), "results"),
    Experiment("controls", "controls", _one_more("parity_tiny_fixed"), "results", "committed"),
    Experiment("measured", "measured", _one_more("parity_tiny_measured"), "results", "committed"),
    Experiment("parity64", "parity64", _one_more("parity64_tiny"), "results", "committed"),
    Experiment("skewed", "skewed", _one_more("skewed_parity_tiny"), "results", "committed"),
    Experiment("frontier", "frontier", _one_more("parity_tiny_control"), "results", "committed"),
    # ten iterations: the gallery's figure shows the gradient probed every tenth
    Experiment("pitfalls", "pitfalls", {"experiment": "gallery", "seeds": 1, "iterations": 10, "pitfalls": ["correct"]},
               "results/pitfalls"),
    Experiment("universal_transformer", "universal_transformer",
               {"experiment": "cap", "seeds": 1, "iterations": 2, "entries": ["remainder"]},
               "results/universal_transformer"),
    Experiment("convnet_aig", "convnet_aig",
               {"seeds": (0,), "rates": (0.5,), "depths": (0,), "iterations": 2}, "results/convnet_aig"),
    Experiment("pondernet", "pondernet",
               {"bits": 4, "train_max": 2, "hidden": 4, "batch_size": 8, "lr": 1e-2, "iterations": 4, "chunk": 2,
                "seeds": (0,), "taus": (1e-2,), "betas": (1e-2,), "lambda_p": 0.2, "max_steps": 3,
                "eval_size": 24, "eval_seed": 1000, "sample_seed": 0}, "results/pondernet8"),
)}


def modules():
    """The names of the experiment modules, each once, in the registry's order."""
    return list(dict.fromkeys(e.module_name for e in EXPERIMENTS.values()))


def run_smallest(name, out):
    """Run experiment ``name`` at its smallest settings into ``out``; returns what its ``run`` returns."""
    entry = EXPERIMENTS[name]
    return entry.module().run(entry.smallest, out)


if __name__ == "__main__":
    # python -m act_experiments.experiments.registry NAME OUT: what scripts/golden.py records
    import sys
    from pathlib import Path
    run_smallest(sys.argv[1], Path(sys.argv[2]))
