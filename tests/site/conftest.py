"""Fixtures of the browser tests (`make test-site`): the built site, served on 127.0.0.1, and
Debian's Chromium driven by Playwright. Each page is loaded once, in a fresh browser
context, and everything the tests check is recorded during that visit (see site_visit.py);
the tests then only read the records.

These tests only run when asked for by path (`pytest tests/site`, as `make test-site`
does): a plain `pytest` (`make test`) skips the folder, since it needs a built site,
Chromium and the packages of requirements/test.txt.

Environment:
  SITE_DIR         the built site (default: _build/html of the repository)
  SCREENSHOT_DIR   where the screenshots and report.json go (default: SITE_DIR/../screenshots)
  SITE_FULL_SCREENSHOTS=1  the light screenshot of each whole page (default: its first screen)
  CHROMIUM         the browser (default: /usr/bin/chromium; no browser is ever downloaded)
  SITE_TEST_WORKERS  pages visited at once (default 2)

`make test-site` runs these tests in two processes (pytest-xdist, `-n 2 --dist loadfile`),
a test file at a time in one process; the two files that read the page visits (test_site.py
and test_accessibility.py) go to the same process, so that every page is still visited once.
"""

import json
import os
import time
from pathlib import Path

import pytest
from site_config import HERE, PAGES, REDIRECTS, VISITS, screenshot_dir, site_dir, totals


def _asked_for(config) -> bool:
    """True when a command-line path points into tests/site (or at one of its tests)."""
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path, config):
    if not _asked_for(config):
        return True
    return None


_STARTED = time.time()

# The test files that read `visits` (one process visits the pages, once).
VISIT_READERS = {"test_site.py", "test_accessibility.py"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's `--dist loadfile`, but with the page visits' two readers as one file: a
    file's tests run in one process (its module-scoped browser and fixtures are made once),
    and the pages are visited once. (xdist's own `loadgroup` marks are lost under pytest 9.2,
    which no longer reads the node id xdist rewrites.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return "visits" if Path(path).name in VISIT_READERS else path

    return ByFile(config, log)


@pytest.fixture(scope="session")
def origin():
    from site_server import SiteServer

    with SiteServer(site_dir()) as url:
        yield url


@pytest.fixture(scope="session")
def visits(origin):
    """Every page visited once, before the first check: page -> Visit (see site_visit.py)."""
    from site_visit import visit_all

    executable = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not Path(executable).exists():
        pytest.exit(f"{executable} is missing: `apt-get install chromium` (see .ci/run)", 2)
    shots = screenshot_dir()
    shots.mkdir(parents=True, exist_ok=True)
    workers = int(os.environ.get("SITE_TEST_WORKERS", "2"))
    pages, redirects = visit_all(executable, origin, PAGES, REDIRECTS, shots, site_dir(),
                                 workers)
    VISITS.update(pages)
    report = {"totals": totals(), "pages": {p: v.summary() for p, v in sorted(VISITS.items())},
              "redirects": {p: v.summary() for p, v in redirects.items()}}
    (shots / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    return {**pages, **redirects}


def pytest_terminal_summary(terminalreporter):
    if VISITS:
        found = totals()
    else:
        # Under pytest-xdist the visits were made in a worker: read what it wrote.
        report = screenshot_dir() / "report.json"
        if not report.exists() or report.stat().st_mtime < _STARTED:
            return
        found = json.loads(report.read_text())["totals"]
    terminalreporter.section("site totals (also in report.json beside the screenshots)")
    for key, value in found.items():
        terminalreporter.write_line(f"{key:>26}: {value}")
    terminalreporter.write_line(f"{'screenshots in':>26}: {screenshot_dir()}")


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright's synchronous API, for tests that drive a page
    step by step (test_explorers.py, test_reading.py)."""
    from playwright.sync_api import sync_playwright
    from site_visit import CHROMIUM_ARGS

    executable = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    if not Path(executable).exists():
        pytest.exit(f"{executable} is missing: `apt-get install chromium` (see .ci/run)", 2)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()
