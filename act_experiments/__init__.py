"""The experiment side of the course, shared by the NumPy and PyTorch backends.

``tasks``, ``text``: the paper's four synthetic tasks and the character corpus (the data).
``training``: one training loop for both backends (options, defaults, logs, checkpoints).
``figures``: where figures are written. ``course``: what every notebook's setup and check cells
use (the settings a learner or CI may change from outside, and checks that record their margin).
"""
