"""A Sphinx extension (`_config.yml`): math typeset at build time by KaTeX, for a light
page (issue 12; `make audit` measures it).

The math renderer `katex_static` (`html_math_renderer` in `_config.yml`) sends every
formula to one Node process running KaTeX (the version pinned in package.json;
_ext/katex_render.js) and writes its answer into the page: HTML for the eye and MathML for
screen readers, so math needs no script, renders offline and before any JavaScript runs.
The sidebar's chapter titles with math are typeset the same way. Each formula's
<math> carries an aria-label, the English the Speech Rule Engine speaks for it (issue 48;
katex_render.js), which screen readers read instead of the MathML's tokens. A formula KaTeX cannot
parse is a build warning naming the page (`-W`: an error). KaTeX's stylesheet and fonts
are copied from node_modules/katex to `_static/katex/`, and at the end of the build each
font (woff2) is cut to the characters the site's formulas use (fonttools; see
subset_katex_fonts).
(Why not sphinxcontrib-katex: chapters/maintainers/build.md.)

Search results quote a page's text around the words found (Sphinx's searchtools.js); a
formula's text is there three times (MathML, its TeX annotation and KaTeX's HTML: "QKQKQK",
issue 28). The copy of searchtools.js in `_static/` also drops the annotation and the HTML
before it quotes, so a snippet reads the MathML's text once; and it drops a self-check
question's hidden feedback and answer (_ext/selfcheck.py), so that no snippet shows an
answer before the reader has tried.
"""

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

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


def node_modules(app: Sphinx) -> Path:
    return Path(app.srcdir) / "node_modules"




class KaTeX:
    """One `node _ext/katex_render.js` process for the whole build, and a cache.

    The cache is kept between builds in `_build/.katex_cache.json` (keyed by the versions
    of KaTeX, the Speech Rule Engine and katex_render.js): the student edition's build, right
    after the reader's, asks for the same formulas, and each spoken formula costs the engine
    about 20 ms (1300 formulas: 26 s)."""

    def __init__(self, cwd: Path):
        self.cwd = cwd
        self.process = None
        self.lock = threading.Lock()
        self.cache: dict = {}
        self.cache_path = cwd / "_build" / ".katex_cache.json"
        self.version = self._version()
        self.new = 0
        try:
            stored = json.loads(self.cache_path.read_text(encoding="utf-8"))
            if stored.get("version") == self.version:
                self.cache = stored["answers"]
        except (OSError, ValueError, KeyError, AttributeError):
            pass

    def _version(self) -> str:
        parts = [KATEX_SCRIPT.read_text(encoding="utf-8")]
        for package in ("katex", "speech-rule-engine"):
            try:
                manifest = self.cwd / "node_modules" / package / "package.json"
                parts.append(json.loads(manifest.read_text(encoding="utf-8"))["version"])
            except (OSError, ValueError, KeyError):
                parts.append("?")
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def render(self, tex: str, display: bool, macros: dict) -> dict:
        key = json.dumps([tex, display, macros], sort_keys=True)
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
                self.new += 1
        return self.cache[key]

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=10)
        self.process = None
        if self.new:
            answers = {key: answer for key, answer in self.cache.items() if "error" not in answer}
            try:
                self.cache_path.parent.mkdir(parents=True, exist_ok=True)
                temporary = self.cache_path.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(json.dumps({"version": self.version, "answers": answers}),
                                     encoding="utf-8")
                os.replace(temporary, self.cache_path)
            except OSError as error:
                logger.info("_ext/katex_math.py: cache not saved: %s", error)
            self.new = 0


def _typeset(translator, node, tex: str, display: bool) -> str:
    app = translator.builder.app
    answer = app.katex_math.render(tex, display, app.config.katex_macros)
    for warning in answer.get("warnings", []):
        logger.warning("KaTeX: %s in %r", warning, tex, location=node)
    if "error" in answer:
        logger.warning("KaTeX cannot typeset %r: %s", tex, answer["error"], location=node)
        return f'<span class="math-error">{html.escape(tex)}</span>'
    if not answer.get("speech"):
        logger.warning("Speech Rule Engine: no spoken text for %r", tex, location=node)
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


# The fonts a page with math preloads (Main-Regular and Math-Italic, and those a formula on
# the first screen needs: _ext/page_meta.py) hold a heading or paragraph with math back until
# they arrive: KaTeX sets `font-display: block`. Whole, chapter 4's three were 71 KB; the
# site's formulas use about 150 characters, and cut to those (with printable ASCII, which
# also covers the equation numbers KaTeX's stylesheet writes) they are 35 KB. Each woff2
# file keeps its name; the woff and ttf files, for browsers without woff2, stay whole.
PRINTABLE_ASCII = {chr(c) for c in range(0x20, 0x7F)}
KATEX_HTML = '<span class="katex-html"'
SPAN_TAG = re.compile(r"<span\b|</span>")
TAG = re.compile(r"<[^>]+>")


def span_end(page: str, start: int) -> int:
    """Where the <span> that opens at `start` closes (after its </span>; the end of the page
    if it never does)."""
    depth = 0
    for tag in SPAN_TAG.finditer(page, start):
        depth += 1 if tag[0] == "<span" else -1
        if depth == 0:
            return tag.end()
    return len(page)


def katex_html_characters(page: str) -> set:
    """The characters of a page's typeset formulas as they are drawn: the text of KaTeX's
    HTML (not of its MathML, which the browser's own fonts draw for assistive technology)."""
    found = set()
    start = page.find(KATEX_HTML)
    while start >= 0:
        end = span_end(page, start)
        found |= set(html.unescape(TAG.sub("", page[start:end])))
        start = page.find(KATEX_HTML, end)
    return found - {"\n"}


def subset_katex_fonts(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from icons import cut_font   # _ext/ is on sys.path in the build

    outdir = Path(app.outdir)
    used = set(PRINTABLE_ASCII)
    for page in outdir.rglob("*.html"):
        if "_static" not in page.relative_to(outdir).parts:
            used |= katex_html_characters(page.read_text(encoding="utf-8", errors="replace"))
    codepoints = {ord(c) for c in used}
    for path in sorted((outdir / "_static" / KATEX_DIR / "fonts").glob("*.woff2")):
        cut_font(path, path, codepoints, "woff2")


# Lighter pages (issue 39): two thirds of a chapter page's HTML is KaTeX's, and the browser
# parses all of it at load. Of the MathML that screen readers read, three elements a formula
# carry nothing a reader gets: <semantics> and its <annotation> (the TeX source again, for
# copy-tex scripts the site does not load; search already skips it) and the <mrow> that
# groups the whole formula (<math> is itself a row), and the xmlns attribute the HTML parser
# does not need. Dropped from the page's body (not from titles, whose TeX
# _ext/page_meta.py reads): chapter 4 went from 835 to 774 KB and 21 553 to 20 320
# elements, the notation page from 237 to 205 KB (chapters/maintainers/page_speed.md).
MATHML_NS = ' xmlns="http://www.w3.org/1998/Math/MathML"'
TEX_ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">.*?</annotation>', re.DOTALL)
WHOLE_ROW = re.compile(r"<math\b[^>]*><mrow>")
ROW_TAG = re.compile(r"<mrow\b[^>]*>|</mrow>")


def lighter_mathml(page: str) -> str:
    """`page` with KaTeX's MathML less its <semantics>, TeX <annotation>, outer <mrow> and
    xmlns (see above); the formulas' MathML reads the same."""
    page = page.replace(MATHML_NS, "")
    page = TEX_ANNOTATION.sub("", page).replace("<semantics>", "").replace("</semantics>", "")
    out, done = [], 0
    for math in WHOLE_ROW.finditer(page):
        if math.start() < done:
            continue
        start = math.end() - len("<mrow>")
        depth = 0
        for tag in ROW_TAG.finditer(page, start):
            depth += -1 if tag[0] == "</mrow>" else 1
            if depth == 0:
                break
        if depth == 0 and page.startswith("</math>", tag.end()):
            out += [page[done:start], page[math.end():tag.start()]]
            done = tag.end()
    out.append(page[done:])
    return "".join(out)


def lighter_body(app: Sphinx, pagename, templatename, context, doctree) -> None:
    if "<math" in context.get("body", ""):
        context["body"] = lighter_mathml(context["body"])


SEARCH_JS = "searchtools.js"
SEARCH_REMOVED = '[".headerlink", "script", "style"]'
SEARCH_REMOVED_TOO = ('[".headerlink", "script", "style", ".katex-html", "annotation", '
                      '".selfcheck-feedback", ".selfcheck-answer"]')


def search_snippets_once(app: Sphinx, exception) -> None:
    """The site's searchtools.js quotes a formula's text once (see the module's docstring);
    the build fails if Sphinx's removal list is not found (a new Sphinx: re-check this)."""
    if exception is not None or app.builder.format != "html":
        return
    path = Path(app.outdir) / "_static" / SEARCH_JS
    if not path.is_file():
        return
    code = path.read_text(encoding="utf-8")
    if SEARCH_REMOVED_TOO in code:
        return
    if code.count(SEARCH_REMOVED) != 1:
        raise ExtensionError(f"_ext/katex_math.py: {SEARCH_REMOVED} not found once in "
                             f"{path}: Sphinx's search changed; see this file")
    path.write_text(code.replace(SEARCH_REMOVED, SEARCH_REMOVED_TOO), encoding="utf-8")


def check_katex(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    needed = node_modules(app) / "katex" / "dist" / "katex.min.css"
    if not needed.exists():
        raise ExtensionError(f"_ext/katex_math.py: {needed} not found: run `npm ci` in the "
                             "repository (`make book` does it)")
    app.add_css_file(f"{KATEX_DIR}/katex.min.css")
    copy_katex(app, None)   # now, so that the stylesheet bundle can hold KaTeX's


def stop_katex(app: Sphinx, exception) -> None:
    app.katex_math.close()


def setup(app: Sphinx):
    app.add_html_math_renderer(RENDERER, inline_renderers=(visit_math, None),
                               block_renderers=(visit_displaymath, None))
    app.add_config_value("katex_macros", {}, "html", dict)
    app.katex_math = KaTeX(Path(app.srcdir))
    app.connect("builder-inited", check_katex)
    app.connect("html-page-context", lighter_body)
    app.connect("build-finished", stop_katex)
    app.connect("build-finished", search_snippets_once)
    app.connect("build-finished", subset_katex_fonts)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
