"""The logic and addition sweeps (Graves 2016, sections 3.2 and 3.3): what scripts/plot_task.py
prints and draws.

Four figures per sweep, <task>_*.png by default:

    error_per_tau     final held-out sequence error per τ: the mean over seeds as a bar, the
                      standard error as a whisker, every seed as a dot, the no-ACT baseline last
    error_vs_ponder   one point per run (final mean ponder, final error) and the mean of each
                      τ as a large marker
    difficulty        mean ponder and step error against the difficulty of an input step:
                      logic, the number of gates in the vector; addition, the number of digits
    learning_curves   held-out sequence error and mean ponder during training

Which sweep: SWEEPS lists, per task, the folders under results/ to try in order; the first that
holds a runs.csv wins, so the full sweep (results/logic/, results/addition/) is shown once it is
committed and the reduced CPU sweeps until then.

``run(settings, out)`` trains a logic or addition sweep into ``out`` (scripts/sweep.py's options as a
dict, ``task`` among them), ``read(out)`` reads one, ``plot(data, figures)`` draws FIGURES and ``main``
is scripts/plot_task.py.
"""

import sys

import numpy as np

from act_experiments import tables
from act_experiments.plots import tau_sweep
from act_experiments.plots.style import DIFFICULTY_LABEL, tau_colours
from act_experiments.sweeps import reading, stats
from act_experiments.sweeps.experiment import sweep_experiment
from act_experiments.sweeps.stats import taus


# The sweeps to show, best first: the full-size sweep, then the reduced CPU sweeps, longest first.
SWEEPS = {
    "logic": ("logic", "logic_long", "logic_small"),
    "addition": ("addition", "addition_long", "addition_small"),
}

TASK_TITLE = {"logic": "Logic", "addition": "Addition"}
BASELINE_COLOUR = "0.4"


def find_sweep(task, results_dir=tables.RESULTS):
    """The folder of the sweep to show for `task`: the first name in SWEEPS[task] with a runs.csv."""
    return reading.find_sweep(SWEEPS[task], results_dir,
                              missing=f"none of results/{{{','.join(SWEEPS[task])}}}/runs.csv exists: "
                                      f"run scripts/sweep.py --task {task} first")


def describe(sweep):
    """One line with the size of the runs, for figure titles."""
    meta, task = sweep["meta"], reading.task_of(sweep)
    o = reading.shared_options(task, meta)
    if task == "logic":
        size = f"≤{o['max_vectors']} vectors of ≤{o['max_gates']} gates"
    else:
        size = f"≤{o['max_numbers']} numbers of ≤{o['max_digits']} digits"
    iterations = int(max(r["iterations"] for r in sweep["runs"]))
    return (f"{size}, LSTM H={o['hidden']}, batch {o['batch_size']}, lr {o['lr']:g}, {iterations} iterations, "
            f"{meta.get('seeds', '?')} seeds [results/{sweep['name']}]")


def reference_error(sweep):
    """(value, label) of the sequence error a network with no skill gets.

    Logic: guessing each bit, a sequence of L vectors (L uniform on 1..max_vectors) is right
    with probability 2^-L. Addition: guessing a six-digit sum is as good as always wrong, but a
    sequence of one number has no target and can never be wrong, so the ceiling is 1 - 1/max_numbers.
    """
    task = reading.task_of(sweep)
    o = reading.shared_options(task, sweep["meta"])
    if task == "logic":
        value = 1.0 - float(np.mean(0.5 ** np.arange(1, o["max_vectors"] + 1)))
        return value, f"chance ({value:.2f})"
    value = 1.0 - 1.0 / o["max_numbers"]
    return value, f"every sum wrong ({value:.2f})"


def colours(sweep):
    """A colour per key: τ from light (small) to dark (large) on a log scale; grey for no ACT."""
    return tau_colours(taus(sweep), "plasma", 0.78, -0.68, BASELINE_COLOUR)


def _title(sweep, what):
    return f"{TASK_TITLE[reading.task_of(sweep)]}: {what}\n{describe(sweep)}"


def plot_error_per_tau(sweep):
    return tau_sweep.plot_error_per_tau(
        sweep, colours(sweep), reference=reference_error(sweep),
        title=_title(sweep, "sequence error per τ (bar: mean, whisker: standard error, dot: one seed)"))


def plot_error_vs_ponder(sweep):
    return tau_sweep.plot_error_vs_ponder(
        sweep, colours(sweep), reference=reference_error(sweep),
        title=_title(sweep, "error vs ponder (small: one run, large: mean per τ)"))


def plot_difficulty(sweep):
    task = reading.task_of(sweep)
    chance = (lambda ax: tau_sweep.reference_line(ax, (0.5, "chance (0.5)"))) if task == "logic" else None
    return tau_sweep.plot_difficulty(
        sweep, colours(sweep), xlabel=f"difficulty: {DIFFICULTY_LABEL[task]}",
        xticks=sorted({int(r["difficulty"]) for r in sweep["difficulty"]}),
        ponder_label="mean ponder ρ", error_label="error rate per input step", reference=chance,
        title=_title(sweep, "ponder and error vs difficulty (line: seeds pooled; top, band: lowest to highest seed)"))


def plot_learning_curves(sweep):
    return tau_sweep.plot_learning_curves(
        sweep, colours(sweep), reference=reference_error(sweep),
        title=_title(sweep, "learning curves (thick: mean over seeds, thin: one seed)"))


FIGURES = {
    "error_per_tau": plot_error_per_tau,
    "error_vs_ponder": plot_error_vs_ponder,
    "difficulty": plot_difficulty,
    "learning_curves": plot_learning_curves,
}


# ---------------------------------------------------------------------------------------------
# The experiment: run, read, plot, main
# ---------------------------------------------------------------------------------------------

SCRIPT = "scripts/plot_task.py"
DESCRIPTION = 'Figures of the logic and addition experiments (Graves 2016, sections 3.2 and 3.3) from a tau sweep.'


def load(out):
    """The logic or addition sweep in ``out`` (a folder or a name under results/), as reading.load_sweep
    gives it. ValueError when it holds another task's sweep."""
    sweep = reading.load_sweep(out)
    if reading.task_of(sweep) not in SWEEPS:
        raise ValueError(f"results/{sweep['name']} holds a {reading.task_of(sweep)} sweep, not logic or addition")
    return sweep


def locate(text):
    """The folder a SWEEP of scripts/plot_task.py names: a task's name (logic, addition) its sweep
    to show (find_sweep), else a name under results/ or a folder."""
    return find_sweep(text) if text in SWEEPS else reading.sweep_folder(text)


def no_default():
    raise ValueError("name a sweep: logic, addition (the task's sweep to show), results/<name>/ or a folder")


def summary(sweep):
    print(describe(sweep))
    stats.print_table(stats.table(sweep))


# run(settings, out) trains a logic or addition sweep into out/ (settings["task"] says which),
# read(out) reads one, plot(data, figures=None, prefix=None) draws FIGURES as <prefix or its task>_*.png,
# main(argv=None) is scripts/plot_task.py (act_experiments.sweeps.experiment.sweep_experiment)
run, read, plot, main = sweep_experiment(load, FIGURES, prefix=reading.task_of, default=no_default,
                                         summary=summary, script=SCRIPT, description=DESCRIPTION, locate=locate)


if __name__ == "__main__":
    sys.exit(main())
