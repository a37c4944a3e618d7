"""One module per experiment: its runs, its results files, its figures and its command line.

Every experiment has the same four functions, and ``registry.EXPERIMENTS`` lists every one with
its smallest settings (tests/test_experiment_contract.py runs each through them):

    run(settings, out)      train what the output folder ``out`` lacks and write the results files there
    read(out)               the results files in ``out`` as plain Python data
    plot(data, figures)     draw the figures of ``read``'s data, return their paths
    main(argv)              the command line (one line and a non-zero status on bad input)

and ``SCRIPT`` and ``DESCRIPTION``, the script it is the command line of and its ``--help`` line.
The output folder is always passed in; where a function has a default, it is the committed
results. ``python -m act_experiments.experiments.<name>`` runs ``main``; the scripts in scripts/
are a few lines that call it, and every plot script takes ``[SWEEP ...] [--figures DIR] [--prefix P]``
(act_experiments.figures.plot_main).

The paper's tasks (τ sweeps): ``parity``, ``logic_addition`` (logic and addition share everything
but their sweeps), ``sort``, ``characters`` and ``time_penalty`` (every sweep together), whose four
functions are made once by act_experiments.sweeps.experiment.sweep_experiment; ``controls``,
``measured``, ``parity64``, ``skewed`` and ``frontier`` read several sweeps of a folder. Beyond the
paper, with their models in act_beyond: ``pitfalls`` and ``universal_transformer`` (named entries
over seeds), ``convnet_aig`` (a grid of networks) and ``pondernet`` (a comparison trained chunk by
chunk). All four run through ``runner.run_plan``, one pattern: a plan of units, each unit's rows
appended to the experiment's CSV tables in one step when it finishes, a JSON record of what ran;
a rerun trains only the units the tables lack, other settings are refused unless --force.

Adding an experiment: one new module here with the four functions (and its model in act_beyond
where it has one) and one entry in ``registry.EXPERIMENTS``. Pick the nearest pattern: ``parity``
for a τ sweep of a paper's task, ``pitfalls`` for named entries over seeds (``runner.run_entries``
and the command line ``runner.main``), ``convnet_aig`` for a plan of its own through
``runner.run_plan``; end the module with ``if __name__ == "__main__": sys.exit(main())``.
docs/adding_an_experiment.md says it step by step.
"""
