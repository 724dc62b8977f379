"""Nothing on a notebook page scrolls sideways on a laptop (issue 18): at 1280 x 800, with
every section laid out and every solution unfolded, no code block, output, display
equation or table is wider than its box. (On a phone, wide code still scrolls inside its
block, with a tab stop: tests/site/test_reading.py.)

Run with `make test-site`, like the other browser tests.
"""

import pytest

from site_config import PAGES

LAPTOP = {"width": 1280, "height": 800}
TIMEOUT_MS = 60_000
NOTEBOOK_PAGES = [p for p in PAGES if p.startswith("notebooks/")]

# Lay out every section (they skip layout until near the screen: _static/site.css) and
# unfold every solution, wait for the fonts, then list each block whose content is wider
# than its box.
LAY_OUT_EVERYTHING = """async () => {
  document.querySelectorAll('.bd-article section').forEach(
    (s) => { s.style.contentVisibility = 'visible'; });
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach((e) => e.classList.remove('toggle-hidden'));
  document.body.offsetHeight;        // lay out now, so that every font in use is asked for
  await document.fonts.ready;        // then measure with the real fonts (KaTeX's included)
}"""
TOO_WIDE = """() => {
  const kinds = {
    'code': '.cell_input pre, .highlight pre',
    'output': '.cell_output pre, .cell_output .output, .cell_output table',
    'equation': '.katex-display',
    'table': '.pst-scrollable-table-container, .bd-article table',
  };
  const wide = [];
  for (const [kind, selector] of Object.entries(kinds)) {
    for (const el of document.querySelectorAll(selector)) {
      if (!el.checkVisibility()) continue;
      if (el.scrollWidth > el.clientWidth + 1) {
        wide.push({kind, over: el.scrollWidth - el.clientWidth,
                   text: el.textContent.trim().slice(0, 70)});
      }
    }
  }
  return wide;
}"""


@pytest.fixture(scope="module")
def laptop(browser):
    context = browser.new_context(viewport=LAPTOP, service_workers="block")
    yield context.new_page()
    context.close()


def test_there_are_notebook_pages_to_check():
    assert len(NOTEBOOK_PAGES) == 9, NOTEBOOK_PAGES


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_no_block_scrolls_sideways_on_a_laptop(laptop, origin, page):
    laptop.goto(f"{origin}/{page}", wait_until="load", timeout=TIMEOUT_MS)
    laptop.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
    laptop.evaluate(LAY_OUT_EVERYTHING)
    wide = laptop.evaluate(TOO_WIDE)
    assert not wide, f"{page}: {len(wide)} blocks wider than their box at 1280 px:\n" + \
        "\n".join(f"  {w['kind']}, {w['over']} px too wide: {w['text']!r}" for w in wide)
