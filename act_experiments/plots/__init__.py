"""What several figures share; each experiment's own figures are in its module (act_experiments.experiments).

``style``: how a figure shows τ (legend entries, colours, line styles, the legend's place).
``tau_sweep``: the figure types every τ sweep has (error per τ, error against ponder, ponder and
error against difficulty, learning curves), drawn by the paper's experiments.
``architecture``: the diagram of ACT inside one input step (scripts/plot_architecture.py).
``pondernet``: PonderNet's figures and what they pick from its tables (a module of its own so that
act_experiments.experiments.pondernet, with the comparison and its command line, stays within the
size of one module).
``vega``, ``halting_explorer``, ``tau_explorer``: the explorers of notebooks 01 and 05, Vega-Lite
figures (Altair 5) whose sliders work in the browser, in JupyterLab and in the book alike.

Nothing here selects a matplotlib backend: a script that only writes files does that itself, so
that a notebook which imports these modules keeps its inline backend.
"""
