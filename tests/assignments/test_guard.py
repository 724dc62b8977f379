"""Issue 45: grading that no one line of a submission can fool.

The guard (scripts/assignment_feedback.py's `refusal`, run by otter as the plugin
scripts/assignment_guard.py before a submission runs) and the rules that hold by what runs
(tests/assignments/questions/_helpers.py). The first tests are cheap and run in plain
pytest; the last grades one notebook of one-line attacks with `otter run` (`make
test-assignments`, CHECK_ASSIGNMENTS=1).
"""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).parent))

from assignment_feedback import (cell_problem, guard_config, refusal,  # noqa: E402
                                 refused_cells, student_results)
from wrong_answers import RIGHT_ANSWERS, WRONG_ANSWERS  # noqa: E402

ASSIGNMENTS = ROOT / "_build" / "assignments"
PROTECTED = {"np", "numpy", "lib", "otter", "grader", "all", "isinstance", "len"}

# The three one-line attacks, and their neighbours: each must be refused.
ATTACKS = {
    "otter's doctest runner": "import otter.test_files.ok_test as t\n"
                              "t.run_doctest = lambda *a, **k: None",
    "otter's runner, imported from": "from otter.test_files import ok_test\n"
                                     "ok_test.run_doctest = print",
    "the test file rewritten": "import glob\nfor f in glob.glob('tests/*.py'):\n"
                              "    open(f, 'w').write('assert True')",
    "the test file, through pathlib": "from pathlib import Path\n"
                                      "Path('tests/q.py').write_text('')",
    "the test file, by NumPy": "np.savetxt('tests/q.py', [])",
    "the test file, by a shell line": "!echo > tests/q.py",
    "the test file, by a magic": "%%writefile tests/q.py\nassert True",
    "np.testing patched": "np.testing.assert_allclose = lambda *a, **k: None\n"
                          "np.allclose = lambda *a, **k: True",
    "np.testing through an alias": "t = np.testing\nt.assert_array_equal = print",
    "through __dict__": "np.testing.__dict__['assert_allclose'] = print",
    "through vars": "vars(np.testing)['assert_allclose'] = print",
    "through setattr": "setattr(np, 'array_equal', lambda *a: True)",
    "through operator.attrgetter": "import operator\n"
                                   "operator.attrgetter('testing')(np)",
    "a builtin the checks use": "all = lambda x: True",
    "np rebound": "import math as np",
    "a faking class": "class Yes(float):\n    def __eq__(self, other):\n        return True",
    "type with three arguments": "Yes = type('Yes', (float,), {'__eq__': lambda s, o: True})",
    "exec": "exec('np.allclose = lambda *a: True')",
    "the kernel": "get_ipython().run_cell('x = 1')",
    "sys.modules": "import sys\nsys.modules['numpy'].allclose = print",
    "a module's os": "lib.attention.np.lib.npyio.os.remove('tests/q.py')",
    "a writer imported by name": "from numpy import savetxt\nsavetxt('tests/q.py', [])",
    "a reader's module": "import scipy.io as sio",
    "a private attribute": "np._core.multiarray",
    "a generator's frame": "g = (x for x in [1])\ng.gi_frame.f_globals['np'] = None",
    "a frame's builtins": "def f():\n    yield\nf().gi_frame.f_builtins",
    "a match pattern": "match (lambda *a: True):\n    case all:\n        pass",
    "a match pattern's rest": "match {}:\n    case {**all}:\n        pass",
    "except ... as": "try:\n    1 / 0\nexcept ZeroDivisionError as len:\n    pass",
    "the check's own names": "def einsum_attention(query, key, value):\n"
                             "    return _t_expected",
    "type reached through type(int)": 'Yes = type(int)("Yes", (np.ndarray,), '
                                      'dict(__eq__=lambda s, o: np.ones(np.shape(o), bool)))',
    "type(x) kept, then called": "t = type(int)\nC = t('C', (), {})",
    "type(int) called inside print": "print(type(int)('C', (), {}))",
    "type(int) called inside a comparison": "ok = type(int)('C', (), {}) == 1",
    "a dunder as a keyword": "d = dict(__eq__=print)",
    "a class from dataclasses": "import dataclasses\n"
                                "C = dataclasses.make_dataclass('C', [], bases=(np.ndarray,))",
    "a class from collections": "from collections import namedtuple",
    "a star import": "from dataclasses import *",
    "another thread": "from lib.fast_attention import threading",
    "another thread, by attribute": "lib.fast_attention.threading.Thread(target=print).start()",
    "self outside a class": "self = np.testing\n"
                            "self.assert_array_equal = self.assert_allclose = print",
    "code in an annotation": "import typing\ndef note(x: \"exec('np.allclose = print') or int\"):\n"
                             "    pass\ntyping.get_type_hints(note)",
    "an attribute through a format string": "text = '{0.__globals__}'.format(print)",
    "a module's dict through update_wrapper": "import functools\n"
                                              "functools.update_wrapper(np.testing, print)",
    "C compiled from a string": "np.testing.extbuild.build_and_import_extension('m', [])",
    # a third red-team pass: attributes by a name built at run time, a string run as code
    "an attribute through string.Formatter": "from string import Formatter\n"
        "ga = lambda o, n: Formatter().get_field('0.' + n, (o,), {})[0]\n"
        "t = ga(np, 'testing')",
    "an annotation run by singledispatch": "import functools\n"
        "@functools.singledispatch\ndef f(x):\n    return x\n"
        "def g(x: \"exec('np.allclose = print') or int\"):\n    return x\nf.register(g)",
    "a string annotation": "def g(x: 'int'):\n    return x",
    "a masked array": "window = np.ma.masked_all((6, 6), dtype=bool)",
    "a masked array, imported": "from numpy import ma\nO = ma.masked_all((2, 3))",
    "a masked array from SciPy": "import scipy.stats\nx = scipy.stats.mstats.trimboth(x, 0.5)",
    "PyTorch's inline C++": "import torch.utils.cpp_extension",
    "transformers' remote code": "from transformers import dynamic_module_utils",
}


def test_a_masked_array_would_pass_numpys_comparisons():
    """Why the guard refuses masked arrays: np.testing skips masked entries, so a fully
    masked array passes against any expected array (if NumPy stops doing so, this fails
    and the refusal can go)."""
    fake = np.ma.masked_all((2, 3))
    np.testing.assert_allclose(fake, np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(fake, np.ones((2, 3)))


@pytest.mark.parametrize("name", ATTACKS)
def test_each_attack_is_refused(name):
    assert refusal(ATTACKS[name], PROTECTED), name


def test_right_and_wrong_answers_are_not_refused():
    """The course's own answers (right or wrong) run: the guard refuses only what could
    change the checks."""
    for answer in RIGHT_ANSWERS + WRONG_ANSWERS:
        assert refusal(answer["answer"], PROTECTED) is None, answer.get("id", answer["question"])
    for code in ("def f(x):\n    all = x.all()\n    return all",       # a local name is fine
                 "print(type(np.float16(1)))", "x = np.ones(3)\nx[0] = 2",
                 "from lib.attention import softmax", "import numpy as np",
                 "s = 'a {}'.format(1)", "import itertools, math",
                 # a type shown or compared, never called
                 "assert type(x) is float", "ok = type(x) == np.ndarray",
                 "print(f'{type(x)}')"):
        assert refusal(code, PROTECTED) is None, code


@pytest.mark.skipif(not ASSIGNMENTS.is_dir(), reason="needs `make assignments`")
def test_no_cell_of_the_solutions_or_the_course_answers_is_refused_by_its_own_guard():
    """Each built assignment's guard (its zip's settings) runs every cell of the solutions,
    and every answer of wrong_answers.py of its chapter."""
    for folder in sorted(ASSIGNMENTS.glob("0*_*")):
        if not (folder / "feedback.json").exists():
            continue
        config = json.loads((folder / "feedback.json").read_text())["guard"]
        solutions = json.loads((folder / "autograder" / f"{folder.name}.ipynb").read_text())
        assert not refused_cells(solutions, config), folder.name
        for answer in (a for a in RIGHT_ANSWERS + WRONG_ANSWERS if a["chapter"] == folder.name):
            cell = {"cell_type": "code", "source": answer["answer"]}
            assert not refused_cells({"cells": [cell]}, config), answer.get("id")


def test_a_cell_that_does_not_parse_is_said_so_not_refused():
    assert refusal("x = (1,", PROTECTED) is None
    assert cell_problem("x = (1,", {}).startswith("This cell does not run: ")
    assert cell_problem("x = 1", {}) is None
    assert "not run by the grader" in cell_problem("import os", {"protected": []})


def test_the_notebooks_names_the_checks_read_may_not_be_rebound_or_changed():
    """Found by a second red-team pass: `W_O = np.zeros_like(W_O)` made chapter 6's
    reference zero too (3/3 for a wrong `total`). The teaching cells' names the checks read
    are protected: rebinding one, or changing it in place, is refused; a copy is not."""
    from assignment_feedback import checked_inputs

    teaching = ["W_O = rng.standard_normal((4, 4))\nfor name in ['a']:\n    print(name)",
                "total = ..."]
    tests = ["_t_ref = X @ W_O\nnp.testing.assert_allclose(total, _t_ref)"]
    assert checked_inputs(teaching, tests) == {"W_O"}
    handed_out = {"cells": [{"cell_type": "code", "source": s} for s in teaching]}
    config = guard_config(handed_out, tests)
    protected = set(config["protected"])
    assert "W_O" in protected and "total" not in protected and "name" not in protected
    for attack in ["W_O = np.zeros_like(W_O)", "W_O[:] = 0", "W_O *= 0", "W_O.fill(0)",
                   "np.copyto(W_O, 0)", "np.multiply(W_O, 0, out=W_O)",
                   # a third red-team pass: positional out, ufunc.at, a type's method
                   "np.multiply(W_O, 0, W_O)", "np.multiply.at(W_O, np.s_[:], 0)",
                   "np.ndarray.fill(W_O, 0)", "np.ndarray.sort(W_O)",
                   "np.random.default_rng(0).shuffle(W_O)", "np.matmul(X, X, W_O)",
                   "def f():\n    W_O[0] = 0\nf()", "A = W_O[:2]\nA[0] = 0",
                   "B = W_O.T\nC = B\nC.fill(0)"]:
        assert refusal(attack, protected), attack
    for fine in ["W = W_O.copy()\nW[:] = 0", "s = np.sort(W_O)", "def f(W_O):\n    W_O[0] = 1",
                 "total = X @ W_O\ntotal[0] = 0", "P = W_O @ W_O\nP[0] = 1",
                 "def head(h):\n    W_O = np.eye(3)\n    W_O[0] = 1\n    return W_O",
                 "m = np.multiply(W_O, 2)", "s = np.linalg.norm(W_O)"]:
        assert refusal(fine, protected) is None, fine


def test_the_guard_trusts_the_handed_out_cells_only():
    handed_out = {"cells": [{"cell_type": "code", "source": "import sys\nimport numpy as np"},
                            {"cell_type": "code", "source": "x = ..."}]}
    config = guard_config(handed_out, ["assert all(np.isfinite(x))"])
    assert {"all", "np"} <= set(config["protected"]) and "x" not in config["protected"]
    submission = {"cells": [{"cell_type": "code", "source": "import sys\nimport numpy as np"},
                            {"cell_type": "code", "source": "import sys"},
                            {"cell_type": "code", "source": "x = np.ones(2)"}]}
    assert set(refused_cells(submission, config)) == {1}


def test_feedback_says_the_cell_was_refused_and_never_contradicts():
    """A refused answer cell: its question's message is the refusal, not a wrong-answer
    message; a notebook with no cells: "no answer" everywhere."""
    nb = {"cells": [
        {"cell_type": "markdown", "source": "**Exercise 2.1** (`q1`)", "metadata": {}},
        {"cell_type": "code", "source": "np.allclose = print\nx = 1",
         "metadata": {"tags": ["otter_answer_cell"]}},
        {"cell_type": "markdown", "source": "**Exercise 2.2** (`q2`)", "metadata": {}},
        {"cell_type": "code", "source": "y = (", "metadata": {"tags": ["otter_answer_cell"]}}]}
    results = {"tests": [
        {"name": "q1", "score": 0, "max_score": 2, "output": "q1 - 1 message: wrong axis\n"},
        {"name": "q2", "score": 0, "max_score": 1, "output": "q2 - 1 message: wrong\n"}]}
    config = {"templates": {"q1": ["..."], "q2": ["..."]}, "guard": {"protected": ["np"]}}
    out = {t["name"]: t["output"] for t in student_results(results, nb, config)["tests"]}
    assert "not run by the grader" in out["q1"] and "wrong axis" not in out["q1"]
    assert "This cell does not run" in out["q2"]
    empty = {t["name"]: t["output"] for t in student_results(results, {"cells": []},
                                                             config)["tests"]}
    assert all(text.endswith("no answer") for text in empty.values()), empty


def helpers():
    """The question files' helpers, in a namespace of their own (as a test cell has them)."""
    source = (ROOT / "tests" / "assignments" / "questions" / "_helpers.py").read_text()
    env = {"__name__": "__main__", "np": np}
    exec(compile(source, "_helpers.py", "exec"), env)
    return env


@pytest.mark.parametrize("code", [
    "np.arange(4) < lengths[:, None]", "lengths[:, None] > np.arange(4)",
    "np.greater.outer(lengths, np.arange(4))", "np.less(np.arange(4), lengths[:, None])",
    "np.greater_equal(lengths[:, None] - 1, np.arange(4))"])
def test_every_comparison_is_accepted(code):
    env = helpers()
    tree = ast.parse(code, mode="eval").body
    assert env["_t_compares"]([tree])
    assert not env["_t_reached"]([tree], {"padding_mask"})


@pytest.mark.parametrize("code", [
    "np.array(list(map(lambda n: np.arange(4) < n, lengths)))",
    "np.vectorize(lambda n, j: j < n)(lengths[:, None], np.arange(4))",
    "functools.reduce(lambda a, b: a | b, [lengths])",
    "np.array([np.arange(4) < n for n in lengths])",
    "rows(lengths)"])
def test_loops_by_any_name_are_refused(code, monkeypatch):
    env = helpers()
    env.update(functools=__import__("functools"))
    source = ("def rows(lengths, k=0):\n"
              "    return [] if k == len(lengths) else [lengths[k]] + rows(lengths, k + 1)\n")
    exec(source, env)
    monkeypatch.setattr(env["_t_inspect"], "getsource", lambda f: source)
    tree = ast.parse(code, mode="eval").body
    assert env["_t_reached"]([tree], {"padding_mask"}), code


@pytest.mark.skipif(not os.environ.get("CHECK_ASSIGNMENTS"),
                    reason="make test-assignments runs it (one otter run)")
def test_the_one_line_attacks_score_nothing_under_otter_run(tmp_path):
    """Chapter 2's notebook with the softmax over the wrong axis and every other answer
    wrong or missing, and the issue's three attacks in answer cells: 0 on every autograded
    question (today's otter alone gave full marks), the refusal in the feedback."""
    from grade_assignments import main

    chapter = "02_qk_av"
    nb = nbformat.read(ASSIGNMENTS / chapter / "student" / f"{chapter}.ipynb", as_version=4)
    answers = [i for i, c in enumerate(nb.cells)
               if c.cell_type == "code" and "otter_answer_cell" in c.metadata.get("tags", [])]
    attacks = [ATTACKS["otter's doctest runner"], ATTACKS["the test file rewritten"],
               ATTACKS["np.testing patched"]]
    for i, attack in zip(answers, attacks):
        nb.cells[i].source = attack
    wrong = next(w for w in WRONG_ANSWERS if w["id"] == "softmax-over-queries")
    nb.cells[answers[-1]].source = wrong["answer"]
    (tmp_path / "subs").mkdir()
    nbformat.write(nb, tmp_path / "subs" / "mallory.ipynb")
    assert main([chapter, str(tmp_path / "subs"), "--out", str(tmp_path / "g.csv")]) == 0
    import csv

    row = next(csv.DictReader((tmp_path / "g.csv").open()))
    assert float(row["total"]) == 0, row
    assert row["status"].startswith("refused code cells: "), row["status"]
    feedback = (tmp_path / "feedback" / "mallory.md").read_text()
    assert "not run by the grader" in feedback
    questions = json.loads((ASSIGNMENTS / chapter / "questions.json").read_text())
    assert all(float(row[q]) == 0 for q, info in questions.items() if info["kind"] == "auto")


@pytest.mark.skipif(not os.environ.get("CHECK_ASSIGNMENTS"),
                    reason="make test-assignments runs it (five otter runs)")
def test_make_grade_on_a_canvas_export(tmp_path):
    """Issue 45's class folder, as Canvas exports it (one folder, `<lastfirst>[_late]_<user
    id>_<submission id>_<file>`): a resubmission under another file name, the site's own
    notebook left blank, a notebook with no cells, a truncated file and an attack. Every
    student gets one row with the right status and a consistent message; the Canvas import
    has Canvas's columns."""
    import csv

    from test_assignments import filled, solutions

    chapter = "02_qk_av"
    subs = tmp_path / "export"
    subs.mkdir()
    wrong = next(w for w in WRONG_ANSWERS if w["id"] == "softmax-over-queries")
    first = subs / f"lovelaceada_100001_2000001_{chapter}.ipynb"
    nbformat.write(filled(chapter, solutions(chapter) | {wrong["question"]: wrong["answer"]}),
                   first)
    os.utime(first, (1_000_000_000, 1_000_000_000))
    nbformat.write(filled(chapter, solutions(chapter)),
                   subs / f"lovelaceada_late_100001_2000009_{chapter}-1.ipynb")
    (subs / f"turingalan_100002_2000002_{chapter}.ipynb").write_bytes(
        (ROOT / "notebooks" / "student" / f"{chapter}.ipynb").read_bytes())
    (subs / "hoppergrace_100003_2000003_mine.ipynb").write_text(json.dumps(
        {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    whole = (ASSIGNMENTS / chapter / "student" / f"{chapter}.ipynb").read_bytes()
    (subs / "knuthdon_100004_2000004_hw.ipynb").write_bytes(whole[: len(whole) // 2])
    attack = filled(chapter, solutions(chapter) | {wrong["question"]: wrong["answer"]})
    first_code = next(i for i, c in enumerate(attack.cells) if c.cell_type == "code")
    attack.cells.insert(first_code + 1, nbformat.v4.new_code_cell(ATTACKS["np.testing patched"]))
    nbformat.write(attack, subs / f"mallory_100005_2000005_{chapter}.ipynb")
    out = tmp_path / "grades.csv"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade_assignments.py"),
                           chapter, str(subs), "--out", str(out)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["lms id"]: r for r in csv.DictReader(out.open())}
    assert set(rows) == {"100001", "100002", "100003", "100004", "100005"}
    auto = json.loads((ASSIGNMENTS / chapter / "questions.json").read_text())
    full = sum(i["points"] for i in auto.values() if i["kind"] == "auto")
    ada = rows["100001"]
    assert ada["student"] == "lovelaceada (100001)" and ada["status"] == "ok"
    assert float(ada["total"]) == full
    assert ada["earlier submissions"] == first.name
    assert rows["100002"]["status"] == "no answer"        # the site's notebook, blank
    assert rows["100003"]["status"] == "no answer"        # no cells
    assert rows["100004"]["status"] == "unreadable"
    assert rows["100005"]["status"] == "refused code cells: 2"
    assert float(rows["100005"][wrong["question"]]) == 0
    for row in rows.values():
        text = (tmp_path / "feedback" / f"{row['student']}.md").read_text()
        if row["status"] == "no answer":
            assert "could not be graded" not in text and "All checks passed" not in text
            assert text.count("no answer") == len(auto)
    assert "not run by the grader" in (tmp_path / "feedback" / "mallory (100005).md").read_text()
    lms = tmp_path / "canvas.csv"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade_assignments.py"),
                           "--lms", str(out), "--lms-format", "canvas", "--lms-out", str(lms),
                           chapter], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    table = list(csv.reader(lms.open()))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", chapter]
    assert {r[1] for r in table[1:]} == set(rows)


def run_cell(env, source, number):
    """Run a cell as a kernel does, its source where inspect.getsource finds it."""
    import linecache

    filename = f"<cell-{number}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), env)


@pytest.mark.parametrize("cell, looped", [
    # found by a second red-team pass: recursion through another function or a lambda, a
    # loop function under a local name or as a default argument
    ("def rows(L, k=0):\n    return [] if k == L else [np.arange(L) <= k] + again(L, k + 1)\n"
     "def again(L, k):\n    return rows(L, k)\nwindow = np.array(rows(6))", True),
    ("r = lambda L, k=0: [] if k == L else [np.arange(L) <= k] + r(L, k + 1)\n"
     "window = np.array(r(6))", True),
    ("def wrows(L):\n    m = map\n    return list(m(lambda q: np.arange(L) <= q, range(L)))\n"
     "window = np.array(wrows(6))", True),
    ("def wrows(L, m=map):\n    return list(m(lambda q: np.arange(L) <= q, range(L)))\n"
     "window = np.array(wrows(6))", True),
    # a third red-team pass: recursion through a parameter; the answer filled in a later
    # cell without an assignment, or by a ufunc's output given by position
    ("def rows(L, k, again):\n    return [] if k == L else [np.arange(L) <= k] + "
     "again(L, k + 1, again)\nwindow = np.array(rows(6, 0, rows))", True),
    # right: a check the exercise asks for, with a comprehension, is not how it is built
    ("window = np.arange(6)[None, :] <= np.arange(6)[:, None]\n"
     "assert window.sum(axis=1).tolist() == [i + 1 for i in range(6)]", False),
    # right: a ufunc's reduce is not a Python loop; a helper function without one
    ("def below(L):\n    return np.arange(L)[None, :] <= np.arange(L)[:, None]\n"
     "window = np.logical_and.reduce([below(6), below(6)])", False),
])
def test_recursion_and_loop_functions_by_any_name_are_loops(cell, looped):
    env = helpers()
    env["In"] = [cell]
    run_cell(env, cell, 1)
    assert bool(env["_t_reached"](env["_t_feeding"]("window"), set())) == looped


@pytest.mark.parametrize("cells, looped", [
    (("window = np.zeros((6, 6), bool)",
      "for i in range(6):\n    np.copyto(window[i], np.arange(6) <= i)"), True),
    (("rows = [np.arange(6) <= i for i in range(6)]",
      "window = np.zeros((6, 6), bool)\nnp.logical_or(window, np.array(rows), window)"), True),
    (("window = np.zeros((6, 6), bool)",
      "pairs = np.array([(i, j) for i in range(6) for j in range(i + 1)])\n"
      "np.logical_or.at(window, (pairs[:, 0], pairs[:, 1]), True)"), True),
])
def test_an_answer_changed_in_place_in_another_cell_is_followed(cells, looped):
    env = helpers()
    env["In"] = list(cells)
    for k, source in enumerate(cells):
        run_cell(env, source, k)
    assert bool(env["_t_reached"](env["_t_feeding"]("window"), set())) == looped


def padding_reached(cells):
    """What the padding exercise's checks find in these cells (padding_mask refused)."""
    env = helpers()
    env["padding_mask"] = lambda lengths, S: np.arange(S) < lengths[:, None]
    env["In"] = list(cells)
    for source in cells:
        exec(source, env)
    return env["_t_reached"](env["_t_feeding"]("by_hand"), {"padding_mask"})


def test_a_check_that_compares_with_the_library_is_not_the_answer_calling_it():
    """Exercise 3.1 asks to compare the mask with padding_mask: that statement reads the
    answer, it does not compute it (a method call such as .tolist() changes nothing)."""
    assert not padding_reached([
        "lengths = np.array([2, 2, 6])\nby_hand = np.arange(6) < lengths[:, None]\n"
        "assert by_hand.tolist() == padding_mask(lengths, 6).tolist()"])
    assert padding_reached(["by_hand = np.arange(4) < np.zeros((3, 1))",
                            "np.copyto(by_hand, padding_mask(np.array([3, 1, 4]), 4))"])


def test_a_library_call_that_changes_the_answer_through_an_alias_is_found():
    assert "padding_mask (a call by that name)" in padding_reached([
        "by_hand = np.arange(6) < np.zeros((3, 1))\nv = by_hand[:]\n"
        "v[...] = padding_mask(np.array([2, 2, 6]), 6)"])
    assert padding_reached(["m = [padding_mask][0](np.array([2, 2, 6]), 6)\n"
                            "by_hand = m & (0 < 1)"])


@pytest.mark.parametrize("cell, looped", [
    ("rows = []\ni = 0\nwhile i < 6:\n    rows.append(np.arange(6) <= i)\n    i += 1\n"
     "window = np.array(rows)", True),
    ("window = np.arange(6)[None, :] <= np.arange(6)[:, None]\n"
     "for row in window:\n    print(row.sum())", False),
    ("for k in range(3):\n    print(k)\nwindow = np.arange(6)[None, :] <= np.arange(6)[:, None]",
     False),
    ("def build(n):\n    return np.array([np.arange(n) <= i for i in range(n)])\n"
     "window = build(6)", True),
    # cells run one after the other: the loop in one cell, its result used in the next
    (("rows = [np.arange(6) <= i for i in range(6)]", "window = np.array(rows)"), True),
    (("rows = []", "for i in range(6):\n    rows.append(np.arange(6) <= i)",
      "n = 6", "window = np.array(rows[:n])"), True),
    (("import numpy as np\nfor name in ['a', 'b']:\n    print(name)", "n = 6",
      "window = np.arange(n)[None, :] <= np.arange(n)[:, None]"), False),
    (("n = 6", "window = np.arange(n)[None, :] <= np.arange(n)[:, None]",
      "for row in window:\n    print(row)"), False),
    # found by a red-team pass: a decoy that assigns without running hides nothing
    (("rows = []\nfor i in range(6):\n    rows.append(np.arange(6) <= i)\n"
      "window = np.array(rows)",
      "if False:\n    window = np.arange(6)[None, :] <= np.arange(6)[:, None]"), True),
    # a loop that fills the answer in place after it is assigned, directly or by an alias
    ("window = np.zeros((6, 6), bool)\nfor i in range(6):\n    window[i, :i + 1] = True", True),
    ("window = np.zeros((6, 6), bool)\nfor row, k in zip(window, range(6)):\n"
     "    row[:k + 1] = True", True),
    ("window = np.zeros((6, 6), bool)\nv = window[:]\nfor i in range(6):\n    v[i, i] = True",
     True),
    # loops by other names, and a function chosen by an expression
    ("import itertools\nwindow = np.array(list(itertools.accumulate(range(6), "
     "lambda r, q: np.arange(6) <= q, initial=np.arange(6) < 0)))[1:]", True),
    ("window = np.array(list([map][0](lambda q: np.arange(6) <= q, range(6))))", True),
    ("rows = []\nmax(range(6), key=lambda q: rows.append(np.arange(6) <= q) or q)\n"
     "window = np.array(rows)", True),
    # right: a function of the indices (np.fromfunction calls it once, with index arrays);
    # its parameters are not names of earlier cells, even where one assigns them in a loop
    (("m = [i for i in range(3)]\ni = 2",
      "window = np.fromfunction(lambda i, j: (j <= i) & (j > i - 3), (6, 6))"), False),
])
def test_a_loop_that_builds_the_answer_is_found_and_one_that_checks_it_is_not(cell, looped,
                                                                             monkeypatch):
    env = helpers()
    cells = list(cell) if isinstance(cell, tuple) else [cell]
    env["In"] = cells
    for source in cells:
        exec(source, env)
    text = "\n".join(cells)
    monkeypatch.setattr(env["_t_inspect"], "getsource", lambda f: text.split("window =")[0])
    assert bool(env["_t_reached"](env["_t_feeding"]("window"), set())) == looped


def test_lms_identities_and_the_moodle_import(tmp_path):
    """Moodle's and Canvas's export names give the student and the LMS's identifier; the
    Moodle worksheet has Moodle's columns and `Participant <id>`; a student with no
    identifier is left out, and named."""
    import csv

    from grade_assignments import lms_export, lms_identity, read_roster, student_of

    subs = tmp_path / "subs"
    moodle = subs / "Ada Lovelace_100001_assignsubmission_file_" / "anything.ipynb"
    canvas = subs / "lovelaceada_late_100001_2000009_03_masking-1.ipynb"
    for path in (moodle, canvas):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    assert lms_identity(moodle, subs) == ("moodle", "Ada Lovelace", "100001")
    assert lms_identity(canvas, subs) == ("canvas", "lovelaceada", "100001")
    assert student_of(canvas, subs) == "lovelaceada (100001)"
    assert student_of(subs / "ada (2).ipynb", subs) == "ada"
    roster = tmp_path / "roster.csv"
    roster.write_text("student,id\nada,42\n")
    assert read_roster(roster) == {"ada": "42"}
    grades = tmp_path / "grades.csv"
    grades.write_text("student,q1,q2,total,max,graded max,percent,status,submission,"
                      "earlier submissions,identical to,lms,lms id\n"
                      "Ada Lovelace (100001),2,1,3,4,2,100.0,ok,a.ipynb,,,moodle,100001\n"
                      "bob,1,,1,4,2,50.0,ok,b.ipynb,,,,\n")
    out = tmp_path / "moodle.csv"
    assert lms_export(grades, out, form="moodle") == 0
    table = list(csv.reader(out.open()))
    assert table == [["Identifier", "Full name", "Grade", "Maximum Grade"],
                     ["Participant 100001", "Ada Lovelace", "75.0", "100.0"]]
