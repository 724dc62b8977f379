"""The notebooks a learner opens in Jupyter are accessible as documents (issue 48; the checks
of jupyterlab-a11y-checker that apply to a notebook file): every image has a text
alternative, one top-level heading and no skipped heading level, every table has a header
row. Over every reader and student notebook (notebooks/reader/, notebooks/student/) and,
when `make assignments` has built them, the assignments' notebooks (_build/assignments/).

A figure's text alternative is the `image.alt` of the cell's metadata (the `mystnb` figure
options the site's <img alt> is made from); an explorer's picture is described by its
output's text. Fast: reads JSON only.
"""

import re
from itertools import pairwise
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*(ROOT / "notebooks" / "reader").glob("*.ipynb"),
                    *(ROOT / "notebooks" / "student").glob("*.ipynb"),
                    *(ROOT / "_build" / "assignments").rglob("*.ipynb")])
NOTEBOOKS = [p for p in NOTEBOOKS if ".ipynb_checkpoints" not in p.parts]

FENCE = re.compile(r"^(`{3,}|~{3,})")
MD_HEADING = re.compile(r"^(#{1,6})\s+\S")
HTML_HEADING = re.compile(r"<h([1-6])\b", re.IGNORECASE)
MD_IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)]*)\)")
HTML_IMAGE = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
ALT = re.compile(r"""\balt\s*=\s*("([^"]*)"|'([^']*)')""", re.IGNORECASE)
HTML_TABLE = re.compile(r"<table\b.*?</table>", re.IGNORECASE | re.DOTALL)
PIPE_DELIMITER = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
MATPLOTLIB_REPR = re.compile(r"^<(Figure|matplotlib)\b")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")


def name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose_lines(markdown: str):
    """The lines of a Markdown cell outside code fences."""
    fence = None
    for line in markdown.splitlines():
        opened = FENCE.match(line.strip())
        if opened:
            if fence is None:
                fence = opened[1][0]
            elif opened[1][0] == fence:
                fence = None
            continue
        if fence is None:
            yield line


def headings(nb) -> list[int]:
    levels = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in prose_lines(cell.source):
            m = MD_HEADING.match(line)
            if m:
                levels.append(len(m[1]))
            levels += [int(h) for h in HTML_HEADING.findall(line)]
    return levels


def heading_problems(levels: list[int]) -> list[str]:
    problems = []
    if levels.count(1) != 1:
        problems.append(f"{levels.count(1)} top-level (h1) headings, not 1")
    if levels and levels[0] != 1:
        problems.append(f"the first heading is h{levels[0]}, not h1")
    for before, after in pairwise(levels):
        if after > before + 1:
            problems.append(f"h{before} followed by h{after}")
    return problems


def image_problems(nb) -> list[str]:
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            text = "\n".join(prose_lines(cell.source))
            problems += [f"cell {index}: image {src!r} without alt text"
                         for alt, src in MD_IMAGE.findall(text) if not alt.strip()]
            for tag in HTML_IMAGE.findall(text):
                alt = ALT.search(tag)
                if not (alt and (alt[2] or alt[3] or "").strip()):
                    problems.append(f"cell {index}: {tag[:60]} without alt text")
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if not any(kind in data for kind in IMAGE_TYPES):
                continue
            alt = (cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
                   or cell.metadata.get("image", {}).get("alt", ""))
            text = data.get("text/plain", "")
            text = "".join(text) if isinstance(text, list) else text
            described = len(text.strip()) >= 20 and not MATPLOTLIB_REPR.match(text.strip())
            if not (str(alt).strip() or described):
                problems.append(f"cell {index}: an image output without alt text "
                                f"(its text: {text.strip()[:40]!r})")
    return problems


def table_problems(nb) -> list[str]:
    problems = []
    for index, cell in enumerate(nb.cells):
        texts = []
        if cell.cell_type == "markdown":
            lines = list(prose_lines(cell.source))
            for row, line in enumerate(lines):
                if PIPE_DELIMITER.match(line) and "|" in line:
                    header = lines[row - 1] if row else ""
                    cells = [c.strip() for c in header.strip().strip("|").split("|")]
                    if not header.strip() or not any(cells):
                        problems.append(f"cell {index}: a table with an empty header row")
            texts.append("\n".join(lines))
        for output in cell.get("outputs", []):
            html = output.get("data", {}).get("text/html", "")
            texts.append("".join(html) if isinstance(html, list) else html)
        for text in texts:
            for table in HTML_TABLE.findall(text):
                if not re.search(r"<th\b", table, re.IGNORECASE):
                    problems.append(f"cell {index}: an HTML table without header cells (<th>)")
    return problems


def test_there_are_notebooks_to_check():
    assert len([p for p in NOTEBOOKS if "reader" in p.parts]) >= 9
    assert len([p for p in NOTEBOOKS if "student" in p.parts]) >= 9


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_notebook_has_one_h1_and_no_skipped_heading_level(path):
    nb = nbformat.read(path, as_version=4)
    levels = headings(nb)
    assert levels, "no heading"
    assert not heading_problems(levels), heading_problems(levels)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_every_image_in_the_notebook_has_alt_text(path):
    problems = image_problems(nbformat.read(path, as_version=4))
    assert not problems, problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_every_table_in_the_notebook_has_a_header_row(path):
    problems = table_problems(nbformat.read(path, as_version=4))
    assert not problems, problems


def test_the_checks_catch_what_they_look_for():
    # Each check fails on a notebook with the fault (so a green run means something).
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title\n\n### Skipped\n\n```\n# not a heading\n```"),
        nbformat.v4.new_markdown_cell("![](figure.png) <img src='a.png'>\n\n"
                                      "| | |\n|---|---|\n| 1 | 2 |\n\n<table><tr><td>1</td></tr></table>"),
        nbformat.v4.new_code_cell("plot()", outputs=[nbformat.v4.new_output(
            "display_data", data={"image/png": "iVBOR", "text/plain": "<Figure size 6x4>"})]),
    ]
    assert heading_problems(headings(nb)) == ["h1 followed by h3"]
    assert len(image_problems(nb)) == 3
    assert len(table_problems(nb)) == 2
    assert heading_problems([2, 1, 1]) == ["2 top-level (h1) headings, not 1",
                                           "the first heading is h2, not h1"]
