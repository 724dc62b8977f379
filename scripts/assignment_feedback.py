"""What a student is told about a graded assignment notebook: one module for both graders.

`make grade` (scripts/grade_assignments.py) writes feedback/<student>.md with it, and every
Gradescope zip carries this file (standard library only) and runs it after otter, on
/autograder/results/results.json (see `main`). Either way a student sees, per autograded
question, the score and the message of its first failing check, or "no answer" when every
answer cell of the question is blank or as handed out; never a test's code, its expected
values or otter's doctest output (which prints both).

    python assignment_feedback.py RESULTS.json SUBMISSION.ipynb CONFIG.json

rewrites RESULTS.json in place. The same module holds the guard (`refusal`, `refused_cells`):
scripts/assignment_guard.py, otter's plugin, replaces before grading each cell that could
change the checks, and the feedback says which cells were not run and why, and, for an
answer cell refused or one that does not parse, says so instead of a wrong-answer message.
A notebook with no answer at all (no cells, or every answer as handed out) is "no answer";
the site's own notebook is read too (its answer cells, by exercise number).

CONFIG.json (the zip's feedback.json, written by scripts/assignments.py) holds `visibility` ("after_published": the student sees the results
once the instructor publishes the grades, Gradescope's default; "visible": at once),
`assignment` (the identifier the notebook should carry: another one gets a visible warning),
`templates` ({question: [answer cells as handed out]}), `numbers` ({"3.1": question}) and
`guard` (the guard's settings: guard_config).
"""

import ast
import builtins
import hashlib
import json
import re
import sys
from pathlib import Path

NO_ANSWER = "no answer"
# Otter's summary of a test file: "<question> - <n> message: <text>" for each failing case
# with a failure message, then "<question> - <n> result:" and "❌ ..." for a failed case.
_QUESTION = re.compile(r"\(`([\w-]+)`\)")


def failed_messages(question: str, output: str) -> list[str]:
    """The failure messages of the failed test cases, in order, read from otter's output."""
    messages = dict(re.findall(rf"^\s*{re.escape(question)} - (\d+) message: (.*)$", output,
                               re.M))
    failed = re.findall(rf"^\s*{re.escape(question)} - (\d+) result:\s*\n\s*❌", output, re.M)
    return [messages.get(case, "a check failed") for case in failed]


# The site's own student notebook (notebooks/student/, its download button): an answer cell
# tagged `answer` that opens with this comment
SITE_ANSWER = re.compile(r"^#\s*Your answer to Exercise ([\d.]+)")


def answer_cells(nb: dict, numbers: dict | None = None) -> dict[str, list[str]]:
    """{question: [source of each answer cell]} of a notebook (a dict, as json reads it).

    A question starts at the read-only Markdown cell that names it (`**Exercise 3.1**
    (`masking-ex-padding`)`); its answer cells are the cells otter tags `otter_answer_cell`
    (in the autograder's notebook, `otter_assign_solution_cell`). In the site's own notebook
    (no otter tags), an answer cell is tagged `answer` and opens with "# Your answer to
    Exercise 3.1": `numbers` ({"3.1": question}, feedback.json's) names its question."""
    found: dict[str, list[str]] = {}
    current = None
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        tags = cell.get("metadata", {}).get("tags", [])
        site = SITE_ANSWER.match(source) if "answer" in tags else None
        if site and numbers and site[1] in numbers:
            found.setdefault(numbers[site[1]], []).append(source)
            continue
        answer = {"otter_answer_cell", "otter_assign_solution_cell"} & set(tags)
        if cell.get("cell_type") == "markdown" and not answer:
            heading = _QUESTION.search(source)
            if heading and re.search(r"\*\*Exercise [\d.]+", source):
                current = heading[1]
                found.setdefault(current, [])
        elif current and answer:
            found[current].append(source)
    return found


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


# The guard: code that could change the checks is not run (see `refusal`). The checks run in
# the student's kernel after the student's code (otter's design), so a cell could replace
# what they use; each code cell of a submission that is not, character for character, one of
# the notebook's cells as handed out is read (its AST, after IPython's own rewriting of `%`
# magics and `!` shell lines) before anything runs, and a cell that does any of the below is
# replaced by one that raises, with the reason: its names are then undefined and the
# questions that use them score 0, with the reason as their message.
# (not functools, operator, collections, string, typing, dataclasses: each can reach an
# attribute by a name built at run time or run a string as code, `string.Formatter().
# get_field`, `functools.singledispatch` evaluating an annotation, ...; no exercise needs them)
GUARD_IMPORTS = {"numpy", "math", "cmath", "lib", "itertools", "fractions", "decimal",
                 "statistics", "scipy", "matplotlib", "random", "re", "time", "copy",
                 "numbers", "warnings"}
GUARD_NAMES = {"exec", "eval", "compile", "__import__", "getattr", "setattr", "delattr",
               "globals", "locals", "vars", "open", "breakpoint", "input", "__builtins__",
               "__loader__", "__spec__", "get_ipython", "In", "Out", "_ih", "_oh", "_dh",
               "exit", "quit", "memoryview", "type", "object", "super", "attrgetter",
               "methodcaller"}
# methods that write or read files (a test file could be overwritten, or its expected values
# read) or reach memory and the system
GUARD_ATTRIBUTES = {"save", "savez", "savez_compressed", "savetxt", "tofile", "dump", "dumps",
                    "memmap", "open_memmap", "savefig", "imsave", "ctypes", "ctypeslib",
                    "f2py", "DataSource", "write_text", "write_bytes", "system", "popen",
                    "load", "loads", "loadtxt", "genfromtxt", "fromfile", "fromregex",
                    "read_text", "read_bytes", "imread", "attrgetter", "methodcaller",
                    "os", "sys", "shutil", "subprocess", "pathlib", "Path", "io", "builtins",
                    "importlib", "inspect", "otter", "tempfile", "pickle", "environ",
                    "modules", "remove", "unlink", "rmtree", "rename", "chmod", "write",
                    "writelines", "save_pretrained", "push_to_hub", "savemat", "loadmat"}
# a running frame's or a code object's attributes: a generator's frame reaches the
# notebook's globals (`g.gi_frame.f_globals["np"] = ...`)
GUARD_FRAMES = {"gi_frame", "cr_frame", "ag_frame", "gi_code", "cr_code", "ag_code",
                "gi_yieldfrom", "cr_await", "ag_await", "tb_frame", "tb_next", "f_globals",
                "f_locals", "f_builtins", "f_back", "f_code", "f_trace", "co_code",
                "co_consts", "co_names"}
# what makes a class without a class statement, and what runs code out of the checks' sight
# (another thread: a profiler sees one thread only)
GUARD_MAKERS = {"make_dataclass", "namedtuple", "NamedTuple", "TypedDict", "NewType",
                "threading", "Thread", "Timer", "concurrent", "multiprocessing", "asyncio",
                "signal", "sched", "weakref", "finalize", "update_wrapper", "wraps",
                "extbuild", "build_and_import_extension", "LowLevelCallable",
                "get_type_hints", "ForwardRef", "Formatter", "get_field", "get_value",
                "vformat", "singledispatch", "singledispatchmethod"}
# where masked arrays come from: np.testing ignores a masked entry, so a fully masked array
# passes assert_allclose and assert_array_equal against any expected array
GUARD_MASKED = {"ma", "mstats", "mstats_basic", "mstats_extras", "recfunctions"}
# methods and functions that change an array, a list or a dict in place
GUARD_MUTATORS = {"fill", "sort", "put", "itemset", "resize", "setfield", "partition",
                  "setflags", "byteswap", "append", "extend", "insert", "pop", "popitem",
                  "remove", "clear", "update", "add", "discard", "setdefault", "copyto",
                  "place", "putmask", "fill_diagonal", "put_along_axis", "shuffle", "at"}
# what returns a view of an array (or the array itself)
GUARD_VIEWS = {"view", "reshape", "ravel", "transpose", "swapaxes", "squeeze", "asarray",
               "T", "real", "imag", "flat"}
# NumPy's functions that change their first argument in place
GUARD_IN_PLACE = {"copyto", "place", "putmask", "fill_diagonal", "put_along_axis", "put"}
BUILTIN_NAMES = set(dir(builtins))
GUARD_DUNDERS = {"__name__", "__doc__", "__init__", "__version__"}
# what a protected name may always be bound to again: `import numpy as np`, `import numpy`
CANONICAL_IMPORTS = {(None, "numpy", "np"), (None, "numpy", None), (None, "lib", None)}
REFUSED = "This cell was not run by the grader"
_REFUSED_CELL = re.compile(r"^raise RuntimeError\((.*)\)\s*$", re.S)


def _hash(source: str) -> str:
    return hashlib.sha256(_normal(source).encode()).hexdigest()


def python_of(source: str) -> str:
    """A cell as the kernel runs it: IPython rewrites `%magic` and `!shell` lines into calls
    of get_ipython() (which the guard refuses); without IPython, such a line is kept, and
    does not parse."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:   # noqa: BLE001 (IPython's own error for a cell it cannot rewrite)
        return source


def syntax_error(source: str) -> str | None:
    """None if the cell parses; else "this cell does not run: ..." (line and IPython's
    rewriting aside, Python's own message)."""
    try:
        ast.parse(python_of(source))
    except SyntaxError as error:
        return f"this cell does not run: {error.msg} (line {error.lineno})"
    return None


def _module_level(tree: ast.AST):
    """The nodes of a module outside function, lambda and class bodies."""
    todo = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                 ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    parts.insert(0, getattr(node, "id", "..."))
    return ".".join(parts)


def refusal(source: str, protected: set[str] = frozenset(),
            imports: set[tuple] = frozenset()) -> str | None:
    """Why a cell may not run, or None. Refused: importing a module outside GUARD_IMPORTS
    (otter, os, sys, builtins, inspect, ...) or, from an allowed one, a name of GUARD_NAMES or
GUARD_ATTRIBUTES (`from numpy import save`); the names of GUARD_NAMES (exec, eval, getattr,
    setattr, open, globals, get_ipython, hence `%` magics and `!` shell lines, ...); a private
    attribute (`_core`, `__dict__`, `__code__`, ...); assigning or deleting an
    attribute (`np.testing.assert_allclose = ...`, `self.x = ...` too); a string naming a
    private attribute, a frame's insides or the checks' `_t_` names; a
    method that writes files (GUARD_ATTRIBUTES); rebinding at the notebook's top level (or
    through `global`) a name in `protected` (the builtins and imported names the checks
    read, and the teaching cells' names the checks read, checked_inputs; by assignment, `def`,
    a loop, `with`, `except ... as` or a `match` pattern), or changing one in place (an item
    stored, a method or a function that changes its argument, `out=`), except
    by an import in `imports` (one of the handed-out notebook's own); a running frame's or
    a code object's attributes (GUARD_FRAMES: `gi_frame`, `f_globals`, ...); masked arrays
    (GUARD_MASKED: `np.ma`, `scipy.stats.mstats`, which np.testing lets pass); what makes a
    class without a class statement or runs code in another thread (GUARD_MAKERS:
    `make_dataclass`, `namedtuple`, `threading`, ...), a star import, `type` but where it is
    printed, and a keyword argument named like `__eq__`; the checks'
    own names (`_t_...`: a function of the student's could return what a check expects); and a
    class (the exercises need none; a class can fake comparisons). A cell that does not parse
    is not refused (it raises when run)."""
    code = python_of(source)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if "get_ipython()" in code and "get_ipython" not in source:
        return "it holds a `%` magic or a `!` shell line, which may change what the checks see"
    rebound_globally = {n for node in ast.walk(tree) if isinstance(node, ast.Global)
                        for n in node.names}
    # a function's own parameters may share a checked name: changing them changes nothing
    params = {a.arg for node in ast.walk(tree)
              if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
              for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                        *filter(None, [node.args.vararg, node.args.kwarg])]}
    # ... and a function's own locals (names it assigns without `global`)
    params |= {n.id for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef,
                                                               ast.AsyncFunctionDef))
               for n in ast.walk(f) if isinstance(n, ast.Name)
               and isinstance(n.ctx, ast.Store)} - rebound_globally

    modules = {"np", "numpy", "lib", "otter", "grader"} | {
        asname or name.split(".")[0] for _, name, asname in imports}

    def root(node):
        """The name a view of an array starts from: `W_O[:2]`, `W_O.T`, `W_O.reshape(...)`,
        `np.asarray(W_O)`; None for anything else."""
        while True:
            if isinstance(node, (ast.Subscript, ast.Attribute)):
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in GUARD_VIEWS:
                node = (node.args[0] if getattr(node.func.value, "id", None) in modules
                        and node.args else node.func.value)
            else:
                return getattr(node, "id", None)

    checked = {n for n in protected if n not in params | modules | BUILTIN_NAMES}
    for _ in range(2):    # views bound in this cell: `A = W_O[:2]` then `A[0] = 0`
        checked |= {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                    and root(node.value) in checked
                    for target in node.targets for t in ast.walk(target)
                    if isinstance(t, ast.Name)}

    def changed(target):
        """The checked name (not a module's), or a view of one bound in this cell, that a
        store or a method call changes in place."""
        name = root(target)
        return name if name in checked else None

    def changes_argument(call):
        """True if the call changes a checked name in place: its method (`W_O.fill(0)`), a
        type's method on it (`np.ndarray.fill(W_O, 0)`, `dict.update(weights_kw, ...)`),
        NumPy's in-place functions (`np.copyto`, `np.add.at`), an output given by keyword or
        by position (a ufunc's arguments after its inputs, `np.multiply(W_O, 0, W_O)`)."""
        func, args = call.func, call.args
        if any(k.arg == "out" and changed(k.value) for k in call.keywords):
            return True
        if not isinstance(func, ast.Attribute):
            return bool(getattr(func, "id", None) in GUARD_IN_PLACE and args
                        and changed(args[0]))
        if func.attr in GUARD_MUTATORS and changed(func.value):
            return True         # W_O.fill(0), W_O.sort()
        owner_is_module = getattr(func.value, "id", None) in modules
        names = GUARD_IN_PLACE if owner_is_module else GUARD_MUTATORS
        if func.attr in names and args and changed(args[0]):
            return True         # np.copyto(W_O, 0), np.ndarray.fill(W_O, 0), np.add.at(W_O, ...)
        if owner_is_module:
            import numpy
            ufunc = getattr(numpy, func.attr, None)
            if isinstance(ufunc, numpy.ufunc) and any(changed(a) for a in args[ufunc.nin:]):
                return True     # np.multiply(W_O, 0, W_O): the output by position
        return False
    top = set(map(id, _module_level(tree)))
    # type(x), one argument, tells a type; with three it makes a class
    # ... but only where it is shown or compared (an argument of print, an f-string's value,
    # an operand of a comparison, `type(x) is float`), never kept or called: `type(int)` is
    # type itself, whose three-argument call makes a class
    shown = {id(part) for n in ast.walk(tree)
             for part in ([*n.args, *(k.value for k in n.keywords)]
                          if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                          and n.func.id == "print"
                          else [n.value] if isinstance(n, ast.FormattedValue)
                          else [n.left, *n.comparators] if isinstance(n, ast.Compare)
                          else [])}
    one_arg_type = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Name) and n.func.id == "type"
                    and len(n.args) == 1 and not n.keywords and id(n) in shown}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or "."])
            for module in modules:
                if module.split(".")[0] not in GUARD_IMPORTS:
                    return f"it imports {module}, which the exercises do not need"
                parts = set(module.split(".")[1:]) | (
                    {a.name for a in node.names} if isinstance(node, ast.ImportFrom) else set())
                if "*" in parts:
                    return f"it imports * from {module}: name what you import"
                makers = sorted(parts & GUARD_MAKERS)
                if makers:
                    return (f"it imports {makers[0]} (from {module}), which makes classes or "
                            "runs code where the checks do not look")
                masked = sorted(parts & GUARD_MASKED)
                if masked:
                    return (f"it imports {masked[0]} (from {module}), masked arrays, which "
                            "pass NumPy's comparisons whatever their values")
                bad = sorted(p for p in parts if p in GUARD_ATTRIBUTES | GUARD_NAMES
                             or p.startswith("_"))
                if bad:
                    return (f"it imports {', '.join(bad)} (from {module}), which reads or "
                            "writes files or reaches the grader")
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                key = (getattr(node, "module", None), alias.name, alias.asname)
                if bound in protected and key not in imports | CANONICAL_IMPORTS:
                    return f"it rebinds {bound}, a name the checks use"
        elif isinstance(node, ast.keyword) and node.arg and re.fullmatch(r"__\w+__", node.arg) \
                and node.arg not in GUARD_DUNDERS:
            return f"it names the attribute {node.arg}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                set(re.findall(r"__\w+?__", node.value)) - GUARD_DUNDERS
                or set(re.findall(r"\w+", node.value)) & GUARD_FRAMES
                or "_t_" in node.value):
            # a string can reach an attribute too: "{0.__globals__}".format(f), an annotation
            return f"its text {node.value[:40]!r} names an attribute the checks guard"
        elif isinstance(node, ast.Name):
            if node.id.startswith("_t_"):
                return (f"it uses {node.id}: the checks' own names start with _t_, and an "
                        "answer that reads them could copy what a check expects")
            if node.id in GUARD_MAKERS:
                return (f"it uses {node.id}, which makes classes or runs code where the "
                        "checks do not look")
            if node.id in GUARD_NAMES and id(node) not in one_arg_type:
                what = ("a `%` magic or a `!` shell line" if node.id == "get_ipython"
                        else node.id)
                return f"it uses {what}, which may change what the checks see"
            if (isinstance(node.ctx, (ast.Store, ast.Del)) and node.id in protected
                    and (id(node) in top or node.id in rebound_globally)):
                return f"it rebinds {node.id}, a name the checks use"
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and changed(node):
            return (f"it changes {changed(node)} in place, a name of the notebook the checks "
                    "read (work on a copy: `.copy()`)")
        elif isinstance(node, ast.Call) and changes_argument(node):
            return ("it changes a name of the notebook the checks read in place (work on a "
                    "copy: `.copy()`)")
        elif isinstance(node, (ast.arg, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and any(isinstance(a, ast.Constant) and isinstance(a.value, str)
                        for a in [getattr(node, "annotation", None),
                                  getattr(node, "returns", None)]):
            return "it has an annotation written as a string (which some functions run as code)"
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("_") and node.attr not in GUARD_DUNDERS:
                return f"it uses the private attribute {node.attr}"
            if node.attr in GUARD_ATTRIBUTES:
                return f"it uses {_dotted(node)}, which reads or writes files or memory"
            if node.attr in GUARD_MAKERS:
                return (f"it uses {_dotted(node)}, which makes classes or runs code where "
                        "the checks do not look")
            if node.attr in GUARD_MASKED:
                return (f"it uses {_dotted(node)}, masked arrays, which pass NumPy's "
                        "comparisons whatever their values")
            if node.attr in GUARD_FRAMES:
                return (f"it uses {_dotted(node)}, a running frame's or a code object's "
                        "insides, which may change what the checks see")
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                return (f"it assigns to {_dotted(node)}: changing a module's or an object's "
                        "attribute may change what the checks see")
        elif isinstance(node, (ast.MatchAs, ast.MatchStar, ast.MatchMapping,
                               ast.ExceptHandler)):
            # `case np:`, `case [*np]`, `case {**np}`, `except E as np:` bind a name too
            bound = node.rest if isinstance(node, ast.MatchMapping) else node.name
            if bound in protected and (id(node) in top or bound in rebound_globally):
                return f"it rebinds {bound}, a name the checks use"
        elif isinstance(node, ast.ClassDef):
            return "it defines a class (the exercises need none)"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in protected and (id(node) in top or node.name in rebound_globally):
                return f"it rebinds {node.name}, a name the checks use"
    return None


def _module_names(source: str, ctx) -> set[str]:
    """The names a cell loads (ctx ast.Load) or stores (ast.Store) outside function, lambda,
    class and comprehension bodies."""
    try:
        tree = ast.parse(python_of(source))
    except SyntaxError:
        return set()
    found, todo = set(), list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                             ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ctx):
            found.add(node.id)
        todo.extend(ast.iter_child_nodes(node))
    return found


def checked_inputs(teaching: list[str], test_sources: list[str]) -> set[str]:
    """The names of the notebook's teaching cells (the cells as handed out, but the answer
    cells) that the checks read to compute what they expect (`X`, `W_O`, `model`, ...): an
    answer that rebinds or changes one would change the expected value too."""
    def answer_template(source):     # `name = ...` lines only: an answer cell as handed out
        lines = [x for x in source.splitlines() if x.strip() and not x.strip().startswith("#")]
        return all(PLACEHOLDER.match(x) for x in lines)

    taught = set().union(*(_module_names(s, ast.Store) for s in teaching
                           if not answer_template(s)))
    read = set().union(*(_module_names(s, ast.Load) - _module_names(s, ast.Store)
                         for s in test_sources))
    return {n for n in taught & read if not n.startswith("_")}


def guard_config(handed_out: dict, test_sources: list[str]) -> dict:
    """The guard's settings for one assignment, from its notebook as handed out and its
    tests' code: `trusted` (the hashes of its code cells), `protected` (the builtins and
    the names its cells import that the tests read) and `imports` (its own imports)."""
    trusted, imports, imported = set(), set(), set()
    for cell in handed_out.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        trusted.add(_hash(source))
        try:
            tree = ast.parse(python_of(source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    imports.add((getattr(node, "module", None), alias.name, alias.asname))
                    imported.add(alias.asname or alias.name.split(".")[0])
    read = set()
    for test in test_sources:
        try:
            read |= {n.id for n in ast.walk(ast.parse(test)) if isinstance(n, ast.Name)}
        except SyntaxError:
            continue
    teaching = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in handed_out.get("cells", []) if c.get("cell_type") == "code"
                and not {"otter_answer_cell", "answer"} & set(c.get("metadata", {}).get("tags", []))]
    protected = (read & (set(dir(builtins)) | imported)) | {"np", "numpy", "lib", "otter",
                                                           "grader"} \
        | checked_inputs(teaching, test_sources)
    return {"trusted": sorted(trusted), "protected": sorted(protected),
            "imports": sorted((list(i) for i in imports), key=str)}


def refused_cells(nb: dict, config: dict) -> dict[int, str]:
    """{index of a code cell: why it is not run} for a submission (see `refusal`)."""
    trusted = set(config.get("trusted", []))
    protected = set(config.get("protected", []))
    imports = {tuple(i) for i in config.get("imports", [])}
    found = {}
    for index, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        if _hash(source) in trusted:
            continue
        reason = refusal(source, protected, imports)
        if reason:
            found[index] = reason
    return found


def refused_source(reason: str) -> str:
    return f"raise RuntimeError({REFUSED + ': ' + reason + '.'!r})"


def cell_problem(source: str, config: dict | None) -> str | None:
    """What the student reads for an answer cell that did not run: refused by the guard
    (`config`: the guard's settings), or a cell that does not parse; None for a cell that
    ran."""
    if config is not None:
        if _hash(source) not in set(config.get("trusted", [])):
            reason = refusal(source, set(config.get("protected", [])),
                             {tuple(i) for i in config.get("imports", [])})
            if reason:
                return (f"{REFUSED}: {reason}. The grader does not run code that could change "
                        "its checks; this question scores 0.")
    problem = syntax_error(source)
    return f"{problem[0].upper()}{problem[1:]}; this question scores 0." if problem else None


# An answer cell's pre-filled line naming the variable the grader reads (`w3 = ...`), as
# the student notebooks of the site and the assignments hand it out
PLACEHOLDER = re.compile(r"^\s*[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*=\s*\.\.\.\s*$")


def is_blank(answers: list[str], template: list[str] | None) -> bool:
    """True if every answer cell is empty, `...`, comments only, the placeholder text, or as
    handed out."""
    handed_out = {_normal(t) for t in template or []}

    def code(text):   # without comment lines and pre-filled `name = ...` placeholders
        return _normal("\n".join(line for line in text.splitlines()
                                  if not line.strip().startswith("#")
                                  and not PLACEHOLDER.match(line)))

    return all(_normal(a) in handed_out | {"", "...", "_Type your answer here, replacing this "
                                                      "text._"} or code(a) in ("", "...")
               for a in answers)


def exercise_numbers(nb: dict) -> dict[str, str]:
    """{"3.1": question} from the assignment's headings (`**Exercise 3.1** (`label`)`)."""
    found = {}
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        for number, label in re.findall(r"\*\*Exercise ([\d.]+)\*\* \(`([\w-]+)`\)", source):
            found[number] = label
    return found


def submitted_assignment(nb: dict | None) -> str | None:
    """The assignment identifier a notebook carries (scripts/assignments.py's `stamp`)."""
    meta = (nb or {}).get("metadata", {}).get("course_assignment", {})
    return meta.get("assignment") if isinstance(meta, dict) else None


def version_warning(nb: dict | None, expected: str | None) -> str | None:
    """A sentence for a notebook of another assignment or course version, else None."""
    got = submitted_assignment(nb)
    if not expected or got == expected:
        return None
    if got is None:
        return (f"This notebook carries no assignment identifier: it is not the notebook of "
                f"assignment {expected} (it may be the book's own notebook, or an older "
                f"handout). It was graded against {expected}, whose exercises use this "
                "term's numbers, not the book's: an answer to the book's version of an "
                "exercise scores 0. Check with your instructor.")
    return (f"This notebook is assignment {got}, but it was graded as {expected}: another "
            "version of the course or another assignment, whose exercises may use other "
            "numbers than this term's. Check with your instructor.")


def question_feedback(question: str, score: float, possible: float, output: str,
                      blank: bool, problem: str | None = None) -> str:
    """What the student reads for one autograded question: "no answer", or why its answer
    cell did not run (`problem`: cell_problem's), or its first failing check's message."""
    head = f"{question}: {score:g} / {possible:g}"
    if blank:
        return f"{head}\n{NO_ANSWER}"
    if problem and score < possible:
        return f"{head}\n{problem}"
    failed = failed_messages(question, output)
    if not failed:
        return f"{head}\nAll checks passed." if score >= possible else head
    return f"{head}\n{' '.join(failed[0].split())}"


def answer_problems(nb: dict | None, config: dict) -> dict[str, str]:
    """{question: why one of its answer cells did not run} (cell_problem), for a notebook."""
    found = {}
    for question, cells in answer_cells(nb or {}, config.get("numbers")).items():
        for source in cells:
            problem = cell_problem(source, config.get("guard"))
            if problem:
                found[question] = problem
                break
    return found


def blank_questions(nb: dict | None, config: dict, questions) -> set[str]:
    """The questions with no answer: every answer cell blank (is_blank) or none at all. A
    question without answer cells (a notebook with no cells, or the site's notebook, which
    has none for some questions) has no answer when the notebook holds no answer at all:
    every answer cell it has is blank, and, if it has none, every code cell is one of the
    cells as handed out (or blank)."""
    answers = answer_cells(nb or {}, config.get("numbers"))
    templates = config.get("templates", {})
    blank = {q for q, cells in answers.items() if is_blank(cells, templates.get(q))}
    if set(answers) <= blank:
        trusted = set(config.get("guard", {}).get("trusted", []))
        written = [c for c in (nb or {}).get("cells", []) if c.get("cell_type") == "code"
                   and _hash(_source(c)) not in trusted and not is_blank([_source(c)], [])]
        if answers or not written:
            blank |= set(questions)
    return blank


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def code_cell_number(nb: dict, index: int) -> int:
    """The number (from 1) of the code cell at `index` among the notebook's code cells."""
    return sum(c.get("cell_type") == "code" for c in nb.get("cells", [])[:index]) + 1


def refused_notice(nb: dict | None, config: dict) -> str | None:
    """The sentence a student reads about the cells the guard did not run, or None."""
    refused = refused_cells(nb or {}, config.get("guard") or {}) if nb else {}
    if not refused:
        return None
    cells = "; ".join(f"code cell {code_cell_number(nb, i)}: {reason}"
                      for i, reason in refused.items())
    return ("Cells not run by the grader, which does not run code that could change its "
            f"checks (the questions that need their names score 0): {cells}.")


def student_results(results: dict, submission: dict | None, config: dict) -> dict:
    """Gradescope's results.json as otter wrote it, rewritten for the student (see the module
    docstring): each question's output is its feedback, at config's visibility; the public
    tests' summary says, per question, its first failing public check; no stdout."""
    graded = [t.get("name", "") for t in results.get("tests", []) if "score" in t]
    blank_set = blank_questions(submission, config, graded)
    problems = answer_problems(submission, config)
    visibility = config.get("visibility", "after_published")
    out = {k: v for k, v in results.items() if k not in ("tests", "stdout_visibility")}
    tests, public = [], None
    for test in results.get("tests", []):
        name = test.get("name", "")
        if "score" not in test:
            if name == "Public Tests":
                public = dict(test)
            else:
                tests.append(test)   # otter's own notices (e.g. "Autograder Failed")
            continue
        tests.append({"name": name, "score": test["score"], "max_score": test.get("max_score"),
                      "visibility": visibility,
                      "output": question_feedback(name, test["score"], test.get("max_score", 0),
                                                  test.get("output", ""), name in blank_set,
                                                  problems.get(name))})
    if public is not None:
        lines = []
        for test in results.get("tests", []):
            if "score" not in test:
                continue
            name = test["name"]
            if name in blank_set:
                lines.append(f"{name}: {NO_ANSWER}")
                continue
            if name in problems:
                lines.append(f"{name}: {problems[name]}")
                continue
            failed = failed_messages(name, public.get("output", ""))
            lines.append(f"{name}: " + (" ".join(failed[0].split()) if failed
                                        else "the public checks pass"))
        public["output"] = "\n".join(lines)
        tests.insert(0, public)
    notice = refused_notice(submission, config)
    if notice:
        tests.insert(0, {"name": "Cells not run", "visibility": "visible", "status": "failed",
                         "output": notice})
    warning = version_warning(submission, config.get("assignment"))
    if warning:
        tests.insert(0, {"name": "Assignment version", "visibility": "visible",
                         "status": "failed", "output": warning})
    out["tests"] = tests
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    results_path, submission, config = (Path(a) for a in argv)
    results = json.loads(results_path.read_text())
    try:
        nb = json.loads(submission.read_text())
    except (OSError, ValueError):
        nb = None
    results_path.write_text(json.dumps(student_results(results, nb,
                                                       json.loads(config.read_text())),
                                       indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
