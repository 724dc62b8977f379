"""A Sphinx extension, loaded by `_config.yml` (`sphinx.local_extensions`), that keeps every
page of the site light and fast on a phone (issue 12; `make audit` measures it with
Lighthouse, see scripts/audit.py). It edits no generated file: each change is made to what
Sphinx writes.

1. Math typeset at build time. The math renderer `katex_static` (`html_math_renderer` in
   `_config.yml`) sends every formula to one Node process running KaTeX (the version pinned
   in package.json; _ext/katex_render.js) and writes its answer into the page: HTML for
   the eye and MathML for screen readers, so math needs no script, renders offline and
   before any JavaScript runs. The sidebar's chapter titles with math are typeset the same
   way. A formula KaTeX cannot parse is a build warning naming the page (`-W`: an error).
   KaTeX's stylesheet and fonts are copied from node_modules/katex to `_static/katex/`.
2. Icons without Font Awesome's 1.5 MB script. pydata-sphinx-theme draws its icons
   (`<i class="fa-solid fa-bars">`) with `fontawesome.js`; `_templates/static/webpack-macros.html`
   drops that script, and `_static/icons.css` draws the icons the pages use as CSS masks of
   Font Awesome's own SVG files (@fortawesome/fontawesome-free, pinned in package.json).
   The stylesheet is written at the end of the build from the icon classes found in the
   pages, so an icon a page uses and no SVG draws is a build warning.
3. A meta description on every page: the front matter's `description`, else the page's
   first paragraph of prose (search engines show it; Lighthouse's SEO audit asks for it).
   A page title with math gets a plain-text `<title>`.
4. Images that do not shift the layout: each `<img>` of the page body gets the picture's
   `width` and `height` (read from the PNG or JPEG file), and all but the first are
   lazy-loaded.
5. Scripts that the first screen does not need are deferred (see DEFER), and the stylesheets
   every page loads are one file (`_static/site-bundle.css`, written at the end of the build),
   less Font Awesome's glyph rules (item 2 draws the icons) and sphinx-design's stylesheet
   when no page uses it. KaTeX's fonts that the top of a page uses are preloaded.
6. A quiet build log. Jupyter Book executes the notebooks with jupyter_client, which
   connects to the kernel over TCP; ipykernel 7 then logs "Kernel is running over TCP
   without encryption" once per notebook. The kernels are on 127.0.0.1 and live for one
   build, so the build's kernel spec (`_ext/jupyter/kernels/python3/kernel.json`, found
   through JUPYTER_PATH) starts ipykernel with its own log at ERROR; cell output, warnings
   included, is unaffected.
7. Long pages laid out as they are read. `_static/site.css` lets the browser skip laying
   out and painting the article's sections until they near the screen
   (`content-visibility: auto`). The theme's tab-stop pass would undo that by measuring
   every code block at load; `_ext/tab_stops.js` applies its rule to each block once it is
   laid out, and the copy of the theme's script in `_static/` does not start its own.
"""

import html
import json
import os
import re
import shutil
import struct
import subprocess
import threading
from pathlib import Path
from urllib.parse import quote

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
RENDERER = "katex_static"
KATEX_SCRIPT = HERE / "katex_render.js"
KATEX_DIR = "katex"                      # _static/katex/ in the built site
ICONS_CSS = "icons.css"                  # _static/icons.css
FA_PACKAGE = Path("@fortawesome") / "fontawesome-free"


def node_modules(app: Sphinx) -> Path:
    return Path(app.srcdir) / "node_modules"


# --- 1. math -------------------------------------------------------------------------


class KaTeX:
    """One `node _ext/katex_render.js` process for the whole build, and a cache."""

    def __init__(self, cwd: Path):
        self.cwd = cwd
        self.process = None
        self.lock = threading.Lock()
        self.cache: dict = {}

    def render(self, tex: str, display: bool, macros: dict) -> dict:
        key = (tex, display)
        if key not in self.cache:
            with self.lock:
                if self.process is None or self.process.poll() is not None:
                    self.process = subprocess.Popen(
                        ["node", str(KATEX_SCRIPT)], cwd=self.cwd, text=True,
                        encoding="utf-8", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                request = {"tex": tex, "display": display, "macros": macros}
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
                line = self.process.stdout.readline()
                if not line:
                    raise ExtensionError("_ext/katex_render.js stopped: is node installed?")
                self.cache[key] = json.loads(line)
        return self.cache[key]

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=10)
        self.process = None


def _typeset(translator, node, tex: str, display: bool) -> str:
    app = translator.builder.app
    answer = app.page_speed_katex.render(tex, display, app.config.katex_macros)
    for warning in answer.get("warnings", []):
        logger.warning("KaTeX: %s in %r", warning, tex, location=node)
    if "error" in answer:
        logger.warning("KaTeX cannot typeset %r: %s", tex, answer["error"], location=node)
        return f'<span class="math-error">{html.escape(tex)}</span>'
    return answer["html"]


def visit_math(self, node):
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(_typeset(self, node, node.astext(), display=False))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node):
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"]:
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    tex = node.astext()
    if not node.get("nowrap"):
        # As Sphinx's MathJax renderer: paragraphs of one block are equations one below the
        # other.
        parts = [part for part in tex.split("\n\n") if part.strip()]
        if len(parts) > 1:
            tex = r"\begin{gathered}" + r"\\".join(parts) + r"\end{gathered}"
    # a wide display scrolls sideways (_static/site.css): a keyboard reaches it (tab stop)
    typeset = _typeset(self, node, tex, display=True)
    self.body.append(typeset.replace('<span class="katex-display">',
                                     '<span class="katex-display" tabindex="0">', 1))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def copy_katex(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    dist = node_modules(app) / "katex" / "dist"
    target = Path(app.outdir) / "_static" / KATEX_DIR
    (target / "fonts").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(dist / "katex.min.css", target / "katex.min.css")
    shutil.copyfile(dist.parent / "LICENSE", target / "LICENSE")
    for font in (dist / "fonts").iterdir():
        shutil.copyfile(font, target / "fonts" / font.name)


# --- 2. icons ------------------------------------------------------------------------

FA_CLASS_ATTR = re.compile(r'class="([^"]*\bfa-[^"]*)"')
STYLES = {"fa-brands": "brands", "fab": "brands", "fa-regular": "regular", "far": "regular",
          "fa-solid": "solid", "fas": "solid", "fa": "solid"}
# Font Awesome's modifiers (sizes, fixed width, animation): classes that are not icons.
MODIFIERS = re.compile(r"fa-(\d?x|\d?xs|sm|lg|\d?xl|fw|li|ul|spin|pulse|border|inverse|"
                       r"pull-left|pull-right|rotate-\d+|flip(-\w+)?|stack(-\w+)?|"
                       r"classic|sharp|solid|regular|brands|light|thin|duotone)$")
# Names pydata-sphinx-theme and sphinx-book-theme still write in Font Awesome 5 spelling.
ALIASES = {"pencil-alt": "pen", "home": "house", "file-alt": "file-lines",
           "search": "magnifying-glass", "times": "xmark", "expand-alt": "up-right-and-down-left-from-center"}
VIEWBOX = re.compile(r'viewBox="0 0 (\d+) (\d+)"')
SVG_COMMENT = re.compile(r"<!--.*?-->", re.S)


def icons_used(outdir: Path) -> dict:
    """{(style, icon name): [page, ...]} over every HTML page of the built site."""
    used: dict = {}
    for page in sorted(outdir.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        for match in FA_CLASS_ATTR.finditer(text):
            classes = match[1].split()
            style = next((STYLES[c] for c in classes if c in STYLES), "solid")
            for c in classes:
                if c.startswith("fa-") and c not in STYLES and not MODIFIERS.match(c):
                    used.setdefault((style, c[3:]), []).append(page.relative_to(outdir).as_posix())
    return used


def icon_rule(svg_text: str, name: str) -> str:
    width, height = map(int, VIEWBOX.search(svg_text).groups())
    svg = " ".join(SVG_COMMENT.sub("", svg_text).split()).replace('"', "'")
    data = quote(svg, safe=" =:/'(),.-")
    return (f'.fa-{name}{{--fa-icon:url("data:image/svg+xml,{data}");'
            f"--fa-icon-width:{width / height:.4g}em}}")


def icons_css(app: Sphinx, used: dict) -> str:
    svgs = node_modules(app) / FA_PACKAGE / "svgs"
    rules, done = [], set()
    for (style, name), pages in sorted(used.items()):
        if name in done:
            continue
        file = svgs / style / f"{ALIASES.get(name, name)}.svg"
        if not file.is_file():
            logger.warning("no Font Awesome %s icon %r (used on %s): add it to ALIASES in "
                           "_ext/page_speed.py", style, name, ", ".join(sorted(set(pages))[:3]))
            continue
        done.add(name)
        rules.append(icon_rule(file.read_text(encoding="utf-8"), name))
    version = json.loads((svgs.parent / "package.json").read_text())["version"]
    return "\n".join([
        f"/* Icons: Font Awesome Free {version} by @fontawesome, https://fontawesome.com,",
        "   icons under CC BY 4.0 (https://fontawesome.com/license/free). Written by",
        "   _ext/page_speed.py with the icons the pages use: each is a mask of its SVG over the",
        "   text colour, so icons follow the theme's light and dark colours. */",
        ":is(.fa,.fas,.far,.fab,.fa-solid,.fa-regular,.fa-brands){font-family:inherit!important;"
        "display:inline-block;line-height:1}",
        ":is(.fa,.fas,.far,.fab,.fa-solid,.fa-regular,.fa-brands)::before{content:\"\"!important;"
        "display:inline-block;width:var(--fa-icon-width,1em);height:1em;vertical-align:-.125em;"
        "background-color:currentColor;-webkit-mask:var(--fa-icon) center/contain no-repeat;"
        "mask:var(--fa-icon) center/contain no-repeat}",
        ".fa-lg{font-size:1.25em;line-height:.05em;vertical-align:-.075em}",
        *rules, ""])


# The theme's stylesheets also draw a few icons as characters of Font Awesome's solid font
# (admonition titles, the "on this page" arrow): 18 characters of a 156 KB font. The site
# serves a subset of it with just the characters the stylesheets use, declared after the
# theme's @font-face (the last declaration of a font wins).
FA_SOLID_TTF = Path("vendor") / "fontawesome" / "webfonts" / "fa-solid-900.ttf"
SOLID_SUBSET = "icons-solid.woff"
CSS_RULE = re.compile(r"([^{}]*)\{([^{}]*)\}")
ICON_RULE_SELECTOR = re.compile(r"^\.fa-[\w-]+::?(before|after)$")
PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\([ef][0-9a-f]{3})(?![0-9a-f])")


def icon_characters(static: Path) -> set:
    """The private-use characters the stylesheets show, less the `.fa-name:before` rules."""
    found = set()
    for css in static.rglob("*.css"):
        for rule in CSS_RULE.finditer(css.read_text(encoding="utf-8", errors="replace")):
            selectors = [s.strip() for s in rule[1].split(",")]
            if all(ICON_RULE_SELECTOR.match(s) for s in selectors):
                continue
            for match in PRIVATE_USE.finditer(rule[2]):
                found.add(int(match[1], 16) if match[1] else ord(match[0]))
    return found


def subset_solid_font(static: Path) -> str:
    """Write the subset font; return its @font-face rule ("" when there is nothing to do)."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    source = static / FA_SOLID_TTF
    characters = icon_characters(static)
    if not source.is_file() or not characters:
        return ""
    font = TTFont(source)
    options = subset.Options()
    options.flavor = "woff"
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(characters))
    subsetter.subset(font)
    font.flavor = "woff"
    font.save(static / SOLID_SUBSET)
    return ('@font-face{font-family:"Font Awesome 6 Free";font-style:normal;font-weight:900;'
            f'font-display:block;src:url({SOLID_SUBSET}) format("woff")}}')


def write_icons(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    css = icons_css(app, icons_used(outdir)) + subset_solid_font(outdir / "_static") + "\n"
    (outdir / "_static" / ICONS_CSS).write_text(css, encoding="utf-8")


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
SPAN_TAG = re.compile(r"<span\b|</span>")
ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">(.*?)</annotation>', re.S)


def katex_to_text(fragment: str) -> str:
    """Replace each typeset formula of an HTML fragment by plain text (see tex_to_text).

    The theme strips the tags of a title for `<title>` and the prev/next links' `title`
    attributes; a typeset formula would leave its text three times (HTML, MathML, TeX)."""
    while (start := fragment.find(KATEX_START)) >= 0:
        depth, end = 0, len(fragment)
        for tag in SPAN_TAG.finditer(fragment, start):
            depth += 1 if tag[0] == "<span" else -1
            if depth == 0:
                end = tag.end()
                break
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


def size_images(app: Sphinx, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if not body or "<img" not in body:
        return
    sources = {dest: Path(app.srcdir, src) for src, dest in app.builder.images.items()}
    first = True

    def fix(match):
        nonlocal first
        tag = match[0]
        src = SRC.search(tag)
        extra = ' decoding="async"'
        if not first and "loading=" not in tag:
            extra += ' loading="lazy"'
        first = False
        if src and " width=" not in tag and " height=" not in tag:
            file = sources.get(Path(src[1]).name)
            size = image_size(file) if file else None
            if size:
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


# --- 6. one stylesheet ---------------------------------------------------------------

# The theme and the extensions give every page 13 stylesheets, each a request that holds
# the first paint back. They are served as one file, written at the end of the build
# (write_bundle): the theme's own two (`head_pre_assets` in _templates/static/webpack-macros.html
# leaves them out when the context has `page_speed_bundle`), then every stylesheet Sphinx
# adds to all pages, in its order, with relative url()s rewritten and @imports inlined.
# A stylesheet added to one page only (the explorers') and icons.css (written after the
# pages) keep their own <link>.
BUNDLE = "site-bundle.css"
THEME_ASSETS = ("styles/theme.css", "styles/pydata-sphinx-theme.css")
NOT_BUNDLED = (ICONS_CSS,)
# sphinx-design (which Jupyter Book 1 always loads) styles its cards, tabs and grids, all
# `sd-` classes: its 55 KB stylesheet is bundled only when a page uses one.
UNUSED_IF_ABSENT = ("sphinx-design.min.css", 'class="sd-')
CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)""")
CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*['"]([^'"]+)['"]\s*\)?\s*;""")
SOURCE_MAP_COMMENT = re.compile(r"/\*#\s*sourceMappingURL=[^*]*\*/")


def _static_name(css) -> str:
    name = getattr(css, "filename", "") or ""
    return name.split("?")[0].removeprefix("_static/") if name.startswith("_static/") else ""


def inline_css(static: Path, name: str, seen=None) -> str:
    """A stylesheet of _static/ as it reads from _static/ itself: url()s and @imports fixed."""
    seen = set() if seen is None else seen
    if name in seen:
        return ""
    seen.add(name)
    file = static / name
    folder = Path(name).parent
    text = SOURCE_MAP_COMMENT.sub("", file.read_text(encoding="utf-8"))

    def url(match):
        target = match[2].strip()
        if re.match(r"^(data:|[a-z]+:|/|#)", target):
            return match[0]
        return f'url("{os.path.normpath(folder / target).replace(os.sep, "/")}")'

    def import_(match):
        return inline_css(static, os.path.normpath(folder / match[1]).replace(os.sep, "/"), seen)

    text = CSS_IMPORT.sub(import_, text)
    return f"/* {name} */\n" + CSS_URL.sub(url, text) + "\n"


def bundled(app: Sphinx) -> list:
    """The stylesheets of _static/ that Sphinx adds to every page, in order, to bundle."""
    # set by the builder's prepare_writing(), which an incremental build that writes no
    # page skips: then add what prepare_writing() adds to the list, as it does
    if not hasattr(app.builder, "_orig_css_files"):
        for filename, attrs in app.registry.css_files:
            app.builder.add_css_file(filename, **attrs)
    css_files = getattr(app.builder, "_orig_css_files", None) or app.builder._css_files
    common = [_static_name(css) for css in list(dict.fromkeys(css_files))]
    # Not filtered by what _static/ holds yet: in a build from scratch the extensions'
    # stylesheets (myst-nb's, sphinx-exercise's) are copied there only after the pages are
    # written. write_bundle checks that each one is there by then.
    return [name for name in common if name and name not in NOT_BUNDLED]


def bundle_css(app: Sphinx, pagename, templatename, context, doctree) -> None:
    css_files = context.get("css_files")
    if not css_files or app.builder.format != "html":
        return
    common = bundled(app)
    bundle = type(css_files[0])(f"_static/{BUNDLE}", priority=0)
    context["css_files"] = [bundle] + [css for css in css_files if _static_name(css) not in common]
    context["page_speed_bundle"] = True


def write_bundle(app: Sphinx, exception) -> None:
    """Write the bundle once every stylesheet is final: at the end of the build, after
    pydata-sphinx-theme rewrites pygments.css with its light and dark code colours (its own
    build-finished handler; Sphinx's first pygments.css has colours below 4.5:1 contrast)."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    static = outdir / "_static"
    names = [name for name in THEME_ASSETS if (static / name).is_file()] + bundled(app)
    missing = [name for name in names if not (static / name).is_file()]
    if missing:   # the pages link the bundle in their place: they would go unstyled
        raise ExtensionError(f"_ext/page_speed.py: stylesheets to bundle are not in "
                             f"{static}: {', '.join(missing)}")
    if UNUSED_IF_ABSENT and not any(
            UNUSED_IF_ABSENT[1] in page.read_text(encoding="utf-8", errors="replace")
            for page in outdir.rglob("*.html") if page.parent.name != "_static"):
        names = [name for name in names if name != UNUSED_IF_ABSENT[0]]
    css = "".join(inline_css(static, name) for name in names)
    (static / BUNDLE).write_text(drop_icon_rules(css), encoding="utf-8")


def drop_icon_rules(css: str) -> str:
    """Leave out Font Awesome's 2 500 `.fa-name::before{content: ...}` rules (72 KB of the
    theme's stylesheet): icons.css draws every icon the pages use, with `content: ""`."""
    def keep(rule):
        selectors = [s.strip() for s in rule[1].split(",")]
        if all(ICON_RULE_SELECTOR.match(s) for s in selectors) and "content:" in rule[2]:
            return ""
        return rule[0]
    return CSS_RULE.sub(keep, css)


# --- 7. tab stops on the blocks that scroll -----------------------------------------

# pydata-sphinx-theme gives a code block, an output or a table a tab stop when it scrolls,
# measuring every one of them at the page's load event (addTabStopsToScrollableElements).
# That lays out the whole page at once, even the sections that _static/site.css lets the
# browser lay out only when they near the screen: on a notebook page it was the longest
# task an emulated phone ran (0.35-0.6 s). _ext/tab_stops.js applies the theme's rule to
# each block once the browser lays it out instead, and the theme's pass is not started:
# the one call that starts it, at the end of the theme's script, is taken out of the copy
# in _static/.
# The build fails if that call is not found (a new theme version: re-check this).
TAB_STOPS_JS = "tab-stops.js"
THEME_JS = "scripts/pydata-sphinx-theme.js"
THEME_TAB_STOPS_CALL = re.compile(
    r'"complete"===document\.readyState\?(\w+)\(\):window\.addEventListener\("load",\1\)')
THEME_TAB_STOPS_LEFT_OUT = "void 0/*tab stops: _ext/tab_stops.js*/"
JS_SOURCE_MAP_COMMENT = re.compile(r"\n//# sourceMappingURL=\S+\s*$")


def without_theme_tab_stops(code: str) -> str:
    """The theme's script less the call that starts its tab-stop pass, and less its
    `sourceMappingURL` comment, since the source map no longer matches (idempotent)."""
    if THEME_TAB_STOPS_LEFT_OUT in code:
        return code
    new, found = THEME_TAB_STOPS_CALL.subn(THEME_TAB_STOPS_LEFT_OUT, code)
    if found != 1:
        raise ExtensionError(
            f"_ext/page_speed.py: {found} calls of the theme's tab-stop pass found in "
            f"{THEME_JS} (expected 1): pydata-sphinx-theme changed; see section 7")
    return JS_SOURCE_MAP_COMMENT.sub("\n", new)


def add_tab_stops(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.add_js_file(TAB_STOPS_JS, defer="defer")


def write_tab_stops(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    theme = static / THEME_JS
    if theme.is_file():
        theme.write_text(without_theme_tab_stops(theme.read_text(encoding="utf-8")),
                         encoding="utf-8")
    shutil.copyfile(HERE / "tab_stops.js", static / TAB_STOPS_JS)


# --- setup ---------------------------------------------------------------------------


def configure(app: Sphinx, config) -> None:
    templates = str(Path(app.srcdir) / "_templates")
    if templates not in config.templates_path:
        config.templates_path.insert(0, templates)
    jupyter = str(HERE / "jupyter")
    paths = os.environ.get("JUPYTER_PATH", "")
    if jupyter not in paths.split(os.pathsep):
        os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (jupyter, paths) if p)


def check_packages(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    needed = [node_modules(app) / "katex" / "dist" / "katex.min.css",
              node_modules(app) / FA_PACKAGE / "svgs"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        raise ExtensionError(f"_ext/page_speed.py: {', '.join(missing)} not found: run "
                             "`npm ci` in the repository (`make book` does it)")
    app.add_css_file(f"{KATEX_DIR}/katex.min.css")
    app.add_css_file(ICONS_CSS)
    copy_katex(app, None)   # now, so that the stylesheet bundle can hold KaTeX's


def stop_katex(app: Sphinx, exception) -> None:
    app.page_speed_katex.close()


def setup(app: Sphinx):
    app.add_html_math_renderer(RENDERER, inline_renderers=(visit_math, None),
                               block_renderers=(visit_displaymath, None))
    app.add_config_value("katex_macros", {}, "html", dict)
    app.page_speed_katex = KaTeX(Path(app.srcdir))
    app.connect("config-inited", configure)
    app.connect("builder-inited", check_packages)
    app.connect("builder-inited", add_tab_stops)
    app.connect("html-page-context", set_meta)
    app.connect("html-page-context", size_images)
    app.connect("html-page-context", defer_scripts)
    app.connect("html-page-context", bundle_css, priority=1000)
    # After pydata-sphinx-theme's build-finished handlers (priority 500), which rewrite
    # pygments.css: the bundle holds the final stylesheets.
    app.connect("build-finished", write_bundle, priority=800)
    app.connect("build-finished", write_icons, priority=850)
    app.connect("build-finished", write_tab_stops)
    app.connect("build-finished", stop_katex)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
