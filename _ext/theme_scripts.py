"""A Sphinx extension (`_config.yml`): the theme's scripts off the first seconds (issue 39).

pydata-sphinx-theme loads `bootstrap.js` and `pydata-sphinx-theme.js` (deferred, and
preloaded in the <head>), and sphinx-book-theme adds `sphinx-book-theme.js`: on Lighthouse's
emulated slow phone they were the longest tasks after the first paint (347, 110 and 114 ms
on chapter 4, issue 39), and the page kept changing until about 4 s. None of it is needed
to read the page. This extension:

- takes `sphinx-book-theme.js` out of the page's scripts, and `_templates/static/
  webpack-macros.html` leaves out the theme's preloads and its two `<script defer>`;
- puts instead one small deferred script, `_static/theme-scripts.js` (`_ext/
  theme_scripts.js`, which says how), that fetches the three and runs them at the reader's
  first action (a press runs them at once, before its click; the mouse moving or the page
  scrolling, on the next idle moment), and does the little they did that the page shows
  without an action: the sidebar scrolled to the current chapter (after the first paint,
  and only when its link would be out of view: this replaces site_fixes' issue-28 fix) and
  the print classes;
- has the <head> set the colour theme from the reader's system before the first paint, and
  follow it (the theme's script did both when it ran; `webpack-macros.html`).

tests/site/test_reader_mechanics.py checks that nothing of the theme has run after the
page has loaded and that every control works on the first press.
"""

import shutil
from pathlib import Path

from sphinx.application import Sphinx

HERE = Path(__file__).resolve().parent
LOADER = "theme-scripts.js"
BOOK_THEME_JS = "sphinx-book-theme.js"
# pydata-sphinx-theme's two scripts, as its webpack-macros.html names them (0.17.1).
THEME_DIGEST = "55c26ed414f5f8a31ebb"
THEME_JS = ("_static/scripts/bootstrap.js", "_static/scripts/pydata-sphinx-theme.js")


def script_name(script) -> str:
    return (getattr(script, "filename", "") or "").split("?")[0].rsplit("/", 1)[-1]


def late_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Move sphinx-book-theme.js out of the page's scripts, and give the template the
    URLs the loader runs, in order: Bootstrap, pydata-sphinx-theme, sphinx-book-theme."""
    scripts = context.get("script_files")
    if scripts is None:
        return
    pathto = context["pathto"]
    urls = [f"{pathto(path, 1)}?digest={THEME_DIGEST}" for path in THEME_JS]
    for script in list(scripts):
        if script_name(script) == BOOK_THEME_JS:
            scripts.remove(script)
            name = script.filename   # "_static/scripts/...", or relative to _static/
            urls.append(pathto(name if name.startswith("_static/") else f"_static/{name}", 1))
    context["theme_scripts"] = " ".join(urls)
    context["theme_scripts_loader"] = pathto(f"_static/{LOADER}", 1)


def copy_loader(app: Sphinx, exception) -> None:
    if exception is None and app.builder.format == "html":
        shutil.copyfile(HERE / "theme_scripts.js", Path(app.outdir) / "_static" / LOADER)


def setup(app: Sphinx):
    # After sphinx-book-theme has added its digest to the script's name (priority 500).
    app.connect("html-page-context", late_scripts, priority=800)
    app.connect("build-finished", copy_loader)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
