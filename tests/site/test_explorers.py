"""The explorers (issue 11) in Chromium: each control set to several values, by keyboard
or by filling it, and the data the chart then draws, read from its Vega view, equal to
the kernel evaluated here, in the test process, at the same settings (1e-6). Also: the
JavaScript comes from the site's own _static/, and only pages with an explorer load it;
the charts follow the dark theme; the explorer pages' extra weight stays within 400 KB
gzipped. Console errors, requests to other hosts and axe (light and dark) are checked on
every page, these included, by test_site.py.

Run with `make test-site` (or `SITE_DIR=... pytest tests/site/test_explorers.py`); the
site is served by site_server.py, as for the other site tests.
"""

import gzip
import math
import re
from pathlib import Path

import numpy as np
import pytest
from site_config import built_pages, site_dir

from lib import explorers as ex
from lib.attention import (causal_mask, memory_efficient_attention, padding_mask,
                           scaled_dot_product_attention, softmax)

EXPLORER_PAGES = {"hull": "notebooks/01_span.html", "masks": "notebooks/03_masking.html",
                  "temperature": "notebooks/04_scaling.html",
                  "online": "notebooks/07_memory_efficient.html",
                  "training": "notebooks/09_training.html"}
SCRIPTS = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "explorers.js")
MARKER = '<div class="explorer" '
SECTION = ".bd-article > section > section"   # what _ext/explorers.js watches
ATOL = 1e-6
KB = 1024
BUDGET = 400 * KB   # the README's promise: extra weight per explorer page, gzipped
TIMEOUT_MS = 60_000

# The data each mark draws, read from the view: the mark's dataset in the compiled Vega.
READ_MARKS = """async ([name, marks]) => {
  await window.courseExplorersReady;
  const {view, spec} = window.courseExplorers[name];
  await view.runAsync();
  const from = {};
  (function walk(ms) {
    for (const m of ms || []) { if (m.from && m.from.data) from[m.name] = m.from.data; walk(m.marks); }
  })(vegaLite.compile(spec).spec.marks);
  const out = {};
  for (const mark of marks) {
    if (!(mark in from)) throw new Error(`no mark ${mark} in ${Object.keys(from)}`);
    out[mark] = view.data(from[mark]).map((d) => ({...d}));
  }
  return out;
}"""
SIGNAL = "async ([name, signal]) => { await window.courseExplorersReady; " \
         "return window.courseExplorers[name].view.signal(signal); }"


def page_html(page):
    return (site_dir() / page).read_text(encoding="utf-8")


# ------------------------------------------------------------------ without a browser
@pytest.mark.parametrize("name", EXPLORER_PAGES)
def test_explorer_is_on_its_page(name):
    text = page_html(EXPLORER_PAGES[name])
    assert f'{MARKER}id="explorer-{name}"' in text, f"{EXPLORER_PAGES[name]} has no {name}"
    # the page itself loads only _ext/explorers.js, which fetches Vega when the reader
    # nears the explorer (test_vega_waits_until_the_reader_nears_the_explorer)
    scripts = re.findall(r'<script[^>]* src="[./]*_static/explorers/([^"?]+)', text)
    assert scripts == ["explorers.js"], scripts
    assert re.search(r'<script defer="defer" src="[./]*_static/explorers/explorers\.js', text)


def explorers_js():
    return (site_dir() / "_static" / "explorers" / "explorers.js").read_text(encoding="utf-8")


def test_the_script_fetches_the_packages_the_build_copies_in_their_order():
    """_ext/explorers.js names the three files it fetches; _ext/explorers.py copies them
    (PACKAGES, in the order Vega-Lite and Vega-Embed need)."""
    import importlib.util
    path = Path(__file__).resolve().parents[2] / "_ext" / "explorers.py"
    spec = importlib.util.spec_from_file_location("explorers_extension", path)
    extension = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extension)
    listed = re.search(r"const LIBRARIES = \[([^\]]*)\]", explorers_js())[1]
    assert re.findall(r'"([^"]+)"', listed) == [Path(p).name for _, p in extension.PACKAGES]


def test_no_page_without_an_explorer_loads_vega():
    loaders = []
    for page in built_pages():
        text = page_html(page)
        sources = re.findall(r'<script[^>]* src="([^"]+)"', text)
        vega = [s for s in sources if "vega" in s or "explorers" in s]
        if vega and MARKER not in text:
            loaders.append((page, vega))
        if MARKER in text:
            assert page in EXPLORER_PAGES.values(), f"unexpected explorer on {page}"
    assert not loaders, f"pages without an explorer load its JavaScript: {loaders}"
    for script in SCRIPTS:
        assert (site_dir() / "_static" / "explorers" / script).is_file(), script


# ------------------------------------------------------------------ in the browser
class Tab:
    """One explorer page in a fresh context, with its console errors and requests."""

    def __init__(self, browser, origin, page):
        self.errors, self.foreign, self.finished, self.failed = [], [], [], []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900},
                                           color_scheme="light", service_workers="block")

        def only_our_origin(route):
            if route.request.url.startswith(origin + "/"):
                route.continue_()
            else:
                self.foreign.append(route.request.url)
                route.abort("blockedbyclient")

        self.context.route("**/*", only_our_origin)
        self.tab = self.context.new_page()
        self.tab.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.tab.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        self.tab.on("requestfinished", lambda r: self.finished.append(r))
        self.tab.on("requestfailed", lambda r: self.failed.append(r.url))
        self.tab.goto(f"{origin}/{page}", wait_until="load", timeout=TIMEOUT_MS)
        self.tab.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
        self.tab.wait_for_function("window.courseExplorersReady !== undefined",
                                   timeout=TIMEOUT_MS)
        # what the page loaded before the reader scrolled: not Vega (_ext/explorers.js
        # fetches it when an explorer nears the screen)
        self.at_load = [r.url for r in self.finished]
        self.drawn_at_load = self.tab.evaluate("Object.keys(window.courseExplorers)")
        # _ext/explorers.js watches the explorer's section of the article
        self.section_top_at_load = self.tab.evaluate(
            f"document.querySelector('div.explorer').closest('{SECTION}')"
            ".getBoundingClientRect().top")
        scroll_to(self.tab.locator("div.explorer").first)
        # drawn (within TIMEOUT_MS, not an endless wait): the scripts' requests are done
        self.tab.wait_for_function("document.querySelectorAll('div.explorer').length === "
                                   "Object.keys(window.courseExplorers).length",
                                   timeout=TIMEOUT_MS)


@pytest.fixture(scope="module")
def tabs(browser, origin):
    opened = {name: Tab(browser, origin, page) for name, page in EXPLORER_PAGES.items()}
    yield opened
    for t in opened.values():
        t.context.close()


def scroll_to(locator):
    """Bring an element on screen as a link to it or the reader's scrolling does. (Not
    Playwright's scroll_into_view_if_needed: it scrolls to where the element would be but
    does not make the browser lay out a section it has skipped so far, content-visibility
    in _static/site.css, so the element stays unpainted and its explorer is never drawn.)"""
    locator.evaluate("el => el.scrollIntoView({block: 'center'})")


def box(tabs, name):
    # scrolled into view, as a reader would before using it
    b = tabs[name].tab.locator(f"#explorer-{name}")
    scroll_to(b)
    return b


def control(tabs, name, label, role="slider"):
    """A control of the explorer, found as a reader's assistive technology finds it: by
    its role and its label."""
    return box(tabs, name).locator(".vega-bindings").get_by_role(role, name=label)


def read(tabs, name, *marks):
    return tabs[name].tab.evaluate(READ_MARKS, [name, list(marks)])


def signal(tabs, name, sig):
    return tabs[name].tab.evaluate(SIGNAL, [name, sig])


def set_range_by_keyboard(locator, steps_from_min):
    locator.focus()
    locator.press("Home")
    for _ in range(steps_from_min):
        locator.press("ArrowRight")


@pytest.mark.parametrize("name", EXPLORER_PAGES)
def test_explorer_draws_from_the_sites_own_files(tabs, name):
    t = tabs[name]
    assert not t.errors, t.errors
    assert not t.foreign, t.foreign
    assert not t.failed, t.failed
    urls = [r.url for r in t.finished]
    for script in SCRIPTS:
        assert any(u.split("?")[0].endswith(f"/_static/explorers/{script}") for u in urls), script
    b = box(tabs, name)
    assert "explorer-ready" in b.get_attribute("class")
    assert not b.locator(".explorer-fallback").is_visible()
    # the text alternative: the chart (Vega's graphics document) is named by the
    # explorer's description, which is also shown above it
    shown = b.locator(".explorer-description")
    assert shown.is_visible()
    description = shown.text_content().strip()
    assert len(description) > 60
    chart = b.locator(".explorer-chart")
    assert chart.get_attribute("role") == "graphics-document"
    assert chart.get_attribute("aria-label") == description
    assert b.locator(".explorer-chart svg").count() == 1
    # every control is a native input or select with a visible label
    controls = b.locator(".vega-bindings input, .vega-bindings select")
    assert controls.count() >= 1
    for i in range(controls.count()):
        label = controls.nth(i).evaluate(
            "el => el.labels.length ? el.labels[0].querySelector('.vega-bind-name').textContent : ''")
        assert label.strip(), f"control {i} of {name} has no label"


@pytest.mark.parametrize("name", EXPLORER_PAGES)
def test_vega_waits_until_the_reader_nears_the_explorer(tabs, name):
    """While the page loads, Vega is neither fetched nor run (it is the longest task a phone
    would run on these pages); it comes when the explorer is within LOOKAHEAD of the
    screen (_ext/explorers.js), and each explorer sits further down than that."""
    t = tabs[name]
    lookahead = int(re.search(r'LOOKAHEAD = "(\d+)px', explorers_js()).group(1))
    assert t.section_top_at_load > 900 + lookahead, (name, t.section_top_at_load)
    fetched = [u for u in t.at_load if "/_static/explorers/vega" in u]
    assert not fetched, fetched
    assert t.drawn_at_load == []
    # (an incremental build adds ?v=<checksum> to a page it rewrites)
    assert any(u.split("?")[0].endswith("/_static/explorers/explorers.js") for u in t.at_load)


TEMPERATURE_SETTINGS = [  # (log2 E, divide by sqrt(E), temperature)
    (1, True, 1.0), (6, True, 0.3), (6, False, 0.3), (10, False, 4.0), (10, True, 2.5),
    (3, False, 0.1)]


@pytest.mark.parametrize("k, divide, T", TEMPERATURE_SETTINGS)
def test_temperature_explorer_shows_the_kernels_weights(tabs, k, divide, T):
    set_range_by_keyboard(control(tabs, "temperature", "log\u2082 E"), k - 1)
    control(tabs, "temperature", "divide the scores", "checkbox").set_checked(divide)
    control(tabs, "temperature", "temperature T").fill(str(T))
    assert (signal(tabs, "temperature", "log2E"), signal(tabs, "temperature", "divide"),
            signal(tabs, "temperature", "T")) == (k, divide, T)
    data = read(tabs, "temperature", "weights_marks", "numbers_layer_0_marks")

    E = 2 ** k
    query, key = ex.temperature_inputs(E)
    expected = softmax((key @ query[0]) * (1 / math.sqrt(E) if divide else 1.0) / T)
    bars = sorted(data["weights_marks"], key=lambda d: d["key"])
    assert [d["key"] for d in bars] == list(range(len(expected)))
    np.testing.assert_allclose([d["weight"] for d in bars], expected, atol=ATOL, rtol=0)
    (row,) = data["numbers_layer_0_marks"]
    assert row["E"] == E and row["T"] == T
    assert abs(row["max"] - expected.max()) <= ATOL
    assert abs(row["H"] + (expected * np.log(expected)).sum()) <= ATOL
    assert row["line1"] == f"largest weight {expected.max():.4f}"


MASK_SETTINGS = [("none", None), ("causal", None), ("padding", 0), ("padding", 3),
                 ("padding", 6), ("window", 1), ("window", 2), ("window", 5)]
MASK_LABELS = dict(zip(ex.MASK_MODES, ex.MASK_MODE_LABELS))


@pytest.mark.parametrize("mode, p", MASK_SETTINGS)
def test_mask_explorer_shows_the_kernels_weights(tabs, mode, p):
    control(tabs, "masks", "mask", "combobox").select_option(label=MASK_LABELS[mode])
    if mode == "padding":
        control(tabs, "masks", "true length").fill(str(p))
    if mode == "window":
        set_range_by_keyboard(control(tabs, "masks", "window width"), p - 1)
    data = read(tabs, "masks", "mask_panel_layer_0_marks", "weights_panel_layer_0_marks",
                "sums_panel_marks")

    L, S = ex.MASK_L, ex.MASK_S
    if mode == "none":
        mask = np.ones((L, S), dtype=bool)
    elif mode == "causal":
        mask = causal_mask(L, S)
    elif mode == "padding":
        mask = np.repeat(padding_mask(np.array([p]), S), L, axis=0)
    else:
        i, j = np.indices((L, S))
        mask = (j <= i) & (j > i - p)
    query, key, value = ex.mask_inputs()
    _, expected = scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                               return_weights=True)
    shown_mask = np.zeros((L, S), dtype=bool)
    for d in data["mask_panel_layer_0_marks"]:
        shown_mask[d["i"], d["j"]] = d["m"]
    assert len(data["mask_panel_layer_0_marks"]) == L * S
    assert np.array_equal(shown_mask, mask)
    shown = np.full((L, S), np.nan)
    for d in data["weights_panel_layer_0_marks"]:
        shown[d["i"], d["j"]] = d["w"]
    np.testing.assert_allclose(shown, expected, atol=ATOL, rtol=0)
    sums = {d["i"]: d["sum"] for d in data["sums_panel_marks"]}
    np.testing.assert_allclose([sums[i] for i in range(L)], expected.sum(axis=1), atol=ATOL)
    if mode == "padding" and p == 0:   # every row fully masked: zeros, as the kernel returns
        assert np.all(shown == 0) and all(s == 0 for s in sums.values())


HULL_SETTINGS = [(0, 0.0), (90, 4.0), (225, 16.0), (345, 2.5), (120, 0.5)]


@pytest.mark.parametrize("angle, length", HULL_SETTINGS)
def test_hull_explorer_shows_the_kernels_output(tabs, angle, length):
    set_range_by_keyboard(control(tabs, "hull", "query direction"), angle // 15)
    control(tabs, "hull", "query length").fill(f"{length:g}")
    data = read(tabs, "hull", "output_marks", "barycentric_layer_0_marks", "path_marks")

    key, value = ex.hull_inputs()
    theta = math.radians(angle)
    query = length * np.array([[math.cos(theta), math.sin(theta)]])
    out, w = scaled_dot_product_attention(query, key, value, return_weights=True)
    (point,) = data["output_marks"]
    np.testing.assert_allclose([point["x"], point["y"]], out[0], atol=ATOL, rtol=0)
    bars = sorted(data["barycentric_layer_0_marks"], key=lambda d: d["n"])
    np.testing.assert_allclose([d["weight"] for d in bars], w[0], atol=ATOL, rtol=0)
    # the dashed path: the outputs of this direction for every length
    assert sorted(d["r"] for d in data["path_marks"]) == list(ex.HULL_LENGTHS)
    assert all(d["a"] == angle for d in data["path_marks"])


@pytest.mark.parametrize("blocks", [1, 2, 3, 4])
def test_online_explorer_steps_to_the_kernels_output(tabs, blocks):
    set_range_by_keyboard(control(tabs, "online", "key blocks processed"), blocks - 1)
    data = read(tabs, "online", "running_max_marks", "state_numbers_layer_0_marks",
                "output_layer_0_marks", "output_layer_1_marks", "scores_layer_0_marks")

    query, key, value, B = ex.online_inputs()
    n = blocks * B
    z = (query @ key.T)[0] / math.sqrt(query.shape[1])
    out, lse = memory_efficient_attention(query, key[:n], value[:n], block_size=B,
                                          return_lse=True)
    m = z[:n].max()
    (rule,) = data["running_max_marks"]
    assert abs(rule["m"] - m) <= ATOL
    (state,) = data["state_numbers_layer_0_marks"]
    assert state["b"] == blocks
    assert abs(state["ell"] - math.exp(lse[0] - m)) <= ATOL
    bars = sorted(data["output_layer_0_marks"], key=lambda d: d["feature"])
    np.testing.assert_allclose([d["value"] for d in bars], out[0], atol=ATOL, rtol=0)
    ticks = sorted(data["output_layer_1_marks"], key=lambda d: d["feature"])
    kernel = scaled_dot_product_attention(query, key, value)[0]
    np.testing.assert_allclose([d["value"] for d in ticks], kernel, atol=ATOL, rtol=0)
    if blocks == len(z) // B:   # the last step is the kernel's output
        np.testing.assert_allclose([d["value"] for d in bars], kernel, atol=ATOL, rtol=0)
    status = {d["j"]: d["key block"] for d in data["scores_layer_0_marks"]}
    assert [j for j in status if status[j] == "this block"] == list(range(n - B, n))


@pytest.mark.parametrize("name", EXPLORER_PAGES)
def test_every_slider_answers_the_keyboard(tabs, name):
    sliders = box(tabs, name).locator(".vega-bindings input[type=range]")
    assert sliders.count() >= 1
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        slider.focus()
        slider.press("Home")
        low = slider.input_value()
        slider.press("ArrowRight")
        assert float(slider.input_value()) > float(low)
        bound = slider.evaluate("el => el.name")
        tabs[name].tab.evaluate("window.courseExplorersReady")
        assert signal(tabs, name, bound) == pytest.approx(float(slider.input_value()))


@pytest.mark.parametrize("name", EXPLORER_PAGES)
def test_chart_follows_the_dark_theme(tabs, name):
    t = tabs[name]
    axis_label = f"#explorer-{name} svg .role-axis-label text"
    light = t.tab.locator(axis_label).first.get_attribute("fill")
    try:
        t.tab.emulate_media(color_scheme="dark")
        t.tab.wait_for_function("document.documentElement.dataset.theme === 'dark'",
                                timeout=TIMEOUT_MS)
        t.tab.wait_for_function(
            f"window.courseExplorers['{name}'].view.signal('dark') === true", timeout=TIMEOUT_MS)
        t.tab.evaluate(f"window.courseExplorers['{name}'].view.runAsync().then(() => true)")
        dark = t.tab.locator(axis_label).first.get_attribute("fill")
    finally:
        t.tab.emulate_media(color_scheme="light")
    assert light == "#1f1f1f" and dark == "#e6e6e6", (light, dark)
    assert not t.errors, t.errors


def test_explorer_pages_extra_weight_is_within_budget(tabs, capsys):
    """JavaScript and CSS as transferred (gzip) plus the explorer's HTML with its data,
    gzipped: at most 400 KB per page (the README states the measured values)."""
    report = []
    for name, t in tabs.items():
        assets = 0
        for request in t.finished:
            if "/_static/explorers/" in request.url:
                sizes = request.sizes()
                assets += sizes["responseBodySize"] + sizes["responseHeadersSize"]
        html = box(tabs, name).evaluate("el => el.outerHTML").encode()
        data = len(gzip.compress(html, 6))
        report.append((name, assets, data))
        assert assets + data <= BUDGET, (name, assets, data)
    with capsys.disabled():
        for name, assets, data in report:
            print(f"\n  explorer {name:12} {EXPLORER_PAGES[name]:38} JavaScript+CSS "
                  f"{assets / KB:6.1f} KB + explorer HTML and data {data / KB:5.1f} KB "
                  f"= {(assets + data) / KB:6.1f} KB gzip", end="")


@pytest.mark.parametrize("name", EXPLORER_PAGES)
def test_chart_fits_a_phone_screen(browser, origin, name):
    """On a phone the whole chart is in view, scaled down to the column (_ext/explorers.css),
    not cut off at the right edge."""
    context = browser.new_context(viewport={"width": 412, "height": 823})
    try:
        tab = context.new_page()
        tab.goto(f"{origin}/{EXPLORER_PAGES[name]}", wait_until="load", timeout=TIMEOUT_MS)
        b = tab.locator(f"#explorer-{name}")
        scroll_to(b)
        tab.wait_for_function(f"'{name}' in window.courseExplorers", timeout=TIMEOUT_MS)
        chart = b.locator(".explorer-chart")
        fits = chart.evaluate("""c => ({svg: c.querySelector('svg').getBoundingClientRect().width,
                                         column: c.clientWidth, scroll: c.scrollWidth})""")
        assert fits["svg"] <= fits["column"] + 1 and fits["scroll"] <= fits["column"] + 1, fits
    finally:
        context.close()
