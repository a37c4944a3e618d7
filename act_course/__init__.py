"""The course's own machinery, one layer above the experiments: it runs no experiment.

``course``: what every notebook's setup and check cells use (``ACT_SEED``, ``ACT_FULL``, ``check``,
``answered``, the opened-alone lines). ``grading``: grading the exercises, the student edition and
the nbgrader course. ``upkeep``: keeping the course in order (``golden`` outputs, notebook
``variants``, the notebooks' ``setup_cells``). ``lab``: JupyterLab on the course.

It may import act_experiments and the layers below; nothing below imports it (tests/test_layers.py).
``NOTEBOOKS`` are the repository's numbered notebooks, which grading and upkeep both work on
(none in an installed copy).
"""

from act_experiments.files import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
