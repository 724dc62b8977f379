"""A Sphinx extension (`_config.yml`): what each page's <head> and images need, for search
engines and a fast first screen (issue 12).

1. A meta description on every page: the front matter's `description`, else the page's
   first paragraph of prose (search engines show it; Lighthouse's SEO audit asks for it).
   A page title with math gets a plain-text `<title>`. KaTeX's fonts that the top of a
   page uses are preloaded.
2. Images that do not shift the layout: each `<img>` of the page body gets the picture's
   `width` and `height` (read from the PNG or JPEG file), and all are lazy-loaded but
   a first one above the page's first section heading (which may be the largest paint
   of the first screen; a figure further down would only take bandwidth from it).
   A figure drawn at twice its shown size (the build's kernels draw 2x PNGs:
   _ext/quiet_kernels.py) is shown from a 1x copy made here, with the 2x file in its
   `srcset`: sharp on a 2x display, no heavier on a 1x one (issue 28).
3. Scripts that the first screen does not need are deferred (see DEFER).
"""

import html
import re
import struct
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

from katex_math import KATEX_DIR, span_end  # noqa: E402  (_ext/ is on sys.path in the build)

# --- 3. meta description and title ---------------------------------------------------

DESCRIPTION_LENGTH = 160
SKIP_PARENTS = (nodes.Admonition, nodes.topic, nodes.sidebar, nodes.table, nodes.footnote,
                nodes.citation, nodes.field_list, nodes.system_message, nodes.literal_block)
TEX_SYMBOLS = {r"\top": "ᵀ", r"\sqrt": "√", r"\times": "×", r"\cdot": "·", r"\in": "∈",
               r"\le": "≤", r"\ge": "≥", r"\to": "→", r"\infty": "∞", r"\sum": "∑",
               r"\mathbb{R}": "ℝ", r"\ldots": "…", r"\dots": "…"}


def tex_to_text(tex: str) -> str:
    """Readable plain text for a formula in a title or a description: `QK^\\top` -> QKᵀ."""
    for command, symbol in TEX_SYMBOLS.items():
        tex = re.sub(re.escape(command) + r"(?![A-Za-z])", symbol, tex)
    tex = re.sub(r"\\(mathrm|mathbf|mathit|text|operatorname|boldsymbol)\s*", "", tex)
    tex = re.sub(r"\\[A-Za-z]+\s*", "", tex)
    tex = tex.replace("^", "").replace("_", "").replace("{", "").replace("}", "")
    return " ".join(tex.split())


def plain_text(node: nodes.Node) -> str:
    parts = []
    for child in node.findall(lambda n: isinstance(n, (nodes.Text, nodes.math))):
        if isinstance(child, nodes.math):
            parts.append(tex_to_text(child.astext()))
        elif not any(isinstance(p, nodes.math) for p in _parents(child)):
            parts.append(child.astext())
    return " ".join("".join(parts).split())


def _parents(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def shorten(text: str, limit: int = DESCRIPTION_LENGTH) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return cut + "…"


def first_paragraph(doctree: nodes.document) -> str:
    for paragraph in doctree.findall(nodes.paragraph):
        if any(isinstance(p, SKIP_PARENTS) for p in _parents(paragraph)):
            continue
        if any(isinstance(p, nodes.container) and "cell" in p.get("classes", [])
               for p in _parents(paragraph)):
            continue
        text = plain_text(paragraph)
        if len(text.split()) >= 8:
            return text
    return ""


def describe(app: Sphinx, pagename: str, context: dict, doctree) -> str:
    metadata = app.env.metadata.get(pagename, {}) if pagename in app.env.all_docs else {}
    text = str(metadata.get("description", "")).strip()
    if not text and doctree is not None:
        text = first_paragraph(doctree)
    if not text:
        text = f"{context.get('docstitle', '')}: {html.unescape(re.sub('<[^>]+>', '', context.get('title', '')))}"
    return shorten(" ".join(text.split()))


KATEX_START = '<span class="katex">'
ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)


def katex_to_text(fragment: str) -> str:
    """Replace each typeset formula of an HTML fragment by plain text (see tex_to_text).

    The theme strips the tags of a title for `<title>` and the prev/next links' `title`
    attributes; a typeset formula would leave its text three times (HTML, MathML, TeX)."""
    while (start := fragment.find(KATEX_START)) >= 0:
        end = span_end(fragment, start)
        tex = ANNOTATION.search(fragment, start, end)
        text = tex_to_text(html.unescape(tex[1])) if tex else ""
        fragment = fragment[:start] + html.escape(text) + fragment[end:]
    return fragment


# KaTeX's two main fonts, fetched with the page on pages with math: a formula laid out in a
# fallback font first and again when its font arrives would shift the text around it. The
# other fonts (bold, blackboard, calligraphic, big delimiters) are preloaded when a formula
# near the top of the page uses them: before the page's first subsection, which is as much
# as a phone's first screen shows (e.g. the notation table); the others load with the
# stylesheet, later, for formulas below the first screen.
KATEX_PRELOAD = (("KaTeX_Main-Regular.woff2", KATEX_START), ("KaTeX_Math-Italic.woff2", "mathnormal"))
# KaTeX's classes that set a font (katex.min.css), and that font's file.
KATEX_FONT_CLASSES = {
    "mathnormal": "Math-Italic", "mathit": "Main-Italic", "mathbf": "Main-Bold",
    "textbf": "Main-Bold", "boldsymbol": "Math-BoldItalic", "amsrm": "AMS-Regular",
    "mathbb": "AMS-Regular", "textbb": "AMS-Regular", "mathcal": "Caligraphic-Regular",
    "mathfrak": "Fraktur-Regular", "textfrak": "Fraktur-Regular", "mathtt": "Typewriter-Regular",
    "texttt": "Typewriter-Regular", "mathscr": "Script-Regular", "textscr": "Script-Regular",
    "mathsf": "SansSerif-Regular", "textsf": "SansSerif-Regular", "small-op": "Size1-Regular",
    "large-op": "Size2-Regular", "delim-size1": "Size1-Regular", "delim-size4": "Size4-Regular",
}
CLASS_ATTR = re.compile(r'class="([^"]*)"')


def katex_fonts(fragment: str) -> list:
    """The KaTeX font files (e.g. KaTeX_AMS-Regular.woff2) the formulas of an HTML fragment use."""
    fonts = set()
    if KATEX_START not in fragment:
        return []
    fonts.add("Main-Regular")
    for match in CLASS_ATTR.finditer(fragment):
        classes = match[1].split()
        fonts.update(KATEX_FONT_CLASSES[c] for c in classes if c in KATEX_FONT_CLASSES)
        if "delimsizing" in classes:
            fonts.update(f"Size{n}-Regular" for n in range(1, 5) if f"size{n}" in classes)
    return sorted(f"KaTeX_{font}.woff2" for font in fonts)


def set_meta(app: Sphinx, pagename, templatename, context, doctree) -> None:
    description = html.escape(describe(app, pagename, context, doctree), quote=True)
    context["metatags"] = (context.get("metatags", "")
                           + f'\n<meta name="description" content="{description}" />')
    body = context.get("body", "")
    preload = [font for font, marker in KATEX_PRELOAD if marker in body]
    subsection = body.find("<section", body.find("<section") + 1)
    at_once = body[:subsection] if subsection > 0 else body
    preload += [font for font in katex_fonts(at_once) if font not in preload]
    for font in preload:
        href = context["pathto"](f"_static/{KATEX_DIR}/fonts/{font}", 1)
        context["metatags"] += (f'\n<link rel="preload" as="font" type="font/woff2" '
                                f'href="{href}" crossorigin />')
    if KATEX_START in context.get("title", ""):
        context["title"] = katex_to_text(context["title"])
    # The `<link rel="prev">` attributes get plain text; the footer's visible links
    # (pydata-sphinx-theme's prev-next.html reads `prev_title` first) keep the typeset math.
    for key in ("prev", "next"):
        related = context.get(key)
        if related and KATEX_START in related.get("title", ""):
            context.setdefault(f"{key}_title", related["title"])
            context[key] = {**related, "title": katex_to_text(related["title"])}


# --- 4. images -----------------------------------------------------------------------

IMG = re.compile(r"<img\b[^>]*>")
SRC = re.compile(r'\ssrc="([^"]+)"')


def image_size(path: Path):
    """(width, height) of a PNG or JPEG file, or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(26)
            if head[:8] == b"\x89PNG\r\n\x1a\n":
                return struct.unpack(">II", head[16:24])
            if head[:2] == b"\xff\xd8":
                f.seek(2)
                while True:
                    marker, length = struct.unpack(">HH", f.read(4))
                    if 0xFFC0 <= marker <= 0xFFCF and marker not in (0xFFC4, 0xFFC8, 0xFFCC):
                        height, width = struct.unpack(">xHH", f.read(5))
                        return width, height
                    f.seek(length - 2, 1)
    except (OSError, struct.error):
        return None
    return None


# The size a notebook shows a figure at (myst-nb writes the output's metadata as the
# image's width and height, in px, as an attribute or a style).
DECLARED = re.compile(
    r'(?:\swidth="(?P<w>\d+)(?:px)?"\s+height="(?P<h>\d+)(?:px)?"'
    r'|style="width:\s*(?P<w2>\d+)px;\s*height:\s*(?P<h2>\d+)px;?")')
ONE_X = {}   # name of a 1x copy in _images/ -> (the 2x file, its shown size)


def write_one_x(app: Sphinx, exception) -> None:
    """The 1x copies of the 2x figures, scaled down with Pillow (matplotlib's own)."""
    if exception is not None or app.builder.format != "html":
        return
    from PIL import Image

    images = Path(app.outdir) / "_images"
    for name, (source, size) in ONE_X.items():
        target = images / name
        if target.exists() and target.stat().st_mtime >= source.stat().st_mtime:
            continue
        with Image.open(source) as picture:
            picture.resize(size, Image.Resampling.LANCZOS).save(target, optimize=True)


def size_images(app: Sphinx, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if not body or "<img" not in body:
        return
    sources = {dest: Path(app.srcdir, src) for src, dest in app.builder.images.items()}
    first = True

    top = body.find("<h2")  # the end of the page's opening, before its first section
    top = len(body) if top < 0 else top

    def fix(match):
        nonlocal first
        tag = match[0]
        src = SRC.search(tag)
        extra = ' decoding="async"'
        if not (first and match.start() < top) and "loading=" not in tag:
            extra += ' loading="lazy"'
        first = False
        file = sources.get(Path(src[1]).name) if src else None
        size = image_size(file) if file else None
        shown = DECLARED.search(tag)
        w, h = (int(shown["w"] or shown["w2"]), int(shown["h"] or shown["h2"])) if shown else (0, 0)
        if size and shown and file.suffix == ".png" and size[0] >= 1.5 * w:
            one_x = f"{Path(src[1]).stem}-1x.png"
            ONE_X[one_x] = (file, (w, h))
            small = src[1][: -len(Path(src[1]).name)] + one_x
            tag = tag.replace(src[0], f' src="{small}" srcset="{small} 1x, {src[1]} 2x"', 1)
            if shown["w2"]:   # as attributes, so that the stylesheet may shrink it to the column
                tag = tag.replace(shown[0], f'width="{w}" height="{h}"', 1)
        elif src and " width=" not in tag and " height=" not in tag and size:
            extra += f' width="{size[0]}" height="{size[1]}"'
        return tag[:4] + extra + tag[4:]

    context["body"] = IMG.sub(fix, body)


# --- 5. scripts ----------------------------------------------------------------------

# Scripts that only add behaviour to what is already on the screen: run after parsing.
# (doctools.js stays: search.html's searchtools.js needs it first.)
DEFER = ("sphinx_highlight.js", "togglebutton.js", "clipboard.min.js",
         "copybutton.js", "sphinx-book-theme.js", "design-tabs.js")


def defer_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    for script in scripts:
        filename = getattr(script, "filename", "") or ""
        if filename.split("?")[0].rsplit("/", 1)[-1] in DEFER:
            script.attributes.setdefault("defer", "defer")





def setup(app: Sphinx):
    app.setup_extension("katex_math")
    app.connect("html-page-context", set_meta)
    app.connect("html-page-context", size_images)
    app.connect("build-finished", write_one_x)
    app.connect("html-page-context", defer_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
