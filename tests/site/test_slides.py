"""The lecture decks (`make slides`, scripts/slides.py) as a lecture hall sees them: every
slide of every deck at 1280 x 720 in Chromium, served from 127.0.0.1.

Each deck is written afresh from the executed chapters into a temporary folder, loaded
once, and every slide is shown in turn (an explorer is drawn when its slide is first
shown): nothing on a slide reaches past 1280 x 720, text is at least 24 px (an explorer's
chart text at least 18 px), every self-check question has its slide with the answer on a
fragment, each explorer is drawn, each exercise has its slide (the deck is written from
the student edition's text: no solution), and no other host is asked for anything. One deck is
also driven by the keyboard, opens its speaker view, and is printed (`?print-pdf`). What a
chapter authored for its deck (`{only} slides`, `{only} notes`) is on no page of the built
site (SITE_DIR), as Sphinx's `only` directive promises (read from the files, no browser).
"""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))
import slides  # noqa: E402
from tests.test_slide_authoring import SOURCES, authored, plain  # noqa: E402

SELFCHECK_MIME = "application/vnd.course.selfcheck+json"
WIDTH, HEIGHT, MIN_TEXT_PX, MIN_CHART_TEXT_PX = 1280, 720, 24, 18


def questions(name):
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
    return [o["data"][SELFCHECK_MIME]["id"] for c in nb["cells"] for o in c.get("outputs", [])
            if SELFCHECK_MIME in o.get("data", {})]


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    from site_server import SiteServer

    out = tmp_path_factory.mktemp("slides")
    written = slides.write_decks(slides.chapters(), out)
    with SiteServer(out) as url:
        yield url.rstrip("/") + "/", [p.stem for p in written]


@pytest.fixture(scope="module")
def shown(decks, browser):
    """Every deck loaded once; each slide shown in turn and measured."""
    url, names = decks
    results = {}
    for name in names:
        context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
        page = context.new_page()
        outside = []
        page.on("request", lambda r: outside.append(r.url)
                if not r.url.startswith((url, "data:")) else None)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}{name}.html")
        page.wait_for_function("window.Reveal && Reveal.isReady()")
        measured = []
        for i in range(page.evaluate("Reveal.getTotalSlides()")):
            page.evaluate(f"Reveal.slide({i})")
            if page.evaluate("Reveal.getCurrentSlide().querySelector('.explorer') !== null"):
                page.wait_for_function("Reveal.getCurrentSlide().querySelector('.explorer')"
                                       ".dataset.scale !== undefined", timeout=20_000)
            measured.append(page.evaluate(MEASURE, [MIN_TEXT_PX, MIN_CHART_TEXT_PX]))
        results[name] = {"slides": measured, "outside": outside, "errors": errors}
        context.close()
    return results


MEASURE = """([minText, minChart]) => {
  const slide = Reveal.getCurrentSlide(), scale = Reveal.getScale();
  const box = slide.getBoundingClientRect();
  const over = [], small = [], chart = [];
  for (const el of slide.querySelectorAll("*")) {
    if (el.closest("aside.notes")) continue;
    // a formula and a chart are measured whole (KaTeX's struts and its hidden MathML, and
    // an SVG's parts, have boxes of their own that nobody sees)
    const inMath = el.closest(".katex"), inSvg = el.closest("svg");
    const measured = (inMath && inMath !== el) || (inSvg && inSvg !== el) ? null : el;
    const r = measured ? el.getBoundingClientRect() : {width: 0, height: 0};
    if (r.width === 0 && r.height === 0) { if (!inMath && !inSvg) continue; }
    else {
    if (r.width === 0 && r.height === 0) continue;
    const right = (r.right - box.left) / scale, bottom = (r.bottom - box.top) / scale;
    if (right > 1280 + 1 || bottom > 720 + 1 || r.left < box.left - 1 || r.top < box.top - 1)
      over.push(el.tagName + "." + el.className + " " + Math.round(right) + "x" + Math.round(bottom));
    }
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (el.closest("svg")) {
      const svg = el.closest("svg"), vb = svg.viewBox.baseVal;
      const k = vb && vb.width ? svg.getBoundingClientRect().width / scale / vb.width : 1;
      if (size * k < minChart) chart.push(el.textContent.trim().slice(0, 20) + " " + (size * k).toFixed(1));
    } else if (!el.closest(".katex") && size < minText) {
      small.push(el.tagName + " " + el.textContent.trim().slice(0, 30) + " " + size);
    }
  }
  for (const k of slide.querySelectorAll(".katex")) {
    if (k.parentElement.closest(".katex")) continue;
    const size = parseFloat(getComputedStyle(k).fontSize);
    if (size < minText) small.push("math " + k.textContent.slice(0, 20) + " " + size);
  }
  const imgs = [...slide.querySelectorAll("img")].map(i => [i.naturalHeight, i.getBoundingClientRect().height / scale]);
  // each figure's drawn scale (object-fit: contain: the smaller of the box's two ratios)
  const figs = [...slide.querySelectorAll("figure img")].map(i => {
    const box = i.getBoundingClientRect();
    return Math.min(box.width / scale / i.naturalWidth, box.height / scale / i.naturalHeight);
  });
  return {kind: slide.className.split(" ")[0], id: slide.dataset.question || null,
          over, small, chart, imgs, figs,
          explorers: [...slide.querySelectorAll(".explorer")].map(e => !!e.querySelector("svg text")),
          answer: !!slide.querySelector(".fragment.answer"),
          notes: !!slide.querySelector("aside.notes")};
}"""


def test_a_deck_per_chapter(decks):
    assert decks[1] == slides.chapters() and len(decks[1]) == 9


def test_no_slide_overflows_1280_by_720(shown):
    bad = {f"{name} slide {i + 1}": s["over"][:3] for name, r in shown.items()
           for i, s in enumerate(r["slides"]) if s["over"]}
    assert not bad


def test_text_is_at_least_24px_and_chart_text_18px(shown):
    small = {f"{name} slide {i + 1}": s["small"][:3] for name, r in shown.items()
             for i, s in enumerate(r["slides"]) if s["small"]}
    chart = {f"{name} slide {i + 1}": s["chart"][:3] for name, r in shown.items()
             for i, s in enumerate(r["slides"]) if s["chart"]}
    assert not small and not chart


def test_figure_text_is_at_least_18px(shown):
    # lib.figures writes every figure's text at FONT_SIZE points or more, FIGURE_DPI px an
    # inch: on a slide, drawn at the scale the browser chose for its PNG
    from lib.figures import FIGURE_DPI, FONT_SIZE

    px = FONT_SIZE / 72 * FIGURE_DPI
    small = {f"{name} slide {i + 1}": [round(px * k, 1) for k in s["figs"]]
             for name, r in shown.items() for i, s in enumerate(r["slides"])
             if any(px * k < slides.FIGURE_TEXT_PX - 0.05 for k in s["figs"])}
    assert sum(len(s["figs"]) for r in shown.values() for s in r["slides"]) > 0
    assert not small


def test_figures_are_shown_larger_than_on_the_page_or_as_tall_as_a_slide_allows(shown):
    # a figure's PNG is drawn at 100 px per inch, its natural size on the page; on a slide it
    # is enlarged to the room under the caption (FIGURE_PX high), and only a figure taller
    # than that is shrunk
    small = {f"{name} slide {i + 1}": s["imgs"] for name, r in shown.items()
             for i, s in enumerate(r["slides"])
             for n, h in s["imgs"] if h < min(n, slides.FIGURE_PX) - 1}
    assert not small


def test_every_self_check_has_a_question_slide_with_its_answer_on_a_fragment(shown):
    for name, r in shown.items():
        asked = [s for s in r["slides"] if s["kind"] == "selfcheck-slide"]
        assert [s["id"] for s in asked] == questions(name), name
        assert all(s["answer"] and s["notes"] for s in asked), name


def test_every_explorer_is_drawn_and_nothing_asks_another_host(shown):
    drawn = [d for r in shown.values() for s in r["slides"] for d in s["explorers"]]
    assert drawn and all(drawn)
    for name, r in shown.items():
        assert r["outside"] == [], name
        assert r["errors"] == [], name


def test_each_idea_has_speaker_notes_and_each_exercise_a_slide(shown):
    for name, r in shown.items():
        ideas = [s for s in r["slides"] if s["kind"] == "idea-slide"]
        assert ideas and all(s["notes"] for s in ideas), name
        exercises = (ROOT / "notebooks" / f"{name}.md").read_text().count("{exercise}")
        assert sum(s["kind"] == "exercise-slide" for s in r["slides"]) == exercises, name


def test_keyboard_fragments_speaker_view_and_print(decks, browser):
    url, names = decks
    name = next(n for n in names if questions(n))
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.goto(f"{url}{name}.html")
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("Reveal.getIndices().h") == 1
    # a question slide: its answer is hidden until the next press
    index = page.evaluate("Reveal.getSlides().findIndex(s => s.classList.contains('selfcheck-slide'))")
    page.evaluate(f"Reveal.slide({index})")
    answer = "Reveal.getCurrentSlide().querySelector('.fragment.answer')"
    assert page.evaluate(f"getComputedStyle({answer}).opacity") == "0"
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"getComputedStyle({answer}).opacity === '1'")
    assert page.evaluate("Reveal.getIndices().h") == index
    # the speaker view (S) opens with this slide's notes
    with page.expect_popup() as popup:
        page.keyboard.press("s")
    speaker = popup.value
    speaker.wait_for_load_state()
    speaker.wait_for_function("document.querySelector('.speaker-controls-notes') !== null")
    context.close()
    # ?print-pdf lays every slide out as a page
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.goto(f"{url}{name}.html?print-pdf")
    page.wait_for_function("window.Reveal && Reveal.isReady()")
    page.wait_for_function("document.querySelectorAll('.pdf-page').length > 0")
    assert page.evaluate("document.querySelectorAll('.pdf-page').length") == \
        page.evaluate("Reveal.getTotalSlides()")
    context.close()


def test_what_a_chapter_authored_for_its_deck_is_on_no_page_of_the_site():
    import re

    from site_config import site_dir

    for md in SOURCES:
        page = (site_dir() / "notebooks" / f"{md.stem}.html").read_text()
        text = plain(re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S))
        assert "{only}" not in page and "% slide" not in page, md.stem
        for tag, _, words in authored(md):
            assert words not in text, (md.stem, tag, words)
