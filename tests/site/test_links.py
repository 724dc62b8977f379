"""Every internal link and asset of the built site resolves (issue 28, item 2): each
`href`, `src` and `srcset` of every page, and each `url(...)` of every stylesheet, names a
file of the site, and each `#fragment` an id on its page. Both editions: the full site
(SITE_DIR) and, when it has been built (`make book-student`), the student one
(STUDENT_SITE_DIR, default _build/student/html). A link to the PDF, for instance, may only
appear where the PDF is in the site.

The files are read from disk, as a static host serves them (a folder serves its
index.html); no browser is needed. Run with `make test-site`, like the other site tests.
"""

import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from site_config import ROOT, site_dir

URL_IN_CSS = re.compile(r"url\(\s*(['\"]?)([^'\")]+)\1\s*\)")


class Links(HTMLParser):
    """The links, assets and ids of one page."""

    def __init__(self):
        super().__init__()
        self.urls, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("id", "name") if tag == "a" else ("id",):
            if a.get(name):
                self.ids.add(a[name])
        if tag in ("a", "link", "area") and a.get("href"):
            self.urls.append(a["href"])
        for name in ("src", "data-src", "poster"):
            if a.get(name):
                self.urls.append(a[name])
        for name in ("srcset", "imagesrcset"):
            if a.get(name):
                self.urls += [part.split()[0] for part in a[name].split(",") if part.strip()]
        if tag == "object" and a.get("data"):
            self.urls.append(a["data"])


def internal(url: str) -> bool:
    parts = urlsplit(url)
    return not parts.scheme and not parts.netloc and not url.startswith(("//", "data:"))


def target(root: Path, base: Path, url: str) -> Path:
    path = unquote(urlsplit(url).path)
    resolved = (root / path.lstrip("/")) if path.startswith("/") else (base.parent / path)
    resolved = Path(os.path.normpath(resolved))
    return resolved / "index.html" if resolved.is_dir() else resolved


def broken_links(root: Path) -> list[str]:
    # _static/ holds the theme's Jinja macros as .html files: not pages
    pages = [p for p in sorted(root.rglob("*.html")) if "_static" not in p.relative_to(root).parts]
    parsed = {}
    broken = []

    def page(path):
        if path not in parsed:
            parser = Links()
            parser.feed(path.read_text(encoding="utf-8", errors="replace"))
            parsed[path] = parser
        return parsed[path]

    for path in pages:
        for url in page(path).urls:
            if not internal(url):
                continue
            where = target(root, path, url) if urlsplit(url).path else path
            name = path.relative_to(root).as_posix()
            if not where.is_file() or root not in where.parents:
                broken.append(f"{name}: {url}")
                continue
            fragment = unquote(urlsplit(url).fragment)
            if fragment and where.suffix == ".html" and fragment not in page(where).ids:
                broken.append(f"{name}: {url} (no id {fragment!r})")
    for sheet in sorted(root.rglob("*.css")):
        text = re.sub(r"/\*.*?\*/", "", sheet.read_text(encoding="utf-8", errors="replace"),
                      flags=re.S)
        for _, url in URL_IN_CSS.findall(text):
            if internal(url) and not url.startswith("#"):
                if not target(root, sheet, url).is_file():
                    broken.append(f"{sheet.relative_to(root).as_posix()}: url({url})")
    return broken


def editions():
    full = site_dir()
    student = Path(os.environ.get("STUDENT_SITE_DIR", ROOT / "_build" / "student" / "html"))
    found = [pytest.param(full, id="full")]
    if (student / "index.html").exists():
        found.append(pytest.param(student.resolve(), id="student"))
    return found


@pytest.mark.parametrize("root", editions())
def test_every_internal_link_and_asset_resolves(root):
    if not (root / "index.html").exists():
        pytest.skip(f"no site at {root}")
    broken = broken_links(root)
    assert not broken, f"{len(broken)} broken:\n" + "\n".join(broken[:40])
