"""A lecture deck per chapter, from the chapter itself (`make slides`).

Each deck is a reveal.js presentation, `_build/slides/<name>.html`, written from the
chapter's executed reference notebook (`notebooks/<name>.ipynb`, the same cells, outputs
and glued numbers as the page), with the same Markdown conversion as the Jupyter
notebooks (`scripts/jupyter_notebooks.py`'s `Chapter`): nothing is typed twice. A deck:

- a title slide: the chapter's title and its objectives;
- a slide per core idea, one per section (and one per `% slide` break, below): its heading,
  its opening sentence and first displayed formula, the section's prose in the speaker
  notes (press S);
- the section's evidence on its own slide: its figure (with the caption), or the first
  printed result with the few lines of code that print it; an explorer live, as on the
  page (Vega, Vega-Lite and Vega-Embed from the deck's own folder);
- each self-check question as a question slide whose answer comes on the next fragment
  (press the right arrow), the common mistakes (each classic wrong answer and why) in the
  speaker notes;
- each exercise's statement, never its solution; the summary last.

A chapter steers its deck from its own MyST, with constructs that its page (Sphinx's `only`
directive drops a block whose tag the HTML builder does not set) and every notebook made
from it (`Chapter.segments` drops them unless asked with `deck=True`) leave out:

- `% slide` or `% slide: Title`, a MyST comment line: a new idea slide at that point of a
  section (a part of it, read as a Section of its own), headed by the title or else the
  section's heading; what follows goes with it (its figure or output, explorers, questions);
- ```` ```{only} slides ```` ... ```` ``` ````: Markdown shown on the slide where it sits (the
  idea slide of its section or part, or the summary's), in place of the automatic lead;
- ```` ```{only} notes ```` ... ```` ``` ````: speaker notes for that slide (before the first
  section: the title slide), put before the notes made from the section's prose.

A construct in the exercises section or in a solution, which the deck does not show, is an
error (ValueError naming the chapter); tests/test_slide_authoring.py checks them without
a browser.

Everything a deck loads lies beside it in `_build/slides/_static/` (reveal.js, KaTeX's
stylesheet and fonts, the explorers' scripts; all pinned in package.json): served, a deck
asks no other host. The math is typeset here, by KaTeX in node (`_ext/katex_render.js`,
as the site does), so a deck runs no math script. The slides are 1280 x 720 in the
site's light theme, body text 28 px; tests/site/test_slides.py checks every slide of every
deck in Chromium (nothing overflows 1280 x 720, text at least 24 px, the explorers drawn,
every question present, no other host asked, keyboard, speaker notes and `?print-pdf`),
and that the built site's pages hold none of the `{only}` text.

    python scripts/slides.py              # every chapter
    python scripts/slides.py 03_masking   # one
    python scripts/slides.py --pdf        # and each deck printed to _build/slides/pdf/ (Chromium)
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jupyter_notebooks import (NOTEBOOKS, ROOT, Bibliography, Book, Chapter,  # noqa: E402
                               Directive)

from lib.figures import FIGURE_DPI, FONT_SIZE  # noqa: E402

OUT = ROOT / "_build" / "slides"
NODE_MODULES = ROOT / "node_modules"
SELFCHECK_MIME = "application/vnd.course.selfcheck+json"
VEGA_MIME = "application/vnd.vegalite.v5+json"
SKIP_SECTIONS = ("exercises",)
END_SECTIONS = ("summary", "where this goes next")
MAX_OUTPUT_LINES = 12      # a printed result taller than this is cut (the page has it whole)
MAX_CODE_LINES = 8
FIGURE_PX = 580            # a figure's height on its slide, with a line of caption below
FIGURE_TEXT_PX = 18        # a figure's smallest text on a slide (1280 x 720), at least
# A figure's text is at least FONT_SIZE points at FIGURE_DPI px an inch (lib.figures), 16.7
# px at its natural size: a figure, or a strip of a tall one, at most STRIP_PX high is
# enlarged to FIGURE_PX on its slide, so its text is at least FIGURE_TEXT_PX.
STRIP_PX = int(FIGURE_PX * FONT_SIZE / 72 * FIGURE_DPI / FIGURE_TEXT_PX)
SLIDE_LINES = 19           # lines of 24 px code or output a slide holds under a one-line heading
HEADING_CHARS = 44         # characters of a 40 px heading per line
STATIC = {   # what a deck loads, copied from node_modules into _build/slides/_static/
    "reveal/reveal.css": "reveal.js/dist/reveal.css",
    "reveal/reset.css": "reveal.js/dist/reset.css",
    "reveal/white.css": "reveal.js/dist/theme/white.css",
    "reveal/reveal.js": "reveal.js/dist/reveal.js",
    "reveal/notes.js": "reveal.js/dist/plugin/notes.js",
    "katex/katex.min.css": "katex/dist/katex.min.css",
    "vega/vega.min.js": "vega/build/vega.min.js",
    "vega/vega-lite.min.js": "vega-lite/build/vega-lite.min.js",
    "vega/vega-embed.min.js": "vega-embed/build/vega-embed.min.js",
}


class KaTeX:
    """The site's KaTeX (`node _ext/katex_render.js`): one process for all the decks."""

    def __init__(self):
        self.process = subprocess.Popen(["node", str(ROOT / "_ext" / "katex_render.js")],
                                        cwd=ROOT, text=True, encoding="utf-8",
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.cache = {}

    def __call__(self, tex: str, display: bool) -> str:
        if (tex, display) not in self.cache:
            self.process.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
            self.process.stdin.flush()
            answer = json.loads(self.process.stdout.readline())
            if "error" in answer:
                raise ValueError(f"KaTeX cannot typeset {tex!r}: {answer['error']}")
            self.cache[tex, display] = answer["html"]
        return self.cache[tex, display]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


class Renderer:
    """Markdown (with $ and $$ math) to HTML, the math typeset by KaTeX."""

    def __init__(self, katex: KaTeX):
        self.md = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin,
                                                               double_inline=True)
        self.md.add_render_rule("math_inline", lambda self_, tokens, i, o, e:
                                katex(tokens[i].content, False))
        self.md.add_render_rule("math_inline_double", lambda self_, tokens, i, o, e:
                                katex(tokens[i].content, True))
        self.md.add_render_rule("math_block", lambda self_, tokens, i, o, e:
                                katex(tokens[i].content.strip(), True))
        self.md.add_render_rule("math_block_label", lambda self_, tokens, i, o, e:
                                katex(tokens[i].content.strip(), True))

    def __call__(self, text: str) -> str:
        return self.md.render(text)

    def inline(self, text: str) -> str:
        out = self(text).strip()
        if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
            out = out[3:-4]
        return out


# ---- reading a chapter -------------------------------------------------------------------
@dataclass
class Section:
    """A `##` section of the chapter, or a part of one that a `% slide` break starts."""
    title: str
    section: str = ""                                # the `##` heading it is part of
    brk: bool = False                                # started by a `% slide` break
    prose: list = field(default_factory=list)        # Markdown paragraphs, converted
    formulas: list = field(default_factory=list)     # display math (TeX)
    evidence: list = field(default_factory=list)     # ("figure", png, caption, alt) | ("output", code, text)
    explorers: list = field(default_factory=list)    # Vega-Lite specs
    questions: list = field(default_factory=list)    # self-check data
    exercises: list = field(default_factory=list)    # (number, Markdown)
    shown: list = field(default_factory=list)        # `{only} slides` blocks (Markdown, converted)
    said: list = field(default_factory=list)         # `{only} notes` blocks (Markdown, converted)


DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)


def read_chapter(name: str, book: Book, bibliography: Bibliography, reference=None):
    """The chapter's title, objectives (Markdown list), sections (a `% slide` break starts a
    part of its section, listed as a Section of its own) and its introduction (the text
    before the first section, whose `{only} notes` go to the title slide). `reference`: the
    executed notebook, if not notebooks/<name>.ipynb."""
    chapter = Chapter(name, book, bibliography, reference, edition="student")
    title, objectives, sections = name, "", []
    current = intro = Section("")
    in_solution = False
    for cell in chapter.reference.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "markdown":
            for seg in chapter.segments(cell.source, deck=True):
                if isinstance(seg, Directive):
                    if seg.name in ("slide", "only") and in_solution:
                        raise ValueError(f"{name}: a slide break or {{only}} block in a "
                                         "solution (a deck shows no solution)")
                    if seg.name == "slide":
                        current = Section(seg.arg or current.section, current.section, True)
                        sections.append(current)
                    elif seg.name == "only":
                        (current.shown if seg.arg == "slides" else current.said).append(
                            chapter.text(seg.body))
                    elif seg.name == "solution-start":
                        in_solution = True
                    elif seg.name == "solution-end":
                        in_solution = False
                    elif seg.name == "exercise":
                        label = seg.options.get("label", "")
                        number = (book.labels[label].number if label in book.labels
                                  else "Exercise")
                        current.exercises.append((number, chapter.text(seg.body)))
                    elif seg.name == "admonition" and "Objectives" in seg.arg:
                        body = chapter.text(seg.body)
                        items = re.search(r"(?ms)^\*\*You will be able to\*\*\s*\n(.*?)(?:\n\*\*|\Z)",
                                          body)
                        objectives = (items.group(1) if items else body).strip()
                    continue
                if in_solution:
                    continue
                for block in re.split(r"\n{2,}(?=\S)", seg):
                    heading = re.match(r"^(#{1,3}) (.+)$", block.strip())
                    if heading and len(heading.group(1)) == 1:
                        title = heading.group(2).strip()
                        continue
                    if heading and len(heading.group(1)) == 2:
                        current = Section(heading.group(2).strip(), heading.group(2).strip())
                        sections.append(current)
                        continue
                    current.formulas += [m.strip() for m in DISPLAY.findall(block)]
                    if block.strip():
                        current.prose.append(block.strip())
            continue
        if cell.cell_type != "code" or in_solution or "remove-cell" in tags:
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if SELFCHECK_MIME in data:
                current.questions.append(data[SELFCHECK_MIME])
            elif VEGA_MIME in data:
                current.explorers.append(data[VEGA_MIME])
            elif "image/png" in data:
                figure = cell.metadata.get("mystnb", {})
                caption = chapter.inline(figure.get("figure", {}).get("caption", ""))
                alt = figure.get("image", {}).get("alt", "") or caption
                current.evidence.append(("figure", data["image/png"], caption, alt))
        if "hide-cell" in tags or "remove-input" in tags or "remove-output" in tags:
            continue
        text = "".join(o.get("text", "") for o in cell.get("outputs", [])
                       if o.get("output_type") == "stream" and o.get("name") == "stdout")
        if text.strip():
            current.evidence.append(("output", cell.source, text.rstrip("\n")))
    return title, objectives, sections, intro


# ---- writing a deck ----------------------------------------------------------------------
def first_sentence(markdown_text: str) -> str:
    text = re.sub(r"\s+", " ", markdown_text).strip()
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text


def figure_strips(png_b64: str) -> list[str]:
    """A figure too tall for a slide cut into strips at its blank rows (between its panels),
    each at most STRIP_PX high at the page's size (PNG, base64); a figure that fits, whole."""
    data = base64.b64decode(png_b64)
    image = Image.open(io.BytesIO(data)).convert("RGB")
    if image.height <= STRIP_PX:
        return [png_b64.strip()]
    pixels = np.asarray(image)
    blank = (pixels.min(axis=(1, 2)) >= 245)              # a row with nothing drawn on it
    cuts, start = [], 0
    while image.height - start > STRIP_PX:
        window = np.flatnonzero(blank[start + STRIP_PX // 3:start + STRIP_PX])
        end = start + STRIP_PX // 3 + int(window[-1]) if window.size else start + STRIP_PX
        cuts.append((start, end))
        start = end
    cuts.append((start, image.height))
    strips = []
    for top, bottom in cuts:
        out = io.BytesIO()
        image.crop((0, top, image.width, bottom)).save(out, format="PNG")
        strips.append(base64.b64encode(out.getvalue()).decode())
    return strips


def short_points(block: str) -> str:
    """A Markdown paragraph or list, each point cut to its first sentence."""
    items = re.split(r"(?m)^[-*] ", block)
    if len(items) == 1:
        return first_sentence(block)
    return "\n".join(f"- {first_sentence(item)}" for item in items[1:] if item.strip())


def notes(render, paragraphs, said=()) -> str:
    """The speaker notes: the author's `{only} notes` first, then the section's prose."""
    authored = "".join(render(p) for p in said)
    body = (f'<div class="authored-notes">{authored}</div>' if authored else "") \
        + "".join(render(p) for p in paragraphs)
    return f'<aside class="notes">{body}</aside>' if body else ""


def cut(text: str, limit: int) -> str:
    lines = text.split("\n")
    return text if len(lines) <= limit else "\n".join(lines[:limit - 1] + ["..."])


def question_slide(render, q: dict) -> str:
    parts = [f'<section class="selfcheck-slide" data-question="{html.escape(q["id"])}">',
             '<p class="kicker">Check yourself</p>', f'<div class="question">{render(q["text"])}</div>']
    if q["kind"] in ("choice", "wrong_output"):
        label = (lambda i: f"output {i + 1}") if q["kind"] == "wrong_output" else \
            (lambda i: chr(ord("A") + i))
        items = []
        for i, option in enumerate(q["options"]):
            shown = (f"<pre>{html.escape(option)}</pre>" if q["kind"] == "wrong_output"
                     else render.inline(option))
            items.append(f'<li><span class="label">{label(i)}</span> {shown}</li>')
        parts.append(f'<ol class="options">{"".join(items)}</ol>')
    parts.append(f'<div class="fragment answer"><p><strong>Answer: '
                 f'{render.inline(q["answer_text"])}</strong></p>{render(q["right"])}</div>')
    mistakes = [f"<li><strong>{render.inline(w['label'])}</strong>: {render.inline(w['why'])}</li>"
                for w in q.get("wrong", [])]
    hint = f"<p>Any other answer: {render.inline(q['hint'])}</p>" if q.get("hint") else ""
    if mistakes or hint:
        parts.append(f'<aside class="notes"><p>Common mistakes:</p><ul>{"".join(mistakes)}</ul>'
                     f"{hint}</aside>")
    parts.append("</section>")
    return "".join(parts)


def deck(name: str, book: Book, bibliography: Bibliography, render: Renderer,
         reference=None) -> str:
    title, objectives, sections, intro = read_chapter(name, book, bibliography, reference)
    number = book.chapters.get(name)
    slides = [f'<section class="title-slide"><p class="kicker">Chapter {number}</p>'
              f"<h1>{render.inline(title)}</h1>"
              + (f'<div class="objectives"><p>You will be able to</p>{render(objectives)}</div>'
                 if objectives else "") + notes(render, [], intro.said) + "</section>"]
    if intro.shown:
        raise ValueError(f"{name}: an {{only}} slides block before the first section "
                         "(the title slide shows the title and objectives)")
    exercises, ending = [], []
    n_explorer = 0
    for section in sections:
        heading = re.sub(r"^\d+(\.\d+)*\.?\s+", "", section.title)
        key = re.sub(r"^\d+(\.\d+)*\.?\s+", "", section.section).lower()
        exercises += section.exercises
        if key.startswith(SKIP_SECTIONS):
            if section.brk or section.shown or section.said:
                raise ValueError(f"{name}: a slide break or {{only}} block in {heading!r} "
                                 "(a deck shows each exercise's statement alone)")
            continue
        if key.startswith(END_SECTIONS):
            # each point's first sentence on the slide (or the author's {only} slides
            # text), the whole text in the notes
            points = "\n\n".join(section.shown or [short_points(p) for p in section.prose])
            ending.append(f'<section class="end-slide"><h2>{render.inline(heading)}</h2>'
                          f'{render(points)}{notes(render, section.prose, section.said)}'
                          "</section>")
            continue
        h2 = f"<h2>{render.inline(heading)}</h2>"
        if section.shown:
            # the author's `{only} slides` text, in place of the automatic lead
            lead = "".join(render(block) for block in section.shown)
        else:
            # the idea: the section's opening sentence and its first displayed formula
            lead = render(first_sentence(section.prose[0])) if section.prose else ""
            if lead.count("$$") or "katex-display" in lead:
                lead = ""                              # the sentence is the formula itself
            if section.formulas:
                lead += render(f"$${section.formulas[0]}$$")
        slides.append(f'<section class="idea-slide">{h2}{lead}'
                      f"{notes(render, section.prose, section.said)}</section>")
        figure = next((e for e in section.evidence if e[0] == "figure"), None)
        output = next((e for e in section.evidence if e[0] == "output"), None)
        if figure:
            _, png, caption, alt = figure
            strips = figure_strips(png)
            for k, strip in enumerate(strips):
                more = f" ({k + 1} of {len(strips)})" if len(strips) > 1 else ""
                text = render.inline(first_sentence(caption)) + more if caption else more
                slides.append(f'<section class="figure-slide"><figure>'
                              f'<img src="data:image/png;base64,{strip}" alt="{html.escape(alt + more)}">'
                              f"<figcaption>{text}</figcaption></figure></section>")
        elif output:
            _, code, text = output
            # what fits under the heading at 24 px: about SLIDE_LINES lines of code and output
            budget = SLIDE_LINES - (len(heading) // HEADING_CHARS + 1) * 2
            out_lines = min(len(text.split("\n")), MAX_OUTPUT_LINES, budget)
            code_lines = min(len(code.split("\n")), MAX_CODE_LINES, budget - out_lines - 1)
            code_html = (f'<pre class="code"><code>{html.escape(cut(code, code_lines))}</code></pre>'
                         if code_lines >= 3 else "")
            slides.append(f'<section class="output-slide">{h2}{code_html}'
                          f'<pre class="output">{html.escape(cut(text, out_lines))}</pre>'
                          "</section>")
        for spec in section.explorers:
            n_explorer += 1
            ident = f"explorer-{n_explorer}"
            spec_json = json.dumps(spec).replace("</", "<\\/")
            slides.append(f'<section class="explorer-slide">{h2}'
                          f'<div class="explorer" id="{ident}"></div>'
                          f'<script type="application/json" class="explorer-spec" '
                          f'data-for="{ident}">{spec_json}</script>'
                          "</section>")
        slides += [question_slide(render, q) for q in section.questions]
    for number_, body in exercises:
        slides.append(f'<section class="exercise-slide"><p class="kicker">{html.escape(number_)}'
                      f"</p>{render(body)}</section>")
    slides += ending
    return TEMPLATE.format(title=html.escape(re.sub(r"<[^>]+>", "", title)),
                           slides="\n".join(slides))


TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title} (slides)</title>
<link rel="stylesheet" href="_static/reveal/reset.css">
<link rel="stylesheet" href="_static/reveal/reveal.css">
<link rel="stylesheet" href="_static/reveal/white.css">
<link rel="stylesheet" href="_static/katex/katex.min.css">
<link rel="stylesheet" href="_static/slides.css">
</head>
<body>
<div class="reveal"><div class="slides">
{slides}
</div></div>
<script src="_static/reveal/reveal.js"></script>
<script src="_static/reveal/notes.js"></script>
<script src="_static/slides.js"></script>
</body>
</html>
"""

CSS = """/* The decks' look: the site's light theme, at 1280 x 720 (scripts/slides.py). */
:root { --r-main-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
        --r-heading-font: var(--r-main-font); --r-main-font-size: 28px;
        --r-heading-color: #1c2b39; --r-main-color: #1c2b39; --r-link-color: #0a5d8f;
        --r-heading-text-transform: none; --r-heading-font-weight: 650; }
.reveal { font-size: 28px; }
.reveal .slides { text-align: left; }
.reveal h1 { font-size: 56px; line-height: 1.15; }
.reveal h2 { font-size: 40px; margin-bottom: 0.6em; }
.reveal p, .reveal li { line-height: 1.35; }
.reveal .kicker { color: #5a6b7b; font-size: 24px; margin: 0 0 0.3em; text-transform: uppercase;
                  letter-spacing: 0.04em; }
.reveal .objectives { font-size: 26px; }
.reveal .objectives ul { margin-left: 1em; }
.reveal .katex-display { font-size: 1.1em; margin: 0.8em 0; }
.reveal .katex { font-size: 1.05em; }
.reveal pre { width: 100%; box-sizing: border-box; box-shadow: none; font-size: 24px; line-height: 1.3; margin: 0.4em 0; }
.reveal pre.code, .reveal pre.code code { background: #f4f6f8; color: #1c2b39; max-height: none;
                                          padding: 0.3em 0.5em; white-space: pre; }
.reveal pre.output { background: #fff; border-left: 4px solid #0a5d8f; padding: 0.2em 0.6em;
                     white-space: pre; }
.reveal code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.reveal figure { margin: 0; text-align: center; }
.reveal figure img { height: FIGURE_PXpx; width: 100%; object-fit: contain; max-width: 100%; margin: 0 auto; display: block; }
.reveal figcaption { font-size: 24px; color: #3a4a5a; margin-top: 0.4em; text-align: left; }
.reveal .options { list-style: none; margin: 0.4em 0; padding: 0; }
.reveal .options li { margin: 0.25em 0; }
.reveal .options pre { display: inline-block; width: auto; vertical-align: top; margin: 0; }
.reveal .options .label { display: inline-block; min-width: 2.2em; font-weight: 650; }
.reveal .answer { border-left: 6px solid #2e7d32; padding-left: 0.6em; margin-top: 0.6em; }
.reveal .explorer { margin-top: 0.2em; display: flex; flex-direction: column; }
.reveal .explorer .vega-bindings { order: -1; display: flex; flex-wrap: wrap; gap: 0 1.5em; }
.reveal .explorer select { font-size: 24px; }
.reveal .explorer .vega-bindings { font-size: 24px; }
.reveal .explorer .vega-bind { margin: 0.2em 0; }
.reveal .explorer input[type=range] { width: 320px; height: 28px; }
"""

JS = r"""// The decks' script (scripts/slides.py): reveal.js at 1280 x 720, the speaker notes (S),
// and each explorer drawn by Vega-Embed when its slide is first shown (local scripts only).
(function () {
  "use strict";
  function drawExplorers(slide) {
    slide.querySelectorAll(".explorer-spec").forEach(function (script) {
      var target = document.getElementById(script.dataset.for);
      if (!target || target.dataset.drawn) return;
      target.dataset.drawn = "1";
      var spec = JSON.parse(script.textContent);
      embed(target, spec, 1, 0);
    });
  }
  // every font size of a chart's specification (its config and its marks) times `factor`
  function enlarged(spec, factor) {
    return JSON.parse(JSON.stringify(spec), function (key, value) {
      return /fontSize$/i.test(key) && typeof value === "number" ? value * factor : value;
    });
  }
  function embed(target, spec, factor, tries) {
      vegaEmbed(target, enlarged(spec, factor), {actions: false, renderer: "svg"}).then(function () {
        // the chart as large as the slide allows, so that its text reads from the back
        var svg = target.querySelector("svg"), config = Reveal.getConfig();
        var box = (svg.getAttribute("viewBox") || "").split(/\s+/).map(Number);
        var w = box.length === 4 ? box[2] : svg.width.baseVal.value;
        var h = box.length === 4 ? box[3] : svg.height.baseVal.value;
        var bindings = target.querySelector(".vega-bindings");
        var top = (target.getBoundingClientRect().top - target.closest("section").getBoundingClientRect().top)
          / Reveal.getScale();
        var room = config.height - top - (bindings ? bindings.offsetHeight : 0) - 30;
        var scale = Math.min(config.width * 0.96 / w, room / h);
        svg.setAttribute("viewBox", "0 0 " + w + " " + h);
        svg.setAttribute("width", w * scale); svg.setAttribute("height", h * scale);
        // its smallest text as shown: below MIN_CHART_PX, draw it again with larger fonts
        var smallest = Math.min.apply(null, Array.prototype.map.call(
          svg.querySelectorAll("text"), function (t) { return parseFloat(getComputedStyle(t).fontSize); }));
        if (smallest * scale < MIN_CHART_PX && tries < 3) {
          embed(target, spec, factor * MIN_CHART_PX / (smallest * scale) * 1.04, tries + 1);
          return;
        }
        target.dataset.scale = scale;
      }).catch(function (err) {
        target.textContent = "This explorer could not be drawn: " + err;
      });
  }
  var MIN_CHART_PX = 18;
  var needsVega = document.querySelector(".explorer-spec") !== null;
  function load(src) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src; s.onload = resolve; s.onerror = reject; document.head.appendChild(s);
    });
  }
  var vegaReady = needsVega
    ? load("_static/vega/vega.min.js").then(function () { return load("_static/vega/vega-lite.min.js"); })
        .then(function () { return load("_static/vega/vega-embed.min.js"); })
    : Promise.resolve();
  Reveal.initialize({
    width: 1280, height: 720, margin: 0.04, center: false, hash: true, slideNumber: "c/t",
    transition: "none", plugins: [RevealNotes]
  }).then(function () {
    vegaReady.then(function () {
      if (Reveal.isPrintView()) {
        document.querySelectorAll(".reveal .slides section").forEach(drawExplorers);
      } else {
        drawExplorers(Reveal.getCurrentSlide());
        Reveal.on("slidechanged", function (event) { drawExplorers(event.currentSlide); });
      }
    });
  });
})();
"""


def copy_static(out: Path) -> None:
    static = out / "_static"
    for target, source in STATIC.items():
        path = static / target
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(NODE_MODULES / source, path)
    fonts = NODE_MODULES / "katex" / "dist" / "fonts"
    shutil.copytree(fonts, static / "katex" / "fonts", dirs_exist_ok=True)
    (static / "slides.css").write_text(CSS.replace("FIGURE_PX", str(FIGURE_PX)), encoding="utf-8")
    (static / "slides.js").write_text(JS, encoding="utf-8")


def chapters() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def write_decks(names, out: Path = OUT) -> list[Path]:
    missing = [s for s in STATIC.values() if not (NODE_MODULES / s).exists()]
    if missing:
        raise SystemExit(f"make slides: {', '.join(missing)} missing: run `npm ci`")
    out.mkdir(parents=True, exist_ok=True)
    copy_static(out)
    book, bibliography, katex = Book.read(), Bibliography(), KaTeX()
    render = Renderer(katex)
    written = []
    try:
        for name in names:
            path = out / f"{name}.html"
            path.write_text(deck(name, book, bibliography, render), encoding="utf-8")
            written.append(path)
    finally:
        katex.close()
    index = "".join(f'<li><a href="{p.name}">{p.stem}</a></li>' for p in written)
    (out / "index.html").write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Slides</title>'
        f"</head><body><h1>Lecture slides</h1><ul>{index}</ul></body></html>\n",
        encoding="utf-8")
    return written


def print_pdfs(decks: list[Path], out: Path) -> list[Path]:
    """Each deck printed by Chromium (Playwright, Debian's browser: CHROMIUM), one slide a
    1280 x 720 page, as reveal.js lays a deck out for print (`?print-pdf`)."""
    import functools
    import http.server
    import os
    import threading

    from playwright.sync_api import sync_playwright

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    folder = decks[0].parent
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            for deck_path in decks:
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(f"http://127.0.0.1:{server.server_port}/{deck_path.name}?print-pdf")
                page.wait_for_function("window.Reveal && Reveal.isReady() && "
                                       "document.querySelectorAll('.pdf-page').length > 0")
                page.wait_for_timeout(500)     # the explorers, drawn for print
                pdf = out / f"{deck_path.stem}.pdf"
                page.pdf(path=str(pdf), width="1280px", height="720px", print_background=True,
                         tagged=True)
                written.append(pdf)
                page.close()
            browser.close()
    finally:
        server.shutdown()
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chapters", nargs="*")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--pdf", action="store_true",
                        help="also print each deck to OUT/pdf/<name>.pdf with Chromium")
    args = parser.parse_args(argv)
    names = args.chapters or chapters()
    unknown = sorted(set(names) - set(chapters()))
    if unknown:
        parser.error(f"no such chapter: {', '.join(unknown)}")
    written = write_decks(names, args.out)
    if args.pdf:
        written += print_pdfs(written, args.out / "pdf")
    for path in written:
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
