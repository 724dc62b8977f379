"""A Sphinx extension, loaded by `_config.yml` (`sphinx.local_extensions`), that fixes
five things the stock Jupyter Book 1 site gets wrong. It edits no generated file: each fix
changes what Sphinx writes, and tests/site/ checks the result in a browser.

1. No third-party scripts. Jupyter Book 1 always loads `sphinx_thebe`, even when no page
   has a "Live Code" button (`launch_buttons.thebe: false`, as here). sphinx-thebe 0.3.1
   puts `const THEBE_JS_URL = "https://unpkg.com/..."` on every page, twice (it registers
   the script after the HTML builder has started, so the builder and the registry each hold
   a copy): every page logs "Identifier 'THEBE_JS_URL' has already been declared", and a
   thebe button would load code from unpkg and Binder into the page. Its event handlers are
   disconnected and its stylesheet dropped, so none of it reaches the pages. (Math needs no
   script at all: _ext/katex_math.py typesets it with KaTeX at build time.)
2. Named disclosure buttons in the sidebar. pydata-sphinx-theme 0.17 puts an empty
   `<summary>` (a chevron icon) before each chapter's sections; a screen reader announces
   it as an unnamed button (axe: summary-name, serious). Each gets an `aria-label` naming
   its chapter.
3. A valid bibliography list. docutils writes the bibliography as `role="list"` holding
   `role="doc-biblioentry"` items, a role ARIA 1.3 deprecates, so assistive technology sees
   a list with no items (axe: aria-required-children, critical). The items get
   `role="listitem"`.
4. Solution bars that open on a tap, each with its own name (issue 28). sphinx-exercise
   titles a solution "Solution to <a>Exercise 3.1</a>": on a phone the link covered a
   third of the bar, and a tap on it jumped to the exercise (just above) and left the
   solution closed. The title is plain text, so a tap anywhere on the bar opens it. And
   sphinx-togglebutton 0.4.5 names every toggle "Toggle hidden content"; a small script,
   on pages with solutions only, names each after its bar ("Solution to Exercise 3.1").
5. The sidebar's brand (the book's title, a link home) in a landmark (axe: region): it
   sat outside any, above the sidebar's `<nav>`. `_templates/sidebar-brand.html` wraps it (`html_sidebars`).
6. (The sidebar not pre-scrolled when it need not be, issue 28, is now done by
   _ext/theme_scripts.js, which scrolls it itself, only when the chapter's link is out of
   view, and after the first paint.)
"""

import html
import re

from sphinx.application import Sphinx

THEBE_MODULE = "sphinx_thebe"

# A sidebar entry with sections, as pydata-sphinx-theme writes it:
#   <li class="toctree-l1 has-children"><a ... href="...">Title</a><details><summary>
SIDEBAR_SUMMARY = re.compile(
    r'(<li class="[^"]*has-children[^"]*"><a [^>]*>(?P<title>.*?)</a><details[^>]*>)<summary>',
    re.S,
)
TAG = re.compile(r"<[^>]+>")
# A folded solution's title, as sphinx-exercise writes it.
SOLUTION_TITLE = re.compile(
    r'(<div class="solution dropdown[^"]*"[^>]*>\s*<p class="admonition-title">)(.*?)(</p>)',
    re.S)
LINK = re.compile(r"<a\b[^>]*>(.*?)</a>", re.S)


def unlinked(title: str) -> str:
    """A solution's title with its link to the exercise as plain text, still marked as the
    number Sphinx gave ("Exercise 3.1"), as Sphinx marks a numbered reference."""
    return LINK.sub(r'<span class="std-numref">\1</span>', title)


# sphinx-togglebutton adds its buttons on DOMContentLoaded; this runs after it.
NAME_TOGGLES = """document.addEventListener("DOMContentLoaded", () => setTimeout(() => {
  for (const b of document.querySelectorAll(".admonition-title > button.toggle-button")) {
    const title = b.parentElement.textContent.replace(/\\s+/g, " ").trim();
    if (title) b.setAttribute("aria-label", title);
  }
}));"""


def disable_thebe(app: Sphinx, config) -> None:
    """Disconnect every sphinx-thebe event handler and drop its stylesheet."""
    for listeners in list(app.events.listeners.values()):
        for listener in list(listeners):
            module = getattr(listener.handler, "__module__", "") or ""
            if module.split(".")[0] == THEBE_MODULE:
                app.disconnect(listener.id)
    app.registry.css_files = [
        (name, attrs) for name, attrs in app.registry.css_files if name != "sphinx-thebe.css"
    ]


def label_summaries(toctree_html: str) -> str:
    """Give each sidebar `<summary>` an aria-label naming the chapter it expands."""

    def add_label(match):
        title = " ".join(html.unescape(TAG.sub("", match["title"])).split())
        label = html.escape(f"Sections of {title}", quote=True)
        return f'{match[1]}<summary aria-label="{label}">'

    return SIDEBAR_SUMMARY.sub(add_label, toctree_html)


ELEMENT_ID = re.compile(r'(<[a-zA-Z][^>]*?\sid=")([^"]+)(")')


def unique_ids(body: str) -> str:
    """`body` with each repeated id made unique (id-2, id-3, ...): sphinx-exercise gives every
    exercise and solution `<section id="exercise-content">` / "solution-content", and
    assistive technology and HTML_CodeSniffer (WCAG 4.1.1, F77) need one element per id. A
    link to such an id still reaches its first element."""
    seen: dict = {}

    def rename(match):
        name = match[2]
        seen[name] = seen.get(name, 0) + 1
        if seen[name] == 1:
            return match[0]
        return f"{match[1]}{name}-{seen[name]}{match[3]}"

    return ELEMENT_ID.sub(rename, body)


def fix_page(app: Sphinx, pagename, templatename, context, doctree) -> None:
    # the theme's print heading (<h1>{{ pagetitle }}</h1>) is empty on the index: an empty
    # heading (HTML_CodeSniffer H42.2)
    if pagename == "genindex" and not context.get("pagetitle"):
        context["pagetitle"] = "Index"
    generate = context.get("generate_toctree_html")
    if generate is not None and not getattr(generate, "labels_summaries", False):

        def generate_labelled(*args, **kwargs):
            return label_summaries(str(generate(*args, **kwargs)))

        generate_labelled.labels_summaries = True
        context["generate_toctree_html"] = generate_labelled
    if "body" in context:
        body = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')
        body = unique_ids(body)
        body, solutions = SOLUTION_TITLE.subn(lambda m: m[1] + unlinked(m[2]) + m[3], body)
        context["body"] = body
        if solutions:
            app.add_js_file(None, body=NAME_TOGGLES)


ACCESSIBILITY_PAGE = "chapters/accessibility"


def accessibility_link(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Every page's footer links the accessibility statement (issue 48; WCAG 3.2.6, help in
    the same place on every page), after the edition line _ext/editions.py writes."""
    if ACCESSIBILITY_PAGE not in app.env.found_docs or "pathto" not in context:
        return
    href = context["pathto"](ACCESSIBILITY_PAGE)
    if pagename == ACCESSIBILITY_PAGE or href in ("", "#"):
        href = ACCESSIBILITY_PAGE.rsplit("/", 1)[-1] + app.builder.out_suffix
    href = html.escape(href)
    context["theme_extra_footer"] = (
        context.get("theme_extra_footer", "")
        + f'<p class="accessibility-link"><a href="{href}">Accessibility</a>: '
        'the standard this site aims at and how to report a barrier</p>')


def html_visitors_for_singlehtml(app: Sphinx, config) -> None:
    """Register each node's `html` visitors for `singlehtml` too, where it has none."""
    handlers = app.registry.translation_handlers
    single = handlers.setdefault("singlehtml", {})
    for node, visitors in handlers.get("html", {}).items():
        single.setdefault(node, visitors)


def setup(app: Sphinx):
    # The PDF's one-page build (`singlehtml`) needs the HTML visitors of every node an
    # extension registers for `html` only (myst-nb's folded cells, sphinx-design's
    # dropdowns): Sphinx gives a `singlehtml` translator the
    # `html` visitors only when no extension registered any for `singlehtml` by name, and
    # sphinx-exercise does, so the one-page build stopped at "unknown node type:
    # HideCodeCellNode" once the chapters folded their checks.
    app.connect("config-inited", html_visitors_for_singlehtml)
    # By config-inited every extension's setup() has run, sphinx-thebe's included.
    app.connect("config-inited", disable_thebe)
    # After pydata-sphinx-theme has put generate_toctree_html in the context (priority 500).
    app.connect("html-page-context", fix_page, priority=900)
    # After _ext/editions.py's footer (priority 500).
    app.connect("html-page-context", accessibility_link, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
