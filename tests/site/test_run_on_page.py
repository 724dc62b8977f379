"""The Run control (issue 44; _ext/run_on_page.py) in Chromium: nothing of Python loads
before the click; pressed, a chapter's code runs in the page's Web Worker from the site's own
files, every cell without an error; an edited cell runs again and shows its new output; no
request leaves 127.0.0.1."""

from urllib.parse import urlsplit

import pytest

CHAPTER = "notebooks/02_qk_av.html"
WAIT_MS = 240_000  # Pyodide's boot and the chapter, on a busy 2-core machine


@pytest.fixture(scope="module")
def page(browser, origin):
    context = browser.new_context()
    page = context.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    context.on("request", lambda request: requests.append(request.url))
    page.goto(f"{origin.rstrip('/')}/{CHAPTER}", wait_until="load")
    page.requests = requests
    yield page
    context.close()


def test_nothing_of_python_loads_before_the_click(page):
    assert page.locator(".run-on-page-button").is_visible()
    assert not [u for u in page.requests if "/_static/pyodide/" in u
                or u.endswith(("lib.zip", "worker.js", "run_on_page.css"))]


def test_the_chapter_runs_edits_rerun_and_nothing_leaves_the_machine(page):
    page.locator(".run-on-page-button").click()
    status = page.locator(".run-on-page-status")
    status.filter(has_text="ran ").wait_for(timeout=WAIT_MS)
    assert "error" not in status.inner_text(), status.inner_text()
    assert any("/_static/pyodide/numpy-" in u for u in page.requests)
    # the cell that prints Q, K and V: its output is now the browser's
    cell = page.locator("div.run-cell-4")  # the chapter's fourth code cell
    assert cell.locator("textarea").input_value().startswith("Q, K, V = qk_av_example()")
    # text_content: the site lays out sections off screen lazily (content-visibility)
    assert cell.locator(".run-on-page-output").text_content().startswith("Q (2, 2)")
    editor = cell.locator("textarea")
    editor.fill('print("edited:", (Q @ K.T).shape)')
    cell.locator(".run-on-page-cell-run").click()
    cell.locator(".run-on-page-output", has_text="edited: (2, 3)").wait_for(timeout=30_000)
    hosts = {urlsplit(u).hostname for u in page.requests if not u.startswith(("data:", "blob:"))}
    assert hosts == {"127.0.0.1"}, hosts
