"""The four functions of a τ-sweep experiment, written once for the modules of the paper's tasks.

    run, read, plot, main = sweep_experiment(loader, FIGURES, prefix="parity", default=largest_sweep,
                                             summary=print_summary, script=SCRIPT, description=DESCRIPTION)

    run(settings, out)                 train the sweep: scripts/sweep.py's options as a dict, into out/
    read(out=None)                     the sweep in out/ (default: ``default()``) as ``loader`` reads it
    plot(data, figures=None, prefix=None)   FIGURES as <figures or figures/>/<prefix>_*.png
    main(argv=None)                    scripts/plot_<name>.py (act_experiments.figures.plot_main)

``settings`` is what scripts/sweep.py takes, as a dict: ``{"task": "parity", "bits": 8, "taus":
"1e-2,1e-1", "seeds": 1, "no_baseline": True}`` is ``--task parity --bits 8 --taus 1e-2,1e-1
--seeds 1 --no-baseline`` (``settings_argv``). A sweep's folder is ``<root>/results/<name>``, its
name the folder's: ``run(settings, root / "results" / "parity8")`` writes ``<root>/results/parity8/``
and keeps its runs in ``<root>/runs/sweeps/parity8/`` (``launch.main``'s ``root``: the checkout's
results/ and runs/ when ``root`` is the checkout). The experiments that read several sweeps of a
folder (time_penalty, controls, measured, parity64, skewed, frontier) take the folder of sweeps,
``<root>/results``, as ``out`` and the sweep's name in ``settings["name"]`` (``run_into``).
"""

from pathlib import Path

from act_experiments.figures import plot_main, save_figures
from act_experiments.sweeps import launch, reading


def settings_argv(settings):
    """{"bits": 8, "taus": (0.01, 0.1), "no_baseline": True} -> ["--bits", "8", "--taus",
    "0.01,0.1", "--no-baseline"]: a key is its option with "-" for "_"; True is a flag, False and
    None are left out; a list or tuple is written comma-separated."""
    argv = []
    for key, value in settings.items():
        option = "--" + key.replace("_", "-")
        if value is True:
            argv.append(option)
        elif value is not False and value is not None:
            text = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
            argv += [option, text]
    return argv


def run_sweep(settings, out, script="sweep.py", task=None):
    """Train the sweep ``settings`` describe (settings_argv) into the folder ``out``, named after it;
    returns ``out``. task: the task of a script that trains one (scripts/characters.py)."""
    out = Path(out)
    if "name" in settings:
        raise ValueError(f"the sweep is named after its folder ({out.name}): leave 'name' out of its settings")
    if out.parent.name != "results":
        raise ValueError(f"a sweep's folder is <root>/results/<name>, got {out}")
    launch.main(["--name", out.name, *settings_argv(settings)], script=script, task=task, root=out.parent.parent)
    return out


def run_into(settings, out):
    """Train the sweep ``settings["name"]`` (the rest: settings_argv) into the folder of sweeps ``out``
    (<root>/results); returns the sweep's folder."""
    rest = {k: v for k, v in settings.items() if k != "name"}
    return run_sweep(rest, Path(out) / settings["name"])


def sweep_experiment(loader, table, *, prefix, default, summary, script, description, task=None, locate=None,
                     folder_of_sweeps=False):
    """(run, read, plot, main) of a τ-sweep experiment (the module's docstring shows them).

    loader(folder) -> the sweep as its figures read it (reading.load_task_sweep's check of the task
    included); table: FIGURES, {name: draw(data) -> fig}; prefix: the figures' default prefix, or a
    function of the data; default() -> the folder read when none is named; summary(data) prints its
    numbers. task: the task that scripts/<script> trains alone (characters). locate(text) -> the
    folder a SWEEP of the command line names (default: reading.sweep_folder, a name under results/
    or a folder). folder_of_sweeps: ``out`` is a folder of sweeps (time_penalty): ``run`` is ``run_into``.
    """
    locate = locate or reading.sweep_folder

    def run(settings, out):
        """Train a τ sweep into ``out`` (act_experiments.sweeps.experiment.run_sweep, or run_into when
        ``out`` is a folder of sweeps); returns the sweep's folder."""
        if folder_of_sweeps:
            return run_into(settings, out)
        return run_sweep(settings, out, "characters.py" if task else "sweep.py", task)

    def read(out=None):
        """The sweep in ``out`` (a folder, or a name under results/; default: the experiment's own)."""
        return loader(default() if out is None else out)

    def plot(data, figures=None, prefix=None):
        """Draw FIGURES of a sweep from ``read`` as <figures or figures/>/<prefix>_*.png; returns the paths."""
        return save_figures(table, data, prefix or stem(data), figures)

    def main(argv=None):
        """The plot script: read each SWEEP, print its summary, draw its figures."""
        return plot_main(argv, script=script, description=description,
                         what="results/<name>/ to draw, or a folder (default: the experiment's own sweep)",
                         read=lambda sweeps: [read(locate(s)) for s in sweeps] or [read()],
                         summary=summary, plot=plot, prefix=True)

    stem = prefix if callable(prefix) else (lambda data: prefix)
    return run, read, plot, main
