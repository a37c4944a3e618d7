"""One module per experiment: its runs, its results files, its figures and its command line.

Every module has the same four functions (tests/test_layers.py checks it):

    run(...)        train what the results folder lacks and write the results files
                    (for the paper's tasks: the τ sweep of act_experiments.sweeps.launch)
    read(...)       the results files as plain Python data
    plot(data, figures=None, ...)    draw the figures, return their paths
    main(argv=None) the command line (one line and a non-zero status on bad input)

and ``SCRIPT`` and ``DESCRIPTION``, the script it is the command line of and its ``--help`` line.
``python -m act_experiments.experiments.<name>`` runs ``main``; the scripts in scripts/ are a few
lines that call it.

The paper's tasks (τ sweeps): ``parity``, ``logic_addition`` (logic and addition share everything
but their sweeps), ``sort``, ``characters``, ``time_penalty`` (every sweep together) and
``controls`` (each sweep beside its fixed-computation control). Beyond the paper, with their models
in act_beyond: ``pitfalls`` and ``universal_transformer`` (named entries over seeds),
``convnet_aig`` (a grid of networks) and ``pondernet`` (a comparison trained chunk by chunk). All
four run through ``runner.run_plan``, one pattern: a plan of units, each unit's rows appended to
the experiment's CSV tables in one step when it finishes, a JSON record of what ran; a rerun
trains only the units the tables lack, other settings are refused unless --force.

Adding an experiment: one new module here with the four functions (and its model in act_beyond
where it has one). Pick the nearest pattern: ``parity`` for a τ sweep of a paper's task,
``pitfalls`` for named entries over seeds (``runner.run_entries`` and the command line
``runner.main``), ``convnet_aig`` for a plan of its own through ``runner.run_plan``; end the module
with ``if __name__ == "__main__": sys.exit(main())``. docs/adding_an_experiment.md says it step by
step.
"""
