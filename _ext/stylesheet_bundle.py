"""A Sphinx extension (`_config.yml`): the stylesheets every page loads, served as one file
(issue 12). See the comment above BUNDLE.
"""

import json
import os
import re
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

from icons import CSS_RULE, ICON_RULE_SELECTOR, ICONS_CSS  # noqa: E402  (_ext/ on sys.path)


# The theme and the extensions give every page 13 stylesheets, each a request that holds
# the first paint back. They are served as one file, written at the end of the build
# (write_bundle): the theme's own two (`head_pre_assets` in _templates/static/webpack-macros.html
# leaves them out when the context has `stylesheet_bundle`), then every stylesheet Sphinx
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

    imported = []

    def import_(match):
        imported.append(
            inline_css(static, os.path.normpath(folder / match[1]).replace(os.sep, "/"), seen))
        return f"/*@import {len(imported) - 1}*/"

    # The imported stylesheets' url()s are already relative to _static/: this file's own
    # are rewritten before they are put in (rewritten again, basic.css's `url(file.png)`,
    # imported by styles/theme.css, became "styles/file.png", a file that does not exist).
    text = CSS_URL.sub(url, CSS_IMPORT.sub(import_, text))
    text = re.sub(r"/\*@import (\d+)\*/", lambda m: imported[int(m[1])], text)
    return f"/* {name} */\n" + text + "\n"


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
    context["stylesheet_bundle"] = True


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
        raise ExtensionError(f"_ext/stylesheet_bundle.py: stylesheets to bundle are not in "
                             f"{static}: {', '.join(missing)}")
    if UNUSED_IF_ABSENT and not any(
            UNUSED_IF_ABSENT[1] in page.read_text(encoding="utf-8", errors="replace")
            for page in outdir.rglob("*.html") if page.parent.name != "_static"):
        names = [name for name in names if name != UNUSED_IF_ABSENT[0]]
    css = "".join(inline_css(static, name) for name in names)
    (static / BUNDLE).write_text(drop_icon_rules(css), encoding="utf-8")
    purge(app, outdir)


# What a phone fetches before it paints: the bundle was 492 KB (76 KB gzip), two thirds of
# it rules no page uses (most of them Bootstrap's), and Lighthouse's phone run counted
# 0.9-1.2 s of render-blocking time for it on every page (issue 28). PurgeCSS
# (_ext/purge_bundle.js) removes every rule whose selector names a class, id or element
# that no built page and none of the site's scripts mention: 164 KB (32 KB gzip) remain.
PURGE_SCRIPT = Path(__file__).with_name("purge_bundle.js")


def purge(app: Sphinx, outdir: Path) -> None:
    try:
        done = subprocess.run(["node", str(PURGE_SCRIPT), str(outdir), BUNDLE], cwd=app.srcdir,
                              capture_output=True, text=True, encoding="utf-8", check=True)
    except (OSError, subprocess.CalledProcessError) as err:
        raise ExtensionError(f"_ext/purge_bundle.js could not purge {BUNDLE} (is node "
                             f"installed, and `npm ci` run?): {getattr(err, 'stderr', '') or err}")
    sizes = json.loads(done.stdout)
    logger.info(f"{BUNDLE}: {sizes['before'] // 1000} KB, {sizes['after'] // 1000} KB after "
                f"PurgeCSS ({len(sizes['rejected'])} unused selectors removed)")


def drop_icon_rules(css: str) -> str:
    """Leave out Font Awesome's 2 500 `.fa-name::before{content: ...}` rules (72 KB of the
    theme's stylesheet): icons.css draws every icon the pages use, with `content: ""`."""
    def keep(rule):
        selectors = [s.strip() for s in rule[1].split(",")]
        if all(ICON_RULE_SELECTOR.match(s) for s in selectors) and "content:" in rule[2]:
            return ""
        return rule[0]
    return CSS_RULE.sub(keep, css)



def use_templates(app: Sphinx, config) -> None:
    # _templates/static/webpack-macros.html leaves the theme's two stylesheets out of the
    # head when the bundle holds them (and drops fontawesome.js: icons.py)
    templates = str(Path(app.srcdir) / "_templates")
    if templates not in config.templates_path:
        config.templates_path.insert(0, templates)


def setup(app: Sphinx):
    app.setup_extension("icons")
    app.connect("config-inited", use_templates)
    app.connect("html-page-context", bundle_css, priority=1000)
    # After pydata-sphinx-theme's build-finished handlers (priority 500), which rewrite
    # pygments.css: the bundle holds the final stylesheets.
    app.connect("build-finished", write_bundle, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
