"""Helpers for the question files: scripts/assignments.py pastes the code below this
docstring into every test cell that calls one of them (a test runs in the student's notebook,
alone: public tests in `grader.check`, all of them under `otter run`).
"""
import ast as _t_ast
import inspect as _t_inspect
import textwrap as _t_textwrap


def _t_calls(tree):
    """Every name called in an ast tree (or a list of trees): f(...) gives 'f',
    np.linalg.f(...) gives 'f'."""
    names = set()
    trees = tree if isinstance(tree, list) else [tree]
    for node in (n for t in trees for n in _t_ast.walk(t)):
        if isinstance(node, _t_ast.Call):
            func = node.func
            names.add(getattr(func, "id", getattr(func, "attr", "")))
    return names


def _t_own_function(func, refused):
    """None if `func` is the student's own function that calls none of `refused`;
    otherwise the reason it is not."""
    module = getattr(func, "__module__", "") or ""
    if not callable(func) or module.startswith(("lib", "scipy", "numpy")):
        return "it is not a function of your own (it is another library's function)"
    try:
        tree = _t_ast.parse(_t_textwrap.dedent(_t_inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return "its source cannot be read: define it with def in a cell"
    called = _t_calls(tree) & set(refused)
    if called:
        return "it calls " + ", ".join(sorted(called))
    return None


def _t_assignment(name):
    """The value expressions (ast nodes, in order) of the statements that assign `name` in
    the last executed cell that assigns it, found in IPython's record of executed cells
    (`In`), and that cell's tree; ([], None) if no cell assigns it."""
    for source in reversed(list(globals().get("In", []))):
        try:
            tree = _t_ast.parse(source)
        except SyntaxError:
            continue
        found = []
        for node in _t_ast.walk(tree):
            if isinstance(node, (_t_ast.Assign, _t_ast.AugAssign, _t_ast.AnnAssign)):
                targets = node.targets if isinstance(node, _t_ast.Assign) else [node.target]
                for target in targets:
                    if name in {getattr(t, "id", None) for t in _t_ast.walk(target)}:
                        found.append(node.value)
        if found:
            return found, tree
    return [], None


def _t_names(tree):
    """Every name read in an ast tree (or a list of trees)."""
    trees = tree if isinstance(tree, list) else [tree]
    return {n.id for t in trees for n in _t_ast.walk(t) if isinstance(n, _t_ast.Name)}
