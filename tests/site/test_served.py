"""The site where `make book` points (issue 37): its last line says to read the site served,
`make serve`; this test runs that command as a reader would, takes the address it prints
(127.0.0.1, a port the system picked free), and reads the home page and every chapter there
in Debian's Chromium: every explorer drawn, no console error, no failed request. Opened from
disk instead (file://, where Chromium refuses the explorers' data and the math's fonts), a
page says so in one line, and only then.

Run with `make test-site` (or `pytest tests/site/test_served.py`; SITE_DIR=... for another
built site)."""

import os
import re
import select
import signal
import subprocess
import time

import pytest
from site_config import ROOT, site_dir
from site_visit import WAIT_FOR_EXPLORERS

CHAPTERS = sorted(p.relative_to(site_dir()).as_posix()
                  for p in (site_dir() / "notebooks").glob("[0-9][0-9]_*.html"))
TIMEOUT_MS = 120_000
ADDRESS = re.compile(r"\((http://127\.0\.0\.1:\d+/)\)")
DRAWN = """async () => {
  const boxes = [...document.querySelectorAll('div.explorer')];
  if (!boxes.length) return {boxes: 0, drawn: 0};
  await window.courseExplorersReady;
  const drawn = boxes.filter((b) => b.querySelector('svg.marks, canvas.marks, svg, canvas'));
  return {boxes: boxes.length, drawn: drawn.length,
          registered: Object.keys(window.courseExplorers || {}).length};
}"""


def make_env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def what_make_book_says() -> str:
    """The command on `make book`'s last line (a dry run prints the line it echoes)."""
    done = subprocess.run(["make", "--no-print-directory", "-n", "book"], cwd=ROOT,
                          env=make_env(), capture_output=True, text=True, timeout=120,
                          check=True)
    last = done.stdout.strip().splitlines()[-1]
    command = re.search(r"(make \w+)\W*$", last)
    assert command, f"make book's last line names no command: {last}"
    return command[1]


@pytest.fixture(scope="module")
def served():
    """Runs what `make book` says (make serve) and yields the address it prints."""
    command = what_make_book_says().split()
    assert command == ["make", "serve"], command
    server = subprocess.Popen([*command, f"SITE_DIR={site_dir()}"], cwd=ROOT, env=make_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)
    printed, address, deadline = [], None, time.monotonic() + 60
    try:
        while address is None and time.monotonic() < deadline and server.poll() is None:
            if select.select([server.stdout], [], [], 1)[0]:
                line = server.stdout.readline()
                printed.append(line)
                found = ADDRESS.search(line)
                address = found[1] if found else None
        assert address, f"make serve printed no address: {''.join(printed)}"
        yield address
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
        yield browser
        browser.close()


def read(chromium, url: str, explorers: bool = True) -> dict:
    """The page at url, as a reader reaches it: console errors, failed requests, explorers
    (scrolled to and awaited, unless `explorers` is false), the file:// notice."""
    tab = chromium.new_page(viewport={"width": 1280, "height": 900})
    errors, failed = [], []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.on("requestfailed", lambda r: failed.append(f"{r.url} {r.failure}"))
    tab.on("response", lambda r: failed.append(f"{r.url} HTTP {r.status}")
           if r.status >= 400 else None)
    try:
        tab.goto(url, wait_until="load", timeout=TIMEOUT_MS)
        if url.endswith("/"):   # the home page forwards to the preface (a meta refresh)
            tab.wait_for_url("**/chapters/preface.html", wait_until="load", timeout=TIMEOUT_MS)
        drawn = None
        if explorers:
            tab.evaluate(WAIT_FOR_EXPLORERS)
            drawn = tab.evaluate(DRAWN)
            tab.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
        notice = tab.locator("#file-notice")
        shown = notice.inner_text() if notice.count() and notice.is_visible() else ""
        return {"errors": errors, "failed": failed, "explorers": drawn, "notice": shown,
                "landed": tab.url}
    finally:
        tab.close()


def test_make_book_points_at_make_serve():
    assert what_make_book_says() == "make serve"


@pytest.mark.parametrize("page", ["", *CHAPTERS], ids=lambda p: p or "home")
def test_served_where_make_book_points_every_explorer_draws_without_errors(chromium, served,
                                                                          page):
    seen = read(chromium, served + page)
    assert seen["errors"] == [], seen["errors"]
    assert seen["failed"] == [], seen["failed"]
    assert seen["notice"] == "", "the file:// notice shows on a served page"
    explorers = seen["explorers"]
    assert explorers["drawn"] == explorers["boxes"], explorers
    if explorers["boxes"]:
        assert explorers["registered"] == explorers["boxes"], explorers


def test_every_explorer_is_on_a_page_read_here():
    # the four explorers are on chapters this test reads (so none escapes it)
    pages = [p for p in CHAPTERS if 'class="explorer' in (site_dir() / p).read_text()]
    assert len(pages) >= 4, pages


@pytest.mark.parametrize("page", ["chapters/preface.html", "notebooks/04_scaling.html"])
def test_a_page_opened_from_disk_says_to_serve_it_in_one_line(chromium, page):
    seen = read(chromium, (site_dir() / page).as_uri(), explorers=False)
    assert "make serve" in seen["notice"], seen["notice"]
    assert "\n" not in seen["notice"].strip()


def test_an_explorer_opened_from_disk_says_to_serve_the_site(chromium):
    # not "needs the course's site or JupyterLab" (issue 49): how to read it served
    tab = chromium.new_page()
    try:
        tab.goto((site_dir() / "notebooks/04_scaling.html").as_uri(), wait_until="load",
                 timeout=TIMEOUT_MS)
        notes = tab.evaluate("() => [...document.querySelectorAll('div.explorer "
                             ".explorer-fallback')].map((n) => n.textContent)")
    finally:
        tab.close()
    assert notes and all("make serve" in n and "JupyterLab" not in n for n in notes), notes
