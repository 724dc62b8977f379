"""A Sphinx extension (`_config.yml`): the theme's icons without Font Awesome's 1.5 MB
script (issue 12).

pydata-sphinx-theme draws its icons (`<i class="fa-solid fa-bars">`) with
`fontawesome.js`; `_templates/static/webpack-macros.html` drops that script, and
`_static/icons.css` draws the icons the pages use as CSS masks of Font Awesome's own SVG
files (@fortawesome/fontawesome-free, pinned in package.json). The stylesheet is written
at the end of the build from the icon classes found in the pages, so an icon a page uses
and no SVG draws is a build warning. The theme's icon font is cut to the characters its
stylesheets use (fonttools).
"""

import json
import re
from pathlib import Path
from urllib.parse import quote

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

ICONS_CSS = "icons.css"                  # _static/icons.css
FA_PACKAGE = Path("@fortawesome") / "fontawesome-free"


def node_modules(app: Sphinx) -> Path:
    return Path(app.srcdir) / "node_modules"



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
                           "_ext/icons.py", style, name, ", ".join(sorted(set(pages))[:3]))
            continue
        done.add(name)
        rules.append(icon_rule(file.read_text(encoding="utf-8"), name))
    version = json.loads((svgs.parent / "package.json").read_text())["version"]
    return "\n".join([
        f"/* Icons: Font Awesome Free {version} by @fontawesome, https://fontawesome.com,",
        "   icons under CC BY 4.0 (https://fontawesome.com/license/free). Written by",
        "   _ext/icons.py with the icons the pages use: each is a mask of its SVG over the",
        "   text colour, so icons follow the theme's light and dark colours. */",
        ":is(.fa,.fas,.far,.fab,.fa-solid,.fa-regular,.fa-brands){font-family:inherit!important;"
        "display:inline-block;line-height:1}",
        ":is(.fa,.fas,.far,.fab,.fa-solid,.fa-regular,.fa-brands)::before{content:\"\"!important;"
        "display:inline-block;width:var(--fa-icon-width,1em);height:1em;vertical-align:-.125em;"
        "background-color:currentColor;-webkit-mask:var(--fa-icon) center/contain no-repeat;"
        "mask:var(--fa-icon) center/contain no-repeat}",
        ".fa-lg{font-size:1.25em;line-height:.05em;vertical-align:-.075em}",
        *rules, ""])


# The theme's stylesheets also draw a few icons as characters of Font Awesome's fonts
# (admonition titles, the "on this page" arrow: 18 characters of the 156 KB solid font; the
# GitHub mark before a link to github.com, `a.github::before`: one of the 118 KB brands
# font, which the bibliography loaded whole, issue 28). The site serves a subset of each
# with just the characters the stylesheets use, declared after the theme's @font-face (the
# last declaration of a font wins).
FA_WEBFONTS = Path("vendor") / "fontawesome" / "webfonts"
SUBSETS = (  # (theme's font file, subset written to _static/, family, weight)
    ("fa-solid-900.ttf", "icons-solid.woff", "Font Awesome 6 Free", 900),
    ("fa-brands-400.ttf", "icons-brands.woff", "Font Awesome 6 Brands", 400),
)
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


def cut_font(source: Path, target: Path, codepoints, flavor: str) -> bool:
    """Write to `target` (which may be `source`) the font `source` with only those of the
    characters `codepoints` that it has, as `flavor` ("woff" or "woff2"); False, and nothing
    written, when it has none of them."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    font = TTFont(source)
    present = sorted(set(codepoints) & set(font.getBestCmap()))
    if not present:
        return False
    options = subset.Options()
    options.flavor = flavor
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=present)
    subsetter.subset(font)
    font.flavor = flavor
    font.save(target)
    return True


def subset_fonts(static: Path) -> str:
    """Write the subset fonts; return their @font-face rules ("" when there is nothing to
    do). Each font keeps those of the characters that it has."""
    characters = icon_characters(static)
    rules = []
    for source_name, target, family, weight in SUBSETS:
        source = static / FA_WEBFONTS / source_name
        if not source.is_file() or not cut_font(source, static / target, characters, "woff"):
            continue
        rules.append(f'@font-face{{font-family:"{family}";font-style:normal;'
                     f'font-weight:{weight};font-display:block;'
                     f'src:url({target}) format("woff")}}')
    return "".join(rules)


def write_icons(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    css = icons_css(app, icons_used(outdir)) + subset_fonts(outdir / "_static") + "\n"
    (outdir / "_static" / ICONS_CSS).write_text(css, encoding="utf-8")



def check_font_awesome(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    needed = node_modules(app) / FA_PACKAGE / "svgs"
    if not needed.exists():
        raise ExtensionError(f"_ext/icons.py: {needed} not found: run `npm ci` in the "
                             "repository (`make book` does it)")
    app.add_css_file(ICONS_CSS)


def setup(app: Sphinx):
    app.connect("builder-inited", check_font_awesome)
    # after the stylesheet bundle (stylesheet_bundle.py, 800), which leaves icons.css out
    app.connect("build-finished", write_icons, priority=850)
    return {"parallel_read_safe": True, "parallel_write_safe": False}
