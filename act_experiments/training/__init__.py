"""The training machinery: one loop for both backends, for one run or a population.

``config``: options, the paper's defaults per task, seed streams; ``checkpoints``: logs and
checkpoints written in one step, exact ``--resume``; ``evaluation``: what a run measures;
``stopping``: signals and divergence; ``loop``: the training loop (``run``, ``train_population``);
``backends``: how NumPy and PyTorch each hold one network; ``populations``: the engine's
populations built from training configs; ``pondernet_population``: PonderNet's population
(notebook 12's comparison), saved and restored exactly; ``cli``: the command line of
scripts/train.py. PyTorch loads only when a PyTorch backend or population is first asked for.
"""
