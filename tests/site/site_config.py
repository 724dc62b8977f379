"""Where the built site, the screenshots and the browser are; the pages to visit; the
totals of all visits. Shared by conftest.py and the tests."""

import os
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def site_dir() -> Path:
    return Path(os.environ.get("SITE_DIR", ROOT / "_build" / "html")).resolve()


def screenshot_dir() -> Path:
    default = site_dir().parent / "screenshots"
    return Path(os.environ.get("SCREENSHOT_DIR", default)).resolve()


def built_pages() -> list[str]:
    """Every HTML page of the built site, as a path relative to its root."""
    root = site_dir()
    if not (root / "index.html").exists():
        pytest.exit(f"no built site at {root}: run `make test-site` (or set SITE_DIR)", 2)
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*.html")
        if p.relative_to(root).parts[0] not in ("_static", "_sources", "_images")
    )


def redirect_targets() -> dict:
    """Redirect page -> the page it must land on: index.html (Jupyter Book's, to the first
    page) and the chapters' old pages (`redirects` in _config.yml, sphinx-reredirects)."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    moved = config["sphinx"]["config"].get("redirects", {})
    targets = {"index.html": "chapters/preface.html"}
    for old, new in moved.items():
        targets[f"{old}.html"] = (Path(old).parent / new).as_posix().replace("chapters/../", "")
    return targets


# Redirect pages are followed, not inspected.
REDIRECT_TARGETS = redirect_targets()
REDIRECT_PAGES = tuple(REDIRECT_TARGETS)


def _split_pages():
    try:
        pages = built_pages()
    except BaseException:  # no site: pytest.exit, when a fixture or test first needs one
        return [], []
    return ([p for p in pages if p not in REDIRECT_PAGES],
            [p for p in pages if p in REDIRECT_PAGES])


PAGES, REDIRECTS = _split_pages()
VISITS = {}
MB = 1024 * 1024


def totals() -> dict:
    """The counts the tests assert, over every page visited."""
    v = list(VISITS.values())
    heaviest = max(v, key=lambda x: x.transferred_bytes, default=None)
    return {
        "pages": len(v),
        "console_errors": sum(len(x.console_errors) for x in v),
        "failed_requests": sum(len(x.failed_requests) for x in v),
        "third_party_requests": sum(len(x.third_party_requests) for x in v),
        "pages_with_math": sum(1 for x in v if x.math_elements),
        "math_elements": sum(x.math_elements for x in v),
        "math_untypeset": sum(len(x.math_untypeset) + len(x.math_errors) for x in v),
        "raw_tex_as_text": sum(len(x.raw_tex) for x in v),
        "images": sum(x.images for x in v),
        "images_without_alt": sum(len(x.images_without_alt) for x in v),
        "axe_serious_or_critical": sum(len(x.axe_light) + len(x.axe_dark) for x in v),
        "axe_minor_or_moderate": sum(len(x.axe_minor_moderate) for x in v),
        "pages_over_2_MB": sum(1 for x in v if x.transferred_bytes > 2 * MB),
        "heaviest_page": heaviest and heaviest.page,
        "heaviest_transferred_MB": heaviest and round(heaviest.transferred_bytes / MB, 2),
        "heaviest_uncompressed_MB": heaviest and round(heaviest.uncompressed_bytes / MB, 2),
        "screenshots": sum(len(x.screenshots) for x in v),
        "browser_seconds": round(sum(x.seconds for x in v), 1),
    }
