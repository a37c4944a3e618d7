# Two commands: `make lab` opens the course, `make test` checks everything (CI runs this one).
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# nbval: lax mode (our checks are assert cells), the venv's own kernel, and a generous per-cell limit
NBVAL  := --nbval-lax --nbval-current-env --nbval-cell-timeout=300

.PHONY: lab test unit notebooks clean

$(STAMP): requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/01_forward_pass.ipynb

test: unit notebooks

unit: $(STAMP)
	$(PY) -m pytest -q tests

notebooks: $(STAMP)
	$(PY) -m pytest -q $(NBVAL) notebooks

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
