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


def _t_library_calls(call, refused):
    """The names in `refused` of functions from outside the notebook (the course's `lib`,
    SciPy, NumPy, any installed package) that run while `call()` runs, however the student's
    code reaches them: an alias, another import name, getattr, a module attribute."""
    import sys as _t_sys

    seen = set()

    def _t_hook(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code.co_name in refused and "ipykernel_" not in code.co_filename \
                    and not code.co_filename.startswith("<"):
                seen.add(code.co_name)
        elif event == "c_call" and getattr(arg, "__name__", "") in refused:
            seen.add(arg.__name__)

    _t_old = _t_sys.getprofile()
    _t_sys.setprofile(_t_hook)
    try:
        call()
    except Exception:
        pass
    finally:
        _t_sys.setprofile(_t_old)
    return seen


_T_LOOPS = (_t_ast.For, _t_ast.AsyncFor, _t_ast.While, _t_ast.ListComp, _t_ast.SetComp,
            _t_ast.DictComp, _t_ast.GeneratorExp)
# Calls that loop in Python over their argument: a loop by another name
_T_LOOP_CALLS = {"map", "filter", "reduce", "vectorize", "frompyfunc", "apply_along_axis",
                 "apply_over_axes", "fromiter", "starmap"}


def _t_reached(trees, refused):
    """What the statements `trees` reach that the exercise forbids: refused functions called
    under another name (an alias, another import name: the name is looked up in the notebook
    and compared with the library's function), through getattr or a string naming them, and
    loops: `for`, `while`, comprehensions, the calls that loop over their argument
    (map, filter, functools.reduce, np.vectorize, np.frompyfunc, np.apply_along_axis, ...) and
    recursion, also inside the notebook's own functions they call. A set of reasons, empty if
    none."""
    import builtins as _t_builtins

    trees = trees if isinstance(trees, list) else [trees]
    reasons, todo, done = set(), [(t, None) for t in trees], set()
    env = globals()
    while todo:
        tree, own = todo.pop()
        for node in _t_ast.walk(tree):
            if isinstance(node, _T_LOOPS):
                reasons.add("a loop or comprehension")
            if isinstance(node, _t_ast.Constant) and node.value in refused:
                reasons.add(f"the name {node.value!r} (getattr or a lookup)")
            if not isinstance(node, _t_ast.Call):
                continue
            called = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if called in _T_LOOP_CALLS:
                reasons.add(f"a loop ({called})")
            if own is not None and called == own:
                reasons.add(f"a loop (recursion: {own} calls itself)")
            func, chain = node.func, []
            while isinstance(func, _t_ast.Attribute):
                chain.insert(0, func.attr)
                func = func.value
            if not isinstance(func, _t_ast.Name):
                continue
            if func.id in env:
                target = env[func.id]
            elif hasattr(_t_builtins, func.id):
                target = getattr(_t_builtins, func.id)
            else:
                continue
            try:
                for attr in chain:
                    target = getattr(target, attr)
            except AttributeError:
                continue
            target = getattr(target, "__wrapped__", target)
            target = getattr(target, "func", target)  # functools.partial
            name = getattr(target, "__name__", "")
            module = getattr(target, "__module__", "") or ""
            if name in refused and module != "__main__":
                reasons.add(f"{name} (as {func.id}{''.join('.' + a for a in chain)})")
            if name in _T_LOOP_CALLS and module != "__main__":
                reasons.add(f"a loop ({name})")
            if module == "__main__" and _t_inspect.isfunction(target) and target not in done:
                done.add(target)
                try:
                    source = _t_textwrap.dedent(_t_inspect.getsource(target))
                    todo.append((_t_ast.parse(source), target.__name__))
                except (OSError, TypeError, SyntaxError):
                    pass
    return reasons


_T_COMPARISONS = {"less", "greater", "less_equal", "greater_equal"}


def _t_compares(trees):
    """True if the trees hold a comparison: an operator (`<`, `>=`, ..., either order) or a
    NumPy comparison ufunc (np.less, np.greater_equal, their .outer, ...)."""
    trees = trees if isinstance(trees, list) else [trees]
    return any(isinstance(n, _t_ast.Compare)
               or (isinstance(n, _t_ast.Attribute) and n.attr in _T_COMPARISONS)
               or (isinstance(n, _t_ast.Name) and n.id in _T_COMPARISONS)
               for t in trees for n in _t_ast.walk(t))


def _t_stored(stmt):
    """The names a statement stores, or changes through a method call (`rows.append(...)`),
    an item or an attribute (`rows[0] = ...`), a def or an import."""
    stored = set()
    for node in _t_ast.walk(stmt):
        if isinstance(node, _t_ast.Name) and isinstance(node.ctx, (_t_ast.Store, _t_ast.Del)):
            stored.add(node.id)
        elif isinstance(node, _t_ast.Call) and isinstance(node.func, _t_ast.Attribute) \
                and isinstance(node.func.value, _t_ast.Name) \
                and not _t_inspect.ismodule(globals().get(node.func.value.id)):
            stored.add(node.func.value.id)      # rows.append(...) changes rows
        elif isinstance(node, (_t_ast.Subscript, _t_ast.Attribute)) \
                and isinstance(node.ctx, _t_ast.Store):
            root = node
            while isinstance(root, (_t_ast.Subscript, _t_ast.Attribute)):
                root = root.value
            stored.add(getattr(root, "id", ""))
        elif isinstance(node, (_t_ast.FunctionDef, _t_ast.Import, _t_ast.ImportFrom)):
            stored |= {getattr(node, "name", None)} | {
                a.asname or a.name.split(".")[0] for a in getattr(node, "names", [])}
    return stored


def _t_feeding(name):
    """The statements that compute `name`: in the last executed cell that assigns it, the one
    that assigns it and, going back, every statement that stores (or changes through a method
    call, `rows.append(...)`) a name they read; and, for a name they read that this cell does
    not store, the statements of earlier executed cells that store it, the same way (a loop
    in one cell, its result used in the next). [] if no cell assigns it. A loop that builds
    the value in another name, here or in an earlier cell, is among them; a loop that only
    checks it is not."""
    trees = []
    for source in list(globals().get("In", [])):
        try:
            trees.append(_t_ast.parse(source))
        except SyntaxError:
            continue
    _t_values, _t_tree = _t_assignment(name)
    if _t_tree is None:
        return []
    index = max(i for i, t in enumerate(trees) if _t_ast.dump(t) == _t_ast.dump(_t_tree))
    needed, found, resolved = {name}, [], set()
    body = list(_t_tree.body)
    while body and not any(isinstance(n, _t_ast.Name) and n.id == name
                           and isinstance(n.ctx, _t_ast.Store) for n in _t_ast.walk(body[-1])):
        body.pop()      # what comes after the last statement that stores it
    for stmt in reversed(body):
        stored = _t_stored(stmt)
        if stored & needed:
            found.append(stmt)
            resolved |= stored
            needed |= _t_names(stmt) | stored
    unresolved = needed - resolved
    for tree in reversed(trees[:index]):      # earlier cells: only what is still unresolved
        for stmt in reversed(tree.body):
            stored = _t_stored(stmt)
            if stored & unresolved:
                found.append(stmt)
                unresolved = (unresolved - stored) | (_t_names(stmt) - stored - resolved)
                resolved |= stored
        if not unresolved:
            break
    return found[::-1]
