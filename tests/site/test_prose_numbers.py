"""Every decimal number in the prose of a notebook page comes from that page's computation
(issue 10): it is a glued value, or it is printed in one of the page's outputs.

The check reads the built HTML (no browser). On each notebook page it takes the article,
sets aside what the code wrote — glued values (`.pasted-text`, `.pasted-inline`), cell
inputs and outputs — and numbering that Sphinx writes (section, figure and exercise
numbers), and looks at what is left: the prose, its mathematics (as TeX source), headings,
admonitions, exercises, solutions and captions. Each decimal number there (a number with
a decimal point, in scientific notation, or written as a power of ten like 10^{-12}) must
be printed somewhere in the page's outputs, exactly or rounded to as many digits as the
prose gives. A few numbers are definitions rather than results (0.5 in a formula); they
are listed in ALLOWED with the reason.

Run with `make test-site` (it needs the built site; SITE_DIR names another one).
"""

import math
import re
from functools import cache

import pytest
from bs4 import BeautifulSoup
from site_config import PAGES, site_dir

NOTEBOOK_PAGES = [p for p in PAGES if p.startswith("notebooks/") and "/student/" not in p]

# What the code wrote, or what Sphinx numbered: not prose. (A collapsed cell's label, such as
# "Check: every entry agrees to within 5e-8", names the code's own tolerance.)
NOT_PROSE = (".cell_input, .cell_output, .output, pre, script, style, .pasted-text, "
             ".pasted-inline, .section-number, .caption-number, .headerlink, "
             "span.std-numref, .toggle-button, button, details.hide > summary")
OUTPUTS = ".cell_output, .output, .pasted-text, .pasted-inline"

# A decimal: 0.180, .5, 1e-12, 2.5e3, 3.5 (also inside 3.5%), or TeX's 10^{-12}.
NUMBER = re.compile(
    r"(?<![\w.])(?:\d+\.\d+(?:[eE][-+−]?\d+)?|\.\d+|\d+[eE][-+−]?\d+)(?![\w.]*\d)"
    r"|10\^\{?[-−]?\d+\}?"
)
NUMBERED_LINK = re.compile(r"(Exercise|Fig\.|Figure|Table|Section|Chapter|Listing) [\d.]+")
ANY_NUMBER = re.compile(r"[-−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+−]?\d+)?")

# (page, number as written) -> why it need not be printed. Keep this short.
FILL = "the fill value of a common masking idiom (a constant of code, not a result)"
PYTORCH = "a PyTorch version"
ALLOWED = {
    ("notebooks/03_masking.html", "1e9"): FILL,
    ("notebooks/03_masking.html", "2.5"): PYTORCH,
    ("notebooks/05_stable_softmax.html", "2.5"): PYTORCH,
    ("notebooks/07_memory_efficient.html", "2.5"): PYTORCH,
}


def to_float(text: str) -> float:
    text = text.replace("−", "-")
    power = re.fullmatch(r"10\^\{?(-?\d+)\}?", text)
    return 10.0 ** int(power[1]) if power else float(text)


def decimals_of(text: str) -> int:
    """Digits after the point as written (0.180 -> 3), or None for 1e-12 / 10^{-12}."""
    m = re.fullmatch(r"\d*\.(\d+)", text)
    return len(m[1]) if m else None


@cache
def page_parts(page: str):
    """(prose text, list of numbers printed in outputs) of one built page."""
    soup = BeautifulSoup((site_dir() / page).read_text(), "html.parser")
    article = soup.select_one("article") or soup.body
    printed = []
    for node in article.select(OUTPUTS):
        for token in ANY_NUMBER.findall(node.get_text(" ")):
            try:
                printed.append(float(token.replace("−", "-")))
            except ValueError:
                pass
    for node in article.select(NOT_PROSE):
        node.decompose()
    for link in article.select("a.reference.internal"):  # "Exercise 4.2", "Fig. 4.1"
        if NUMBERED_LINK.fullmatch(" ".join(link.get_text(" ").split())):
            link.decompose()
    return article.get_text(" "), printed


def is_printed(number: str, printed: list[float]) -> bool:
    value = to_float(number)
    digits = decimals_of(number)
    for p in printed:
        for candidate in (p, 100 * p):  # 3.5 (%) may be printed as 0.035
            if digits is not None:
                if math.isclose(round(candidate, digits), value, abs_tol=10 ** -(digits + 3)):
                    return True
            elif math.isclose(candidate, value, rel_tol=1e-9) or (
                    value and 0.5 <= abs(candidate / value) < 5 and
                    math.floor(math.log10(abs(candidate))) == math.floor(math.log10(abs(value)))):
                # 1e-12 stands for "a number of order 1e-12" when one is printed
                return True
    return False


def unprinted_decimals(page: str) -> list[str]:
    prose, printed = page_parts(page)
    found = []
    for m in NUMBER.finditer(prose):
        number = m[0]
        if (page, number) in ALLOWED or is_printed(number, printed):
            continue
        context = " ".join(prose[max(0, m.start() - 60): m.end() + 40].split())
        found.append(f"{number!r} in “…{context}…”")
    return found


def test_there_are_notebook_pages_to_check():
    assert NOTEBOOK_PAGES


def test_the_check_finds_an_unprinted_number_and_accepts_a_printed_one():
    assert NUMBER.findall("the mean is 0.180 and 1e-12, not 3 or 10^{-6}") == [
        "0.180", "1e-12", "10^{-6}"]
    assert is_printed("0.180", [0.1803]) and not is_printed("0.180", [0.168])
    assert is_printed("3.5", [0.0351]) and is_printed("1e-12", [2.2e-12])
    assert not is_printed("1e-12", [3e-9])


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_every_decimal_in_the_prose_is_glued_or_printed(page):
    found = unprinted_decimals(page)
    assert not found, (f"{page}: decimals in the prose that no output of the page prints "
                       f"(glue them, print them, or allow-list a definition):\n  "
                       + "\n  ".join(found))


def test_every_allowed_number_is_still_on_its_page():
    stale = [(page, number) for page, number in ALLOWED
             if page not in NOTEBOOK_PAGES or number not in page_parts(page)[0]]
    assert not stale, f"ALLOWED lists numbers no page has any more: {stale}"
