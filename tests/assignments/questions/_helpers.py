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
            while isinstance(func, _t_ast.Attribute):     # np.logaddexp.reduce: logaddexp
                func = func.value
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
    chosen = [n for n in _t_ast.walk(tree) if isinstance(n, _t_ast.Call)
              and not isinstance(n.func, (_t_ast.Name, _t_ast.Attribute))]
    if chosen:
        return ("it calls a function chosen by an expression ("
                + _t_ast.unparse(chosen[0].func)[:40] + "), which the checks cannot name")
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
    return _t_profiled(call, refused)[1]


def _t_profiled(call, refused):
    """(what `call()` returns, or the exception it raises; _t_library_calls's set). A check
    compares the value of this very call, so that an answer cannot call the library on the
    calls the checks compare and not on the one they profile (a cache, a shape it expects)."""
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
        value = call()
    except Exception as error:
        value = error
    finally:
        _t_sys.setprofile(_t_old)
    return value, seen


_T_LOOPS = (_t_ast.For, _t_ast.AsyncFor, _t_ast.While, _t_ast.ListComp, _t_ast.SetComp,
            _t_ast.DictComp, _t_ast.GeneratorExp)
# Calls that loop in Python over their argument: a loop by another name
_T_LOOP_CALLS = {"map", "filter", "reduce", "vectorize", "frompyfunc", "apply_along_axis",
                 "apply_over_axes", "fromiter", "starmap", "accumulate", "takewhile",
                 "dropwhile", "filterfalse", "groupby"}
# Calls that loop over their argument when given a function: a key, a replacement, a sentinel
_T_KEY_CALLS = {"sorted", "sort", "min", "max", "nsmallest", "nlargest"}


def _t_ufunc_method(node, env):
    """True for np.<ufunc>.reduce or .accumulate (`np.logical_or.reduce`): NumPy's own loop
    in C, not a Python loop."""
    if not (isinstance(node, _t_ast.Attribute) and node.attr in ("reduce", "accumulate")):
        return False
    root = node.value
    while isinstance(root, _t_ast.Attribute):
        root = root.value
    module = env.get(getattr(root, "id", ""))
    return _t_inspect.ismodule(module) and module.__name__ == "numpy"


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
    calls = {}      # the notebook's functions: each one's own functions it calls
    env = globals()
    while todo:
        tree, own_function = todo.pop()
        own = getattr(own_function, "__name__", None)
        for node in _t_ast.walk(tree):
            if isinstance(node, _T_LOOPS):
                reasons.add("a loop or comprehension")
            if isinstance(node, _t_ast.Constant) and node.value in refused:
                reasons.add(f"the name {node.value!r} (getattr or a lookup)")
            # a loop function read, called or not: `m = map`, a default argument `m=map`
            if isinstance(node, _t_ast.Name) and node.id in _T_LOOP_CALLS:
                reasons.add(f"a loop ({node.id})")
            if isinstance(node, _t_ast.Attribute) and node.attr in _T_LOOP_CALLS \
                    and not _t_ufunc_method(node, env):
                reasons.add(f"a loop ({node.attr})")
            if not isinstance(node, _t_ast.Call):
                continue
            if _t_ufunc_method(node.func, env):
                continue
            called = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if called in _T_LOOP_CALLS:
                reasons.add(f"a loop ({called})")
            if called in _T_KEY_CALLS and any(k.arg == "key" for k in node.keywords):
                reasons.add(f"a loop ({called} with a key function)")
            if (called == "iter" and len(node.args) == 2) or (
                    called in ("sub", "subn") and len(node.args) >= 2
                    and not isinstance(node.args[1], _t_ast.Constant)):
                reasons.add(f"a loop ({called} calling a function)")
            if called in refused:
                reasons.add(f"{called} (a call by that name)")
            if not isinstance(node.func, (_t_ast.Name, _t_ast.Attribute)):
                # `[map][0](...)`, `(lambda: f)()(...)`, `d["k"](...)`: a function chosen by
                # an expression, which the checks cannot name
                reasons.add("a function reached through an expression "
                            f"({_t_ast.unparse(node.func)[:40]})")
            if own is not None and called == own:
                reasons.add(f"a loop (recursion: {own} calls itself)")
            if own_function is not None and isinstance(node.func, _t_ast.Name) \
                    and node.func.id in _t_inspect.signature(own_function).parameters:
                # a function given as an argument: it may be the function itself
                reasons.add(f"a function passed as an argument ({node.func.id}), which may "
                            "be recursion")
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
            if module == "__main__" and _t_inspect.isfunction(target):
                calls.setdefault(own_function, set()).add(target)
                if target not in done:
                    done.add(target)
                    try:
                        source = _t_textwrap.dedent(_t_inspect.getsource(target))
                        todo.append((_t_ast.parse(source), target))
                    except (OSError, TypeError, SyntaxError):
                        pass
    # recursion through others (f calls g, g calls f) or a lambda calling its own name
    for start in [f for f in calls if f is not None]:
        seen, stack = set(), list(calls.get(start, ()))
        while stack:
            f = stack.pop()
            if f is start:
                reasons.add(f"a loop (recursion: {start.__name__} calls itself, maybe "
                            "through another function)")
                break
            if f not in seen:
                seen.add(f)
                stack.extend(calls.get(f, ()))
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
                and node.func.attr in _T_MUTATORS \
                and isinstance(node.func.value, _t_ast.Name) \
                and not _t_inspect.ismodule(globals().get(node.func.value.id)):
            stored.add(node.func.value.id)      # rows.append(...) changes rows, .sum() not
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


def _t_free_names(stmt):
    """The names a statement reads from outside it: every name read, but a lambda's or a
    nested function's parameters and a comprehension's variables."""
    bound = set()
    for node in _t_ast.walk(stmt):
        if isinstance(node, (_t_ast.Lambda, _t_ast.FunctionDef, _t_ast.AsyncFunctionDef)):
            args = node.args
            bound |= {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs,
                                      *filter(None, [args.vararg, args.kwarg])]}
        elif isinstance(node, _t_ast.comprehension):
            bound |= {n.id for n in _t_ast.walk(node.target) if isinstance(n, _t_ast.Name)}
    return _t_names(stmt) - bound


# methods and functions that change an array or a list in place
_T_MUTATORS = {"fill", "sort", "put", "itemset", "resize", "setfield", "partition", "append",
               "extend", "insert", "pop", "remove", "clear", "update", "add", "setdefault",
               "copyto", "place", "putmask", "fill_diagonal", "put_along_axis", "at",
               "shuffle"}


def _t_aliases(stmt, tainted):
    """The names a statement binds to a value read from `tainted` (`v = window[:]`, a loop's
    `row` over `window`, ...)."""
    found = set()
    for _ in range(2):
        for node in _t_ast.walk(stmt):
            pairs = []
            if isinstance(node, _t_ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, (_t_ast.For, _t_ast.AsyncFor, _t_ast.comprehension)):
                pairs = [(node.target, node.iter)]
            elif isinstance(node, _t_ast.NamedExpr):
                pairs = [(node.target, node.value)]
            elif isinstance(node, _t_ast.withitem) and node.optional_vars is not None:
                pairs = [(node.optional_vars, node.context_expr)]
            for target, value in pairs:
                if _t_names(value) & (tainted | found):
                    found |= {n.id for n in _t_ast.walk(target) if isinstance(n, _t_ast.Name)}
    return found


def _t_mutates(stmt, tainted):
    """True if the statement changes a value of `tainted` in place: an item or attribute
    stored, an augmented assignment, a method or a function that changes its argument."""
    for node in _t_ast.walk(stmt):
        if isinstance(node, (_t_ast.Subscript, _t_ast.Attribute)) \
                and isinstance(node.ctx, _t_ast.Store):
            root = node
            while isinstance(root, (_t_ast.Subscript, _t_ast.Attribute)):
                root = root.value
            if getattr(root, "id", None) in tainted:
                return True
        if isinstance(node, _t_ast.Call):
            func = node.func
            if isinstance(func, _t_ast.Attribute) and func.attr in _T_MUTATORS \
                    and getattr(func.value, "id", None) in tainted:
                return True
            called = getattr(func, "id", getattr(func, "attr", ""))
            if called in _T_MUTATORS and node.args and _t_names(node.args[0]) & tainted:
                return True
            if any(k.arg == "out" and _t_names(k.value) & tainted for k in node.keywords):
                return True
            # a ufunc's output by position: np.logical_or(a, b, window)
            target = func
            chain = []
            while isinstance(target, _t_ast.Attribute):
                chain.insert(0, target.attr)
                target = target.value
            ufunc = globals().get(getattr(target, "id", ""))
            for attr in chain:
                ufunc = getattr(ufunc, attr, None)
            nin = getattr(ufunc, "nin", None)
            if isinstance(nin, int) and type(ufunc).__name__ == "ufunc" \
                    and any(_t_names(a) & tainted for a in node.args[nin:]):
                return True
    return False


def _t_assigns(tree, name):
    """True if a cell's tree assigns `name` (as _t_assignment reads it)."""
    for node in _t_ast.walk(tree):
        if isinstance(node, (_t_ast.Assign, _t_ast.AugAssign, _t_ast.AnnAssign)):
            targets = node.targets if isinstance(node, _t_ast.Assign) else [node.target]
            if any(name in {getattr(t, "id", None) for t in _t_ast.walk(target)}
                   for target in targets):
                return True
    return False


def _t_cell_feeding(tree, name):
    """The statements of one cell that compute `name`, and the names they read that the cell
    does not store before them. Picked: the statements that store `name`, those after the
    first that change it or an alias of it in place (`window[i] = ...` in a loop,
    `v = by_hand[:]` then `v[...] = ...`), and, going back, every statement that stores a
    name the picked ones read."""
    body = list(tree.body)
    picked, tainted = set(), {name}
    for k, stmt in enumerate(body):
        if name in _t_stored(stmt):
            picked.add(k)
        tainted |= _t_aliases(stmt, tainted)
        if _t_mutates(stmt, tainted):
            picked.add(k)      # np.copyto(window[i], ...), window[i] = ... in a loop
    if not picked:
        return [], set()
    needed, resolved, found = {name}, set(), []
    for k in range(max(picked), -1, -1):
        stored = _t_stored(body[k])
        if k in picked or stored & needed:
            found.append(body[k])
            resolved |= stored
            needed |= _t_free_names(body[k]) | stored
    return found[::-1], needed - resolved


def _t_feeding(name):
    """The statements that compute `name`, in every executed cell that assigns it (a cell
    that assigns it without running, `if False: ...`, does not hide the others): in each,
    what _t_cell_feeding picks; and, for a name they read that the cell does not store, the
    statements of earlier executed cells that store it, the same way (a loop in one cell,
    its result used in the next). [] if no cell assigns it. A loop that builds the value,
    or changes it in place, here or in an earlier cell, is among them; a loop that only
    checks it is not."""
    trees = []
    for source in list(globals().get("In", [])):
        try:
            trees.append(_t_ast.parse(source))
        except SyntaxError:
            continue
    found, seen = [], set()

    def add(stmt):
        if id(stmt) not in seen:
            seen.add(id(stmt))
            found.append(stmt)

    for index, tree in enumerate(trees):
        if not (_t_assigns(tree, name) or any(_t_mutates(s, {name}) for s in tree.body)):
            continue
        statements, unresolved = _t_cell_feeding(tree, name)
        for stmt in statements:
            add(stmt)
        resolved = set()
        for earlier in reversed(trees[:index]):      # only what is still unresolved
            for stmt in reversed(earlier.body):
                stored = _t_stored(stmt)
                if stored & unresolved:
                    add(stmt)
                    unresolved = (unresolved - stored) | (_t_free_names(stmt) - stored - resolved)
                    resolved |= stored
            if not unresolved:
                break
    return found
