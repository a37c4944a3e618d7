"""A notebook opened on its own (Colab, a hosted Jupyter, a JupyterHub) installs the course and
finds the committed sweeps inside the installed package."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from act_course import course
from act_course.upkeep import setup_cells as notebook_setup
from act_experiments import tables
from act_experiments.sweeps import reading

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))




@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_notebook_opens_on_a_collapsed_install_cell_then_its_setup_cell(path):
    """The first code cell holds the opened-alone lines alone, collapsed in JupyterLab through its
    metadata; the setup cell after it starts with the notebook's real imports."""
    nb = json.loads(path.read_text())
    install = notebook_setup.install_cell(nb)
    assert install is not None, f"{path.name}: run `python scripts/notebook_setup.py` to write the install cell"
    assert "".join(install["source"]) == course.OPENED_ALONE.rstrip("\n")
    assert install["metadata"].get("jupyter", {}).get("source_hidden") is True, f"{path.name}: install cell not collapsed"
    setup = notebook_setup.setup_cell(nb)
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    assert code[:2] == [install, setup]
    assert not "".join(setup["source"]).startswith(notebook_setup.FIRST)
    assert "".join(setup["source"]).lstrip().startswith(("import", "from", "%"))
    assert "jupyter" not in setup["metadata"], f"{path.name}: the setup cell should stay open"


def test_writing_the_install_cell_twice_changes_nothing_and_moves_older_lines_out():
    older = {"cells": [{"cell_type": "markdown", "id": "t", "metadata": {}, "source": ["# Title"]},
                       {"cell_type": "code", "id": "s", "metadata": {}, "outputs": [], "execution_count": None,
                        "source": (course.OPENED_ALONE + "\nimport numpy as np\n").splitlines(keepends=True)}]}
    once = notebook_setup.with_install_cell(json.loads(json.dumps(older)))
    assert [c.get("id") for c in once["cells"]] == ["t", notebook_setup.INSTALL_ID, "s"]
    assert "".join(once["cells"][2]["source"]) == "import numpy as np\n"
    assert notebook_setup.opening_cells(once) == once["cells"][1:]
    twice = notebook_setup.with_install_cell(json.loads(json.dumps(once)))
    assert twice == once
    reworded = json.loads(json.dumps(once))
    reworded["cells"][1]["source"] = [notebook_setup.FIRST + "\n", "print('an older wording')\n"]
    again = notebook_setup.with_install_cell(reworded)
    assert len(again["cells"]) == 3 and "".join(again["cells"][1]["source"]) == course.OPENED_ALONE.rstrip("\n")
    # a first line reworded too: the cell is still the install cell, by its id
    reworded["cells"][1]["source"] = ["# An older first line\n", "import sys\n"]
    again = notebook_setup.with_install_cell(reworded)
    assert len(again["cells"]) == 3 and "".join(again["cells"][1]["source"]) == course.OPENED_ALONE.rstrip("\n")


class Pip:
    """Stands in for subprocess.run: records each pip command and answers with `returncode`."""

    def __init__(self, returncode=0):
        self.returncode, self.commands = returncode, []

    def __call__(self, command, **kwargs):
        self.commands.append(command)
        return subprocess.CompletedProcess(command, self.returncode)


def run_opened_alone(monkeypatch, tmp_path, pip, installed=False, source=None):
    """Run the opened-alone lines in `tmp_path` as a kernel without (or with) the course would."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(subprocess, "run", pip)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: (real(name, *a) if installed else None) if name == "act_course"
                        else real(name, *a))
    if source is None:
        monkeypatch.delenv("ACT_COURSE", raising=False)
    else:
        monkeypatch.setenv("ACT_COURSE", source)
    exec(course.OPENED_ALONE, {})


def test_an_installed_course_is_left_alone(monkeypatch, tmp_path):
    pip = Pip()
    run_opened_alone(monkeypatch, tmp_path, pip, installed=True)
    assert pip.commands == []


def test_a_wheel_beside_the_notebook_is_installed_first(monkeypatch, tmp_path):
    (tmp_path / "act_course-0.1.0-py3-none-any.whl").write_bytes(b"")
    pip = Pip()
    run_opened_alone(monkeypatch, tmp_path, pip, source="act-course @ git+https://example.org/act")
    assert pip.commands == [[sys.executable, "-m", "pip", "install", "--quiet", "act_course-0.1.0-py3-none-any.whl"]]


def test_without_a_wheel_the_act_course_source_is_installed(monkeypatch, tmp_path):
    pip = Pip()
    run_opened_alone(monkeypatch, tmp_path, pip, source="act-course @ git+https://example.org/act")
    assert pip.commands[0][-1] == "act-course @ git+https://example.org/act"


@pytest.mark.parametrize("source, returncode", [(None, 0), ("act-course @ git+https://example.org/act", 1)])
def test_with_nothing_to_install_or_no_network_it_says_what_to_do(monkeypatch, tmp_path, source, returncode):
    with pytest.raises(SystemExit, match=r"The course is not installed here\. Put act_course-\*\.whl"):
        run_opened_alone(monkeypatch, tmp_path, Pip(returncode), source=source)


def test_committed_results_are_results_in_a_clone_and_the_packaged_copy_elsewhere(tmp_path):
    assert tables.RESULTS == ROOT / "results"
    package = tmp_path / "site-packages" / "act_experiments"
    package.mkdir(parents=True)
    assert tables.committed_results(package) == package / "committed"


@pytest.mark.slow
def test_the_wheel_carries_the_committed_sweeps_and_every_subpackage(tmp_path):
    """Built from this checkout and installed into a folder of its own, the course reads the
    committed sweeps from inside itself, as in a hosted Jupyter."""
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", str(ROOT),
             "--wheel-dir", str(wheels)]
    subprocess.run(build, check=True, capture_output=True, cwd=tmp_path)
    [wheel] = wheels.glob("act_course-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    probe = ("import act_experiments.sweeps.reading as r, act_experiments.experiments.parity as p\n"
             "import act_experiments.tables as t\n"
             "import act_course.course, act_course.grading.judge, act_course.upkeep.setup_cells as s\n"
             "print(t.RESULTS)\n"
             "print(len(r.find_sweeps(verbose=False)), p.largest_sweep())\n"
             "print(s.__file__)\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    where, counts, course_module = done.stdout.splitlines()
    assert Path(where) == site / "act_experiments" / "committed"
    assert (Path(where) / "parity16_measured" / "weights.npz").is_file()        # notebook 15's shuffle probe
    assert Path(course_module) == site / "act_course" / "upkeep" / "setup_cells.py"
    found, largest = counts.split()
    assert int(found) == len(reading.find_sweeps(verbose=False))
    assert largest == __import__("act_experiments.experiments.parity", fromlist=["x"]).largest_sweep()
