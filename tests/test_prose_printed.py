"""Every number the prose quotes from `glue` is printed by an output on the page, near
where it is quoted (issue 18): by the cell that computes and glues it, or by a cell of the
section that quotes it. A reader sees each number computed, and nbval compares it.

The check reads the executed references (notebooks/*.ipynb): each {glue:text}`name:fmt`
of a Markdown cell is formatted as the page shows it, and must appear among the numbers
that a shown output prints (a cell tagged remove-cell or remove-output shows none),
rounded as the prose rounds it. tests/site/test_prose_numbers.py checks the numbers typed
into the prose.
"""

import math
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = sorted((ROOT / "notebooks").glob("*.ipynb"))
GLUE_REF = re.compile(r"\{glue:text\}`([^`:]+)(?::([^`]*))?`")
GLUE_MIME = "application/papermill.record/text/plain"
# 1,050,624 (thousands), -0.25, .5, 2.5e-15, 30 (of 30%)
NUMBER = re.compile(r"[-−]?(?:\d{1,3}(?:,\d{3})+(?!\d|,\d)|\d+\.?\d*|\.\d+)(?:[eE][-+−]?\d+)?")
HIDDEN = {"remove-cell", "remove-output"}


def numbers_in(text: str) -> list[float]:
    return [float(t.replace(",", "").replace("−", "-")) for t in NUMBER.findall(text)]


def shown(value, spec: str) -> str:
    """The text the page shows for a glued value ({glue:text} formats it with spec)."""
    return format(value, spec) if spec else str(value)


def is_printed(text: str, printed: list[float]) -> bool:
    """Whether a number shown as `text` (0.4082, 1,024, 30%, 2.9e-04) is among `printed`,
    rounded as `text` is."""
    text = text.replace(",", "")
    if text.endswith("%"):
        text, printed = text[:-1], printed + [100 * p for p in printed]
    value = float(text)
    fixed = re.fullmatch(r"-?\d*\.?(\d*)", text)
    if fixed:  # 0.4082: four decimals; 12: an integer
        digits = len(fixed[1])
        return any(math.isclose(round(p, digits), value, abs_tol=10 ** -(digits + 3))
                   for p in printed)
    mantissa = re.sub(r"\D", "", text.lower().split("e")[0]).lstrip("0") or "0"
    return any(math.isclose(p, value, rel_tol=0.5 * 10 ** (1 - len(mantissa)))
               for p in printed)


def headings(markdown: str) -> int:
    """How many chapter or section headings (# or ##) a piece of Markdown opens."""
    return sum(line.startswith(("# ", "## ")) for line in markdown.splitlines())


def unprinted(ipynb: Path) -> list[str]:
    nb = nbformat.read(ipynb, as_version=4)
    values, printed_by_cell, glued_by = {}, [], {}
    refs, section_of_cell, section = [], [], 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            # a quote belongs to the section of the last heading above it, in this cell or
            # an earlier one (a cell may end with a paragraph and then open a section)
            refs += [(section + headings(cell.source[:m.start()]), m[1], m[2] or "",
                      cell.source[max(0, m.start() - 60): m.end()])
                     for m in GLUE_REF.finditer(cell.source)]
            section += headings(cell.source)
            continue
        if cell.cell_type != "code":
            continue
        hidden = HIDDEN & set(cell.metadata.get("tags", []))
        printed = []
        for out in cell.get("outputs", []):
            record = out.get("data", {}).get(GLUE_MIME)
            if record is not None:
                name = out["metadata"]["scrapbook"]["name"]
                values[name] = eval(record, {"inf": math.inf, "nan": math.nan})
                glued_by[name] = len(printed_by_cell)
            elif not hidden:
                text = out.get("text") or out.get("data", {}).get("text/plain", "")
                printed += numbers_in(text)
        printed_by_cell.append(printed)
        section_of_cell.append(section)
    missing = []
    for section, name, spec, context in refs:
        text = shown(values[name], spec)
        near = printed_by_cell[glued_by[name]] + [
            p for c, s in enumerate(section_of_cell) if s == section for p in printed_by_cell[c]]
        if not is_printed(text, near):
            missing.append(f"{name} ({text}) in “…{' '.join(context.split())}”")
    return sorted(set(missing))


def test_a_quote_above_a_heading_belongs_to_the_section_it_is_in():
    text = "as quoted: {glue:text}`x:.2f`.\n\n## Next section\n\n{glue:text}`y`"
    sections = [headings(text[:m.start()]) for m in GLUE_REF.finditer(text)]
    assert sections == [0, 1]


def test_the_check_matches_numbers_as_the_prose_rounds_them():
    assert numbers_in("x = 1,050,624 and (2, 3) at 30%: 2.5e-15") == [1050624, 2, 3, 30, 2.5e-15]
    assert numbers_in("a = 15,471, b = 484") == [15471, 484]
    assert is_printed("0.4082", [0.408248]) and not is_printed("0.4082", [0.4083])
    assert is_printed("1,024", [1024.0]) and not is_printed("1,024", [1025.0])
    assert is_printed("30%", [0.3]) and is_printed("2.9e-04", [0.000291])
    assert not is_printed("2.9e-04", [0.00031]) and not is_printed("1e-12", [1e-11])


@pytest.mark.parametrize("ipynb", REFERENCES, ids=lambda p: p.stem)
def test_every_glued_number_is_printed_near_where_the_prose_quotes_it(ipynb):
    missing = unprinted(ipynb)
    assert not missing, (
        f"{ipynb.name}: numbers the prose quotes that no output of the cell gluing them or "
        f"of their section prints:\n  " + "\n  ".join(missing))
