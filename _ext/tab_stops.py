"""A Sphinx extension (`_config.yml`): long pages laid out as they are read (issue 12).

`_static/site.css` lets the browser skip laying out and painting the article's sections
until they near the screen (`content-visibility: auto`). The theme's tab-stop pass would
undo that by measuring every code block at load; `_ext/tab_stops.js` applies its rule to
each block once it is laid out, and the copy of the theme's script in `_static/` does not
start its own.
"""

import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent


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
            f"_ext/tab_stops.py: {found} calls of the theme's tab-stop pass found in "
            f"{THEME_JS} (expected 1): pydata-sphinx-theme changed; see this file")
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



def setup(app: Sphinx):
    app.connect("builder-inited", add_tab_stops)
    app.connect("build-finished", write_tab_stops)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
