"""A chapter shows the lesson, not its harness.

What a reader sees of a notebook is its visible code cells: those the page neither removes
(`remove-cell`, `remove-input`) nor collapses (`hide-cell`, `hide-input`). In them, the lines
that only guard the book -- `glue(...)` calls, `assert` statements and `np.testing` checks --
may be at most a tenth of the code; the rest is the lesson. Glue calls belong in removed
cells, checks in collapsed or removed cells right after the cell they check (nbval and the
build still run them), and a visible cell holds one idea: at most 30 lines.

Counted per chapter over the MyST sources (`notebooks/*.md`):
- a *line* is a non-blank line that is not only a comment;
- a *bookkeeping* line is a line of an `assert`, of a call to `glue` or to a function whose
  name starts with `assert` (`np.testing.assert_allclose`, ...), or of a loop or `with` block
  whose body holds only such statements.
"""

import ast
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks").glob("*.md"))
HIDDEN_TAGS = {"remove-cell", "remove-input", "hide-cell", "hide-input"}
MAX_SHARE = 0.10
MAX_CELL_LINES = 30
# A paragraph that tells the reader to skip code, such as "those lines compute nothing new,
# and you can skip them".
SKIP_ADVICE = re.compile(r"\b(can|may|could)\s+(safely\s+)?skip\b|\bskip\s+(them|these|those)\b",
                         re.I)


def visible_code_cells(md: Path) -> list[str]:
    nb = jupytext.read(md)
    return [c.source for c in nb.cells if c.cell_type == "code"
            and not HIDDEN_TAGS & set(c.metadata.get("tags", []))]


def code_lines(source: str) -> set[int]:
    """Line numbers (1-based) of the non-blank, non-comment lines of a cell."""
    return {i for i, line in enumerate(source.splitlines(), 1)
            if line.strip() and not line.strip().startswith("#")}


def _called_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return ""


def is_bookkeeping(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Assert):
        return True
    if isinstance(stmt, ast.Expr):
        name = _called_name(stmt.value)
        return name == "glue" or name.startswith("assert")
    if isinstance(stmt, (ast.For, ast.While, ast.With)):
        return all(is_bookkeeping(s) for s in stmt.body + getattr(stmt, "orelse", []))
    return False


def bookkeeping_lines(source: str) -> set[int]:
    # IPython magics and shell escapes are not Python: read them as `pass`.
    python = "\n".join("pass" if line.lstrip().startswith(("%", "!")) else line
                       for line in source.splitlines())
    lines: set[int] = set()
    for node in ast.walk(ast.parse(python)):
        if isinstance(node, ast.stmt) and is_bookkeeping(node):
            lines |= set(range(node.lineno, node.end_lineno + 1))
    return lines & code_lines(source)


def harness_share(md: Path) -> tuple[int, int]:
    """(bookkeeping lines, code lines) over a notebook's visible code cells."""
    book = code = 0
    for source in visible_code_cells(md):
        code += len(code_lines(source))
        book += len(bookkeeping_lines(source))
    return book, code


def test_the_counts_see_glue_asserts_and_checking_loops():
    cell = ("x = 1  # set\n\nassert x == 1\nglue('x', x, display=False)\n"
            "np.testing.assert_allclose(\n    x,\n    1,\n)\nfor i in range(2):\n"
            "    assert i < 2\nprint(x)\n%time y = 2\n")
    assert len(code_lines(cell)) == 11
    assert bookkeeping_lines(cell) == {3, 4, 5, 6, 7, 8, 9, 10}


def test_there_are_chapters():
    assert SOURCES


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_visible_code_is_at_most_a_tenth_bookkeeping(md):
    book, code = harness_share(md)
    assert code, f"{md.name} shows no code"
    assert book <= MAX_SHARE * code, (
        f"{md.name}: {book} of {code} visible code lines ({book / code:.0%}) are glue calls "
        f"or assertions (at most {MAX_SHARE:.0%}): move glue to `remove-cell` cells and checks "
        "that guard the book to a `remove-cell` cell after the one they check, or to tests/")


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_no_visible_code_cell_is_over_30_lines(md):
    long = [(len(s.strip().splitlines()), s.strip().splitlines()[0])
            for s in visible_code_cells(md) if len(s.strip().splitlines()) > MAX_CELL_LINES]
    assert not long, (f"{md.name}: visible code cells over {MAX_CELL_LINES} lines "
                      f"(lines, first line): {long}")


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_no_paragraph_tells_the_reader_to_skip_code(md):
    nb = jupytext.read(md)
    advice = [m.group(0) for c in nb.cells if c.cell_type == "markdown"
              for m in [SKIP_ADVICE.search(c.source)] if m]
    assert not advice, f"{md.name} tells the reader to skip something: {advice}"


# Issue 33: a chapter prints what it measured, and shows a check only where a reader wants
# the proof. Issue 34: it asks the reader at least five self-check questions. These tests
# read every chapter; a branch that holds only some chapters' changes fails on the others
# (the lead merges the chapters' branches before CI runs).
# Issue 43: a folded check only where the prose points to it as the evidence of a claim
# that no printed output shows, two a chapter at most; the rest run in remove-cell cells.
MAX_FOLDED_CHECKS = 2
MIN_SELF_CHECKS = 5
# A stand-in for a measurement: a printed "(a bound", or the helpers that rounded a
# measured value up to a power of ten so that every CPU printed the same constant.
STAND_INS = ("(a bound", "power_of_ten_above", "BOUND")
QUESTION_CALL = re.compile(
    r"\b(number|shape|choice|wrong_output)_question\(\s*[\"']sc-[a-z0-9-]+[\"']")


def folded_checks(md: Path) -> list[str]:
    """The prompts of a chapter's folded checks: hide-cell code cells labelled 'Check: ...'."""
    nb = jupytext.read(md)
    prompts = []
    for c in nb.cells:
        if c.cell_type == "code" and "hide-cell" in c.metadata.get("tags", []):
            prompt = c.metadata.get("mystnb", {}).get("code_prompt_show", "")
            if prompt.startswith("Check:"):
                prompts.append(prompt)
    return prompts


def self_checks(md: Path) -> list[str]:
    """The ids of a chapter's self-check questions: remove-input code cells that ask one."""
    nb = jupytext.read(md)
    return [m.group(0) for c in nb.cells
            if c.cell_type == "code" and "remove-input" in c.metadata.get("tags", [])
            for m in QUESTION_CALL.finditer(c.source)]


def test_the_counts_see_folded_checks_and_questions(tmp_path):
    md = tmp_path / "x.md"
    md.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "---\n\n```{code-cell} ipython3\n---\nmystnb:\n  code_prompt_show: 'Check: x'\n"
        "tags: [hide-cell]\n---\nassert 1\n```\n\n```{code-cell} ipython3\n:tags: [hide-cell]"
        "\n\nprint(1)\n```\n\n```{code-cell} ipython3\n:tags: [remove-input]\n\n"
        "number_question(\n    \"sc-x-y\", \"Q?\", answer=a, tol=1e-3, right=\"r\")\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\nchoice_question('sc-x-z', 'Q?')\n```\n")
    assert folded_checks(md) == ["Check: x"]
    assert len(self_checks(md)) == 1


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_no_constant_stands_in_for_a_measurement(md):
    text = md.read_text()
    found = {s: text.count(s) for s in STAND_INS if s in text}
    assert not found, (f"{md.name} prints a bound or a power of ten instead of what it "
                       f"measured (print the value, `.1e` if it is rounding): {found}")


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_at_most_two_folded_checks(md):
    prompts = folded_checks(md)
    assert len(prompts) <= MAX_FOLDED_CHECKS, (
        f"{md.name} folds {len(prompts)} checks (at most {MAX_FOLDED_CHECKS}: keep those the "
        f"prose points to as the evidence of a claim no output shows, run the others as "
        f"remove-cell): {prompts}")


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_at_least_five_self_check_questions(md):
    ids = self_checks(md)
    assert len(ids) >= MIN_SELF_CHECKS, (
        f"{md.name} asks {len(ids)} self-check questions (at least {MIN_SELF_CHECKS}, at "
        "the ends of core sections: lib.selfcheck)")
