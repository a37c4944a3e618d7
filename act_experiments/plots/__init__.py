"""The figures and printed summaries of the course, one module per experiment.

``style``: how a figure shows τ (legend entries, colours, line styles, the legend's place).
``tau_sweep``: the figure types every τ sweep has (error per τ, error against ponder, ponder and
error against difficulty, learning curves). ``parity``, ``logic_addition``, ``sort``,
``time_penalty`` and ``characters``: what scripts/plot_parity.py, plot_task.py, plot_sort.py,
plot_time_penalty.py and plot_characters.py print and draw, and the numbers the notebooks quote;
each has a FIGURES table ({name: draw(data) -> figure}) for act_experiments.figures.save_figures.
``architecture``: the diagram of ACT inside one input step (scripts/plot_architecture.py).
The data comes from act_experiments.sweeps.reading and act_experiments.sweeps.stats.

Nothing here selects a matplotlib backend: a script that only writes files does that itself, so
that a notebook which imports these modules keeps its inline backend.
"""
