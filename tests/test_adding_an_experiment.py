"""docs/adding_an_experiment.md names real things: every experiment module with its SCRIPT and the
signatures of run, read and plot as the code has them, and every file, test and name it cites."""

import importlib
import inspect
import re
from pathlib import Path

from act_experiments.experiments import registry

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "adding_an_experiment.md").read_text(encoding="utf-8")
# the book's page lists the registry's modules (that the registry holds every module of the folder is
# tests/test_experiment_contract.py's to check)
EXPERIMENTS = sorted(registry.modules())
# the short module names the doc uses, and where they live
SHORT = {**{name: f"act_experiments.experiments.{name}" for name in EXPERIMENTS + ["runner", "registry"]},
         "reading": "act_experiments.sweeps.reading", "launch": "act_experiments.sweeps.launch",
         "experiment": "act_experiments.sweeps.experiment"}


def table_rows():
    """{module: (SCRIPT, run, read, plot)} from the table of the four functions."""
    rows = {}
    for line in DOC.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].startswith("scripts/"):
            rows[cells[0]] = tuple(cells[1:])
    return rows


def parameters(written):
    """[(name, has a default)] of a signature as the doc writes it: run(name, seeds=None, ...)."""
    inside = written[written.index("(") + 1:written.rindex(")")]
    return [(p.split("=")[0].strip(), "=" in p) for p in inside.split(",") if p.strip()]


def test_the_table_holds_every_experiment_module_with_its_script_and_signatures():
    rows = table_rows()
    assert sorted(rows) == EXPERIMENTS
    for name, (script, *functions) in rows.items():
        module = importlib.import_module(f"act_experiments.experiments.{name}")
        assert module.SCRIPT == script and (ROOT / script).is_file(), name
        for written in functions:
            actual = inspect.signature(getattr(module, written.split("(")[0])).parameters.values()
            assert parameters(written) == [(p.name, p.default is not p.empty) for p in actual], f"{name}: {written}"


def test_every_file_and_test_the_doc_cites_exists():
    cited = set(re.findall(r"`([^`\s]+)`", DOC))
    files = {c.split("::")[0] for c in cited if "/" in c and not re.search(r"[<*]|^/tmp|^-", c)
             and re.search(r"\.\w+(::\w+)?$", c)}
    assert files and all((ROOT / f).is_file() for f in files), sorted(f for f in files if not (ROOT / f).is_file())
    tests = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("test_*.py"))
    named = {c.split("::")[-1] for c in cited if re.fullmatch(r"(tests/\w+\.py::)?test_\w+", c)}
    assert named and all(f"def {t}(" in tests for t in named), sorted(t for t in named if f"def {t}(" not in tests)


def test_every_module_attribute_the_doc_names_exists():
    checked = 0
    for dotted in sorted(set(re.findall(r"`(act_\w+(?:\.\w+)+|\w+\.\w+)[`(]", DOC))):
        head, _, attribute = dotted.rpartition(".")
        module = SHORT.get(head, head if head.startswith("act_") else None)
        if module is None or attribute in ("py", "md", "csv", "json", "png", "npz", "toml"):
            continue            # sys.exit, re.sub, a file name
        try:
            importlib.import_module(dotted)                 # a module
        except ModuleNotFoundError:
            assert hasattr(importlib.import_module(module), attribute), dotted
        checked += 1
    assert checked >= 20
