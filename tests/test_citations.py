"""Every work the text names is cited, and every cited work is in the bibliography.

`tests/references_names.yml`, beside `chapters/references.bib`, lists each work of the bibliography with the
names the text calls it by. A page (a chapter's MyST notebook or a page of chapters/) whose
prose names a work of scope "page" cites that work on the same page with `{cite}`; a work of
scope "book" (NumPy, PyTorch: named on every page) is cited on at least one page. Prose is
what a reader reads as text: code cells, code blocks and `inline code` are left out, so a
function such as `BertModel` is not a name.
"""

import re
from pathlib import Path

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NAMES = yaml.safe_load((ROOT / "tests" / "references_names.yml").read_text(encoding="utf-8"))
BIB_KEYS = re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "chapters" / "references.bib").read_text(encoding="utf-8"),
                      re.M)
PAGES = sorted((ROOT / "notebooks").glob("*.md")) + sorted((ROOT / "chapters").rglob("*.md"))
CITE = re.compile(r"\{cite(?::[\w-]+)?\}`([^`]*)`")
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
CODE_DIRECTIVE = re.compile(r"\{(code-block|code-cell|code)\}")


# What a chapter writes for its lecture deck only (scripts/slides.py), not on its page
DECK_ONLY = re.compile(r"^(`{3,})\{only\}.*?^\1[ \t]*$", re.M | re.S)


def text_of(page: Path) -> str:
    """A page's Markdown, without front matter, code cells and the deck's `{only}` blocks."""
    if page.parent.name == "notebooks":
        nb = jupytext.read(page)
        return DECK_ONLY.sub("", "\n\n".join(c.source for c in nb.cells
                                              if c.cell_type == "markdown"))
    text = page.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        text = text[text.index("\n---\n", 4) + 5:]
    return DECK_ONLY.sub("", text)


def without_code_blocks(markdown: str) -> str:
    """Markdown less its code blocks (plain fences and the code directives); a directive's
    own fences go, its content (prose: an exercise, a note) stays. Fences are paired as
    CommonMark pairs them: a closing fence has no info string, the opening's character and
    at least its length; inside a code block every other line is code."""
    kept, open_fences = [], []   # each open fence: (its text, whether it holds code)
    for line in markdown.split("\n"):
        match = FENCE.match(line)
        in_code = any(code for _, code in open_fences)
        if match:
            fence, info = match.group(1), match.group(2).strip()
            top = open_fences[-1][0] if open_fences else None
            if top and not info and fence[0] == top[0] and len(fence) >= len(top):
                open_fences.pop()
                continue
            if not in_code:
                is_code = not info.startswith("{") or bool(CODE_DIRECTIVE.match(info))
                open_fences.append((fence, is_code))
                continue
        if not in_code:
            kept.append(line)
    return "\n".join(kept)


def without_code(markdown: str) -> str:
    """Markdown less its code blocks and its ``double-backtick`` code spans (which may show
    a role's syntax, such as `` {cite:p}`key` ``)."""
    return re.sub(r"``.*?``", "", without_code_blocks(markdown), flags=re.S)


def test_a_directive_s_closing_fence_opens_nothing():
    """A directive's closing fence once read as an opening one, and the prose after it up to
    the next fence went unchecked."""
    page = ("```{note}\nA note.\n```\n\nProse {cite:p}`a`.\n\n```python\nx = 1  # {cite:p}`b`\n```\n"
            "````{exercise}\nDo {cite:p}`c`.\n```{code-cell} ipython3\ny = 2\n```\n````\nEnd.\n")
    assert cited(page) == {"a", "c"}
    assert "A note." in without_code(page) and "End." in without_code(page)
    assert "x = 1" not in without_code(page) and "y = 2" not in without_code(page)


def prose(markdown: str) -> str:
    """What reads as text: no code blocks, inline code, citations' keys, links' addresses."""
    markdown = without_code(markdown)
    markdown = CITE.sub("", markdown)
    markdown = re.sub(r"`[^`\n]*`", "", markdown)
    markdown = re.sub(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+", "", markdown)
    return re.sub(r"^%.*$", "", markdown, flags=re.M)


def cited(markdown: str) -> set[str]:
    return {key.strip() for keys in CITE.findall(without_code(markdown))
            for key in keys.split(",")}


def test_every_work_of_the_bibliography_has_its_names_listed():
    assert sorted(NAMES) == sorted(BIB_KEYS), (
        "references_names.yml and references.bib list different works: "
        f"only in the names: {sorted(set(NAMES) - set(BIB_KEYS))}, "
        f"only in the bibliography: {sorted(set(BIB_KEYS) - set(NAMES))}")


def test_every_citation_is_in_the_bibliography():
    unknown = {f"{p.relative_to(ROOT)}: {k}" for p in PAGES for k in cited(text_of(p))
               if k not in BIB_KEYS}
    assert not unknown, f"cited but not in references.bib: {sorted(unknown)}"


def test_names_are_found_in_prose_and_not_in_code():
    text = ("See `BertModel` and\n```python\nimport torch  # PyTorch\n```\n"
            "FlashAttention-2 {cite:p}`dao2023` and BERT.")
    assert re.search(NAMES["devlin2019"]["names"][0], prose(text))
    assert not re.search("BertModel|PyTorch", prose(text))
    assert not re.search(NAMES["dao2022"]["names"][0], prose(text))
    assert re.search(NAMES["dao2023"]["names"][0], prose(text))
    assert cited(text) == {"dao2023"}
    assert cited("the syntax `` {cite:p}`key` `` gives (Author, year)") == set()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_that_names_a_work_cites_it(page):
    markdown = text_of(page)
    text, keys = prose(markdown), cited(markdown)
    uncited = {f"{key} (named as {m.group(0)!r})" for key, work in NAMES.items()
               if work["scope"] == "page" and key not in keys
               for name in work["names"] for m in [re.search(name, text)] if m}
    assert not uncited, f"{page.relative_to(ROOT)} names works it does not cite: {sorted(uncited)}"


def test_the_tools_every_page_uses_are_cited_once():
    keys = set().union(*(cited(text_of(p)) for p in PAGES))
    missing = [key for key, work in NAMES.items() if work["scope"] == "book" and key not in keys]
    assert not missing, f"never cited: {missing}"
