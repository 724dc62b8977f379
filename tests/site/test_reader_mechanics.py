"""The site as readers reach it (issue 28): on a phone (390 x 844, touch), a tablet (820 x
1180, touch) and a desktop (1280 x 800); by keyboard; in print. Each test failed on the
site before the fix it names (the site as built at commit 1aa3a49).

Run with `make test-site`, like the other browser tests.
"""

import itertools

import pytest
from site_config import PAGES

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
TABLET = {"viewport": {"width": 820, "height": 1180}, "has_touch": True, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
SCREENS = {"phone": PHONE, "tablet": TABLET, "desktop": DESKTOP}
CHAPTER = "notebooks/03_masking.html"
TIMEOUT_MS = 60_000


@pytest.fixture(scope="module")
def open_page(browser, origin):
    contexts = []

    def open_(page, screen=DESKTOP, **options):
        context = browser.new_context(service_workers="block", **screen, **options)
        contexts.append(context)
        tab = context.new_page()
        tab.goto(f"{origin}/{page}", wait_until="load", timeout=TIMEOUT_MS)
        return tab

    yield open_
    for context in contexts:
        context.close()


def press(tab, selector, screen):
    """A tap on a touch screen, a click elsewhere, on the one visible match."""
    target = tab.locator(selector).locator("visible=true")
    assert target.count() == 1, f"{target.count()} visible {selector}"
    if screen.get("has_touch"):
        target.tap()
    else:
        target.click()


OPEN = "(id) => document.getElementById(id).open"
SHOWN = "(id) => document.getElementById(id).checkVisibility({visibilityProperty: true})"


# 1. The sidebars open and close -----------------------------------------------------------

@pytest.mark.parametrize("screen", ["phone", "tablet"])
def test_the_chapter_list_opens_and_closes_on_a_touch_screen(open_page, screen):
    tab = open_page(CHAPTER, SCREENS[screen])
    press(tab, ".bd-header-article .primary-toggle", SCREENS[screen])
    tab.wait_for_function(f"({OPEN})('pst-primary-sidebar-modal')", timeout=20_000)
    links = tab.locator("#pst-primary-sidebar-modal nav.bd-docs-nav a.reference")
    assert links.locator("visible=true").count() >= 8   # the chapters, reachable
    tab.keyboard.press("Escape")
    tab.wait_for_function(f"!({OPEN})('pst-primary-sidebar-modal')", timeout=20_000)


@pytest.mark.parametrize("screen", ["phone", "tablet"])
def test_the_page_contents_open_and_close_on_a_touch_screen(open_page, screen):
    tab = open_page(CHAPTER, SCREENS[screen])
    press(tab, ".bd-header-article .secondary-toggle", SCREENS[screen])
    tab.wait_for_function(f"({OPEN})('pst-secondary-sidebar-modal')", timeout=20_000)
    toc = tab.locator("#pst-secondary-sidebar-modal nav.page-toc a")
    assert toc.locator("visible=true").count() >= 5
    tab.keyboard.press("Escape")
    tab.wait_for_function(f"!({OPEN})('pst-secondary-sidebar-modal')", timeout=20_000)


def test_the_sidebar_toggle_hides_and_shows_the_chapter_list_on_a_desktop(open_page):
    tab = open_page(CHAPTER, DESKTOP)
    assert tab.evaluate(SHOWN, "pst-primary-sidebar")
    press(tab, ".bd-header-article .primary-toggle", DESKTOP)
    tab.wait_for_function(f"!({SHOWN})('pst-primary-sidebar')", timeout=20_000)
    press(tab, ".bd-header-article .primary-toggle", DESKTOP)
    tab.wait_for_function(f"({SHOWN})('pst-primary-sidebar')", timeout=20_000)


def test_a_tap_leaves_no_tooltip_over_the_header(open_page):
    tab = open_page(CHAPTER, PHONE)
    press(tab, ".bd-header-article .primary-toggle", PHONE)
    tab.wait_for_function(f"({OPEN})('pst-primary-sidebar-modal')", timeout=20_000)
    tab.keyboard.press("Escape")
    tab.wait_for_timeout(400)   # Bootstrap's fade
    shown = tab.locator(".tooltip").locator("visible=true")
    assert shown.count() == 0, shown.all_inner_texts()


# 9. The sidebar shows the book's title on load --------------------------------------------

def test_the_sidebar_is_not_pre_scrolled_when_the_chapter_is_in_view(open_page):
    tab = open_page(CHAPTER, DESKTOP)
    tab.wait_for_timeout(300)
    state = tab.evaluate("""() => {
      const bar = document.querySelector('div.bd-sidebar');
      const brand = bar.querySelector('.navbar-brand').getBoundingClientRect();
      const link = [...bar.querySelectorAll('.bd-docs-nav .active')].pop().getBoundingClientRect();
      return {scrollTop: bar.scrollTop, brandTop: brand.top, barTop: bar.getBoundingClientRect().top,
              linkBottom: link.bottom, height: window.innerHeight};
    }""")
    assert state["scrollTop"] == 0, state
    assert state["brandTop"] >= state["barTop"] and state["linkBottom"] <= state["height"], state


# 5. Keyboard focus is visible on every header control --------------------------------------

FOCUS_RING = """(el) => {
  const s = getComputedStyle(el);
  const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2;
  const ring = s.boxShadow !== 'none' && /\\d+px\\s+\\d*[1-9]/.test(s.boxShadow);
  return outline || ring;
}"""


def test_keyboard_focus_is_visible_on_every_header_control(open_page):
    tab = open_page(CHAPTER, DESKTOP)
    controls = tab.locator(".bd-header-article button, .bd-header-article a")
    seen, invisible = 0, []
    for i in range(controls.count()):
        control = controls.nth(i)
        if not control.is_visible():
            continue
        control.focus()
        tab.keyboard.press("Shift+Tab")   # focus by keyboard: :focus-visible
        tab.keyboard.press("Tab")
        seen += 1
        if not control.evaluate(FOCUS_RING):
            invisible.append(control.get_attribute("aria-label") or control.get_attribute("title"))
    assert seen >= 6
    assert not invisible, invisible


def test_keyboard_focus_is_visible_in_the_download_menu(open_page):
    tab = open_page(CHAPTER, DESKTOP)
    tab.locator('.bd-header-article button[aria-label="Download this page"]').click()
    items = tab.locator(".bd-header-article .dropdown-menu.show .dropdown-item")
    assert items.count() >= 2
    items.first.focus()
    tab.keyboard.press("ArrowDown")   # Bootstrap's menu keys
    tab.keyboard.press("ArrowUp")
    focused = tab.evaluate_handle("document.activeElement")
    assert focused.evaluate("(el) => el.classList.contains('dropdown-item')")
    assert focused.evaluate(FOCUS_RING)


# 6. No page is wider than a phone ----------------------------------------------------------

# Every section laid out, as when the reader has scrolled through (_static/site.css skips
# those far from the screen, and a skipped section does not widen the page).
LAY_OUT_ALL = """() => document.querySelectorAll('.bd-article > section > section')
  .forEach((s) => { s.style.contentVisibility = 'visible'; })"""


def test_no_page_scrolls_sideways_on_a_phone(open_page, origin):
    wide = {}
    tab = open_page("chapters/preface.html", PHONE)
    for page in PAGES:
        tab.goto(f"{origin}/{page}", wait_until="load", timeout=TIMEOUT_MS)
        tab.evaluate(LAY_OUT_ALL)
        width = tab.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["viewport"]["width"]:
            wide[page] = width
    assert not wide, wide


WIDE_MATH = """() => [...document.querySelectorAll('div.math > .katex-display')]
  .filter((d) => d.scrollWidth > d.clientWidth + 1)
  .map((d) => getComputedStyle(d).backgroundImage)"""


def test_a_display_equation_wider_than_a_phone_shows_that_it_scrolls(open_page):
    tab = open_page("notebooks/04_scaling.html", PHONE)
    tab.evaluate(LAY_OUT_ALL)
    wide = tab.evaluate(WIDE_MATH)
    assert wide, "no display equation of chapter 4 is wider than a phone: test another page"
    assert all(b.count("gradient") >= 4 for b in wide), wide[:2]


# 7. Solution bars open on a tap and are named ------------------------------------------------

def test_a_tap_anywhere_on_a_solution_bar_opens_it(open_page):
    tab = open_page(CHAPTER, PHONE)
    bar = tab.locator(".solution.dropdown > .admonition-title").first
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    url = tab.url
    for x in (0.1, 0.5, 0.8):   # the words, the middle, near the chevron
        solution = bar.locator("xpath=..")
        closed = solution.evaluate("(s) => s.classList.contains('toggle-hidden')")
        tab.touchscreen.tap(box["x"] + x * box["width"], box["y"] + box["height"] / 2)
        tab.wait_for_timeout(300)
        assert tab.url == url, f"a tap at {x:.0%} of the bar followed a link"
        assert solution.evaluate("(s) => s.classList.contains('toggle-hidden')") != closed


def test_each_solution_toggle_has_its_own_name(open_page):
    tab = open_page(CHAPTER, DESKTOP)
    tab.wait_for_function("document.querySelector('.solution button.toggle-button')")
    tab.wait_for_timeout(100)
    names = tab.locator(".solution button.toggle-button").evaluate_all(
        "(bs) => bs.map((b) => b.getAttribute('aria-label'))")
    assert len(names) >= 2
    assert len(set(names)) == len(names), names
    assert all(n.startswith("Solution to Exercise") for n in names), names


# 8. Printed code is not cut -----------------------------------------------------------------

# A4 less Chromium's default margins (0.4 in each side), in CSS px: the narrower of A4 and
# Letter.
PRINT_WIDTH = round((210 / 25.4 - 0.8) * 96)
COLUMNS = 79   # the notebooks' code lines (tests/test_notebooks.py)
FITS = """([columns]) => [...document.querySelectorAll('.bd-article div.highlight > pre')]
  .filter((pre) => pre.getClientRects().length).map((pre) => {
    const s = getComputedStyle(pre);
    const probe = document.createElement('span');
    probe.style.fontFamily = s.fontFamily; probe.style.fontSize = s.fontSize;
    probe.style.whiteSpace = 'pre'; probe.style.position = 'absolute';
    probe.textContent = 'x'.repeat(columns);
    document.body.append(probe);
    const need = probe.getBoundingClientRect().width;
    probe.remove();
    const room = pre.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    return {need, room, cut: pre.scrollWidth > pre.clientWidth + 1,
            text: pre.textContent.slice(0, 40)};
  })"""


@pytest.mark.parametrize("page", ["notebooks/03_masking.html", "notebooks/07_memory_efficient.html"])
def test_printed_code_fits_79_columns_and_nothing_is_cut(open_page, page):
    tab = open_page(page, {"viewport": {"width": PRINT_WIDTH, "height": 1000}})
    tab.emulate_media(media="print")
    tab.evaluate("document.querySelectorAll('.admonition.toggle-hidden button.toggle-button')"
                 ".forEach((b) => b.click())")   # as the theme opens solutions to print
    blocks = tab.evaluate(FITS, [COLUMNS])
    assert len(blocks) > 10
    narrow = [b for b in blocks if b["need"] > b["room"] + 0.5 or b["cut"]]
    assert not narrow, narrow[:5]


# 4. Explorers on a phone and for a screen reader --------------------------------------------

EXPLORERS = {"hull": "notebooks/01_span.html", "masks": "notebooks/03_masking.html",
             "temperature": "notebooks/04_scaling.html",
             "online": "notebooks/07_memory_efficient.html",
             "training": "notebooks/09_training.html"}
DRAWN = """async (name) => {
  document.querySelector(`#explorer-${name}`).scrollIntoView();
  await window.courseExplorersReady;
  return true;
}"""
# The size each text of the chart is drawn at, in CSS px: its font size times the scale of
# the SVG (drawn at its viewBox's width, shown at its box's).
CHART_TEXT = """(name) => {
  const svg = document.querySelector(`#explorer-${name} .explorer-chart svg`);
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim())
    .map((t) => ({text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale}));
}"""


def drawn(open_page, name, screen=PHONE):
    tab = open_page(EXPLORERS[name], screen)
    tab.evaluate(DRAWN, name)
    return tab, tab.locator(f"#explorer-{name}")


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_explorer_text_is_at_least_11_px_on_a_phone(open_page, name):
    tab, _ = drawn(open_page, name)
    texts = tab.evaluate(CHART_TEXT, name)
    assert len(texts) > 5
    small = [t for t in texts if t["px"] < 11]
    assert not small, small[:5]
    assert tab.evaluate("document.documentElement.scrollWidth") <= PHONE["viewport"]["width"]


def test_the_masks_sliders_act_under_the_default_mask(open_page):
    tab, box = drawn(open_page, "masks")
    now = box.locator(".explorer-now")
    before = now.inner_text()
    assert before.startswith("causal mask")
    slider = box.get_by_role("slider", name="true length (padding)")
    slider.focus()
    for _ in range(4):   # from 4 to 0, as the chapter's prose asks
        tab.keyboard.press("ArrowLeft")
    tab.wait_for_function("(b) => b.querySelector('.explorer-now').textContent"
                          ".startsWith('padding mask, true length 0')", arg=box.element_handle(),
                          timeout=20_000)
    assert box.locator("select").input_value() == "padding"
    assert "keys each query may attend 0, 0, 0, 0, 0, 0" in now.inner_text()
    assert "row sums of the weights 0.00, 0.00" in now.inner_text()


@pytest.mark.parametrize("name", sorted(EXPLORERS))
def test_explorer_controls_are_named_without_their_value_and_say_it(open_page, name):
    tab, box = drawn(open_page, name)
    sliders = box.get_by_role("slider")
    assert sliders.count() >= 1
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        label = slider.get_attribute("aria-label")
        value = slider.input_value()
        name_before = slider.evaluate("(s) => s.getAttribute('aria-label')")
        assert label and value not in label.split(), (label, value)
        assert slider.get_attribute("aria-valuetext")
        slider.focus()
        tab.keyboard.press("End")
        tab.wait_for_timeout(200)
        assert slider.evaluate("(s) => s.getAttribute('aria-label')") == name_before
    live = box.locator(".explorer-now")
    assert live.get_attribute("aria-live") == "polite"
    assert live.inner_text().strip()
    chart = box.locator(".explorer-chart svg")
    assert chart.get_attribute("role") == "img"
    assert chart.get_attribute("aria-describedby") == live.get_attribute("id")


def test_the_temperature_slider_says_E_and_the_checkbox_is_a_24_px_target(open_page):
    tab, box = drawn(open_page, "temperature")
    slider = box.get_by_role("slider", name="log\u2082 E", exact=False)
    slider.focus()
    tab.keyboard.press("Home")
    tab.wait_for_timeout(200)
    assert slider.get_attribute("aria-valuetext") == "E = 2"
    assert box.locator(".explorer-now").inner_text().startswith("E = 2,")
    checkbox = box.get_by_role("checkbox").bounding_box()
    assert checkbox["width"] >= 24 and checkbox["height"] >= 24, checkbox


# 3. Figures sharp on a 2x display -----------------------------------------------------------

# The pixels of the file the browser chose (an <img> with a srcset reports its width
# divided by the candidate's density), and the width it is shown at.
FIGURES = """async () => Promise.all([...document.querySelectorAll('.bd-article .cell_output img')]
  .map(async (img) => {
    const file = new Image();
    file.src = img.currentSrc;
    await file.decode();
    return {src: img.currentSrc.split('/').pop(), natural: file.naturalWidth,
            shown: img.getBoundingClientRect().width, srcset: img.getAttribute('srcset') || ''};
  }))"""


@pytest.mark.parametrize("page", ["notebooks/01_span.html", "notebooks/04_scaling.html"])
def test_notebook_figures_have_a_2x_source_on_a_2x_display(open_page, page):
    tab = open_page(page, {**DESKTOP, "device_scale_factor": 2})
    tab.evaluate(LAY_OUT_ALL)
    tab.evaluate("""async () => { for (const img of document.querySelectorAll('.bd-article img')) {
        img.loading = 'eager'; await img.decode().catch(() => {}); } }""")
    figures = tab.evaluate(FIGURES)
    assert figures, "no figure"
    soft = [f for f in figures if f["natural"] < 1.9 * f["shown"] or " 2x" not in f["srcset"]]
    assert not soft, soft[:3]


def test_notebook_figures_load_their_1x_copy_on_a_1x_display(open_page):
    tab = open_page("notebooks/01_span.html", DESKTOP)
    tab.evaluate(LAY_OUT_ALL)
    tab.evaluate("""async () => { for (const img of document.querySelectorAll('.bd-article img')) {
        img.loading = 'eager'; await img.decode().catch(() => {}); } }""")
    figures = tab.evaluate(FIGURES)
    assert figures and all(f["src"].endswith("-1x.png") for f in figures), figures[:3]
    assert all(f["natural"] < 1.2 * f["shown"] + 1 for f in figures), figures[:3]


# 10. The theme's scripts run at the reader's first action, not at load (issue 39) ----------

THEME_SCRIPTS = ("bootstrap.js", "pydata-sphinx-theme.js", "sphinx-book-theme.js")
RAN = "() => typeof window.bootstrap !== 'undefined' || window.themeScriptsRan !== undefined"


@pytest.mark.parametrize("page, screen", [
    (CHAPTER, "phone"),
    # low in the sidebar: the sidebar scrolls to it, which is no reader action
    ("chapters/maintainers/page_speed.html", "desktop")])
def test_none_of_the_themes_scripts_runs_while_the_page_loads(open_page, page, screen):
    """_ext/theme_scripts.py: Bootstrap and the two themes' scripts are fetched, not run,
    until the reader acts; the page is not scrolled, pressed or hovered here."""
    tab = open_page(page, SCREENS[screen])
    tab.wait_for_load_state("networkidle")
    tab.wait_for_timeout(1500)
    assert not tab.evaluate(RAN)
    fetched = tab.evaluate("performance.getEntriesByType('resource').map((e) => e.name)")
    assert all(any(name in url for url in fetched) for name in THEME_SCRIPTS), fetched
    # no <script src> of the theme's in the page itself, and no preload of them
    html = tab.content()
    for name in THEME_SCRIPTS:
        assert f'src="../_static/scripts/{name}' not in html
        assert f'href="../_static/scripts/{name}' not in html


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_the_colour_theme_is_the_systems_before_any_script_of_the_theme_runs(
        open_page, scheme):
    tab = open_page(CHAPTER, PHONE, color_scheme=scheme)
    assert tab.evaluate("document.documentElement.dataset.theme") == scheme
    assert not tab.evaluate(RAN)
    other = "light" if scheme == "dark" else "dark"
    tab.emulate_media(color_scheme=other)   # the system changes: the page follows
    tab.wait_for_function(f"document.documentElement.dataset.theme === '{other}'",
                          timeout=20_000)


def test_the_first_press_runs_the_scripts_and_the_dark_mode_switch_works(open_page):
    tab = open_page(CHAPTER, DESKTOP, color_scheme="light")
    assert not tab.evaluate(RAN)
    tab.locator(".bd-header-article .theme-switch-button").locator("visible=true").click()
    tab.wait_for_function("document.documentElement.dataset.theme === 'dark'", timeout=20_000)
    assert tab.evaluate(RAN)
    assert tab.evaluate("localStorage.getItem('mode')") == "dark"


def test_the_download_menu_opens_on_the_first_press_before_the_scripts_have_arrived(
        browser, origin):
    """A click on a theme control that comes before the scripts' text is held, and
    replayed once they have run: here Bootstrap's text is held back until after the click."""
    context = browser.new_context(service_workers="block", **DESKTOP)
    try:
        tab = context.new_page()
        held = []
        tab.route("**/_static/scripts/bootstrap.js*", lambda route: held.append(route))
        tab.goto(f"{origin}/{CHAPTER}", wait_until="load", timeout=TIMEOUT_MS)
        tab.wait_for_function("performance.getEntriesByType('resource').some("
                              "(e) => e.name.includes('pydata-sphinx-theme.js'))")
        assert len(held) == 1 and not tab.evaluate(RAN)
        tab.locator('.bd-header-article button[aria-label="Download this page"]').click()
        assert tab.locator(".dropdown-menu.show").count() == 0   # held
        held[0].continue_()
        tab.wait_for_selector(".bd-header-article .dropdown-menu.show .dropdown-item",
                              timeout=10_000)
    finally:
        context.close()


def test_a_tooltip_shows_on_hover_once_the_mouse_has_moved(open_page):
    tab = open_page(CHAPTER, DESKTOP)
    button = tab.locator('.bd-header-article [data-bs-toggle="tooltip"]').locator(
        "visible=true").first
    button.hover()
    tab.wait_for_function(RAN, timeout=20_000)
    tab.mouse.move(0, 0)
    button.hover()
    tab.wait_for_selector(".tooltip", state="visible", timeout=20_000)


# 3. Less to lay out (issue 39) ---------------------------------------------------------------

NOTATION = "chapters/notation.html"
# Each part of the notation table, measured once it is laid out (scrolled into view): its
# columns' left edges, its header row's height and text, its top and bottom.
TABLE_PARTS = """async () => {
  const frame = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const parts = [];
  for (const part of document.querySelectorAll('.table-part')) {
    part.scrollIntoView();
    await frame();
    const box = part.getBoundingClientRect();
    parts.push({
      columns: [...part.querySelectorAll('tbody tr:first-child td')].map(
        (td) => Math.round(td.getBoundingClientRect().left)),
      header: part.querySelector('thead').getBoundingClientRect().height,
      headerText: part.querySelector('thead').textContent.trim().split(/\\s+/),
      top: box.top + window.scrollY, bottom: box.bottom + window.scrollY,
      scroller: part.parentElement.className,
    });
  }
  return parts;
}"""
LAID_OUT = ("(i) => document.querySelectorAll('.table-part')[i].querySelector('td')"
            ".checkVisibility({contentVisibilityAuto: true})")


@pytest.mark.parametrize("screen", ["phone", "desktop"])
def test_the_notation_table_in_parts_reads_as_one_table(open_page, screen):
    """_ext/table_parts.py: the parts' columns line up, they touch, the header shows once
    (every part keeps it for screen readers), and all of them sit in one scrolling box."""
    tab = open_page(NOTATION, SCREENS[screen])
    parts = tab.evaluate(TABLE_PARTS)
    assert len(parts) >= 4
    first = parts[0]
    assert first["header"] > 10 and first["headerText"] == ["symbol", "meaning", "shape"]
    for before, part in itertools.pairwise(parts):
        assert part["columns"] == first["columns"]
        assert part["header"] == 0 and part["headerText"] == first["headerText"]
        assert abs(part["top"] - before["bottom"]) < 0.5
    assert len({part["scroller"] for part in parts}) == 1
    assert "pst-scrollable-table-container" in first["scroller"]


def test_the_notation_table_scrolls_sideways_as_one_on_a_phone(open_page):
    tab = open_page(NOTATION, PHONE)
    box = tab.locator(".table-part").first.locator("xpath=..")
    assert box.evaluate("(el) => el.scrollWidth > el.clientWidth")
    left = "(el) => [...el.querySelectorAll('.table-part')].map((p) => p.getBoundingClientRect().left)"
    before = box.evaluate(left)
    box.evaluate("(el) => { el.scrollLeft = 60; }")
    after = box.evaluate(left)
    assert all(abs(b - a - 60) < 1 for a, b in zip(after, before)), (before, after)


def test_the_notation_tables_last_parts_are_not_laid_out_at_load(open_page):
    """The point of the parts: a phone lays out the rows on its screen, not all 50, at load
    and again as each of KaTeX's fonts arrives."""
    tab = open_page(NOTATION, PHONE)
    count = tab.locator(".table-part").count()
    assert tab.evaluate(LAID_OUT, 0)
    assert not tab.evaluate(LAID_OUT, count - 1)
