"""Keeping the course in order: what a maintainer runs before and after a change.

``golden`` (scripts/golden.py): every committed experiment at its shortest settings, recorded and
compared, to hold a refactor to. ``variants`` (scripts/notebook_variants.py): the notebooks under
other math kernels, and how far their checks are from failing. ``setup_cells``
(scripts/notebook_setup.py): the opened-alone lines at the top of every notebook's setup cell.

They work on the repository (``act_experiments.files.ROOT``) and its numbered notebooks
(``act_course.NOTEBOOKS``).
"""
