"""The PDFs (`make pdf`, _build/pdf/): every chapter title, every exercise numbered as on the
site, solutions in the full edition only, figures, the version on the title page, and no raw
TeX (a backslash command or a `$`) outside the code listings. Read with pdftotext."""

import os
import re
import subprocess
import tomllib
from functools import cache
from pathlib import Path

import nbformat
import pytest
from tests.book_toc import toc_files
from tests.edition_text import SOURCES, exercises, needles, squash

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BUILD_DIR", ROOT / "_build"))
PDFS = {"full": BUILD / "pdf" / "attention-as-linear-algebra.pdf",
        "student": BUILD / "pdf" / "attention-as-linear-algebra-student.pdf"}
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
NOTEBOOKS = [f for f in toc_files() if f.startswith("notebooks/")]   # in the book's order
TEX = re.compile(r"\\[A-Za-z]+|\$")


@cache
def pdf_text(edition, *pages) -> str:
    args = ["pdftotext", "-enc", "UTF-8"]
    if pages:
        args += ["-f", str(pages[0]), "-l", str(pages[1])]
    return subprocess.run([*args, str(PDFS[edition]), "-"], capture_output=True, text=True,
                          check=True).stdout


def exercise_numbers():
    """'Exercise 3.2' for chapter 3's second exercise, as the site numbers them."""
    for chapter, name in enumerate(NOTEBOOKS, start=1):
        md = ROOT / f"{name}.md"
        for k, label in enumerate(exercises(md), start=1):
            yield label, f"Exercise {chapter}.{k}"


def title_pieces(path):
    """The plain-text pieces of a page's first heading (its math is typeset, not text)."""
    title = re.search(r"^# (.+)$", (ROOT / f"{path}.md").read_text(), re.M)[1]
    return [p.strip(" :,;") for p in re.split(r"\$[^$]*\$|\{[^}]*\}`[^`]*`|`[^`]*`", title)
            if len(p.strip(" :,;")) >= 4]


@pytest.fixture(scope="module", params=["full", "student"])
def edition(request):
    assert PDFS[request.param].exists(), f"run `make pdf` ({PDFS[request.param]} is missing)"
    return request.param


def test_title_page_names_the_book_edition_and_version(edition):
    first = squash(pdf_text(edition, 1, 1))
    assert "Attention as Linear Algebra" in first and f"Version {VERSION}" in first
    assert ("Student edition" in first) == (edition == "student")


def edition_files(edition):
    """The pages of an edition: the student edition leaves out the maintainers' pages."""
    return [p for p in toc_files()
            if edition == "full" or not p.startswith("chapters/maintainers/")]


def test_table_of_contents_lists_every_chapter(edition):
    contents = squash(pdf_text(edition, 2, 3))
    assert "Contents" in contents
    for path in edition_files(edition):
        for piece in title_pieces(path):
            assert piece in contents, f"the contents lack {path}'s title ({piece!r})"


def test_the_student_edition_has_no_maintainers_page():
    text = squash(pdf_text("student", 2, 3))     # its contents
    maintainers = [p for p in toc_files() if p.startswith("chapters/maintainers/")]
    assert maintainers
    for path in maintainers:
        for piece in title_pieces(path):
            assert piece not in text, f"{path}'s title ({piece!r}) is in the student PDF's contents"


def test_every_chapter_title_is_there(edition):
    text = squash(pdf_text(edition))
    for path in edition_files(edition):
        for piece in title_pieces(path):
            assert text.count(piece) >= 2, f"{path}'s title ({piece!r}) is not in the book"


def test_every_exercise_is_numbered_and_solutions_only_in_the_full_edition(edition):
    text = squash(pdf_text(edition))
    for label, number in exercise_numbers():
        assert f"{number} " in text or text.endswith(number), f"{number} ({label}) is missing"
        assert (f"Solution to {number}" in text) == (edition == "full"), f"{edition}: {number}'s solution"
    leaked = [n for md in SOURCES for n in needles(md) if squash(n) in text]
    if edition == "student":
        assert not leaked, f"solution text in the student PDF: {leaked[:5]}"
    else:
        # a solution's folded check cells print folded (their code is not on paper)
        shown = [n for md in SOURCES for n in needles(md) if squash(n) not in folded_code()]
        assert len(leaked) >= 0.9 * len(shown), (len(leaked), len(shown))


@cache
def code_cells() -> str:
    """The code cells and the pages' fenced code blocks (the instructor guide's shell
    lines), where `$` and backslashes are meant."""
    cells = [c.source for md in SOURCES for c in nbformat.read(md.with_suffix(".ipynb"), 4).cells
             if c.cell_type == "code"]
    blocks = [m[2] for path in toc_files()
              for m in FENCE.finditer((ROOT / f"{path}.md").read_text(encoding="utf-8"))]
    return squash("\n".join(cells + blocks))


@cache
def folded_code() -> set[str]:
    """The lines of the chapters' folded code cells (hide-cell: the checks), squashed."""
    return {squash(line) for md in SOURCES
            for c in nbformat.read(md.with_suffix(".ipynb"), 4).cells
            if c.cell_type == "code" and "hide-cell" in c.metadata.get("tags", [])
            for line in c.source.splitlines() if line.strip()}


# A fenced code block: its opening fence (3 or more backticks or tildes, then its language)
# to the same fence.
FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)


@cache
def inline_code() -> tuple[str, ...]:
    """The pages' inline code that contains `$` or a backslash (shown as written)."""
    spans = {span for path in toc_files()
             for span in re.findall(r"(?<![`{])`([^`\n]+)`", (ROOT / f"{path}.md").read_text())}
    return tuple(sorted((s for s in spans if TEX.search(s)), key=len, reverse=True))


def test_no_raw_tex_outside_code(edition):
    raw = []
    for line in pdf_text(edition).splitlines():
        prose = line
        for span in inline_code():
            prose = prose.replace(span, " ")
        if TEX.search(prose) and squash(line) not in code_cells():
            raw.append(line)
    assert not raw, f"raw TeX in the {edition} PDF:\n" + "\n".join(raw[:20])


def test_figures_are_there(edition):
    listing = subprocess.run(["pdfimages", "-list", str(PDFS[edition])], capture_output=True,
                             text=True, check=True).stdout.splitlines()[2:]
    folder = ROOT / "notebooks" / ("student" if edition == "student" else "")
    figures = sum("image/png" in o.get("data", {}) for md in SOURCES
                  for c in nbformat.read(folder / f"{md.stem}.ipynb", 4).cells
                  if c.cell_type == "code" and "remove-output" not in c.metadata.get("tags", [])
                  for o in c.outputs)
    assert len(listing) >= figures, f"{len(listing)} images in the PDF, {figures} figures in the notebooks"


def test_folded_checks_print_folded_under_their_label():
    """The chapters' check cells (hide-cell, labelled "Check: ...") print as the page shows
    them: folded, their label only; opened, they printed the harness under myst-nb's
    "Hide code cell content"."""
    text = squash(pdf_text("full"))
    assert "Hide code cell" not in text
    labels = [m[1] for md in SOURCES
              for m in re.finditer(r"code_prompt_show: '(Check: [^']*(?:''[^']*)*)'",
                                   md.read_text(encoding="utf-8"))]
    assert labels, "no folded check left in the chapters to print"   # at most 2 a chapter
    # (spaces aside: pdftotext drops some, "5 %" at a line's start reads "5%")
    spaceless = "".join(text.split())
    missing = [label for label in labels
               if "".join(squash(label.replace("''", "'")).split()) not in spaceless]
    assert not missing, f"check labels not in the full PDF: {missing[:5]}"
    # and not their code: no check cell's assert line is printed
    assert "assert rel_grouped < tol_ex < rel_ungrouped" not in text


def chapter_questions():
    """(chapter number, the data of each self-check question) of every chapter with any."""
    from lib.selfcheck import MIME
    for chapter, name in enumerate(NOTEBOOKS, start=1):
        nb = nbformat.read(ROOT / f"{name}.ipynb", 4)
        found = [o["data"][MIME] for c in nb.cells for o in c.get("outputs", [])
                 if MIME in o.get("data", {})]
        if found:
            yield chapter, found


def test_self_check_questions_in_place_and_their_answers_at_the_chapter_s_end(edition):
    """Issue 34: each question prints where the page asks it, numbered in its chapter
    ("Check yourself 3.2"), and again, with its answer, under "Answers to the self-check
    questions" at the chapter's end; both editions (the questions are for learning)."""
    text = squash(pdf_text(edition))
    asked = list(chapter_questions())
    assert asked, "no chapter asks a self-check question"
    assert text.count("Answers to the self-check questions") >= len(asked)
    for chapter, questions in asked:
        for k, data in enumerate(questions, start=1):
            name = f"Check yourself {chapter}.{k}"
            where = [m.start() for m in re.finditer(re.escape(name) + r"(?!\d)", text)]
            assert len(where) >= 2, f"{edition}: {name} ({data['id']}) printed {len(where)}×"
            answer = squash(data["answer_text"].replace("`", ""))
            # the mention followed by its answer (other pages may quote a name: the
            # instructor guide's example "Check yourself 3.2")
            at = [w for w in where[1:] if f"The answer: {answer}" in text[w:w + 600]]
            assert at, f"{edition}: {name}'s answer"
            answers = text[at[0]:]
            for wrong in data["wrong"]:   # each classic wrong answer's explanation too
                said = f"If you answered {squash(wrong['label'].strip('`'))}:"
                assert said in answers[:1500], f"{edition}: {name} lacks {said!r}"


def test_the_pdf_is_tagged_with_a_title_and_a_language(edition):
    # issue 48: a PDF a screen reader can follow (tags), named, in a stated language
    info = subprocess.run(["pdfinfo", str(PDFS[edition])], capture_output=True, text=True,
                          check=True).stdout
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    assert fields.get("Tagged", "").strip() == "yes", info
    assert fields.get("Title", "").strip() == "Attention as Linear Algebra", info
    assert re.search(rb"/Lang\s*\(en", PDFS[edition].read_bytes()), "no /Lang (en) in the PDF"
