"""The lecture deck's authoring constructs in a chapter's MyST (scripts/slides.py): a slide
break `% slide` (or `% slide: Title`), ```` ```{only} slides ```` (Markdown on the deck
only) and ```` ```{only} notes ```` (speaker notes). The deck reads them; every notebook a
person opens (scripts/jupyter_notebooks.py: reader, student, and the assignments made
through the same converter) and the study-time and word counts leave them out, as the
page does (Sphinx's `only` directive; tests/site/test_slides.py reads the built pages).

What each chapter authored is read from notebooks/*.md here with a regular expression,
independently of the converter's parser. The decks are written with a stand-in for KaTeX
(math as its TeX), so these tests need no Node.js: a few seconds.
"""

import html
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "_ext"))
import jupyter_notebooks as jn  # noqa: E402
import slides  # noqa: E402
import study_time_rule  # noqa: E402
from prose_words import prose_words  # noqa: E402

SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.md"))
ONLY = re.compile(r"^```\{only\} (?P<tag>\w+)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
BREAK = re.compile(r"^% slide\b", re.M)
WORD_RUN = re.compile(r"[A-Za-z][A-Za-z'’,;.()-]*(?: [A-Za-z][A-Za-z'’,;.()-]*){5,}")


def needle(markdown_text: str, elsewhere: str = "") -> str:
    """The longest run of six or more plain words of a block (no math, code or markup) that
    `elsewhere` (the rest of the chapter) does not hold."""
    flat = " ".join(elsewhere.split())
    runs = [r for r in WORD_RUN.findall(" ".join(markdown_text.split())) if r not in flat]
    assert runs, markdown_text
    return max(runs, key=len)


def authored(md: Path) -> list[tuple[str, str, str]]:
    """(tag, body, needle) of each `{only}` block of a chapter's source."""
    text = md.read_text()
    rest = ONLY.sub("", text)
    return [(m["tag"], m["body"], needle(m["body"], rest)) for m in ONLY.finditer(text)]


def plain(fragment: str) -> str:
    """HTML as text: inline tags dropped, block tags as spaces, whitespace collapsed."""
    fragment = re.sub(r"</?(em|strong|code|a|span)\b[^>]*>", "", fragment)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


class FakeKaTeX:
    """Math as its TeX, in a span: enough to find the text around it."""

    def __call__(self, tex, display):
        return f"<span class='math'>{html.escape(tex)}</span>"


@pytest.fixture(scope="module")
def book():
    return jn.Book.read(), jn.Bibliography()


@pytest.fixture(scope="module")
def decks(book):
    render = slides.Renderer(FakeKaTeX())
    return {md.stem: slides.deck(md.stem, *book, render) for md in SOURCES}


def slides_of(deck_html: str) -> list[tuple[str, str, str]]:
    """(class, what the slide shows, its speaker notes) of every slide, as plain text."""
    out = []
    for m in re.finditer(r'<section class="([\w-]+)"[^>]*>(.*?)</section>', deck_html, re.S):
        body = m[2]
        aside = re.search(r'<aside class="notes">(.*?)</aside>', body, re.S)
        shown = body.replace(aside[0], "") if aside else body
        out.append((m[1], plain(shown), plain(aside[1]) if aside else ""))
    return out


# ------------------------------------------------------------------ the constructs, parsed
TEXT = """## 1.1. First

Opening sentence of the section. More prose.

```{only} notes
Warn about the *common mistake*.
```

% slide: The second idea

```{only} slides
A condensed statement.
```

The second part's prose.
"""


def chapter_of(markdown_cells, name="zz_fixture"):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(c) for c in markdown_cells])
    return nb, jn.Chapter(name, jn.Book(), jn.Bibliography(), reference=nb)


def test_segments_drop_the_constructs_and_keep_them_for_the_deck():
    _, chapter = chapter_of([TEXT])
    plain_segments = chapter.segments(TEXT)
    assert all(isinstance(s, str) for s in plain_segments)
    joined = "\n".join(plain_segments)
    assert "common mistake" not in joined and "condensed" not in joined and "slide" not in joined
    assert "The second part's prose." in joined
    kept = [s for s in chapter.segments(TEXT, deck=True) if isinstance(s, jn.Directive)]
    assert [(d.name, d.arg) for d in kept] == [("only", "notes"), ("slide", "The second idea"),
                                               ("only", "slides")]
    assert kept[0].body == "Warn about the *common mistake*."


def test_a_slide_break_without_a_title_and_only_with_another_tag():
    _, chapter = chapter_of([""])
    [brk] = [s for s in chapter.segments("Text.\n\n% slide\n\nMore.", deck=True)
             if isinstance(s, jn.Directive)]
    assert (brk.name, brk.arg) == ("slide", "")
    assert chapter.segments("% slider is a comment\n", deck=True) == []
    with pytest.raises(ValueError, match="only"):
        chapter.segments("```{only} html\nShown on the page.\n```\n")


def test_the_deck_puts_each_construct_on_its_slide():
    nb, _ = chapter_of(["# 1. Title\n\n```{only} notes\nOpen with the contrast.\n```\n", TEXT,
                        "## 1.2. Summary\n\n- One point. Its detail.\n\n"
                        "```{only} slides\n- The point, condensed\n```\n"])
    render = slides.Renderer(FakeKaTeX())
    shown = slides_of(slides.deck("zz_fixture", jn.Book(), jn.Bibliography(), render, nb))
    title, first, second, summary = shown
    assert title[0] == "title-slide" and "Open with the contrast." in title[2]
    # the first part: its automatic lead, the author's note before its prose in the notes
    assert first[1] == "First Opening sentence of the section."
    assert first[2].startswith("Warn about the common mistake. Opening sentence")
    # the break: its own slide with its title, the {only} slides text in place of the lead
    assert second[1] == "The second idea A condensed statement."
    assert second[2] == "The second part's prose."
    assert summary[1] == "Summary The point, condensed" and "Its detail." in summary[2]


@pytest.mark.parametrize("misplaced", [
    "## 1.9. Exercises\n\n```{only} notes\nSay this.\n```\n",
    "## 1.9. Exercises\n\n% slide: More\n",
    "```{solution-start} ex\n```\n\n```{only} slides\nShown.\n```\n\n```{solution-end}\n```\n",
])
def test_a_construct_the_deck_cannot_show_is_refused(misplaced):
    nb, _ = chapter_of(["# 1. Title\n\n## 1.1. First\n\nText.\n", misplaced])
    render = slides.Renderer(FakeKaTeX())
    with pytest.raises(ValueError, match="slide break or"):
        slides.deck("zz_fixture", jn.Book(), jn.Bibliography(), render, nb)


def test_the_counts_leave_the_constructs_out():
    with_blocks = TEXT
    without = re.sub(r"```\{only\}.*?```\n", "", TEXT, flags=re.S).replace(
        "% slide: The second idea\n", "")
    assert study_time_rule.count(with_blocks) == study_time_rule.count(without)
    assert prose_words(with_blocks) == prose_words(without)


# ------------------------------------------------------------------------- the chapters
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_every_chapter_authors_notes_and_slides_text(md):
    tags = [tag for tag, _, _ in authored(md)]
    assert set(tags) <= {"slides", "notes"}
    assert "notes" in tags and "slides" in tags, md.name


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_every_authored_block_is_in_its_chapters_deck(md, decks):
    shown = slides_of(decks[md.stem])
    breaks = [m for m in re.finditer(r"^% slide: (.+)$", md.read_text(), re.M)]
    for tag, _, words in authored(md):
        if tag == "notes":
            assert any(words in notes for _, _, notes in shown), (tag, words)
        else:
            assert any(words in text for _, text, _ in shown), (tag, words)
    headings = [text for kind, text, _ in shown if kind in ("idea-slide", "end-slide")]
    for brk in breaks:
        assert any(h.startswith(brk[1].strip()) for h in headings), brk[1]


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_no_notebook_a_person_opens_holds_the_authored_text(md):
    texts = [md.with_suffix(".ipynb").parent / edition / name
             for edition in ("reader", "student") for name in (f"{md.stem}.ipynb", f"{md.stem}.md")]
    for path in texts:
        if not path.exists():
            continue
        text = path.read_text()
        if path.suffix == ".ipynb":
            nb = nbformat.reads(text, as_version=4)
            text = "\n".join(c.source for c in nb.cells)
        flat = " ".join(text.split())
        assert "{only}" not in text and not BREAK.search(text), path
        for _, _, words in authored(md):
            assert words not in flat, (path, words)


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_no_assignment_notebook_holds_the_authored_text(md, book):
    import assignments

    nb, _ = assignments.master_notebook(md, *book)
    text = "\n".join(c.source for c in nb.cells)
    flat = " ".join(text.split())
    assert "{only}" not in text and not BREAK.search(text)
    for _, _, words in authored(md):
        assert words not in flat, words
