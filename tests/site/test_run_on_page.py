"""The Run control (issue 44; _ext/run_on_page.py) in Chromium: nothing of Python loads
before the click; pressed, a chapter's code runs in the page's Web Worker from the site's own
files, every cell without an error; an edited cell runs again and shows its new output; no
request leaves 127.0.0.1."""

from urllib.parse import urlsplit

import pytest

CHAPTER = "notebooks/03_masking.html"  # exercises with answer cells in the student edition
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
    # this chapter's code needs no SciPy (a 20 MB download): it was never fetched
    assert not [u for u in page.requests if "/_static/pyodide/scipy-" in u]
    # the first cell that printed: its output is now the browser's, and it can be edited
    cell = page.locator("div.cell", has=page.locator("textarea")).filter(
        has=page.locator(".run-on-page-output")).first
    assert cell.locator(".run-on-page-output").text_content().strip()
    cell.locator("textarea").fill('print("edited:", 6 * 7)')
    cell.locator(".run-on-page-cell-run").click()
    cell.locator(".run-on-page-output", has_text="edited: 42").wait_for(timeout=30_000)
    hosts = {urlsplit(u).hostname for u in page.requests if not u.startswith(("data:", "blob:"))}
    assert hosts == {"127.0.0.1"}, hosts


def test_what_a_cell_prints_is_shown_while_it_still_runs(page):
    """As Jupyter shows a long cell's prints: the first line is on the page before the cell
    ends (chapter 7's memory table grows row by row)."""
    page.locator(".run-on-page-status", has_text="ran ").wait_for(timeout=WAIT_MS)
    cell = page.locator("div.cell", has=page.locator("textarea")).first
    cell.locator("textarea").fill(
        "import time\n"
        "print('first row')\n"
        "start = time.monotonic()\n"
        "while time.monotonic() - start < 4:\n"
        "    pass\n"
        "print('last row')")
    run = cell.locator(".run-on-page-cell-run")
    run.click()
    cell.locator(".run-on-page-output", has_text="first row").wait_for(timeout=30_000)
    assert run.is_disabled(), "the cell had ended: nothing was shown while it ran"
    assert "last row" not in cell.locator(".run-on-page-output").inner_text()
    cell.locator(".run-on-page-output", has_text="last row").wait_for(timeout=30_000)
    assert cell.locator(".run-on-page-output").count() == 1


def test_an_edited_cell_that_imports_scipy_gets_it_from_the_site(page):
    """This chapter's own code needs no SciPy, so it was never loaded; a cell the reader
    writes that imports it loads it first, from the site's files."""
    page.locator(".run-on-page-status", has_text="ran ").wait_for(timeout=WAIT_MS)
    cell = page.locator("div.cell", has=page.locator("textarea")).nth(1)
    cell.locator("textarea").fill(
        "from scipy.special import logsumexp\nprint('lse:', round(logsumexp([0.0, 0.0]), 4))")
    cell.locator(".run-on-page-cell-run").click()
    cell.locator(".run-on-page-output", has_text="lse: 0.6931").wait_for(timeout=120_000)
    fetched = [u for u in page.requests if "/_static/pyodide/scipy-" in u]
    assert fetched and {urlsplit(u).hostname for u in fetched} == {"127.0.0.1"}


def test_the_student_edition_adds_an_answer_cell_to_each_exercise(page):
    """Only on the student edition (SITE_DIR=_build/student/html): each exercise is followed
    by an empty cell the student writes and runs; the full edition has its solutions."""
    student = page.locator(".run-on-page").get_attribute("data-student") == "1"
    answers = page.locator(".run-on-page-answer")
    if not student:
        assert answers.count() == 0
        return
    assert answers.count() == page.locator("div.exercise").count() > 0
    answers.first.locator("textarea").fill('print("answer:", 6 * 7)')
    answers.first.locator(".run-on-page-cell-run").click()
    answers.first.locator(".run-on-page-output", has_text="answer: 42").wait_for(timeout=30_000)
