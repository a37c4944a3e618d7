"""Imports go one way: each package loads only the layers below it, and no modules import in a circle.

    act_numpy  ->  act_torch  ->  act_engine  ->  act_beyond  ->  act_experiments  ->  act_course
        ->  scripts, notebooks

act_numpy is the paper for one network in NumPy alone; act_torch its autograd twin; act_engine
runs K of them stacked; act_beyond builds ACT's descendants on those; act_experiments holds the
data, the training loop, sweeps and one module per experiment; act_course the course's own
machinery, which runs no experiment (grading, upkeep, the lab, what the notebooks share). Two
checks, both needed:
- each package, imported whole in a fresh interpreter, has loaded no package above it (what runs);
- every import statement, also those inside functions, names no layer above its own, and the
  project's modules import each other in no circle (what is written).
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("act_numpy", "act_torch", "act_engine", "act_beyond", "act_experiments", "act_course")
# what each package may load besides the layers below it and the standard library
THIRD_PARTY = {"act_numpy": {"numpy"}}


def modules():
    """{dotted module name: path} for every module of the six packages."""
    found = {}
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name, path):
    """The project modules and the top-level packages that the file imports, anywhere in it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            names.add(target)
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def layer(name):
    top = name.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else None


def test_no_import_statement_names_a_layer_above():
    above = []
    for name, path in modules().items():
        own = layer(name)
        for target in imported(name, path):
            other = layer(target)
            if other is not None and other > own:
                above.append(f"{path.relative_to(ROOT)} imports {target}")
    assert not above, "imports that run up the layers:\n" + "\n".join(sorted(set(above)))


def test_the_core_imports_numpy_and_the_standard_library_only():
    stdlib = set(sys.stdlib_module_names)
    for package, allowed in THIRD_PARTY.items():
        for name, path in modules().items():
            if layer(name) != LAYERS.index(package):
                continue
            foreign = {t.split(".")[0] for t in imported(name, path)} - stdlib - allowed - {package}
            assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}"


def test_no_modules_import_each_other_in_a_circle():
    mods = modules()
    graph = {name: {t for t in imported(name, path) if t in mods and t != name} for name, path in mods.items()}
    # a package's __init__ importing its own modules is not a circle of two modules
    for name in graph:
        graph[name] = {t for t in graph[name] if not (mods[name].name == "__init__.py" and t.startswith(name + "."))
                       and not (mods[t].name == "__init__.py" and name.startswith(t + "."))}
    seen, stack, cycles = set(), [], []

    def visit(node):
        if node in stack:
            cycles.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(graph[node]):
            visit(nxt)
        stack.pop()

    for node in sorted(graph):
        visit(node)
    assert not cycles, "modules that import each other in a circle:\n" + "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.slow
@pytest.mark.parametrize("package", LAYERS)
def test_a_package_loaded_alone_loads_no_layer_above(package):
    """What actually runs: every module of the package imported in a fresh interpreter."""
    above = [p for p in LAYERS if LAYERS.index(p) > LAYERS.index(package)]
    forbidden = above + (["torch", "matplotlib", "tqdm"] if package == "act_numpy" else [])
    code = (
        "import importlib, pkgutil, sys\n"
        f"m = importlib.import_module({package!r})\n"
        f"for info in pkgutil.walk_packages(m.__path__, {package!r} + '.'):\n"
        "    importlib.import_module(info.name)\n"
        f"print(sorted({{n.split('.')[0] for n in sys.modules}} & set({forbidden!r})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", f"{package} loads {done.stdout.strip()}"


# Modules are split by job, not by line count: one over 500 lines is listed here with the reason
# it stays whole. Listed modules must still be over 500 lines (a stale entry fails).
LONG_MODULES = {
    "act_experiments/experiments/pondernet.py":
        "one experiment whole: the comparison that trains ACT and PonderNet, its tables, its command "
        "line and the figures that read those tables (split, the figures were a module kept apart "
        "only for its length)",
}


def test_no_module_or_function_is_oversized():
    """Small modules with one job: none over 500 lines unless listed in LONG_MODULES with its
    reason, no function over 80."""
    big, long_ones = [], set()
    for name, path in modules().items():
        text = path.read_text()
        lines = text.count("\n")
        where = path.relative_to(ROOT).as_posix()
        if lines > 500:
            long_ones.add(where)
            if where not in LONG_MODULES:
                big.append(f"{where}: {lines} lines (split it by job, or list it in LONG_MODULES with its reason)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 80:
                    big.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length} lines")
    assert not big, "too large:\n" + "\n".join(big)
    stale = sorted(set(LONG_MODULES) - long_ones)
    assert not stale, f"listed in LONG_MODULES but not over 500 lines: {stale}"
    assert all(len(reason) > 40 for reason in LONG_MODULES.values()), "every long module needs its reason"


def test_every_script_is_its_docstring_and_a_call():
    """scripts/*.py are thin: the usage lines users read, then a main of the package called. The logic
    lives in the package, where the layers above hold it (nbgrader_config.py is nbgrader's own file)."""
    thick = []
    for path in sorted((ROOT / "scripts").glob("*.py")):
        if path.name == "nbgrader_config.py":
            continue
        tree = ast.parse(path.read_text())
        body = tree.body[1:] if tree.body and isinstance(tree.body[0], ast.Expr) else tree.body
        kinds = [type(node).__name__ for node in body]
        if not set(kinds) <= {"Import", "ImportFrom", "If"} or len(body) > 4:
            thick.append(f"{path.relative_to(ROOT)}: {', '.join(kinds)}")
    assert not thick, "scripts with logic of their own:\n" + "\n".join(thick)
