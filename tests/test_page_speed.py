"""The site's page-speed extensions (_ext/katex_math.py, icons.py, page_meta.py,
stylesheet_bundle.py, tab_stops.py, theme_scripts.py, table_parts.py), piece by piece: math typeset by KaTeX at build time,
the icons' stylesheet, meta descriptions and image sizes, the bundle, the tab stops. The
built pages are checked in a browser by tests/site/ and measured by `make audit`; one
concern a file, each at most 400 lines (tested below)."""

import importlib
import re
import shutil
import struct
import sys
import zlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils.core import publish_doctree
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "_ext"
sys.path.insert(0, str(EXT))   # as the build has it: the extensions import each other
PAGE_SPEED = ("katex_math", "icons", "page_meta", "stylesheet_bundle", "tab_stops",
              "quiet_kernels", "theme_scripts", "table_parts")
modules = {name: importlib.import_module(name) for name in PAGE_SPEED}


class _PageSpeed:
    """The names of the page-speed extensions, looked up in whichever module has them."""

    def __getattr__(self, name):
        for module in modules.values():
            if name in vars(module):
                return vars(module)[name]
        raise AttributeError(name)


page_speed = _PageSpeed()

needs_katex = pytest.mark.skipif(
    shutil.which("node") is None or not (ROOT / "node_modules" / "katex").is_dir(),
    reason="needs node and `npm ci` (node_modules/katex)")


@needs_katex
def test_katex_gives_html_and_mathml():
    katex = page_speed.KaTeX(ROOT)
    try:
        answer = katex.render(r"\operatorname{softmax}(QK^\top/\sqrt{E})", False, {})
    finally:
        katex.close()
    assert "error" not in answer
    assert answer["html"].startswith('<span class="katex">')
    assert "<math" in answer["html"] and 'encoding="application/x-tex"' in answer["html"]


@needs_katex
def test_katex_reports_an_unknown_command_instead_of_guessing():
    katex = page_speed.KaTeX(ROOT)
    try:
        answer = katex.render(r"\notacommand{x}", True, {})
        with_macro = katex.render(r"\R^n", False, {r"\R": r"\mathbb{R}"})
    finally:
        katex.close()
    assert "notacommand" in answer["error"]
    assert "error" not in with_macro and "double-struck" in with_macro["html"]


def test_tex_to_text_reads_like_the_formula():
    assert page_speed.tex_to_text(r"QK^\top") == "QKᵀ"
    assert page_speed.tex_to_text(r"\sqrt{E}") == "√E"
    assert page_speed.tex_to_text("Xw") == "Xw"


def test_shorten_cuts_at_a_word_and_marks_the_cut():
    text = "word " * 60
    short = page_speed.shorten(text.strip(), 50)
    assert len(short) <= 50 and short.endswith("word…")
    assert page_speed.shorten("short enough", 50) == "short enough"


def test_description_is_the_first_paragraph_of_prose_not_an_admonition():
    doctree = publish_doctree(
        "Title\n=====\n\n.. note::\n\n   An admonition paragraph that is long enough to count here.\n\n"
        "The first paragraph of prose, long enough to describe the page to a search engine.\n\n"
        "A second paragraph.\n")
    assert page_speed.first_paragraph(doctree).startswith("The first paragraph of prose")


def _png(width, height):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\x00" * width for _ in range(height)))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def test_image_size_reads_a_png_header(tmp_path):
    (tmp_path / "a.png").write_bytes(_png(37, 12))
    (tmp_path / "b.txt").write_text("not an image")
    assert page_speed.image_size(tmp_path / "a.png") == (37, 12)
    assert page_speed.image_size(tmp_path / "b.txt") is None


def _sized(tmp_path, body):
    from types import SimpleNamespace
    (tmp_path / "fig.png").write_bytes(_png(40, 30))
    app = SimpleNamespace(srcdir=str(tmp_path),
                          builder=SimpleNamespace(images={"fig.png": "fig.png"}))
    context = {"body": body}
    page_speed.size_images(app, "page", "page.html", context, None)
    return re.findall(r"<img\b[^>]*>", context["body"])


def test_images_get_their_size_and_only_a_picture_at_the_top_loads_at_once(tmp_path):
    img = '<img src="../_images/fig.png" alt="a figure">'
    # a picture in the page's opening, before its first section: loaded at once
    first, second = _sized(tmp_path, f"<h1>T</h1>{img}<h2>1</h2>{img}")
    assert 'width="40" height="30"' in first and "loading" not in first
    assert 'loading="lazy"' in second
    # the first picture of a page far below its opening (chapter 8's Fig. 8.1, 365 KB,
    # took bandwidth from the first screen: Lighthouse performance 84): lazy as well
    (only,) = _sized(tmp_path, f"<h1>T</h1><p>text</p><h2>1</h2><p>more</p>{img}")
    assert 'loading="lazy"' in only and 'width="40"' in only


def test_icon_rule_keeps_the_aspect_ratio_and_drops_the_comment():
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 448 512"><!--! licence -->'
           '<path d="M0 96C0 78.3 14.3 64 32 64z"/></svg>')
    rule = page_speed.icon_rule(svg, "bars")
    assert rule.startswith(".fa-bars{--fa-icon:url(\"data:image/svg+xml,")
    assert "--fa-icon-width:0.875em" in rule
    assert "licence" not in rule and "%3Cpath" in rule


def test_icons_used_finds_icons_and_their_style(tmp_path):
    (tmp_path / "p.html").write_text(
        '<i class="fa-solid fa-bars fa-lg"></i><i class="fab fa-github"></i>'
        '<span class="fa-solid fa-chevron-down"></span>')
    assert set(page_speed.icons_used(tmp_path)) == {
        ("solid", "bars"), ("brands", "github"), ("solid", "chevron-down")}


def test_icon_fonts_are_cut_to_the_characters_the_stylesheets_use(tmp_path):
    """The GitHub mark before a github.com link (`a.github::before`, a brands character)
    loaded the whole 118 KB brands font on the bibliography (issue 28): it is cut too."""
    import pydata_sphinx_theme
    webfonts = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
                / "static" / page_speed.FA_WEBFONTS)
    static = tmp_path / "_static"
    (static / page_speed.FA_WEBFONTS).mkdir(parents=True)
    for name in ("fa-solid-900.ttf", "fa-brands-400.ttf"):
        shutil.copyfile(webfonts / name, static / page_speed.FA_WEBFONTS / name)
    (static / "theme.css").write_text(
        'a.github:before{content:"\\f09b";font:var(--fa-font-brands)}'
        '.admonition-title:after{content:"\\f0eb"}')
    rules = page_speed.subset_fonts(static)
    assert 'font-family:"Font Awesome 6 Brands"' in rules and "icons-brands.woff" in rules
    assert 'font-family:"Font Awesome 6 Free"' in rules and "icons-solid.woff" in rules
    for name in ("icons-brands.woff", "icons-solid.woff"):
        assert (static / name).stat().st_size < 5000, name


@needs_katex
def test_katex_to_text_leaves_one_plain_copy_of_a_formula():
    katex = page_speed.KaTeX(ROOT)
    try:
        typeset = katex.render(r"QK^\top", False, {})["html"]
    finally:
        katex.close()
    title = f"Span: what <span class=\"math\">{typeset}</span> can produce"
    assert page_speed.katex_to_text(title) == 'Span: what <span class="math">QKᵀ</span> can produce'


@needs_katex
def test_katex_fonts_names_the_fonts_a_formula_needs():
    katex = page_speed.KaTeX(ROOT)
    try:
        plain = katex.render("x + y", False, {})["html"]
        fancy = katex.render(r"\mathbb{R}^{n} \mathbf{W} \mathcal{O} \left(\sum_i x_i\right)",
                             True, {})["html"]
    finally:
        katex.close()
    assert page_speed.katex_fonts("<p>no math</p>") == []
    assert page_speed.katex_fonts(plain) == ["KaTeX_Main-Regular.woff2", "KaTeX_Math-Italic.woff2"]
    fonts = page_speed.katex_fonts(fancy)
    for font in ("AMS-Regular", "Main-Bold", "Caligraphic-Regular", "Size2-Regular"):
        assert f"KaTeX_{font}.woff2" in fonts
    for font in fonts:   # every name is a file KaTeX ships
        assert (ROOT / "node_modules" / "katex" / "dist" / "fonts" / font).is_file()


def test_the_stylesheet_bundle_is_written_after_the_themes_pygments_css():
    """pydata-sphinx-theme rewrites pygments.css at build-finished (priority 500); a bundle
    written before it would keep Sphinx's first code colours, below 4.5:1 contrast. Sphinx
    calls the handlers of an event by priority, lower first."""

    class App:
        srcdir = ROOT

        def __init__(self):
            self.calls = []

        def add_html_math_renderer(self, *a, **k): pass
        def add_config_value(self, *a, **k): pass
        def setup_extension(self, *a, **k): pass
        def add_js_file(self, *a, **k): pass
        def add_css_file(self, *a, **k): pass

        def connect(self, event, handler, priority=500):
            self.calls.append((event, handler.__name__, priority))

    app = App()
    for module in modules.values():
        module.setup(app)
    finished = {name: priority for event, name, priority in app.calls if event == "build-finished"}
    assert finished["write_bundle"] > 500
    assert finished["write_icons"] > finished["write_bundle"]


def test_drop_icon_rules_keeps_everything_but_font_awesomes_glyph_rules():
    css = ('.fa-bars:before{content:"\\f0c9"}.fa-github::before,.fa-house:before{content:"x"}'
           '@media (min-width:1px){.fa-x:before{content:"y"}.kept{color:red}}'
           '.fa-spin{animation:s 2s}.admonition-title:after{content:"\\f05a"}'
           '.fa-lg:before{vertical-align:0}')
    out = page_speed.drop_icon_rules(css)
    assert "f0c9" not in out and "fa-github" not in out and '"y"' not in out
    assert "@media (min-width:1px){.kept{color:red}}" in out
    assert ".fa-spin{animation:s 2s}" in out and ".admonition-title:after" in out
    assert ".fa-lg:before{vertical-align:0}" in out   # not a glyph: no content


needs_purgecss = pytest.mark.skipif(
    shutil.which("node") is None or not (ROOT / "node_modules" / "purgecss").is_dir(),
    reason="needs node and `npm ci` (node_modules/purgecss)")


def a_site(tmp_path, css: str) -> Path:
    """A built site in miniature: one page, one of the theme's scripts, and the bundle."""
    (tmp_path / "_static" / "scripts").mkdir(parents=True)
    (tmp_path / "_static" / page_speed.BUNDLE).write_text(css)
    (tmp_path / "_static" / "scripts" / "theme.js").write_text(
        'el.classList.add("show"); tip.classList.add(`bs-${this.constructor.NAME}-auto`);')
    (tmp_path / "_static" / "scripts" / "fontawesome.js").write_text('"carousel"')
    (tmp_path / "chapter.html").write_text(
        '<html data-theme="light"><body><nav class="bd-links"><a class="active">x</a></nav>'
        '<details><summary>s</summary></details></body></html>')
    return tmp_path


@needs_purgecss
def test_purge_removes_rules_no_page_or_script_can_use_and_keeps_the_reader_states(tmp_path):
    """The bundle keeps what the reader can bring about: a class a script adds (Bootstrap's
    `show`, a tooltip's `bs-tooltip-auto`, built from pieces), the dark colour mode, an
    opened <details>. A rule for a component no page has goes, even when the theme's
    fontawesome.js (never loaded) names it."""
    css = ('.bd-links .active{color:red}.carousel{display:flex}.modal-open{overflow:hidden}'
           '.bd-links.show{display:block}html[data-theme=dark] .bd-links{color:#fff}'
           '.bs-tooltip-auto[data-popper-placement^=top] .tooltip-arrow{bottom:0}'
           'details[open]>summary{font-weight:700}'
           '@media print{.carousel{display:none}.bd-links{display:none}}'
           '@font-face{font-family:Unused;src:url(u.woff2)}:root{--pst-color-link:#00f}')
    site = a_site(tmp_path, css)
    page_speed.purge(SimpleNamespace(srcdir=ROOT), site)
    out = (site / "_static" / page_speed.BUNDLE).read_text()
    for kept in (".bd-links .active", ".bd-links.show", "html[data-theme=dark] .bd-links",
                 ".bs-tooltip-auto[data-popper-placement^=top]", "details[open]>summary",
                 "--pst-color-link", "@media print"):
        assert kept in out, f"{kept} was removed: {out}"
    for gone in (".carousel", ".modal-open", "Unused"):
        assert gone not in out, f"{gone} was kept: {out}"


@needs_purgecss
def test_purge_stops_the_build_when_it_cannot_run(tmp_path):
    """An unpurged bundle is 76 KB gzip on every page: not a thing to ship silently."""
    with pytest.raises(ExtensionError, match="could not purge"):
        page_speed.purge(SimpleNamespace(srcdir=ROOT), tmp_path)   # no _static/ at all


def test_the_themes_tab_stop_pass_is_left_out_once_and_only_once():
    """_ext/tab_stops.js does the theme's tab-stop pass lazily; the theme's own call is
    taken out of its script, and a theme whose script no longer has that call fails the
    build (instead of two passes, or none, without anyone noticing)."""
    theme = pytest.importorskip("pydata_sphinx_theme")
    code = (Path(theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" /
            page_speed.THEME_JS).read_text(encoding="utf-8")
    patched = page_speed.without_theme_tab_stops(code)
    assert patched != code and page_speed.THEME_TAB_STOPS_LEFT_OUT in patched
    assert 'addEventListener("load",' not in patched.split(page_speed.THEME_TAB_STOPS_LEFT_OUT)[1]
    assert page_speed.without_theme_tab_stops(patched) == patched       # idempotent
    assert "sourceMappingURL" in code and "sourceMappingURL" not in patched  # map is stale
    with pytest.raises(ExtensionError, match="theme changed"):
        page_speed.without_theme_tab_stops(code.replace('"complete"===document.readyState', "x"))


def local_extensions() -> dict:
    import yaml
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return config["sphinx"]["local_extensions"]


def test_every_python_file_in_ext_is_a_loaded_extension_or_imported_by_one():
    loaded = {name for name, folder in local_extensions().items() if folder == "_ext"}
    imported = set()
    for name in loaded:
        text = (EXT / f"{name}.py").read_text()
        imported |= set(re.findall(r"^from (\w+) import", text, re.M))
        imported |= set(re.findall(r'setup_extension\("(\w+)"\)', text))
    for path in sorted(EXT.glob("*.py")):
        assert path.stem in loaded | imported, f"{path.name} is neither loaded nor imported"
        assert "def setup(" in path.read_text() or path.stem in imported, path.name


def test_every_local_extension_lives_in_ext_and_is_at_most_400_lines():
    for name, folder in local_extensions().items():
        assert folder == "_ext", f"{name} is loaded from {folder}, not _ext"
    for path in sorted(EXT.glob("*.py")):
        lines = len(path.read_text().splitlines())
        assert lines <= 400, f"{path.name}: {lines} lines; split it by concern"
    assert not (ROOT / "tools").exists(), "tools/ is gone: extensions in _ext/, scripts/"


def test_katex_html_characters_reads_the_drawn_formula_not_its_mathml():
    page = ('<p>outside ℵ</p><span class="katex"><span class="katex-mathml"><math><mi>Ω</mi>'
            '<annotation encoding="application/x-tex">\\Omega</annotation></math></span>'
            '<span class="katex-html" aria-hidden="true"><span class="base"><span class="mord">'
            '∑</span><span class="mord mathnormal">x</span></span><span>&lt;</span></span>'
            '</span><span>after</span>')
    assert page_speed.katex_html_characters(page) == {"∑", "x", "<"}


@needs_katex
def test_katex_fonts_are_cut_to_the_characters_the_pages_draw(tmp_path):
    """Each woff2 font keeps every character it has of those the formulas draw (and printable
    ASCII; fonttools may keep a few a kept glyph's features reach), with the metrics that
    place them (units per em, ascent, advances), and not the characters no formula draws."""
    from fontTools.ttLib import TTFont

    fonts = tmp_path / "_static" / "katex" / "fonts"
    fonts.mkdir(parents=True)
    dist = ROOT / "node_modules" / "katex" / "dist" / "fonts"
    for name in ("KaTeX_Main-Regular.woff2", "KaTeX_AMS-Regular.woff2"):
        shutil.copyfile(dist / name, fonts / name)
    (tmp_path / "page.html").write_text(
        '<span class="katex-html" aria-hidden="true"><span class="mord">∑ ≤ ⊙ </span>'
        '<span class="mord mathbb">E</span></span><p>ℵ ∴ outside a formula</p>')
    page_speed.subset_katex_fonts(SimpleNamespace(outdir=tmp_path, builder=SimpleNamespace(
        format="html")), None)
    for name in ("KaTeX_Main-Regular.woff2", "KaTeX_AMS-Regular.woff2"):
        whole, cut = TTFont(dist / name), TTFont(fonts / name)
        wanted = {ord(c) for c in "∑≤⊙"} | set(range(0x20, 0x7F))
        assert set(cut.getBestCmap()) >= wanted & set(whole.getBestCmap()), name
        assert not {ord(c) for c in "ℵ∴ΩΓ"} & set(cut.getBestCmap()), name
        assert (fonts / name).stat().st_size < (dist / name).stat().st_size
        assert cut["head"].unitsPerEm == whole["head"].unitsPerEm
        assert cut["hhea"].ascent == whole["hhea"].ascent
        for code in set(cut.getBestCmap()):
            glyph = whole.getBestCmap()[code]
            assert cut["hmtx"][cut.getBestCmap()[code]] == whole["hmtx"][glyph], (name, code)
    # each could have been kept: the whole fonts have them
    assert ord("∴") in TTFont(dist / "KaTeX_AMS-Regular.woff2").getBestCmap()
    assert {ord("Ω"), ord("ℵ")} <= set(TTFont(dist / "KaTeX_Main-Regular.woff2").getBestCmap())


@pytest.mark.parametrize("book_theme_name", ["_static/scripts/sphinx-book-theme.js",
                                             "scripts/sphinx-book-theme.js?digest=abc"])
def test_the_themes_three_scripts_leave_the_page_for_the_loader_in_their_order(
        book_theme_name):
    """_ext/theme_scripts.py: sphinx-book-theme.js leaves the page's scripts; the loader
    gets Bootstrap, pydata-sphinx-theme and it, in that order, each once, under _static/."""
    scripts = [SimpleNamespace(filename="_static/doctools.js"),
               SimpleNamespace(filename=book_theme_name),
               SimpleNamespace(filename="_static/togglebutton.js")]
    context = {"script_files": scripts,
               "pathto": lambda path, resource=0: "../" + path}
    page_speed.late_scripts(None, "notebooks/x", "page.html", context, None)
    assert [s.filename for s in scripts] == ["_static/doctools.js", "_static/togglebutton.js"]
    urls = context["theme_scripts"].split()
    assert [u.split("?")[0].rsplit("/", 1)[-1] for u in urls] == [
        "bootstrap.js", "pydata-sphinx-theme.js", "sphinx-book-theme.js"]
    assert all(u.startswith("../_static/scripts/") for u in urls), urls
    assert context["theme_scripts_loader"] == "../_static/theme-scripts.js"


def test_the_loader_is_given_the_digest_the_themes_macros_use():
    """The theme's scripts are named with their digest in pydata-sphinx-theme's macros; a
    new theme version changes it, and the loader must fetch the same files."""
    macros = Path(importlib.import_module("pydata_sphinx_theme").__file__).parent / (
        "theme/pydata_sphinx_theme/static/webpack-macros.html")
    text = macros.read_text()
    theme_scripts = modules["theme_scripts"]   # (tab_stops has a THEME_JS of its own)
    for path in theme_scripts.THEME_JS:
        assert f"{path}', 1) }}}}?digest={theme_scripts.THEME_DIGEST}" in text


@needs_katex
def test_lighter_mathml_drops_the_tex_and_the_wrappers_and_keeps_what_is_read():
    """_ext/katex_math.py: the page's MathML less <semantics>, the TeX <annotation>, the
    formula's outer <mrow> and xmlns; every other element, and the HTML drawn, unchanged."""
    katex = page_speed.KaTeX(ROOT)
    try:
        formulas = [katex.render(tex, display, {})["html"] for tex, display in (
            (r"Q", False), (r"\operatorname{softmax}(QK^\top/\sqrt{E})", False),
            (r"{x}", False), (r"\{a\} \cup \{b\}", True), (r"a\\b", True))]
    finally:
        katex.close()
    page = "<p>before</p>" + "<p>and</p>".join(formulas) + "<mrow>outside math</mrow>"
    light = page_speed.lighter_mathml(page)
    def tags(text):
        return re.findall(r"<(/?[a-z]+)", text)
    assert "annotation" not in light and "semantics" not in light
    assert "MathML" not in light and "<math><mrow>" not in light
    assert re.sub(r"<math\b[^>]*>(<mrow>)?", "", light).count("</mrow></math>") == 0
    assert light.endswith("<mrow>outside math</mrow>")
    # the same elements but four a formula (semantics, annotation, an mrow: opening and
    # closing tags), and the drawn HTML byte for byte
    before, after = tags(page), tags(light)
    for name in ("semantics", "/semantics", "annotation", "/annotation"):
        assert before.count(name) == len(formulas) and after.count(name) == 0
    assert before.count("mrow") - after.count("mrow") == len(formulas)
    assert [t for t in before if "semantics" not in t and "annotation" not in t
            and "mrow" not in t] == [t for t in after if "mrow" not in t]
    def drawn(text):
        return re.sub(r'<span class="katex-mathml">.*?</span>', "", text)
    assert drawn(light) == drawn(page) and drawn(page).count("katex-html") == len(formulas)
    assert page_speed.lighter_mathml(light) == light


def test_lighter_mathml_keeps_an_outer_row_that_is_not_the_whole_formula():
    page = ('<math><semantics><mrow><mi>a</mi></mrow><mrow><mi>b</mi></mrow>'
            '<annotation encoding="application/x-tex">{a}{b}</annotation></semantics></math>')
    assert page_speed.lighter_mathml(page) == (
        "<math><mrow><mi>a</mi></mrow><mrow><mi>b</mi></mrow></math>")


def _table(rows, classes="notation-table table"):
    body = "".join(f'<tr class="row-{i}"><td><p>{i}</p></td><td>x</td></tr>\n'
                   for i in range(rows))
    return (f'<table class="{classes}" style="width: 100%">\n<thead>\n<tr class="row-odd">'
            f'<th class="head"><p>symbol</p></th><th class="head"><p>meaning</p></th></tr>\n'
            f'</thead>\n<tbody>\n{body}</tbody>\n</table>')


def test_a_long_notation_table_is_cut_into_parts_that_each_keep_the_header():
    """_ext/table_parts.py: every row once, in order, ROWS a part; each part a table of the
    same classes with the header row, in a block of class PART."""
    rows = 2 * page_speed.ROWS + 3
    page = "<p>before</p>\n<div class=\"pst-scrollable-table-container\">" + _table(rows) + (
        "</div>\n<p>after</p>")
    cut = page_speed.tables_in_parts(page)
    parts = re.findall(r'<div class="table-part">(.*?)</div>', cut, re.DOTALL)
    assert len(parts) == 3
    assert [len(re.findall(r"<tr class=\"row-\d", part)) for part in parts] == [
        page_speed.ROWS, page_speed.ROWS, 3]
    assert re.findall(r'class="row-(\d+)"', cut) == [str(i) for i in range(rows)]
    for part in parts:
        assert part.startswith('<table class="notation-table table" style="width: 100%">')
        assert part.count("<th ") == 2 and part.count("<table") == 1
        assert part.rstrip().endswith("</table>")
    assert cut.startswith("<p>before</p>") and cut.endswith("</div>\n<p>after</p>")
    assert cut.count('class="pst-scrollable-table-container"') == 1   # one box scrolls them all


def test_short_tables_and_other_tables_stay_whole():
    short = _table(page_speed.ROWS)
    other = _table(3 * page_speed.ROWS, classes="table")
    assert page_speed.tables_in_parts(short + other) == short + other
