# Two commands: `make lab` opens the course, `make test` checks everything (CI runs this one).
# Also: `make student` (the exercises without their solutions, in build/student/), `make course` (a
# ready nbgrader course, in build/course/), `make formgrader` (nbgrader's formgrader on it),
# `make variant` (the notebooks under other math kernels), `make figures` (redraw figures/) and `make book` (the
# rendered edition, in build/book/).
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# nbval: lax mode (our checks are assert cells), the venv's own kernel, and a generous per-cell limit
NBVAL  := --nbval-lax --nbval-current-env --nbval-cell-timeout=300
# Every core, up to four: pytest-xdist runs tests and notebooks side by side, a notebook's cells in
# order in one kernel (--dist loadgroup; conftest.py groups them). `make test JOBS=1`: one worker.
JOBS   ?= $(shell python3 -c "import os; print(min(4, os.cpu_count() or 1))")
XDIST  := -n $(JOBS) --dist loadgroup

.PHONY: lab test unit notebooks exercises student course formgrader wheel variant figures book clean

$(STAMP): requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# JupyterLab on notebook 01, no browser: open the URL it prints. As root too; the next free port
# if 8888 is taken. In a container: make lab ACT_LAB_IP=0.0.0.0 (see scripts/lab.py)
lab: $(STAMP)
	$(PY) scripts/lab.py

# Everything in one pytest run on one pool of workers: the unit tests, every notebook under nbval,
# and nbgrader's passes over the course (`make exercises`).
test: $(STAMP)
	$(PY) -m pytest -q $(XDIST) $(NBVAL) tests notebooks

# The quick subset, within a minute on 2 cores: the unit tests without those marked slow (a
# subprocess, a server, a short training) and without nbgrader's passes. `make test` runs them all.
unit: $(STAMP)
	$(PY) -m pytest -q $(XDIST) -m "not graded_course and not slow" tests

# Every notebook under nbval; a graded check cell that writes to stderr fails too, as nbgrader
# scores it 0 (act_course/grading/nbval_rule.py): this run holds that the source gets every point.
notebooks: $(STAMP)
	$(PY) -m pytest -q $(XDIST) $(NBVAL) notebooks

# The student edition (build/student/, made by nbgrader: every solution and hidden test taken out).
student: $(STAMP)
	$(PY) scripts/student.py

# nbgrader's own generate_assignment and autograde, with the course's nbgrader_config.py
# (tests/test_graded_course.py): the untouched release of every assignment gets no point (a check
# that raises or writes to stderr scores 0) and every lesson cell runs in the sealed kernel (the
# source's side is `make notebooks`); the attacks of scripts/attacks.py score nothing and its honest
# answers full marks (cut-down notebooks). `scripts/student.py --check [--source]` and
# `scripts/attacks.py` do the same from the command line, with a line per notebook.
exercises: $(STAMP)
	$(PY) -m pytest -q $(XDIST) -m graded_course tests

# A ready nbgrader course in build/course/: nbgrader_config.py, one assignment per session of
# docs/teaching.md's plan (source/ and release/), figures and links that resolve inside it.
# Run again, it keeps the gradebook, submissions and grades; `make course FRESH=1` starts again.
course: $(STAMP)
	$(PY) scripts/course.py $(if $(FRESH),--fresh)

# nbgrader's formgrader on that course (or COURSE=dir), started as `make lab` starts JupyterLab:
# no browser, as root too, ACT_LAB_IP=0.0.0.0 in a container; it prints the URL to open.
formgrader: $(STAMP)
	$(PY) scripts/lab.py --course $(or $(COURSE),build/course)

# The course as one wheel (build/dist/), committed sweeps inside: what a notebook opened on its own
# installs (README, "Opened alone").
wheel: $(STAMP)
	$(PY) -m pip wheel --quiet --no-deps --no-build-isolation . --wheel-dir build/dist

# Every notebook once more under nbval, with the math libraries made to pick other kernels
# (act_course/upkeep/variants.py lists the variants); CI runs this after `make test`.
VARIANT ?= compatible
variant: $(STAMP)
	$(PY) scripts/notebook_variants.py --variant $(VARIANT)

# Redraw figures/: the sweep figures from results/, then the notebooks' own figures from their
# live runs (which differ a little from machine to machine; nothing else writes them).
figures: $(STAMP)
	$(PY) scripts/plot_architecture.py
	$(PY) scripts/plot_parity.py
	$(PY) scripts/plot_parity.py parity8_long --prefix parity_8bit
	$(PY) scripts/plot_task.py logic
	$(PY) scripts/plot_task.py addition
	$(PY) scripts/plot_task.py addition_3digit --prefix addition_3digit
	$(PY) scripts/plot_sort.py
	$(PY) scripts/plot_time_penalty.py
	$(PY) scripts/plot_characters.py
	$(PY) scripts/pondernet.py --plot pondernet8
	$(PY) scripts/pondernet.py --plot pondernet8_extrapolation
	$(PY) scripts/plot_frontier.py
	ACT_SAVE_FIGURES=1 $(PY) -m pytest -q $(NBVAL) notebooks

# The rendered edition: a static site in build/book/_build/html/ (open index.html), made by Jupyter
# Book 1 from book/_config.yml and book/_toc.yml. It runs every notebook once, in notebooks/, with
# nbval's per-cell limit; a cell error or any Sphinx warning (a broken link, say) fails it. The
# browser test (tests/test_book.py, part of `make test`) reads this build; `built` dates it.
BOOK := build/book
book: $(STAMP)
	rm -rf $(BOOK)
	mkdir -p $(BOOK)
	touch $(BOOK)/.started
	$(VENV)/bin/jupyter-book build . --config book/_config.yml --toc book/_toc.yml \
		--path-output $(BOOK) --warningiserror --keep-going
	mv $(BOOK)/.started $(BOOK)/built
	@echo "the book: $(BOOK)/_build/html/index.html"

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build
