"""A bound is rounded outward: the page never claims more than was measured.

Where the prose quotes a glued number as a bound -- "at most {glue:text}`x:.2%`", "within",
"up to", "below", "less than" (upper bounds), or "at least", "above", "more than" (lower
bounds) -- the number as the page shows it must be on the safe side of the value the
executed reference glued: at least the value for an upper bound, at most it for a lower
bound. "at most 1.58 %" for 1.5811 % fails; "at most 1.6 %" passes. To quote a bound,
glue a value already rounded outward in code (e.g. `math.ceil(x * 1000) / 1000`).
"""

import math
import re
from pathlib import Path

import nbformat
import pytest
from tests.test_prose_printed import GLUE_MIME, shown

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = sorted((ROOT / "notebooks").glob("*.ipynb"))
UPPER = r"at most|within|up to|below|less than|under|no more than|smaller than|not exceeding"
LOWER = r"at least|above|more than|greater than|larger than|over|exceeding|no less than"
# The bound word directly before the number ("at most 1.6 %", "within a factor of 2"), so
# that "below that of 81 % of the draws" or "above the median 1.3e-05" are not bounds.
BOUND = re.compile(rf"\b(?P<word>{UPPER}|{LOWER})(?:\s+a factor of)?\s+"
                   r"\{glue:text\}`(?P<name>[^`:]+)(?::(?P<spec>[^`]*))?`", re.I)


def as_number(text: str) -> float:
    """The number a formatted value shows: '1.6%' is 0.016, '2.9e-04' is 0.00029."""
    text = text.replace(",", "").replace("−", "-").strip()
    if text.endswith("%"):
        return float(text[:-1]) / 100
    return float(text)


def wrong_way(word: str, value: float, spec: str) -> bool:
    """Whether the page's text for `value` claims more than the value (for an upper-bound
    word, a shown number below it; for a lower-bound word, a shown number above it)."""
    number = as_number(shown(value, spec))
    if re.fullmatch(UPPER, word, re.I):
        return number < value
    return number > value


def glued_values(nb) -> dict:
    values = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            record = out.get("data", {}).get(GLUE_MIME)
            if record is not None:
                values[out["metadata"]["scrapbook"]["name"]] = eval(
                    record, {"inf": math.inf, "nan": math.nan})
    return values


def inward_bounds(ipynb: Path) -> list[str]:
    nb = nbformat.read(ipynb, as_version=4)
    values = glued_values(nb)
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for m in BOUND.finditer(cell.source):
            value = values.get(m["name"])
            if isinstance(value, (int, float)) and wrong_way(m["word"], value, m["spec"] or ""):
                found.append(f"“{m['word']} … {shown(value, m['spec'] or '')}” for "
                             f"{value!r} ({m['name']})")
    return found


def test_the_rule_reads_bounds_as_a_reader_does():
    assert wrong_way("at most", 0.015811, ".2%")  # 1.58 % < 1.5811 %
    assert not wrong_way("at most", 0.016, ".1%")
    assert wrong_way("within", 0.0174, ".1%") and wrong_way("at most", 0.002818, ".4f")
    assert not wrong_way("at most", 2e-4, ".0e") and not wrong_way("below", 3, "")
    assert wrong_way("at least", 0.77, ".1f") and not wrong_way("at least", 0.77, ".2f")
    text = ("the error is at most {glue:text}`err:.2%`, within a factor of {glue:text}`w:.1f`,"
            " below that of {glue:text}`share:.0%` of the draws, above the median {glue:text}`m`")
    assert [m["name"] for m in BOUND.finditer(text)] == ["err", "w"]


@pytest.mark.parametrize("ipynb", REFERENCES, ids=lambda p: p.stem)
def test_a_quoted_bound_is_rounded_outward(ipynb):
    found = inward_bounds(ipynb)
    assert not found, (f"{ipynb.name}: bounds the page rounds inward (glue a value rounded "
                       "outward):\n  " + "\n  ".join(found))
