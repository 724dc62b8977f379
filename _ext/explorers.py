"""A Sphinx extension, loaded by `_config.yml` (`sphinx.local_extensions`), that serves the
explorers' JavaScript from the site itself, and only on the pages that have an explorer.

An explorer is the HTML output of a notebook cell that displays a `lib.explorers.Explorer`:
a `<div class="explorer">` holding the chart's Vega-Lite specification, with every number
the chart can show, in an inert `<script type="application/json">`. On the pages whose body
contains one, this extension adds `_ext/explorers.js`, which draws the charts, and
`_ext/explorers.css`; the script loads Vega, Vega-Lite and Vega-Embed (the versions pinned
in package.json and package-lock.json, installed by `npm ci` into node_modules/: `make book`
runs it) from next to itself when an explorer nears the screen, not while the page loads.
Every other page loads none of it. The files are copied to `_static/explorers/` at the end
of the build, with the three packages' licences; the `sourceMappingURL` comment at the end
of the minified files is dropped, since the source maps are not shipped.

Each explorer's data is not in the page (issue 28: 110 KB of chapter 4's 909 KB of HTML):
its specification is written to `_static/explorers/data/<page>-<name>.json`, and the
page's `<script class="explorer-spec">` only names it (`data-src`); the script fetches it
with the libraries, when the reader nears the explorer.
The explorer's output also carries `application/vnd.vegalite.v5+json`, for JupyterLab's own
renderer. The site uses its `text/html` (myst-nb's priority for HTML), but myst-nb renders
every type of an output while parsing and warns about the one it has no renderer for,
which `-W` would turn into an error: that warning type (`mystnb.unknown_mime_type`) is
suppressed. The tests check that every explorer output is rendered (tests/site/).
"""

import json
import os
import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

HERE = Path(__file__).resolve().parent
STATIC_SUBDIR = "explorers"          # _static/explorers/ in the built site
MARKER = '<div class="explorer" '    # what lib.explorers.Explorer.to_html writes
# (npm package, minified browser build); loaded in this order: Vega-Lite and Vega-Embed
# expect window.vega, Vega-Embed also window.vegaLite.
PACKAGES = (("vega", "build/vega.min.js"),
            ("vega-lite", "build/vega-lite.min.js"),
            ("vega-embed", "build/vega-embed.min.js"))
OWN_FILES = ("explorers.js", "explorers.css")
# An explorer's specification in the page, as lib.explorers.Explorer.to_html writes it.
SPEC = re.compile(r'(<div class="explorer" id="explorer-(?P<name>[\w-]+)"[^>]*>.*?)'
                  r'<script type="application/json" class="explorer-spec">(?P<json>.*?)</script>',
                  re.S)
SOURCE_MAP = re.compile(rb"\n//# sourceMappingURL=\S+\s*$")


def node_modules(app: Sphinx) -> Path:
    return Path(app.srcdir) / "node_modules"


def check_packages(app: Sphinx) -> None:
    """Fail early, with the command to run, when node_modules/ lacks a package."""
    if app.builder.format != "html":
        return
    missing = [f"{name}/{path}" for name, path in PACKAGES
               if not (node_modules(app) / name / path).is_file()]
    if missing:
        raise ExtensionError(
            f"_ext/explorers.py: {', '.join(missing)} not found in {node_modules(app)}: "
            "run `npm ci` in the repository (`make book` does it)")


def has_explorer(app: Sphinx, context: dict) -> bool:
    """A page of the site with an explorer. The one-page build (singlehtml), which is
    printed to PDF, gets no script: print shows the fallback note and the static figure."""
    return app.builder.name in ("html", "dirhtml") and MARKER in context.get("body", "")


def add_assets(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """On a page with an explorer, add the script and the stylesheet to this page only
    (the builder restores its lists of assets after each page); the script fetches the
    three libraries itself, in PACKAGES' order."""
    if not has_explorer(app, context):
        return
    app.builder.add_js_file(f"{STATIC_SUBDIR}/explorers.js", defer="defer")
    app.builder.add_css_file(f"{STATIC_SUBDIR}/explorers.css")
    data = Path(app.outdir) / "_static" / STATIC_SUBDIR / "data"

    def move_out(match):
        name = f"{pagename.replace('/', '-')}-{match['name']}.json"
        data.mkdir(parents=True, exist_ok=True)
        (data / name).write_text(match["json"].replace("<\\/", "</"), encoding="utf-8")
        src = context["pathto"](f"_static/{STATIC_SUBDIR}/data/{name}", 1)
        return (f'{match[1]}<script type="application/json" class="explorer-spec" '
                f'data-src="{src}"></script>')

    context["body"] = SPEC.sub(move_out, context["body"])


def versions(app: Sphinx) -> dict:
    """The installed version of each package (what the site serves)."""
    return {name: json.loads((node_modules(app) / name / "package.json").read_text())["version"]
            for name, _ in PACKAGES}


def copy_assets(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / "_static" / STATIC_SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    for name, path in PACKAGES:
        package = node_modules(app) / name
        code = SOURCE_MAP.sub(b"\n", (package / path).read_bytes())
        (out / Path(path).name).write_bytes(code)
        (out / f"{name}-LICENSE.txt").write_bytes((package / "LICENSE").read_bytes())
    for name in OWN_FILES:
        (out / name).write_bytes((HERE / name).read_bytes())
    (out / "versions.json").write_text(json.dumps(versions(app), indent=1) + "\n")


def suppress_unknown_mime_warning(app: Sphinx, config) -> None:
    if "mystnb.unknown_mime_type" not in config.suppress_warnings:
        config.suppress_warnings = [*config.suppress_warnings, "mystnb.unknown_mime_type"]


def setup(app: Sphinx):
    # The kernels that execute the notebooks inherit this process's environment: with it,
    # lib.explorers.Explorer also writes the HTML this extension draws from (in Jupyter it
    # writes the Vega-Lite chart alone, which JupyterLab would otherwise not prefer).
    os.environ["COURSE_SITE_BUILD"] = "1"
    app.connect("config-inited", suppress_unknown_mime_warning)
    app.connect("builder-inited", check_packages)
    app.connect("html-page-context", add_assets)
    app.connect("build-finished", copy_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
