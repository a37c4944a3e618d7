"""A notebook's lesson, as the judge runs it: the cells an answer's values or a check's tests need.

An exercise of 01-04 is worked out from the notebook's own inputs (``x``, ``P``, ``halts``...) and
its own helpers (``numerical_gradient``, ``ponder_forward``...), which the lesson's cells make.
The judge runs those cells again, twice and apart: in the answer's process (runner.py), before the
answer cells, so that the answer's statements find what they found in the kernel; and in a process
of the judge's own (replay.py), before the check cell's tests, so that the tests find it too. Both
run only the cells that are needed (``needed``): a lesson cell is run when it binds a name that a
later cell run reads, so that the figures and the long demonstrations are left out.
"""

import ast
import re

SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION.*?### END SOLUTION[^\n]*", flags=re.S | re.M)


def cell_role(cell):
    """"solution" for an answer cell, "check" for a graded check cell, None for the lesson's own."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    if meta.get("solution") and not meta.get("grade"):
        return "solution"
    if meta.get("grade") and not meta.get("solution"):
        return "check"
    return None


def source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def learners_own(cell, lesson):
    """Whether a code cell is one the learner added or changed: no nbgrader role, not blank, and not
    one of the ``lesson``'s cells (their stripped sources)."""
    code = source(cell).strip()
    return not cell.get("metadata", {}).get("nbgrader") and bool(code) and code not in lesson


def release_form(code):
    """A solution cell's code as the release gives it, its answer taken out: the names the task
    hands the learner (``cases``, ``params_rnn``...), set as the teacher wrote them."""
    return SOLUTION.sub(lambda m: m.group(1) + "pass", code)


def as_released(cell):
    """A solution cell's code as nbgrader's generate_assignment releases it (its ClearSolutions, with
    the default stub: ``# YOUR CODE HERE`` and ``raise NotImplementedError()``), or None where
    nbgrader cannot make it. A course whose nbgrader_config.py changes the stub releases other code,
    which this one does not match: its answers are all judged the long way."""
    try:
        import copy

        import nbformat
        from nbgrader.preprocessors import ClearSolutions
        made = nbformat.from_dict(copy.deepcopy(dict(cell, source=source(cell))))
        ClearSolutions().preprocess_cell(made, {"language": "python"}, 0)
        return made.source
    except Exception:                                           # noqa: BLE001 (judged the long way)
        return None


def _target_names(node, changed):
    """The names a target binds (``a``, and those of a tuple) or, with ``changed``, changes
    (``a[k] = ...``, ``a.b = ...`` change ``a``)."""
    if isinstance(node, ast.Starred):
        return _target_names(node.value, changed)
    if isinstance(node, (ast.Subscript, ast.Attribute)):
        while isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        return {node.id} if changed and isinstance(node, ast.Name) else set()
    if isinstance(node, ast.Name):
        return set() if changed else {node.id}
    if isinstance(node, (ast.Tuple, ast.List)):
        return set().union(set(), *(_target_names(e, changed) for e in node.elts))
    return set()


def _scoped(node):
    """Names that a statement binds for its own use: loop and comprehension variables, and the
    arguments and local names of its functions and lambdas."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.For, ast.AsyncFor, ast.comprehension)):
            found |= _target_names(sub.target, False)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found |= {a.arg for a in ast.walk(sub.args) if isinstance(a, ast.arg)}
            if not isinstance(sub, ast.Lambda):
                found |= {n.id for n in ast.walk(sub) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return found


def _reads(node):
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


def _changes(node):
    """Names assigned or changed inside a compound statement (a loop's body, say), not in functions."""
    found = set()
    for sub in ast.walk(node):
        if sub is not node and isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                found |= _target_names(target, True) | _target_names(target, False)
        elif isinstance(sub, ast.AugAssign):
            found |= _target_names(sub.target, True) | _target_names(sub.target, False)
    return found


def _read_first(body, bound):
    """(read, bound after) of the statements ``body``, given the names ``bound`` before them: the
    names they read before binding them, in the order Python runs them (an assignment's value
    before its targets; a loop's iterable, then its target, then its body, statement by statement),
    so that ``p, q = ...`` inside a loop, read later in that loop, asks no earlier cell for a ``p``.
    What a loop's body binds does not count after it (the body may not run), nor what one branch
    of an ``if`` binds alone; a ``with`` binds its names and its body's; other compound statements
    read every name they hold."""
    read, bound = set(), set(bound)
    for node in body:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            inner, _ = _read_first(node.body, bound | _target_names(node.target, False))
            after, _ = _read_first(node.orelse, bound)
            read |= (_reads(node.iter) - _scoped(node.iter) | _reads(node.target) | inner | after) - bound
        elif isinstance(node, ast.If):
            (yes, bound_yes), (no, bound_no) = _read_first(node.body, bound), _read_first(node.orelse, bound)
            read |= (_reads(node.test) - _scoped(node.test) | yes | no) - bound
            bound |= bound_yes & bound_no
        elif isinstance(node, (ast.With, ast.AsyncWith)):          # its body runs: what it binds counts after
            opened = set().union(*(_target_names(i.optional_vars, False) for i in node.items if i.optional_vars))
            inner, bound_inner = _read_first(node.body, bound | opened)
            entered = set().union(*(_reads(i.context_expr) - _scoped(i.context_expr) for i in node.items))
            read |= (entered | inner) - bound
            bound |= opened | bound_inner
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            read |= (_reads(node.value) - _scoped(node.value) | set().union(*(_reads(t) for t in targets))) - bound
            bound |= set().union(*(_target_names(t, False) for t in targets))
        else:
            read |= _reads(node) - _scoped(node) - bound
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return read, bound


def _statement(node):
    """(bound, changed, read) of one top-level statement: the names it binds anew, those it
    changes in place (an item, an attribute, ``+=``, a method call such as ``table.append``), and
    every name it reads before binding it (``_read_first``), in functions' bodies too. A top-level
    call of a method, such as ``table.append(row)``, counts as a change of ``table``."""
    bound, changed = set(), set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        bound.add(node.name)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
            bound |= _target_names(target, False)
            changed |= _target_names(target, True)
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        bound |= _target_names(node.target, False)
    read, changed = _read_first([node], set())[0], changed | _changes(node)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        changed |= _target_names(node.value.func.value, True) | _target_names(node.value.func.value, False)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        changed = set()                 # what a function's body binds is its own
    return bound, changed - bound, read


def names(code):
    """(bound, changed, free) of a cell's top-level statements: the names it binds, those it
    changes in place, and those it reads before binding them itself. Empty sets when it does not
    parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set(), set(), set()
    bound, changed, free = set(), set(), set()
    for node in tree.body:
        b, c, r = _statement(node)
        free |= r - bound
        bound |= b
        changed |= c
    return bound, changed, free


def _imported(code):
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {(a.asname or a.name).split(".")[0] for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            for a in node.names}


def needed(codes, must):
    """The indexes of ``codes`` (cells' code, in order) to run so that the cells at the indexes
    ``must`` find every name they read: those cells, and each earlier cell that binds or changes
    a name read by a later cell that is run."""
    found = [names(code) for code in codes]
    modules = set().union(set(), *(_imported(code) for code in codes))     # plt.show() changes no plt
    keep, wanted = set(), set()
    for index in range(len(codes) - 1, -1, -1):
        bound, changed, free = found[index]
        changed = changed - modules
        if index in must or (bound | changed) & wanted:
            keep.add(index)
            wanted = (wanted - bound) | free | (changed & wanted)
    return sorted(keep)


def without_unread_imports(codes, lesson):
    """``codes`` with the imports of the cells at the indexes ``lesson`` that bind no name any of
    ``codes`` reads taken out (a setup cell's PyTorch, when nothing run reads it): the same
    cells, started sooner."""
    read = set()
    for code in codes:
        try:
            read |= _reads(ast.parse(code))
        except SyntaxError:
            continue
    trimmed = []
    for index, code in enumerate(codes):
        if index not in lesson:
            trimmed.append(code)
            continue
        try:
            tree = ast.parse(code)
        except SyntaxError:
            trimmed.append(code)
            continue
        kept = [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))
                or {(a.asname or a.name).split(".")[0] for a in node.names} & read]
        trimmed.append(ast.unparse(ast.Module(body=kept, type_ignores=[])))
    return trimmed
