"""The student edition (`make book-student`, _build/student/html): no solution text anywhere
in it, every exercise there, numbered; the footer shows the version. The full edition, when
built, is checked to show what the student edition hides (so the needles are real)."""

import os
import re
import tomllib
from pathlib import Path

import pytest
from tests.edition_text import SOURCES, exercises, html_text, needles, squash

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BUILD_DIR", ROOT / "_build"))
STUDENT_SITE = BUILD / "student" / "html"
FULL_SITE = BUILD / "html"
TEXT_SUFFIXES = {".html", ".txt", ".md", ".ipynb", ".js", ".json", ".xml", ".css"}
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def site_texts(site):
    for path in sorted(site.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            raw = path.read_text(errors="replace")
            yield path, squash(raw) + "\n" + (html_text(raw) if path.suffix == ".html" else "")


def test_student_site_was_built():
    assert (STUDENT_SITE / "index.html").exists(), "run `make book-student`"


def test_no_solution_text_anywhere_in_the_student_site():
    wanted = {n: md.name for md in SOURCES for n in needles(md)}
    leaks = []
    for path, text in site_texts(STUDENT_SITE):
        leaks += [f"{path.relative_to(STUDENT_SITE)}: {wanted[n]}: {n!r}" for n in wanted if squash(n) in text]
    assert not leaks, "solution text in the student edition:\n" + "\n".join(leaks[:20])


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_student_page_has_every_exercise_numbered_and_no_solution(md):
    page = (STUDENT_SITE / "notebooks" / f"{md.stem}.html").read_text()
    for label in exercises(md):
        assert f'id="{label}"' in page, f"{md.stem}: exercise {label} is missing"
    numbers = re.findall(r"Exercise (\d+)\.(\d+)", html_text(page))
    assert {int(k) for _, k in numbers} >= set(range(1, len(exercises(md)) + 1))
    assert 'class="solution' not in page and "Solution to" not in html_text(page)


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.name)
def test_the_full_site_shows_what_the_student_site_hides(md):
    page = FULL_SITE / "notebooks" / f"{md.stem}.html"
    if not page.exists():
        pytest.skip("the full edition is not built")
    text = html_text(page.read_text()) + squash(page.read_text())
    missing = [n for n in needles(md) if squash(n) not in text]
    assert not missing, f"{md.stem}: the full edition lacks solution text {missing[:5]}"


@pytest.mark.parametrize("site,pdf", [(STUDENT_SITE, "attention-as-linear-algebra-student.pdf"),
                                      (FULL_SITE, "attention-as-linear-algebra.pdf")])
def test_footer_shows_the_version_and_links_the_pdf_only_when_the_site_has_it(site, pdf):
    if not (site / "index.html").exists():
        pytest.skip(f"{site} is not built")
    has_pdf = (site / pdf).exists()  # `make pdf` puts it there; `make book` alone does not
    for page in (site / "chapters" / "preface.html", next((site / "notebooks").glob("*.html"))):
        text = page.read_text()
        assert f'<span class="edition-version">{VERSION}</span>' in text
        linked = bool(re.search(rf'href="(\.\./)?{re.escape(pdf)}"', text))
        assert linked == has_pdf, (f"{page}: links {pdf}" if linked
                                   else f"{page}: no link to {pdf}, which the site has")


def test_the_student_site_has_no_maintainers_page():
    # issue 43: the student edition's navigation has no "For maintainers" part, and its
    # pages are not built there (the full edition keeps them)
    assert not (STUDENT_SITE / "chapters" / "maintainers").exists()
    home = (STUDENT_SITE / "chapters" / "preface.html").read_text()
    assert "For maintainers" not in home and "maintainers/" not in home
