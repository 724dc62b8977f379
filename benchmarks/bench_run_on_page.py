"""The Run control's speed (issue 44's bar: from the click to the first cell's new output at
most 10 s in desktop Chromium served from localhost). A benchmark, never a test: it prints
what it measures and asserts nothing.

Serves a built site (SITE_DIR, default _build/html) on 127.0.0.1 with gzip, as the browser
tests do (tests/site/site_server.py), opens a chapter (CHAPTER, default
notebooks/02_qk_av.html) in Debian's Chromium (CHROMIUM, default /usr/bin/chromium) in a
fresh context each run (nothing cached: a first visit), presses Run and records the time to
the first cell's new output and to the last cell, and what the control says at the end (how
many cells ran, and how many with an error). CHAPTER may name several pages, separated by
spaces. Usage:

    SITE_DIR=_build/html CHAPTER="notebooks/01_span.html notebooks/07_memory_efficient.html" \
        .venv/bin/python -m benchmarks.bench_run_on_page [runs]
"""

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "site"))


def main(runs: int = 3) -> None:
    from playwright.sync_api import sync_playwright
    from site_server import SiteServer

    site = Path(os.environ.get("SITE_DIR", ROOT / "_build" / "html"))
    chapters = os.environ.get("CHAPTER", "notebooks/02_qk_av.html").split()
    with SiteServer(site) as origin, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"), headless=True)
        for chapter in chapters:
            first, last, said = [], [], ""
            for _ in range(runs):
                context = browser.new_context()
                page = context.new_page()
                page.goto(f"{origin}/{chapter}", wait_until="load")
                start = time.perf_counter()
                page.locator(".run-on-page-button").click()
                page.locator(".run-on-page-output").first.wait_for(timeout=300_000)
                first.append(time.perf_counter() - start)
                status = page.locator(".run-on-page-status")
                status.filter(has_text="ran ").wait_for(timeout=600_000)
                last.append(time.perf_counter() - start)
                said = status.inner_text()
                context.close()
            print(f"{site}/{chapter}, {runs} cold runs, {os.cpu_count()} cores, "
                  f"load {os.getloadavg()[0]:.1f}, Chromium headless:")
            print(f"  click -> first cell's new output: median {statistics.median(first):.1f} s "
                  f"({', '.join(f'{t:.1f}' for t in first)})")
            print(f"  click -> every cell run:          median {statistics.median(last):.1f} s "
                  f"({', '.join(f'{t:.1f}' for t in last)})")
            print(f"  the control says: {said}", flush=True)
        browser.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
