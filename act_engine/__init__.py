"""The engine: K ACT networks of one shape trained as one program, in NumPy and in PyTorch.

The learner's core (``act_numpy``, ``act_torch``) holds one network. Here the same equations run
on parameters stacked on a leading member axis, with per-member Adam and, on a GPU, CUDA graphs:

    numpy_act         forward and hand-written backward with the K axis (checked against act_numpy.act)
    numpy_population  K NumPy networks and their Adams
    torch_act         the PyTorch ponder loop for one or K networks, until halted or on a fixed budget
    adam              torch's Adam for K stacked networks, each with its own lr and step count
                      (MemberAdam): every PyTorch population's optimiser, PonderNet's included
    torch_population  K PyTorch networks and their MemberAdam
    graphed, population_graphed   training steps replayed as CUDA graphs
    triton_rnn, triton_lstm       the ponder loops of the tanh RNN and of the LSTM as fused Triton
    kernel_act                    kernels (optional: requirements-kernels.txt), Population(kernels=True)
    kernel_report     what each kernel uses on a GPU, compiled but not run (scripts/kernels_compile.py)
    members           what members share, and the checkpoint layout every run uses

Every member equals its run trained alone (tests/test_population*.py, test_numpy_population.py).
"""
