"""The self-check questions (issue 34) in Chromium, on the built site: for every question on
every page, each listed wrong answer, typed or chosen and sent with the keyboard, shows its
own explanation, and the right answer shows "Correct." with why; "Show the answer" appears
only after a try; the data on the page equal the executed notebook's; axe finds nothing
serious in the answered questions in light and dark; a 390 px phone fits them; the script
comes from the site and only pages with a question load it. (Every page's console errors,
outside requests and axe before any answer: test_site.py.)

Each page with a question is loaded once, in one tab (the `answered` fixture): every answer
is tried, "Show the answer" is tried, every answer is shown, axe runs in light, then in
dark, and the window is narrowed to a phone's 390 px and the questions are measured; the
tests then only read what was recorded (the pattern of site_visit.py), so their order does
not matter.

Run with `make test-site` (or `SITE_DIR=... pytest tests/site/test_selfcheck.py`).
"""

import json
import re
from pathlib import Path

import nbformat
import pytest
from axe_playwright_python.sync_playwright import Axe
from site_config import ROOT, built_pages, site_dir

from lib.selfcheck import MIME, format_number, format_shape

MARKER = '<div class="selfcheck" '
SCRIPT = "_static/selfcheck/selfcheck.js"
TIMEOUT_MS = 60_000
BLOCKING = ("serious", "critical")


def page_html(page):
    return (site_dir() / page).read_text(encoding="utf-8")


def question_pages():
    try:
        return [p for p in built_pages() if MARKER in page_html(p)]
    except BaseException:     # no site: built_pages() exits when a test first needs it
        return []


PAGES = question_pages()


def notebook_questions(page: str) -> list[dict]:
    """The questions' data in the executed notebook behind a page, in order."""
    reference = ROOT / "notebooks" / f"{Path(page).stem}.ipynb"
    if not reference.exists():
        return []
    return [o["data"][MIME] for c in nbformat.read(reference, as_version=4).cells
            for o in c.get("outputs", []) if MIME in o.get("data", {})]


# ------------------------------------------------------------------ without a browser
def test_only_pages_with_a_question_load_the_script():
    for page in built_pages():
        html = page_html(page)
        # the script's address (a maintainers' page may name the file `_ext/selfcheck.js`)
        assert (MARKER in html) == (SCRIPT.split("/", 1)[1] in html), page
    assert (site_dir() / SCRIPT).is_file()


@pytest.mark.parametrize("page", PAGES)
def test_the_data_on_the_page_are_the_notebook_s(page):
    html = page_html(page)
    on_page = [json.loads(m[1].replace("<\\/", "</")) for m in re.finditer(
        r'<script type="application/json" class="selfcheck-data">(.*?)</script>', html, re.S)]
    ids = re.findall(r'<div class="selfcheck" id="([\w-]+)"', html)
    computed = notebook_questions(page)
    assert ids == [d["id"] for d in computed]
    for data, reference in zip(on_page, computed, strict=True):
        assert data["kind"] == reference["kind"]
        assert data["wrong"] == [w["key"] for w in reference["wrong"]]
        for key in ("answer", "tol", "correct"):
            assert data.get(key) == reference.get(key), (reference["id"], key)


# ------------------------------------------------------------------ in the browser
class Tab:
    def __init__(self, browser, origin, page, width=1280, scheme="light"):
        self.errors, self.foreign = [], []
        self.context = browser.new_context(viewport={"width": width, "height": 900},
                                           color_scheme=scheme, service_workers="block")

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
        self.tab.goto(f"{origin}/{page}", wait_until="load", timeout=TIMEOUT_MS)
        self.tab.wait_for_function("window.courseSelfcheck !== undefined", timeout=TIMEOUT_MS)

    def box(self, qid):
        return self.tab.locator(f"div.selfcheck#{qid}")

    def answer(self, qid, kind, value):
        """Type or choose `value` as a reader does, and send it with the keyboard."""
        box = self.box(qid)
        if kind in ("number", "shape"):
            field = box.locator("input.selfcheck-input")
            field.fill("")
            field.press_sequentially(value)
            field.press("Enter")            # the form's implicit submission
        else:
            for option in box.locator(".selfcheck-option input").all():
                chosen = int(option.get_attribute("value")) in value
                # a radio button is unchecked only by choosing another of its group
                if chosen or option.get_attribute("type") == "checkbox":
                    option.set_checked(chosen)
            box.locator("button.selfcheck-check").focus()
            self.tab.keyboard.press("Enter")
        verdict = box.locator(".selfcheck-verdict")
        verdict.locator(".selfcheck-verdict-line").wait_for(timeout=TIMEOUT_MS)
        return verdict

    def feedback_html(self, qid, key):
        return self.box(qid).locator(f'.selfcheck-feedback[data-key="{key}"]').inner_html()


def reveal_all(t):
    for box in t.tab.locator("div.selfcheck").all():
        kind = box.get_attribute("data-kind")
        qid = box.get_attribute("id")
        t.answer(qid, kind, "99999" if kind == "number" else "9, 9, 9, 9, 9, 9"
                 if kind == "shape" else [int(box.locator(".selfcheck-option input").last
                                              .get_attribute("value"))])
        reveal = box.locator("button.selfcheck-reveal")
        if reveal.is_visible():
            reveal.click()


NO_TRANSITION = "*, *::before, *::after { transition: none !important; }"
NEXT_FRAME = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
TOO_WIDE = """() => [...document.querySelectorAll('div.selfcheck')]
  .filter((b) => b.scrollWidth > b.clientWidth + 1 ||
                 b.getBoundingClientRect().right > window.innerWidth)
  .map((b) => b.id)"""
TOO_SMALL = """() => [...document.querySelectorAll(
    'div.selfcheck input, div.selfcheck button:not([hidden])')]
  .filter((e) => { const r = e.getBoundingClientRect(); return r.width < 24 || r.height < 24; })
  .map((e) => e.outerHTML.slice(0, 80))"""


def serious_axe(t):
    results = Axe().run(t.tab, context="div.selfcheck",
                        options={"resultTypes": ["violations"], "preload": False})
    return [(v["id"], v["help"], [n["target"] for n in v["nodes"][:3]])
            for v in results.response["violations"] if v["impact"] in BLOCKING]


def try_the_reveal(t, qid):
    """On a question whose right answer was given last, a wrong try, then "Show the answer"
    with the keyboard: what the page showed at each step."""
    box = t.box(qid)
    kind = box.get_attribute("data-kind")
    t.answer(qid, kind, "99999" if kind == "number" else "1, 2, 3, 4, 5, 6" if kind == "shape"
             else [int(box.locator(".selfcheck-option input").last.get_attribute("value"))])
    reveal = box.locator("button.selfcheck-reveal")
    seen = {"id": qid, "offered": reveal.is_visible()}
    if seen["offered"]:
        seen["hidden_before"] = box.locator(".selfcheck-answer").is_hidden()
        reveal.focus()
        t.tab.keyboard.press("Enter")
        seen["shown_after"] = box.locator(".selfcheck-answer").is_visible()
        seen["focused"] = t.tab.evaluate(
            "document.activeElement.classList.contains('selfcheck-answer')")
    return seen


@pytest.fixture(scope="module", params=PAGES)
def answered(request, browser, origin):
    """A page with every question tried: each wrong answer, then the right one, with what
    the page said each time; then "Show the answer" tried on one question; then, with every
    answer shown, axe in light and in dark, and the questions measured at 390 px. One load
    of the page for all of it: the checks read only what is recorded here."""
    page = request.param
    t = Tab(browser, origin, page)
    said = []
    for data in notebook_questions(page):
        qid, kind = data["id"], data["kind"]
        t.box(qid).scroll_into_view_if_needed()
        for i, wrong in enumerate(data["wrong"]):
            value = (format_number(wrong["key"], data["tol"]) if kind == "number"
                     else format_shape(wrong["key"]) if kind == "shape" else [wrong["key"]])
            reveal_before = t.box(qid).locator("button.selfcheck-reveal").is_visible()
            verdict = t.answer(qid, kind, value)
            said.append({"id": qid, "tried": value, "verdict": verdict.inner_text(),
                         "explanation": verdict.locator(".selfcheck-explanation").first
                         .inner_html(), "expected": t.feedback_html(qid, f"w{i}"),
                         "reveal_before": reveal_before,
                         "reveal_after": t.box(qid).locator("button.selfcheck-reveal")
                         .is_visible()})
        rights = ([format_number(data["answer"], data["tol"]), repr(data["answer"])]
                  if kind == "number" else
                  [format_shape(data["answer"]), ",".join(map(str, data["answer"])),
                   " x ".join(map(str, data["answer"]))] if kind == "shape"
                  else [data["correct"]])
        for value in rights:
            verdict = t.answer(qid, kind, value)
            said.append({"id": qid, "tried": value, "verdict": verdict.inner_text(),
                         "explanation": verdict.locator(".selfcheck-explanation").first
                         .inner_html(), "expected": t.feedback_html(qid, "right"),
                         "right": True})
    tried_wrong = sorted({s["id"] for s in said if "reveal_after" in s})
    seen = {"reveal": try_the_reveal(t, tried_wrong[0]) if tried_wrong else None}

    # Every answer shown, in light, then in dark. The theme follows the system's colour
    # scheme ("auto") and fades over a CSS transition, which would have axe measure colours
    # halfway there: transitions are turned off first, as in site_visit.py.
    t.tab.add_style_tag(content=NO_TRANSITION)
    reveal_all(t)
    seen["axe"] = {"light": serious_axe(t)}
    t.tab.emulate_media(color_scheme="dark")
    t.tab.wait_for_function("document.documentElement.dataset.theme === 'dark'",
                            timeout=TIMEOUT_MS)
    seen["axe"]["dark"] = serious_axe(t)

    # A phone: the same tab narrowed to 390 px. The layout at 390 px comes from CSS media
    # queries (the theme's sidebars and header, selfcheck.css); no script of the site or of
    # the theme measures the window for the questions, so once the browser has laid the page
    # out again (two frames) the questions measure as on a page loaded at 390 px (compared on
    # chapter pages both ways while this was written: the same boxes, the same sizes).
    t.tab.set_viewport_size({"width": 390, "height": 900})
    t.tab.evaluate(NEXT_FRAME)
    assert t.tab.evaluate("window.innerWidth") == 390, page
    seen["phone"] = {"wide": t.tab.evaluate(TOO_WIDE), "small": t.tab.evaluate(TOO_SMALL)}
    yield page, t, said, seen
    t.context.close()


def test_each_wrong_answer_shows_its_own_explanation(answered):
    page, _, said, _ = answered
    wrong = [s for s in said if not s.get("right")]
    for s in wrong:
        assert s["verdict"].startswith("Not quite."), (page, s["id"], s["tried"], s["verdict"])
        assert s["explanation"] == s["expected"], (page, s["id"], s["tried"])


def test_the_right_answer_says_correct_and_why(answered):
    page, _, said, _ = answered
    right = [s for s in said if s.get("right")]
    assert right, page
    for s in right:
        assert s["verdict"].startswith("Correct."), (page, s["id"], s["tried"], s["verdict"])
        assert s["explanation"] == s["expected"], (page, s["id"])


def test_show_the_answer_only_after_a_try(answered):
    page, _, said, seen = answered
    firsts = {}
    for s in said:
        firsts.setdefault(s["id"], s)
    for s in firsts.values():     # before its first try, no question offers its answer
        assert not s.get("reveal_before", False), (page, s["id"])
    tried_wrong = {s["id"] for s in said if "reveal_after" in s}
    assert all(s["reveal_after"] for s in said if "reveal_after" in s), page
    assert tried_wrong, page
    # the right answer was given last: the button went away; a wrong try brings it back
    reveal = seen["reveal"]
    assert reveal["id"] == sorted(tried_wrong)[0], page
    if reveal["offered"]:
        assert reveal["hidden_before"], (page, reveal["id"])
        assert reveal["shown_after"], (page, reveal["id"])
        assert reveal["focused"], (page, reveal["id"])


def test_no_console_error_and_no_outside_request(answered):
    # on the tab of every step above: the answers, axe in light and dark, the phone's width
    page, t, _, _ = answered
    assert not t.errors, (page, t.errors)
    assert not t.foreign, (page, t.foreign)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_in_answered_questions(answered, scheme):
    page, _, _, seen = answered
    found = seen["axe"][scheme]
    assert not found, (page, scheme, found)


def test_a_phone_fits_the_answered_questions(answered):
    page, _, _, seen = answered
    wide = seen["phone"]["wide"]
    assert not wide, (page, wide)
    small = seen["phone"]["small"]
    assert not small, (page, small)   # targets of at least 24 px
