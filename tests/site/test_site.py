"""The built site in a real browser (issue 5): for every page, no console error, no failed
request, no request to another host, math typeset wherever there is math, alt text on
every image, no serious or critical axe-core violation (light and dark), at most 2 MB
transferred; launch and download buttons on every notebook page; a screenshot of each.

Run with `make test-site`; see conftest.py for SITE_DIR and the other settings.
"""

import gzip
import re
from pathlib import Path

import pytest
from tests.book_toc import toc_files
from site_config import (MB, PAGES, REDIRECT_TARGETS, REDIRECTS, ROOT, VISITS, site_dir,
                         totals)

NOTEBOOK_PAGES = [p for p in PAGES if p.startswith("notebooks/")]
REPOSITORY = "attention-as-linear-algebra/attention-as-linear-algebra"
BRANCH = "main"


def show(items):
    return "\n  ".join(str(i) for i in items)


def test_every_table_of_contents_entry_is_a_built_page():
    missing = [f for f in toc_files() if f"{f}.html" not in PAGES]
    assert not missing, f"in _toc.yml but not built: {missing}"


def test_the_reference_pages_are_in_the_table_of_contents():
    for page in ("chapters/notation", "chapters/instructor_guide", "chapters/troubleshooting",
                 "chapters/licence", "chapters/bibliography", "chapters/maintainers/status",
                 "chapters/maintainers/testing"):
        assert page in toc_files(), f"{page} is not in _toc.yml"


def test_there_are_notebook_pages():
    assert len(NOTEBOOK_PAGES) >= 4, NOTEBOOK_PAGES


def test_site_was_built():
    assert (site_dir() / "index.html").exists(), f"no built site at {site_dir()}"
    assert PAGES, "no pages"


def test_every_old_chapter_page_is_a_redirect_that_was_followed():
    # the chapters' pages of version 0.1 (chapters/span.html, ...) must not 404
    assert len([p for p in REDIRECTS if p.startswith("chapters/")]) == 8, REDIRECTS


@pytest.mark.parametrize("page", REDIRECTS)
def test_redirect_lands_on_its_page_without_errors(visits, page):
    v = visits[page]
    assert v.url.endswith("/" + REDIRECT_TARGETS[page]), (page, v.url)
    assert not v.console_errors, v.console_errors
    assert not v.failed_requests, v.failed_requests
    assert not v.third_party_requests, v.third_party_requests


@pytest.mark.parametrize("page", PAGES)
def test_no_console_errors(visits, page):
    v = visits[page]
    assert not v.console_errors, f"{page}:\n  {show(v.console_errors)}"


@pytest.mark.parametrize("page", PAGES)
def test_no_failed_requests(visits, page):
    v = visits[page]
    assert not v.failed_requests, f"{page}:\n  {show(v.failed_requests)}"


@pytest.mark.parametrize("page", PAGES)
def test_no_request_to_another_host(visits, page):
    v = visits[page]
    assert not v.third_party_requests, f"{page}:\n  {show(v.third_party_requests)}"


@pytest.mark.parametrize("page", PAGES)
def test_math_is_typeset(visits, page):
    v = visits[page]
    if v.math_elements:  # KaTeX typesets at build time (_ext/katex_math.py), MathJax in the page
        assert v.mathjax_loaded or v.mjx_containers, f"{page}: no math typeset"
    assert not v.math_untypeset, f"{page}: raw TeX left:\n  {show(v.math_untypeset)}"
    assert not v.math_errors, f"{page}: TeX errors:\n  {show(v.math_errors)}"
    assert v.mjx_containers >= v.math_elements


@pytest.mark.parametrize("page", PAGES)
def test_no_raw_tex_shown_as_text(visits, page):
    """A backslash command or a `$` outside typeset math, code and outputs: in prose, link
    text, headings, the sidebar, the bibliography (a broken display, a {ref} to a section
    whose title has math, a BibTeX title with $...$)."""
    v = visits[page]
    assert not v.raw_tex, f"{page}: TeX shown as text:\n  {show(v.raw_tex)}"


@pytest.mark.parametrize("page", PAGES)
def test_every_image_has_alt_text(visits, page):
    v = visits[page]
    assert not v.images_without_alt, f"{page}: images without alt text:\n  {show(v.images_without_alt)}"


@pytest.mark.parametrize("page", PAGES)
def test_no_serious_or_critical_accessibility_violations(visits, page):
    v = visits[page]
    assert not v.axe_light, f"{page} (light):\n  {show(v.axe_light)}"
    assert not v.axe_dark, f"{page} (dark):\n  {show(v.axe_dark)}"


@pytest.mark.parametrize("page", PAGES)
def test_page_weighs_at_most_2_MB(visits, page):
    v = visits[page]
    assert v.requests > 0
    assert v.transferred_bytes <= 2 * MB, (
        f"{page}: {v.transferred_bytes / MB:.2f} MB transferred in {v.requests} requests")


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_notebook_page_has_launch_and_download_buttons(visits, page):
    v = visits[page]
    # each edition's buttons open its own Jupyter notebook (scripts/jupyter_notebooks.py)
    edition = "student" if "student" in site_dir().parts else "reader"
    folder, name = page.rsplit("/", 1)
    ipynb = f"{folder}/{edition}/{name.replace('.html', '.ipynb')}"
    binder = (f"https://mybinder.org/v2/gh/{REPOSITORY}/{BRANCH}"
              f"?urlpath=lab/tree/{ipynb}")
    colab = f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/{ipynb}"
    assert binder in v.links, f"{page}: no Binder link to {ipynb}"
    assert colab in v.links, f"{page}: no Colab link to {ipynb}"
    assert (ROOT / ipynb).exists(), f"the launch buttons open {ipynb}, which does not exist"
    for suffix in (".ipynb", ".md"):
        download = page.replace(".html", suffix)
        assert any(link.endswith(f"/_sources/{download}") for link in v.links), (
            f"{page}: no download link for {download}")
        assert (site_dir() / "_sources" / download).is_file()
    served = (site_dir() / "_sources" / page.replace(".html", ".ipynb")).read_bytes()
    assert served == (ROOT / ipynb).read_bytes(), f"{page}: the .ipynb download is not {ipynb}"


def test_totals_are_zero(visits):
    """The whole site at once: the counts printed at the end of the run."""
    t = totals()
    for key in ("console_errors", "failed_requests", "third_party_requests",
                "math_untypeset", "raw_tex_as_text", "images_without_alt", "axe_serious_or_critical",
                "pages_over_2_MB"):
        assert t[key] == 0, f"{key}: {t[key]}"
    assert t["pages"] == len(PAGES)
    assert t["screenshots"] == 2 * len(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_page_links_the_stylesheet_bundle_and_nothing_it_holds(page):
    """_ext/stylesheet_bundle.py serves every stylesheet Sphinx adds to all pages as one file;
    a page that linked one of them too would load it twice and wait for both (this
    happened in builds from scratch, where the extensions' stylesheets reach _static/ only
    after the pages are written)."""
    static = site_dir() / "_static"
    held = set(re.findall(r"^/\* (\S+\.css) \*/$", (static / "site-bundle.css").read_text(
        encoding="utf-8"), flags=re.M))
    assert {"basic.css", "pygments.css"} <= held, sorted(held)
    html = (site_dir() / page).read_text(encoding="utf-8")
    linked = [re.sub(r"^(\.\./)*_static/", "", href.split("?")[0]) for href in re.findall(
        r'<link rel="stylesheet" type="text/css" href="([^"]+)"', html)]
    assert linked.count("site-bundle.css") == 1, linked
    assert not held & set(linked), f"{page} links bundled stylesheets: {held & set(linked)}"


def test_the_stylesheet_a_phone_waits_for_holds_only_what_the_site_uses():
    """Every page waits for the bundle before it paints. With the theme's unused Bootstrap
    rules it was 492 KB, 76 KB gzip, and Lighthouse's phone run counted 0.9-1.2 s for it on
    each page; _ext/purge_bundle.js keeps about a third (32 KB gzip). 40 KB is the bar."""
    css = (site_dir() / "_static" / "site-bundle.css").read_bytes()
    assert len(gzip.compress(css)) <= 40_000, f"site-bundle.css is {len(gzip.compress(css))} B gzip"
    for unused in (b".accordion", b".pagination", b".form-floating", b".spinner-border"):
        assert unused not in css, f"site-bundle.css still holds {unused.decode()} rules"
