"""Visits of the built site's pages, recording everything tests/site/ checks.

Each page is loaded in a fresh browser context (an empty cache, as for a first-time
reader) with the light colour scheme; MathJax is waited for, the page is inspected,
axe-core checks it, a screenshot is taken (of the whole page with SITE_FULL_SCREENSHOTS=1);
then the colour scheme is switched to dark, and axe's colour-contrast rule and a screenshot
are run again. Pages are visited two
at a time (SITE_TEST_WORKERS), each in its own renderer process, since axe's colour
contrast check takes most of the time.

Accessibility beyond axe (issue 48), in the same visits (no page is loaded twice): every
formula's spoken text (the aria-label _ext/katex_math.py writes on its <math>) and the name
Chromium's accessibility tree gives the first formula; a second engine, HTML_CodeSniffer
(WCAG2AA, from node_modules/html_codesniffer), in light and dark at 1280 px (and in light at
390 px with SITE_A11Y_NARROW=1: the same tab, resized); and two WCAG 2.2 criteria no engine tests, at both widths:
2.5.8 target size (TARGET_SIZE) and 2.4.11 focus not obscured (FOCUS_NOT_OBSCURED).

No request leaves 127.0.0.1: every request to another origin is recorded and aborted
before it is sent. Launch buttons are links, and no link is followed.
"""

import asyncio
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from playwright.async_api import async_playwright

AXE = Axe()
# preload: false keeps axe from fetching the stylesheets itself (it resolves their
# @imports against the page, not the stylesheet, and asks for a /basic.css that does not
# exist); the one rule that needs them, css-orientation-lock, then reports incomplete.
AXE_ALL = {"resultTypes": ["violations"], "preload": False}
AXE_CONTRAST = {"runOnly": {"type": "rule", "values": ["color-contrast"]},
                "resultTypes": ["violations"], "preload": False}
BLOCKING = ("serious", "critical")
TIMEOUT_MS = 60_000
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]

WAIT_FOR_MATHJAX = """async () => {
  // MathJax is loaded with `defer`; its startup promise settles once the page is typeset.
  for (let i = 0; i < 800 && window.MathJax && !(MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 25));
  if (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) return false;
  await MathJax.startup.promise;
  return true;
}"""

# TeX a reader would see as text: a backslash command or a `$` in any text on the page that
# is not typeset math, code or an output (link text, headings, the sidebar and the
# bibliography included). Runs after MathJax has typeset the page.
RAW_TEX = r"""() => {
  const skip = 'mjx-container, .katex, math, pre, code, kbd, samp, script, style, textarea, '
             + '.cell_output, .output, .highlight, [aria-hidden="true"]';
  const pattern = /\\[A-Za-z]+|\$/;
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip)) continue;
    const text = node.textContent;
    const m = text.match(pattern);
    if (m) {
      const at = Math.max(0, m.index - 40);
      found.push(text.slice(at, m.index + 40).replace(/\s+/g, ' ').trim());
    }
  }
  return found;
}"""

# On a page with an explorer (_ext/explorers.js), its charts are drawn before the checks:
# each is drawn when it nears the screen, so the visit scrolls to each as a reader would,
# waits for them all, and returns to the top.
WAIT_FOR_EXPLORERS = """async () => {
  if (!window.courseExplorersReady) return true;
  for (const box of document.querySelectorAll('div.explorer')) box.scrollIntoView();
  const late = new Promise((_, fail) => setTimeout(
    () => fail(new Error('explorers not drawn within 60 s')), 60000));
  await Promise.race([window.courseExplorersReady, late]);
  window.scrollTo(0, 0);
  return true;
}"""

HTMLCS_JS = Path(__file__).resolve().parents[2] / "node_modules" / "html_codesniffer" / "build" / "HTMLCS.js"
NARROW = {"width": 390, "height": 844}
# HTML_CodeSniffer at 390 px too (its rules barely depend on the width; about 1 s a page on
# 2 busy cores): SITE_A11Y_NARROW=1. Target size and focus are checked at 390 px always.
HTMLCS_NARROW = os.environ.get("SITE_A11Y_NARROW") == "1"
# The light screenshot of the whole page (SITE_FULL_SCREENSHOTS=1), to look at; by default
# the first screen only, as the dark one: painting a whole chapter was 12 % of the visits.
FULL_SCREENSHOTS = os.environ.get("SITE_FULL_SCREENSHOTS") == "1"

# HTML_CodeSniffer's WCAG2AA errors (its warnings and notices ask a person to judge). An
# accepted exception is listed here with its reason, and argued on chapters/accessibility.md.
HTMLCS_ACCEPTED: dict = {
    # "This form does not contain a submit button" (technique H32, under 3.2.2 On Input):
    # the theme's search box (it opens the search page when Enter is pressed, the user's
    # explicit request) and the explorers' controls (Vega's bindings: a slider or a choice
    # redraws the chart beside it, no change of context, and there is nothing to submit).
    # Neither changes the context on input, which is what 3.2.2 asks.
    "WCAG2AA.Principle3.Guideline3_2.3_2_2.H32.2": "forms that change no context on input",
}
RUN_HTMLCS = """(accepted) => new Promise((resolve) => {
  const describe = (el) => {
    if (!el || !el.tagName) return String(el && el.nodeName);
    let d = el.tagName.toLowerCase();
    if (el.id) d += '#' + el.id;
    else if (el.classList && el.classList.length) d += '.' + [...el.classList].slice(0, 2).join('.');
    return d + ' ' + (el.textContent || '').trim().slice(0, 40);
  };
  HTMLCS.process('WCAG2AA', document, () => {
    resolve(HTMLCS.getMessages()
      .filter(m => m.type === HTMLCS.ERROR && !accepted.includes(m.code))
      .map(m => ({code: m.code, msg: m.msg.slice(0, 200), element: describe(m.element)})));
  }, () => resolve([{code: 'HTMLCS failed to run', msg: '', element: ''}]), 'en');
})"""

# Spoken math: every typeset formula's <math> carries the English the Speech Rule Engine
# made for it at build time (_ext/katex_math.py).
MATH_SPEECH = """() => {
  const maths = [...document.querySelectorAll('.katex math')];
  return {
    count: maths.length,
    without: maths.filter(m => !(m.getAttribute('aria-label') || '').trim())
                  .map(m => m.textContent.trim().slice(0, 80)),
    labels: maths.map(m => m.getAttribute('aria-label') || ''),
    // the first formula of the article (the sidebar's chapter titles come first otherwise)
    first: (() => { const m = document.querySelector('article .katex math') || maths[0];
                    return m ? m.getAttribute('aria-label') || '' : null; })(),
  };
}"""

# The controls a pointer can hit. WCAG 2.5.8 (target size, minimum): each at least 24 x 24
# CSS px, or, if smaller, a 24 px circle centred on it meets no other target (nor another
# small target's circle); a link inside a line of text is exempt (its size is the text's).
CONTROLS = ('a[href], button, input:not([type="hidden"]), select, textarea, summary, '
            + '[role="button"], [role="tab"], [role="menuitem"], label[for]')
TARGET_SIZE = """(controls) => {
  const seen = (el) => {
    const style = getComputedStyle(el);
    if (style.visibility !== 'visible' || el.closest('[aria-hidden="true"], [inert]')) return false;
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1;      // not a visually hidden skip link, not folded away
  };
  const inText = (el) => {
    if (el.tagName !== 'A' || getComputedStyle(el).display !== 'inline') return false;
    const block = el.parentElement.closest('p, li, dd, td, th, figcaption, .admonition');
    return block && (block.textContent || '').trim().length > (el.textContent || '').trim().length + 2;
  };
  const targets = [...document.querySelectorAll(controls)].filter(seen)
    .filter(el => !(el.tagName === 'LABEL' && document.getElementById(el.htmlFor) === null))
    .map(el => ({el, r: el.getBoundingClientRect()}));
  // a control inside another counted control is one target (a label around its input)
  const outer = targets.filter(t => !targets.some(o => o !== t && o.el.contains(t.el) && o.el !== t.el));
  const centre = (r) => [r.left + r.width / 2 + scrollX, r.top + r.height / 2 + scrollY];
  const dist = (p, r) => {
    const left = r.left + scrollX, top = r.top + scrollY;
    const dx = Math.max(left - p[0], 0, p[0] - (left + r.width));
    const dy = Math.max(top - p[1], 0, p[1] - (top + r.height));
    return Math.hypot(dx, dy);
  };
  const small = outer.filter(t => (t.r.width < 23.95 || t.r.height < 23.95) && !inText(t.el));
  const bad = [];
  for (const t of small) {
    const c = centre(t.r);
    const crowded = outer.some(o => o !== t && !o.el.contains(t.el) && !t.el.contains(o.el) && (
      small.includes(o) ? Math.hypot(...centre(o.r).map((v, i) => v - c[i])) < 24
                        : dist(c, o.r) < 12));
    if (crowded) {
      let d = t.el.tagName.toLowerCase();
      if (t.el.id) d += '#' + t.el.id; else if (t.el.className && typeof t.el.className === 'string')
        d += '.' + t.el.className.trim().split(/\\s+/).slice(0, 2).join('.');
      bad.push(`${d} "${(t.el.getAttribute('aria-label') || t.el.textContent || '').trim().slice(0, 30)}" `
               + `${t.r.width.toFixed(1)}x${t.r.height.toFixed(1)}`);
    }
  }
  return {checked: outer.length, small: small.length, bad};
}"""

# WCAG 2.4.11 (focus not obscured): each element the keyboard reaches, focused in tab order,
# is in the window (wholly, when it fits in it) and no fixed or sticky part of the page (the
# header) is drawn over it at its corners or centre (over the middle of its shown part, when
# it is taller than the window). focus() scrolls as Tab does; scrolling,
# transitions and animations are made instant for the check.
FOCUS_NOT_OBSCURED = """async () => {
  const style = document.createElement('style');
  style.textContent = '*, *::before, *::after { scroll-behavior: auto !important; '
                    + 'transition: none !important; animation: none !important; }';
  document.head.appendChild(style);
  const pinned = (node) => {
    for (let e = node; e && e !== document.documentElement; e = e.parentElement) {
      const p = getComputedStyle(e).position;
      if (p === 'fixed' || p === 'sticky') return e;
    }
    return null;
  };
  const candidates = [...document.querySelectorAll(
      'a[href], button, input:not([type="hidden"]), select, textarea, summary, [tabindex]')]
    .filter(el => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0
                  && getComputedStyle(el).visibility === 'visible');
  const ordered = [...candidates.filter(el => el.tabIndex > 0).sort((a, b) => a.tabIndex - b.tabIndex),
                   ...candidates.filter(el => el.tabIndex === 0)];
  const bad = [];
  let checked = 0;
  const problemOf = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return null;
    // what fits below the sticky header (and the scroll padding that keeps focus clear of it);
    // 2 px of slack: a border's pixel cut by rounding hides nothing
    const fits = r.height <= innerHeight - 100;
    if (r.bottom <= 0 || r.top >= innerHeight || (fits && (r.top < -2 || r.bottom > innerHeight + 2)))
      return `outside the window (${Math.round(r.top)} to ${Math.round(r.bottom)} px of ${innerHeight})`;
    const mine = pinned(el);
    const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, innerHeight);
    const left = Math.max(r.left, 0), right = Math.min(r.right, innerWidth);
    // an element taller than the window (a long table that scrolls sideways) cannot be
    // wholly in view: the middle of what is shown must not be covered (2.4.11 asks that it
    // be not entirely hidden)
    const middle = [(left + right) / 2, (top + bottom) / 2];
    const points = !fits ? [middle] : [[left + 1, top + 1], [right - 1, top + 1],
                                       [left + 1, bottom - 1], [right - 1, bottom - 1], middle];
    for (const [x, y] of points) {
      if (x < 0 || x >= innerWidth) continue;      // scrolled sideways in a wide block
      for (const hit of document.elementsFromPoint(x, y)) {
        if (hit === el || el.contains(hit)) break;   // the rest is drawn below it
        if (hit.contains(el)) continue;
        const over = pinned(hit);
        if (over && over !== mine && !over.contains(el)) {
          const cls = typeof over.className === 'string' ? over.className.trim().split(/\\s+/)[0] : '';
          return `under ${over.tagName.toLowerCase()}${cls ? '.' + cls : ''}`;
        }
      }
    }
    return null;
  };
  const settled = () => new Promise(r => setTimeout(r, 300));
  for (const el of ordered) {
    el.focus();
    if (document.activeElement !== el) continue;
    checked++;
    let problem = problemOf(el);
    // sections drawn as they near the window (content-visibility) can move the page just
    // after the scroll: measured again once the page has settled, as a reader sees it
    if (problem) { await settled(); problem = problemOf(el); }
    if (problem) {
      const name = (el.getAttribute('aria-label') || el.textContent || el.getAttribute('href') || '').trim();
      bad.push(`${el.tagName.toLowerCase()} "${name.slice(0, 40)}" ${problem}`);
    }
  }
  document.activeElement && document.activeElement.blur();
  style.remove();
  window.scrollTo(0, 0);
  return {checked, bad};
}"""


async def first_math_name(context, tab) -> str | None:
    """The name Chromium's accessibility tree gives the article's first formula (the page's,
    when the article has none): what a screen reader speaks; None on a page without math."""
    # a section far from the window is not drawn (content-visibility in _static/site.css),
    # and Chromium computes no name for what it has not drawn: the formula is brought into
    # the window first, as a screen reader's cursor brings it
    await tab.evaluate("""() => {
      const m = document.querySelector('article .katex math') || document.querySelector('.katex math');
      if (m) m.scrollIntoView({block: 'center'});
    }""")
    await tab.wait_for_timeout(100)
    cdp = await context.new_cdp_session(tab)
    try:
        document = await cdp.send("DOM.getDocument", {"depth": 0})
        for selector in ("article .katex math", ".katex math"):
            found = await cdp.send("DOM.querySelector", {"nodeId": document["root"]["nodeId"],
                                                         "selector": selector})
            if found.get("nodeId"):
                break
        else:
            return None
        tree = await cdp.send("Accessibility.getPartialAXTree",
                              {"nodeId": found["nodeId"], "fetchRelatives": False})
        for node in tree["nodes"]:
            if not node.get("ignored"):
                return (node.get("name") or {}).get("value", "")
        return ""
    finally:
        await cdp.detach()
        await tab.evaluate("window.scrollTo(0, 0)")


async def run_htmlcs(tab) -> list:
    if not await tab.evaluate("() => typeof HTMLCS !== 'undefined'"):
        await tab.add_script_tag(content=HTMLCS_JS.read_text(encoding="utf-8"))
    return await tab.evaluate(RUN_HTMLCS, list(HTMLCS_ACCEPTED))


SHOW_EVERY_SECTION = ".bd-article section { content-visibility: visible !important; }"

INSPECT = """() => {
  const rawTex = """ + RAW_TEX + """;
  const maths = [...document.querySelectorAll('span.math, div.math')];
  return {
    math: maths.length,
    // Typeset: by MathJax in the browser, or by KaTeX at build time (_ext/katex_math.py),
    // whose output must carry MathML for screen readers.
    untypeset: maths.filter(m => !m.querySelector('mjx-container, .katex math'))
                    .map(m => m.textContent.trim().slice(0, 80)),
    merrors: [...document.querySelectorAll('mjx-merror, .katex-error, .math-error')]
               .map(m => m.textContent.slice(0, 80)),
    containers: document.querySelectorAll('mjx-container, .katex').length,
    images: [...document.images].map(i => ({src: i.getAttribute('src') || '',
                                            alt: (i.getAttribute('alt') || '').trim()})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    title: document.title,
    rawTex: rawTex(),
  };
}"""


@dataclass
class Visit:
    page: str
    url: str = ""
    title: str = ""
    console_errors: list = field(default_factory=list)
    console_warnings: list = field(default_factory=list)
    failed_requests: list = field(default_factory=list)
    third_party_requests: list = field(default_factory=list)
    requests: int = 0
    transferred_bytes: int = 0      # what the browser received: headers + (gzipped) bodies
    uncompressed_bytes: int = 0     # the same files' sizes on disk
    mathjax_loaded: bool = False
    math_elements: int = 0
    mjx_containers: int = 0
    math_untypeset: list = field(default_factory=list)
    math_errors: list = field(default_factory=list)
    raw_tex: list = field(default_factory=list)     # TeX shown as text (see RAW_TEX)
    images: int = 0
    images_without_alt: list = field(default_factory=list)
    links: list = field(default_factory=list)
    axe_light: list = field(default_factory=list)    # serious and critical violations
    axe_dark: list = field(default_factory=list)     # serious and critical, colour contrast
    axe_minor_moderate: list = field(default_factory=list)
    math_without_speech: list = field(default_factory=list)
    math_speech: list = field(default_factory=list)    # every formula's aria-label
    math_first_speech: str | None = None   # the article's first formula's aria-label
    math_ax_name: str | None = None   # the accessibility tree's name for that formula
    htmlcs_light: list = field(default_factory=list)   # HTML_CodeSniffer WCAG2AA errors
    htmlcs_dark: list = field(default_factory=list)
    htmlcs_narrow: list = field(default_factory=list)  # light, 390 px (HTMLCS_NARROW)
    targets_checked: int = 0
    small_targets: list = field(default_factory=list)  # under 24 px and crowded (2.5.8)
    focus_checked: int = 0
    focus_obscured: list = field(default_factory=list)  # 2.4.11, at 1280 and 390 px
    screenshots: list = field(default_factory=list)
    seconds: float = 0.0
    timings: dict = field(default_factory=dict)     # seconds per step, to see where time goes

    def summary(self) -> dict:
        out = asdict(self)
        out.pop("links")
        out.pop("math_speech")
        return out


def _violations(results, impacts):
    return [
        {"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": len(v["nodes"]),
         "targets": [n["target"] for n in v["nodes"][:3]]}
        for v in results.response["violations"] if v["impact"] in impacts
    ]


def _file_size(site_root: Path, url: str) -> int:
    path = unquote(urlsplit(url).path).lstrip("/")
    file = site_root / path
    if file.is_dir():
        file = file / "index.html"
    return file.stat().st_size if file.is_file() else 0


async def _new_tab(browser, origin, v: Visit):
    """A fresh context and tab that record console messages and requests into `v`."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900},
                                        color_scheme="light", service_workers="block")

    async def only_our_origin(route):
        url = route.request.url
        if url.startswith(origin + "/") or url == origin:
            await route.continue_()
        else:
            v.third_party_requests.append(url)
            await route.abort("blockedbyclient")

    await context.route("**/*", only_our_origin)
    tab = await context.new_page()
    finished = []

    def on_console(msg):
        if msg.type == "error":
            v.console_errors.append(f"{msg.text} ({msg.location.get('url', '')})")
        elif msg.type == "warning":
            v.console_warnings.append(msg.text)

    def on_failed(request):
        if request.url not in v.third_party_requests:
            v.failed_requests.append(f"{request.url}: {request.failure}")

    def on_response(response):
        if response.status >= 400:
            v.failed_requests.append(f"{response.url}: HTTP {response.status}")

    tab.on("console", on_console)
    tab.on("pageerror", lambda err: v.console_errors.append(f"uncaught: {err}"))
    tab.on("requestfinished", lambda request: finished.append(request))
    tab.on("requestfailed", on_failed)
    tab.on("response", on_response)
    return context, tab, finished


async def visit_page(browser, origin: str, page: str, shots: Path, site_root: Path) -> Visit:
    v = Visit(page=page)
    start = last = time.monotonic()

    def lap(step):
        nonlocal last
        now = time.monotonic()
        v.timings[step] = round(now - last, 2)
        last = now

    context, tab, finished = await _new_tab(browser, origin, v)
    try:
        await tab.goto(f"{origin}/{page}", wait_until="load", timeout=TIMEOUT_MS)
        v.mathjax_loaded = await tab.evaluate(WAIT_FOR_MATHJAX)
        await tab.evaluate(WAIT_FOR_EXPLORERS)
        await tab.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
        lap("load_and_typeset")
        v.url = tab.url
        found = await tab.evaluate(INSPECT)
        v.title = found["title"]
        v.math_elements = found["math"]
        v.mjx_containers = found["containers"]
        v.math_untypeset = found["untypeset"]
        v.math_errors = found["merrors"]
        v.raw_tex = found["rawTex"]
        v.images = len(found["images"])
        v.images_without_alt = [i["src"] for i in found["images"] if not i["alt"]]
        v.links = found["links"]

        light = await AXE.run(tab, options=AXE_ALL)
        v.axe_light = _violations(light, BLOCKING)
        v.axe_minor_moderate = _violations(light, ("minor", "moderate"))
        lap("axe_light")

        speech = await tab.evaluate(MATH_SPEECH)
        v.math_without_speech = speech["without"]
        v.math_speech = speech["labels"]
        v.math_first_speech = speech["first"]
        v.math_ax_name = await first_math_name(context, tab)
        v.htmlcs_light = await run_htmlcs(tab)
        lap("htmlcs_light")
        targets = await tab.evaluate(TARGET_SIZE, CONTROLS)
        focus = await tab.evaluate(FOCUS_NOT_OBSCURED)
        await tab.set_viewport_size(NARROW)
        await tab.wait_for_timeout(100)
        narrow_targets = await tab.evaluate(TARGET_SIZE, CONTROLS)
        narrow_focus = await tab.evaluate(FOCUS_NOT_OBSCURED)
        v.targets_checked = targets["checked"] + narrow_targets["checked"]
        v.small_targets = targets["bad"] + [f"390 px: {b}" for b in narrow_targets["bad"]]
        v.focus_checked = focus["checked"] + narrow_focus["checked"]
        v.focus_obscured = focus["bad"] + [f"390 px: {b}" for b in narrow_focus["bad"]]
        lap("target_size_and_focus")
        if HTMLCS_NARROW:
            v.htmlcs_narrow = await run_htmlcs(tab)
        await tab.set_viewport_size({"width": 1280, "height": 900})
        await tab.wait_for_timeout(100)
        lap("htmlcs_narrow")
        name = re.sub(r"\.html$", "", page).replace("/", "__")
        # The whole page in one picture: the browser paints the article's sections only
        # near the screen (content-visibility in _static/site.css), so the others would
        # come out blank; for the screenshot every section is painted.
        await tab.add_style_tag(content=SHOW_EVERY_SECTION)
        await tab.screenshot(path=shots / f"{name}.png", full_page=FULL_SCREENSHOTS)
        v.screenshots.append(f"{name}.png")
        lap("screenshot_light")

        # The theme follows the system's colour scheme ("auto"); its colours fade over a
        # short CSS transition, which would have axe measure colours halfway there.
        await tab.add_style_tag(content="*, *::before, *::after { transition: none !important; }")
        await tab.emulate_media(color_scheme="dark")
        await tab.wait_for_function("document.documentElement.dataset.theme === 'dark'",
                                    timeout=TIMEOUT_MS)
        dark = await AXE.run(tab, options=AXE_CONTRAST)
        v.axe_dark = _violations(dark, BLOCKING)
        lap("axe_dark")
        v.htmlcs_dark = await run_htmlcs(tab)
        lap("htmlcs_dark")
        await tab.screenshot(path=shots / f"{name}.dark.png")
        v.screenshots.append(f"{name}.dark.png")
        await tab.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)

        v.requests = len(finished)
        for request in finished:
            sizes = await request.sizes()
            v.transferred_bytes += sizes["responseBodySize"] + sizes["responseHeadersSize"]
            v.uncompressed_bytes += _file_size(site_root, request.url)
        lap("screenshot_dark_and_sizes")
    finally:
        await context.close()
    v.seconds = round(time.monotonic() - start, 2)
    return v


async def follow_redirect(browser, origin: str, page: str) -> Visit:
    """Load a redirect page (index.html, a chapter's old page) and record where it lands
    and what went wrong. It waits for the page the redirect must reach (REDIRECT_TARGETS);
    a redirect that goes elsewhere, or nowhere, times out."""
    from site_config import REDIRECT_TARGETS

    v = Visit(page=page)
    context, tab, _ = await _new_tab(browser, origin, v)
    try:
        await tab.goto(f"{origin}/{page}", timeout=TIMEOUT_MS)
        await tab.wait_for_url(f"**/{REDIRECT_TARGETS[page]}", timeout=TIMEOUT_MS)
        await tab.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
        v.url = tab.url
    finally:
        await context.close()
    # The redirect page's script replaces the page while the browser may still be reading
    # that page's own (tiny) response; the navigation it starts then cancels the request,
    # reported as net::ERR_ABORTED (seen in CI for chapters/scaling.html, one run in
    # several, its target loaded without error). That is the redirect doing its work, not a
    # failure; any other failed request, and an HTTP error on the page itself, still count.
    superseded = f"{origin}/{page}: net::ERR_ABORTED"
    v.failed_requests = [f for f in v.failed_requests if f != superseded]
    return v


async def _visit_all(executable, origin, pages, redirects, shots, site_root, workers):
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=executable, headless=True,
                                          args=CHROMIUM_ARGS)
        slots = asyncio.Semaphore(workers)

        async def one(page):
            async with slots:
                try:
                    return await visit_page(browser, origin, page, shots, site_root)
                except PlaywrightTimeoutError as stalled:
                    # Seen once in a CI run on 2 busy cores: one page never reached
                    # "networkidle" in 60 s, and the same build passed on a rerun. Visit it
                    # once more, in a fresh context; a page that really never settles
                    # times out again and fails.
                    print(f"\n{page}: {stalled.message.splitlines()[0]}; visiting it again")
                    return await visit_page(browser, origin, page, shots, site_root)
                except PlaywrightError as crashed:
                    # Seen once in a fresh-clone CI run while the PDFs and the JupyterLab
                    # check ran beside the browser tests: a page's renderer crashed
                    # ("Target crashed") and took every later test with it; the same build's
                    # pages had passed in the run before. A renderer that crashes again on a
                    # fresh visit fails the page.
                    if "crashed" not in crashed.message:
                        raise
                    print(f"\n{page}: {crashed.message.splitlines()[0]}; visiting it again")
                    return await visit_page(browser, origin, page, shots, site_root)

        async def follow(page):
            try:
                return await follow_redirect(browser, origin, page)
            except PlaywrightTimeoutError as stalled:  # as above: once more, then fail
                print(f"\n{page}: {stalled.message.splitlines()[0]}; following it again")
                return await follow_redirect(browser, origin, page)

        # The largest pages first (axe's time grows with the page), so that the workers
        # finish together instead of one visiting chapter 4 alone at the end.
        def size(page):
            file = site_root / page
            return file.stat().st_size if file.is_file() else 0

        longest_first = sorted(pages, key=size, reverse=True)
        visited = dict(zip(longest_first,
                           await asyncio.gather(*(one(page) for page in longest_first))))
        visits = [visited[page] for page in pages]
        redirected = [await follow(page) for page in redirects]
        await browser.close()
    return dict(zip(pages, visits)), dict(zip(redirects, redirected))


def visit_all(executable, origin, pages, redirects, shots, site_root, workers=2):
    """Visit every page (and follow every redirect page); return two dicts page -> Visit."""
    return asyncio.run(_visit_all(executable, origin, pages, redirects, shots, site_root,
                                  workers))
