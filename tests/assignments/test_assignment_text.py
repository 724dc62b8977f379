"""How scripts/assignments.py writes the book's references in an assignment's Markdown, with
the converter of scripts/jupyter_notebooks.py (a plain `pytest` runs these; the graded checks
are in test_assignments.py)."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import assignments  # noqa: E402

BOOK = assignments.Book.read()
NUMBERS = {label: target.number for label, target in BOOK.labels.items() if target.number}


def test_a_chapters_labelled_sections_are_numbered_in_order():
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        chapter = int(md.name[:2])
        labels = re.findall(r"^\(([\w-]+)\)=\s*\n## ", md.read_text(), re.M)
        numbers = [NUMBERS[label] for label in labels]
        assert numbers and all(n.startswith(f"Section {chapter}.") for n in numbers)
        tops = [int(n.split(".")[1]) for n in numbers]
        assert tops == sorted(tops) and len(set(tops)) == len(tops), md.name


def test_numbered_references_are_written_with_their_numbers():
    convert = assignments.Chapter("01_span", BOOK, assignments.Bibliography())
    text = convert.text("\n".join([
        "as {numref}`section {number} <nb-span-hull>` does,",
        "({numref}`Exercise {number} <span-ex-bounds>`);",
        "{numref}`fig-span-hull` shows the outputs.",
    ]))
    hull = NUMBERS["nb-span-hull"].split()[-1]
    bounds = NUMBERS["span-ex-bounds"].split()[-1]
    assert text.splitlines() == [f"as section {hull} does,", f"(Exercise {bounds});",
                                 f"{NUMBERS['fig-span-hull']} shows the outputs."]
    assert re.fullmatch(r"1\.\d+", hull) and NUMBERS["fig-span-hull"].startswith("Fig. 1.")


def question_files():
    return sorted(p for p in assignments.QUESTIONS.glob("*.py")
                  if p.name not in ("_helpers.py", "conftest.py"))


def test_every_question_file_has_teaching_public_tests_and_hidden_tests_holding_its_points():
    assert len(question_files()) >= 19
    for path in question_files():
        points, tests = assignments.question_tests(path.stem)
        assert 1 <= points <= 4, path.name
        public = [t for t in tests if not re.search(r"^hidden:\s*true", t, re.M)]
        hidden = [t for t in tests if re.search(r"^hidden:\s*true", t, re.M)]
        assert public and hidden, path.name
        assert all(re.search(r"^points: 0$", t, re.M) for t in public), path.name
        hidden_points = [int(re.search(r"^points: (\d+)$", t, re.M)[1]) for t in hidden]
        assert sum(hidden_points) == points, path.name
        assert all("failure_message" in t for t in tests), path.name


def test_gradescope_lock_pins_every_package_by_hash():
    lines = [line for line in assignments.LOCK.read_text().splitlines()
             if line and not line.startswith("#")]
    assert all(re.fullmatch(r'[\w.-]+==[\w.]+( ; python_version == "3\.1\d"( or python_version == "3\.1\d")*)?'
                            r"( --hash=sha256:[0-9a-f]{64})+", line)
               for line in lines), lines
    names = {line.split("==")[0].lower() for line in lines}
    assert f"otter-grader=={assignments.OTTER_VERSION}" in {line.split()[0] for line in lines}
    assert {"numpy", "scipy", "ipykernel", "safetensors", "tokenizers"} <= names
    # wheels for every Python the zip installs on (the image's own, 3.11 to 3.13): numpy's
    # differ by Python, so it carries one hash per Python
    numpy = next(line for line in lines if line.lower().startswith("numpy=="))
    assert numpy.count("--hash=") >= len(assignments.LOCK_PYTHONS)
    assert {"sphinx", "sqlalchemy", "myst-nb"} <= assignments.LOCK_LEAVES_OUT
    assert not names & assignments.LOCK_LEAVES_OUT and "torch" not in names


# Issue 35: what a student sees on Gradescope, and the shortcuts the checks refuse.
import assignment_feedback  # noqa: E402

OTTER_OUTPUT = """masking-ex-window results:
    masking-ex-window - 1 result:
        ✅ Test case passed

    masking-ex-window - 2 message: The first query of `window` sees no key.

    masking-ex-window - 2 result:
        ❌ Test case failed
        Trying:
            assert np.all(_t_w.sum(axis=1) > 0)
        Expected nothing
        Got: array([0, 1, 2])
"""


def test_gradescope_results_show_the_first_failing_message_after_publishing_not_the_test():
    results = {"tests": [
        {"name": "Public Tests", "visibility": "visible", "output": OTTER_OUTPUT},
        {"name": "masking-ex-window", "score": 0, "max_score": 2, "visibility": "hidden",
         "output": OTTER_OUTPUT},
        {"name": "masking-ex-padding", "score": 0, "max_score": 1, "visibility": "hidden",
         "output": "masking-ex-padding - 1 message: lets through\n"
                   "masking-ex-padding - 1 result:\n    ❌ Test case failed\n"}],
        "stdout_visibility": "after_published"}
    nb = {"cells": [
        {"cell_type": "markdown", "source": "**Exercise 3.1** (`masking-ex-padding`)",
         "metadata": {}},
        {"cell_type": "code", "source": "...", "metadata": {"tags": ["otter_answer_cell"]}},
        {"cell_type": "markdown", "source": "**Exercise 3.2** (`masking-ex-window`)",
         "metadata": {}},
        {"cell_type": "code", "source": "window = 1", "metadata": {"tags": ["otter_answer_cell"]}},
    ], "metadata": {"course_assignment": {"assignment": "03_masking-1-t"}}}
    config = {"visibility": "after_published", "assignment": "03_masking-1-t",
              "templates": {"masking-ex-padding": ["..."], "masking-ex-window": ["..."]}}
    shown = assignment_feedback.student_results(results, nb, config)
    tests = {t["name"]: t for t in shown["tests"]}
    assert "stdout_visibility" not in shown
    window = tests["masking-ex-window"]
    assert window["visibility"] == "after_published"
    assert window["output"] == ("masking-ex-window: 0 / 2\n"
                                "The first query of `window` sees no key.")
    assert tests["masking-ex-padding"]["output"].endswith("\nno answer")
    for test in shown["tests"]:
        assert "_t_w" not in test["output"] and "Got:" not in test["output"]
    assert "Assignment version" not in tests
    config["visibility"] = "visible"
    other = dict(nb, metadata={"course_assignment": {"assignment": "03_masking-0-old"}})
    shown = assignment_feedback.student_results(results, other, config)
    tests = {t["name"]: t for t in shown["tests"]}
    assert tests["masking-ex-window"]["visibility"] == "visible"
    assert "another version" in tests["Assignment version"]["output"]


def helpers_namespace():
    namespace = {"np": __import__("numpy"), "__name__": "__main__"}
    exec(compile(assignments.HELPERS.read_text(), "<helpers>", "exec"), namespace)
    return namespace


def test_shortcuts_are_refused_however_the_library_function_is_reached():
    import numpy as np
    import scipy.special

    h = helpers_namespace()
    ns = h | {"lse_of": scipy.special.logsumexp, "scipy": scipy}

    def renamed(x):
        return x - ns["lse_of"](x, axis=-1, keepdims=True)

    def through_getattr(x):
        return x - getattr(scipy.special, "log" + "sumexp")(x, axis=-1, keepdims=True)

    def own(x):
        m = x.max(axis=-1, keepdims=True)
        return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))

    refused = {"log_softmax", "logsumexp", "softmax"}
    x = np.arange(6.0).reshape(2, 3)
    assert h["_t_library_calls"](lambda: renamed(x), refused) == {"logsumexp"}
    assert h["_t_library_calls"](lambda: through_getattr(x), refused) == {"logsumexp"}
    assert h["_t_library_calls"](lambda: own(x), refused) == set()
    # a value built by an alias, a module attribute or a comprehension
    import ast
    from lib import attention

    h["pm"], h["la"] = attention.padding_mask, attention
    reached = h["_t_reached"]
    masks = {"padding_mask", "causal_mask"}
    assert reached([ast.parse("pm(np.array([3, 1]), 4)")], masks)
    assert reached([ast.parse("la.padding_mask(np.array([3, 1]), 4)")], masks)
    assert reached([ast.parse("getattr(la, 'padding_mask')(np.array([3, 1]), 4)")], masks)
    assert reached([ast.parse("np.array([[j < n for j in range(4)] for n in (3, 1)])")], masks)
    assert not reached([ast.parse("np.arange(4)[None, :] < np.array([3, 1])[:, None]")], masks)


def test_student_edition_download_menu_offers_the_assignment_or_says_where_it_is(tmp_path,
                                                                              monkeypatch):
    # issue 35: the student site's download notebook was not the assignment notebook (0 of
    # its 8 `grader` lines), so a student could hand in the wrong one
    sys.path.insert(0, str(ROOT / "_ext"))
    import types

    import editions

    def page(hide_solutions=True):
        group = {"label": "download-buttons", "buttons": []}
        context = {"header_buttons": [group], "pathto": lambda name, resource=0: f"../{name}"}
        app = types.SimpleNamespace(config=types.SimpleNamespace(hide_solutions=hide_solutions))
        editions.assignment_button(app, "notebooks/03_masking", "page.html", context, None)
        return group["buttons"]

    monkeypatch.setattr(editions, "ASSIGNMENTS", tmp_path)
    (button,) = page()
    assert "instructor_guide" in button["url"] and "from your instructor" in button["tooltip"]
    (tmp_path / "03_masking" / "student" / "tests").mkdir(parents=True)
    (tmp_path / "03_masking" / "student" / "03_masking.ipynb").write_text("{}")
    (tmp_path / "03_masking" / "student" / "tests" / "q.py").write_text("")
    (button,) = page()
    assert button["url"].endswith("_downloads/assignments/03_masking-assignment.zip")
    assert page(hide_solutions=False) == []      # the full edition has no assignment entry
    out = tmp_path / "site"
    app = types.SimpleNamespace(config=types.SimpleNamespace(hide_solutions=True),
                                builder=types.SimpleNamespace(name="html"), outdir=str(out),
                                env=types.SimpleNamespace(found_docs={"notebooks/03_masking",
                                                                      "index"}))
    editions.copy_assignments(app, None)
    import zipfile

    with zipfile.ZipFile(out / "_downloads/assignments/03_masking-assignment.zip") as z:
        assert sorted(z.namelist()) == ["03_masking/03_masking.ipynb", "03_masking/tests/q.py"]


def rubric_specs():
    """Every hand-graded question's spec, tests/assignments/questions/<label>.yml."""
    return {p.stem: assignments.question_spec(p.stem)
            for p in sorted(assignments.QUESTIONS.glob("*.yml"))
            if not p.name.endswith(".term.yml")}


RUBRIC_UNIT = 0.0625  # the smallest rubric item, a sixteenth of a point


def test_every_rubric_item_is_one_claim_with_a_rule_for_half_right_and_every_question_names_its_common_mistakes():
    # issue 45: items worth 0.25 bundled two or three claims with no rule for half-right, and
    # no item named a common mistake; a TA applies each item the same way twice
    specs = rubric_specs()
    assert len(specs) >= 30
    for label, spec in specs.items():
        mistakes = " ".join((spec.get("mistakes") or "").split())
        assert len(mistakes) > 60 and ";" in mistakes, f"{label}: no line of common mistakes"
        for item in spec["rubric"]:
            where = f"{label}: {item['criterion'][:50]}"
            assert set(item) <= {"points", "criterion", "partial"}, where
            assert (item["points"] / RUBRIC_UNIT).is_integer() and item["points"] > 0, where
            # one claim: no item above a quarter point (the bundled ones were 0.4 and 0.5)
            assert item["points"] <= 0.25, where
            if item["points"] > 2 * RUBRIC_UNIT:
                assert item.get("partial"), f"{where}: worth more than 0.125, no partial rule"
            if item.get("partial"):
                part = re.match(r"(\d*\.?\d+) (if|for) ", item["partial"])
                assert part, f"{where}: a partial rule starts with its points, then if or for"
                earned = float(part[1])
                assert 0 < earned < item["points"] and (earned / RUBRIC_UNIT).is_integer(), where


def test_rubrics_render_their_partial_rules_and_mistakes_for_gradescope_and_the_ta():
    import grade_assignments

    specs = rubric_specs()
    questions = {label: {"kind": "manual", "points": spec["points"], "rubric": spec["rubric"],
                         "mistakes": spec["mistakes"], "model": "The book's solution."}
                 for label, spec in specs.items()}
    rubrics = assignments.rubrics_markdown("01_span", questions)
    for label, spec in specs.items():
        ta = "\n".join(grade_assignments.rubric_markdown(label, questions[label]))
        for item in spec["rubric"]:
            line = f"{item['points']:g}: {' '.join(item['criterion'].split())}"
            if item.get("partial"):
                line += f" *Partly right:* {' '.join(item['partial'].split())}"
            assert f"\n- {line}\n" in rubrics and f"\n- {line.replace(':', ' pt:', 1)}\n" in ta
        mistakes = " ".join(spec["mistakes"].split())
        assert f"Common mistakes: {mistakes}" in rubrics
        assert f"**Common mistakes:** {mistakes}" in ta


def autograded_labels():
    """Every autograded question of the course (scripts/assignments.py's own reading of the
    chapters), by the exercise label whose term spec holds its constants (a pen-and-paper
    exercise's `<label>-result` by `<label>`)."""
    labels = set()
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        _, questions = assignments.master_notebook(md, BOOK)
        labels |= {q.removesuffix("-result") for q, info in questions.items()
                   if info["kind"] == "auto"}
    return labels


def test_every_autograded_question_changes_with_the_term():
    """Issue 45: the full site prints every solution, so each autograded question's answer
    depends on the term's constants (a `<label>.term.yml` whose every constant has choices
    other than the book's): the site's code, pasted as it is, is wrong in every other term
    (test_assignments.py grades it: 0 points on each)."""
    labels = autograded_labels()
    assert len(labels) >= 30
    missing = sorted(label for label in labels
                     if not (assignments.QUESTIONS / f"{label}.term.yml").exists())
    assert not missing, f"autograded questions without term constants: {missing}"
    for label in labels:
        _, spec = assignments.term_constants(label)
        assert spec["constants"], label
        for name, constant in spec["constants"].items():
            assert constant["choices"] and constant["book"] not in constant["choices"], (label, name)


def test_a_term_spec_rewrites_text_and_solution_and_a_pattern_matching_nothing_fails(
        tmp_path, monkeypatch):
    (tmp_path / "ex-a.term.yml").write_text(
        "constants:\n"
        "  target:\n"
        "    book: {j: 1, v: '(0, 2)', say: v_1}\n"
        "    choices: [{j: 0, v: '(1, 0)', say: v_0}]\n"
        "  tol:\n    book: 0.001\n    choices: [0.0001]\n"
        "text:\n  'v_1 = \\(0, 2\\)': 'v_{target[j]} = {target[v]}'\n"
        "solution:\n  'tol = 1e-3': 'tol = {tol}'\n"
        "  'NOT THERE': 'x'\n")
    monkeypatch.setattr(assignments, "QUESTIONS", tmp_path)
    monkeypatch.setattr(assignments, "term_config", lambda: {"seed": 7})
    term, spec = assignments.term_constants("ex-a")
    assert term == {"target": {"j": 0, "v": "(1, 0)", "say": "v_0"}, "tol": 0.0001}
    text = assignments.term_rewrite("ex-a", "near the row v_1 = (0, 2), within", "text")
    assert text == "near the row v_0 = (1, 0), within"
    assert assignments.term_rewrite("ex-a", "tol = 1e-3", "solution", count=False) == "tol = 0.0001"
    try:
        assignments.term_rewrite("ex-a", "tol = 1e-3", "solution")
    except ValueError as error:
        assert "NOT THERE" in str(error)
    else:
        raise AssertionError("a solution pattern that matches nothing passed")
    code = assignments.with_term_constants("ex-a", "assert x < _t_term['tol']")
    assert code.splitlines()[0].startswith("_t_term = {'target': {'j': 0")
    assert assignments.with_term_constants("ex-a", "assert x") == "assert x"
    assert assignments.shown(term["target"]) == "v_0" and assignments.shown(0.5) == "0.5"
    # seed 0: the book's values
    monkeypatch.setattr(assignments, "term_config", lambda: {"seed": 0})
    assert assignments.term_constants("ex-a")[0]["tol"] == 0.001


def test_the_student_notebook_names_the_notebooks_names_the_checks_read():
    """Chapter 6's checks recompute the layer from the notebook's X and W_O: the assignment
    says, under its identifier, that a cell assigning or changing them is not run."""
    nb, _ = assignments.master_notebook(ROOT / "notebooks" / "06_multi_head.md", BOOK)
    intro = next(c.source for c in nb.cells if "Hand in this notebook" in c.source)
    assert "`W_O`" in intro and "`X`" in intro and "is not run by the grader" in intro
    assert "`total`" not in intro     # an answer's own name is the student's to assign
