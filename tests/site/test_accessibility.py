"""Accessibility beyond axe (issue 48; chapters/accessibility.md says what is tested).

From the same page visits as test_site.py (site_visit.py: no page is loaded again):
- spoken math: every formula's <math> has the English the Speech Rule Engine made for it
  at build time, Chromium's accessibility tree gives that text as the formula's name, and
  a sample of the texts is checked word for word;
- a second engine, HTML_CodeSniffer (WCAG2AA), finds no error in light and dark at 1280 px
  (and in light at 390 px with SITE_A11Y_NARROW=1);
- WCAG 2.5.8 target size and 2.4.11 focus not obscured, at 1280 and 390 px.
Without a browser, over the built HTML of both editions (the reader's, SITE_DIR, and the
student's, STUDENT_SITE_DIR, when built): no formula without its spoken text, and the
footer of every page links the accessibility page.
"""

import os
import re
from pathlib import Path

import pytest
from site_config import PAGES, ROOT, site_dir

# Formulas as a screen reader must speak them, word for word (page -> TeX -> text).
SPOKEN = {
    "chapters/notation.html": {
        r"A = \operatorname{softmax}(QK^\top/\sqrt{E})":
            "A equals softmax of open paren Q K transpose divided by the square root of E "
            "close paren",
        r"Z = QK^\top/\sqrt{E}":
            "Z equals Q K transpose divided by the square root of E",
        r"J = \operatorname{diag}(a) - aa^\top": "J equals diag of a minus a a transpose",
        r"L \times S": "L times S",
    },
    "notebooks/02_qk_av.html": {
        r"\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{QK^\top}"
        r"{\sqrt{E}}\right) V .":
            "Attention of open paren Q comma K comma V close paren equals softmax of open "
            "paren the fraction with numerator Q K transpose and denominator the square root "
            "of E close paren V period",
    },
}

MATH_TAG = re.compile(r"<math\b[^>]*>")
LABEL = re.compile(r'\baria-label="([^"]*)"')


def show(items):
    return "\n  ".join(str(i) for i in items)


def editions():
    found = [pytest.param(site_dir(), id="reader")]
    student = Path(os.environ.get("STUDENT_SITE_DIR", ROOT / "_build" / "student" / "html"))
    if (student / "index.html").exists() and student.resolve() != site_dir():
        found.append(pytest.param(student.resolve(), id="student"))
    return found


def html_pages(root: Path):
    return sorted(p for p in root.rglob("*.html")
                  if p.relative_to(root).parts[0] not in ("_static", "_sources", "_images"))


@pytest.mark.parametrize("root", editions())
def test_every_formula_of_every_page_has_spoken_text(root):
    pages = html_pages(root)
    formulas, without = 0, []
    for page in pages:
        for tag in MATH_TAG.findall(page.read_text(encoding="utf-8")):
            formulas += 1
            label = LABEL.search(tag)
            if not (label and label[1].strip()):
                without.append(f"{page.relative_to(root)}: {tag[:80]}")
    assert formulas > 100, f"only {formulas} formulas in {root}"
    assert not without, f"{len(without)} of {formulas} formulas without spoken text:\n  " + \
        show(without[:20])


@pytest.mark.parametrize("root", editions())
def test_every_page_footer_links_the_accessibility_page(root):
    missing = []
    for page in html_pages(root):
        text = page.read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in text or "bd-footer-content" not in text:
            continue   # a redirect page
        footer = text[text.index("bd-footer-content"):]
        if not re.search(r'<a [^>]*href="([^"]*/)?accessibility\.html"', footer):
            missing.append(str(page.relative_to(root)))
    assert not missing, "footer without the accessibility link:\n  " + show(missing)


@pytest.mark.parametrize("page", PAGES)
def test_every_formula_has_spoken_text_in_the_browser(visits, page):
    v = visits[page]
    assert not v.math_without_speech, show(v.math_without_speech)
    assert len(v.math_speech) >= v.math_elements


@pytest.mark.parametrize("page", PAGES)
def test_the_accessibility_tree_names_a_formula_by_its_spoken_text(visits, page):
    v = visits[page]
    if not v.math_speech:
        assert v.math_ax_name is None
        return
    assert v.math_first_speech, "the first formula has no spoken text"
    assert v.math_ax_name == v.math_first_speech, (v.math_ax_name, v.math_first_speech)


@pytest.mark.parametrize("page", sorted(SPOKEN))
def test_a_sample_of_formulas_is_spoken_word_for_word(visits, page):
    labels = set(visits[page].math_speech)
    missing = {tex: text for tex, text in SPOKEN[page].items() if text not in labels}
    near = sorted(label for label in labels if any(
        label.split()[:3] == text.split()[:3] for text in missing.values()))
    assert not missing, f"not spoken as expected: {missing}\nnearest on the page:\n  " + \
        show(near)


@pytest.mark.parametrize("page", PAGES)
def test_html_codesniffer_finds_no_wcag2aa_error(visits, page):
    v = visits[page]
    errors = ([("light 1280", e) for e in v.htmlcs_light]
              + [("dark 1280", e) for e in v.htmlcs_dark]
              + [("light 390", e) for e in v.htmlcs_narrow])
    assert not errors, show(errors)


@pytest.mark.parametrize("page", PAGES)
def test_every_target_is_at_least_24_px_or_spaced(visits, page):
    v = visits[page]
    assert v.targets_checked > 0
    assert not v.small_targets, show(v.small_targets)


@pytest.mark.parametrize("page", PAGES)
def test_focus_is_never_obscured(visits, page):
    v = visits[page]
    assert v.focus_checked > 0
    assert not v.focus_obscured, show(v.focus_obscured)
