"""A long page as a reader scrolls it, on a phone and on a desktop (issue 12): the article's
sections are laid out only when they near the screen (_static/site.css), and a code block,
output or table has a tab stop exactly when it scrolls (_ext/tab_stops.js, which replaces
pydata-sphinx-theme's pass over the whole page at load; _ext/tab_stops.py).

Run with `make test-site`, like the other browser tests.
"""

import pytest

PAGE = "notebooks/04_scaling.html"      # the longest page: wide tables, arrays and code
PHONE = {"width": 412, "height": 823}   # Lighthouse's phone
DESKTOP = {"width": 1280, "height": 900}
TIMEOUT_MS = 60_000

# Each block of the theme's list with its tab stop, whether it scrolls and whether it is
# shown (a block in a folded solution is measured when the reader unfolds it).
BLOCKS = """() => [...document.querySelectorAll(
    'pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, '
    + '.pst-scrollable-table-container')].map((el, i) => ({
  i, tabIndex: el.tabIndex,
  scrolls: el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight,
  top: el.getBoundingClientRect().top + window.scrollY,
  shown: el.checkVisibility(),   // false inside a folded solution: no box, no focus
}))"""

# Scroll through the page as a reader would, a screen at a time, and let each screen settle.
READ_TO_THE_END = """async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight) {
    window.scrollTo(0, y);
    await frame();
  }
  await frame();
}"""

TWO_FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"

SKIPPED_SECTIONS = """() => [...document.querySelectorAll('.bd-article > section > section')]
  .filter((s) => !s.firstElementChild.checkVisibility({contentVisibilityAuto: true})).length"""


@pytest.fixture
def page(browser, origin):
    context = browser.new_context(viewport=PHONE, service_workers="block")
    tab = context.new_page()
    tab.goto(f"{origin}/{PAGE}", wait_until="load", timeout=TIMEOUT_MS)
    tab.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
    yield tab
    context.close()


def test_sections_below_the_first_screen_are_laid_out_when_they_near_it(page):
    assert page.evaluate(SKIPPED_SECTIONS) >= 5
    last = page.locator(".bd-article > section > section").last
    inside = "s => s.firstElementChild.checkVisibility({contentVisibilityAuto: true})"
    assert not last.evaluate(inside)
    last.evaluate("s => s.scrollIntoView()")   # as a link to it does
    page.evaluate(TWO_FRAMES)
    assert last.evaluate(inside)


def test_nothing_is_measured_at_load_below_the_first_screens(page):
    """The theme's own pass would have measured every block at the load event and taken the
    tab stop from each that does not scroll; far below the first screen, every block still
    has its tab stop (_ext/tab_stops.js has not measured it yet)."""
    blocks = page.evaluate(BLOCKS)
    far = [b for b in blocks if b["top"] > 5 * PHONE["height"]]
    assert len(far) > 20, len(far)
    assert all(b["tabIndex"] == 0 for b in far), [b for b in far if b["tabIndex"] != 0][:3]


@pytest.mark.parametrize("first, then", [(PHONE, DESKTOP), (DESKTOP, PHONE)],
                         ids=["phone-then-desktop", "desktop-then-phone"])
def test_a_block_has_a_tab_stop_exactly_when_it_scrolls(page, first, then):
    kinds = set()
    for viewport in (first, then):
        page.set_viewport_size(viewport)
        page.evaluate(READ_TO_THE_END)
        blocks = [b for b in page.evaluate(BLOCKS) if b["shown"]]
        wrong = [b for b in blocks if b["tabIndex"] != (0 if b["scrolls"] else -1)]
        assert not wrong, (viewport, wrong[:5])
        kinds |= {b["scrolls"] for b in blocks}
    # both kinds were seen (on a desktop nothing scrolls sideways any more: test_fits.py),
    # so the rule was really tested
    assert kinds == {True, False}
