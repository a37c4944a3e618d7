"""One protocol for every experiment, checked on each through the registry (as scikit-learn's
``parametrize_with_checks`` checks every estimator): ``run(settings, out)`` at the registry's
smallest settings into a temporary folder, then ``read(out)`` and ``plot(data, figures)`` on what
it wrote, and the figures are there.

The experiments that read other experiments' sweeps (registry ``reads="committed"``: controls,
measured, parity64, skewed, frontier) have nothing of their own to read in a tiny run: their ``run``
trains one tiny sweep into the folder, which is checked to be there, and ``read`` and ``plot`` are
checked on the committed results. time_penalty reads every sweep of a folder, so the tiny one it
trained is what it reads.
"""

import inspect
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

from act_experiments import tables  # noqa: E402
from act_experiments.experiments.registry import EXPERIMENTS, modules  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOT_EXPERIMENTS = ("__init__.py", "runner.py", "registry.py")


def test_the_registry_lists_every_experiment_module_once_and_nothing_else():
    files = sorted(p.stem for p in (ROOT / "act_experiments" / "experiments").glob("*.py")
                   if p.name not in NOT_EXPERIMENTS)
    assert sorted(modules()) == files
    assert all(e.reads in ("own", "committed") for e in EXPERIMENTS.values())
    assert all(e.folder is None or (ROOT / e.folder).is_dir() for e in EXPERIMENTS.values())


def test_every_script_that_calls_an_experiments_main_is_the_script_of_one_in_the_registry():
    calling = sorted(f"scripts/{p.name}" for p in (ROOT / "scripts").glob("*.py")
                     if "from act_experiments.experiments." in p.read_text() and " import main\n" in p.read_text())
    assert calling == sorted({e.module().SCRIPT for e in EXPERIMENTS.values()})


@pytest.mark.parametrize("name", modules())
def test_every_experiment_has_the_four_functions_with_the_protocols_arguments(name):
    """run(settings, out), read(out), plot(data, figures), main(argv), each may take more with defaults;
    SCRIPT names an existing script and DESCRIPTION its --help line."""
    module = next(e for e in EXPERIMENTS.values() if e.module_name == name).module()
    expected = {"run": ["settings", "out"], "read": ["out"], "plot": ["data", "figures"], "main": ["argv"]}
    for function, names in expected.items():
        parameters = list(inspect.signature(getattr(module, function)).parameters.values())
        assert [p.name for p in parameters[:len(names)]] == names, f"{name}.{function}"
        assert all(p.default is not p.empty for p in parameters[len(names):]), f"{name}.{function}"
        assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters[:len(names)]), f"{name}.{function}"
    assert (ROOT / module.SCRIPT).is_file() and isinstance(module.DESCRIPTION, str) and module.DESCRIPTION


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_run_read_and_plot_work_on_what_run_wrote(name, tmp_path):
    entry = EXPERIMENTS[name]
    module = entry.module()
    # a τ sweep's runs go to runs/sweeps/ beside the folder of sweeps: tmp_path/runs/, inside tmp_path
    out = tmp_path / "results" / ("" if entry.folder == "results" else name)
    module.run(entry.smallest, out)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.csv"))
    assert written, f"{name}: run wrote no table"
    assert all(p.parts[0] in ("results", "runs") for p in written), written
    if entry.reads == "committed":
        assert (out / entry.smallest["name"] / "runs.csv").is_file()
        out = tables.RESULTS
    data = module.read(out)
    figures = tmp_path / "figures"
    paths = module.plot(data, figures=figures)
    assert paths and all(Path(p).parent == figures and Path(p).is_file() for p in paths), paths
    assert sorted(figures.glob("*.png")) == sorted(Path(p) for p in paths)
