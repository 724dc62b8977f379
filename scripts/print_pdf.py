"""Print the book's one-page build (`jupyter-book build . --builder singlehtml`) to PDF with
Debian's Chromium, driven by Playwright (requirements/test.txt; no browser is downloaded).
`make pdf` runs it for both editions:

    python scripts/print_pdf.py _build/singlehtml _build/pdf/attention-as-linear-algebra.pdf

The page is served on 127.0.0.1 (no other host is asked for anything). Its mathematics is
already typeset: the build writes KaTeX's HTML into the page (`html_math_renderer:
katex_static`, _ext/katex_math.py), so printing only waits for KaTeX's fonts (all of them
are loaded before printing) and fails if a formula was left untypeset. Then the page gets a
title page (title, edition, version from pyproject.toml) and a table of contents that
links to every chapter, the self-check questions' answers go to their chapter's end,
every solution is opened (the full edition shows them unfolded; the
student edition has none) while the chapters' folded checks stay folded, and each chapter
starts on a new page. The PDF has an outline
(bookmarks) and page numbers.
"""

import argparse
import functools
import http.server
import os
import re
import sys
import threading
import time
import tomllib
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

PRINT_CSS = """
@page { size: A4; }
body { margin: 0; padding: 0; }
article.bd-article { max-width: 100% !important; padding: 0 !important; }
.toggle-button, .toggle-details__summary, .headerlink, .copybtn { display: none !important; }
.toggle-hidden { display: block !important; visibility: visible !important; }
.course-part { break-before: page; }
.course-title-page { break-after: page; text-align: center; padding-top: 35%; }
.course-title { font-size: 2.6em; font-weight: bold; margin-bottom: 1em; }
.course-toc { break-after: page; }
.course-toc p { margin: 0.2em 0; }
.course-toc-0, .course-toc-1 { padding-left: 0; font-weight: bold; margin-top: 0.6em !important; }
.course-toc-2 { padding-left: 1.5em; }
.course-toc a { text-decoration: none; color: inherit; }
pre { white-space: pre-wrap !important; word-break: break-word; font-size: 0.8em; }
figure, .cell_output img, .admonition { break-inside: avoid; }
h1, h2, h3 { break-after: avoid; }
"""

# Runs in the page: open every solution, start each document on a new page, and put the
# title page and the table of contents in front.
PREPARE = """([title, edition, version]) => {
  window.dispatchEvent(new Event("beforeprint"));   // sphinx-togglebutton opens its toggles
  // (Not the chapters' folded check cells, details.hide: a page shows them folded under
  // their "Check: ..." label, and so does the paper; opened, they printed the harness
  // under the label "Hide code cell content".)
  document.querySelectorAll("details:not(.hide)").forEach((d) => { d.open = true; });
  document.querySelectorAll(".toggle-hidden").forEach((e) => e.classList.remove("toggle-hidden"));
  const article = document.querySelector("article.bd-article");
  document.body.replaceChildren(article);           // no header, sidebars, buttons or footer
  // singlehtml nests each document's section in its parent's toctree: the root (the
  // preface) holds the chapters (each a notebook) and the reference pages.
  const docs = [article.querySelector("section"),
                ...article.querySelectorAll("div.toctree-wrapper > section")];
  const depth = (s) => { let n = 0; for (let e = s.parentElement; e; e = e.parentElement)
                           if (e.matches("div.toctree-wrapper")) n++; return n; };
  const toc = document.createElement("nav");
  toc.className = "course-toc";
  toc.innerHTML = "<h1>Contents</h1>";
  for (const [i, section] of docs.entries()) {
    const level = Math.min(depth(section), 2);
    if (level === 1) section.classList.add("course-part");   // chapters start a page
    const heading = section.querySelector(":scope > :is(h1, h2, h3, h4, h5)");
    if (!heading) continue;
    const item = document.createElement("p");
    item.className = `course-toc-${level}`;
    const link = document.createElement("a");
    link.href = "#" + section.id;
    link.append(...[...heading.cloneNode(true).childNodes]   // typeset math and all
      .filter((n) => !(n.classList && n.classList.contains("headerlink"))));
    item.appendChild(link);
    toc.appendChild(item);
  }
  const cover = document.createElement("section");
  cover.className = "course-title-page";
  cover.innerHTML = `<p class="course-title"></p><p class="edition"></p><p class="version"></p>`;
  cover.querySelector(".course-title").textContent = title;
  cover.querySelector(".edition").textContent = edition;
  cover.querySelector(".version").textContent = "Version " + version;
  article.prepend(cover, toc);
  return docs.length;
}"""

# The self-check questions (issue 34; _ext/selfcheck.py) stay in place, numbered in their
# chapter ("Check yourself 3.2"), without their input (paper cannot answer back); their
# answers, with each classic wrong answer's explanation, go to the chapter's end.
SELFCHECK_ANSWERS = """() => {
  let total = 0;
  for (const chapter of document.querySelectorAll("section.course-part")) {
    const boxes = [...chapter.querySelectorAll("div.selfcheck")];
    if (!boxes.length) continue;
    const number = (chapter.querySelector(":scope > h1 .section-number, :scope > h2 .section-number")
                    ?.textContent || "").replace(/[.\\s]+$/, "");
    const end = document.createElement("section");
    end.className = "selfcheck-answers";
    end.innerHTML = "<h2>Answers to the self-check questions</h2>";
    boxes.forEach((box, i) => {
      const name = `Check yourself ${number ? number + "." : ""}${i + 1}`;
      box.querySelector(".selfcheck-label").textContent = name;
      box.querySelector(".selfcheck-label").id ||= box.id + "-label";
      const item = document.createElement("div");
      item.className = "selfcheck-printed-answer";
      const title = document.createElement("p");
      const link = Object.assign(document.createElement("a"), {href: "#" + box.id});
      link.innerHTML = `<strong>${name}</strong>`;
      title.append(link);
      item.append(title);
      const answer = box.querySelector(".selfcheck-answer").cloneNode(true);
      answer.hidden = false;
      answer.className = "selfcheck-printed-answer-body";
      item.append(answer);
      for (const why of box.querySelectorAll('.selfcheck-feedback[data-label]')) {
        const copy = why.cloneNode(true);
        copy.hidden = false;
        copy.className = "selfcheck-printed-wrong";
        const lead = document.createElement("strong");
        lead.textContent = `If you answered ${why.dataset.label}: `;
        (copy.querySelector("p") || copy).prepend(lead);
        item.append(copy);
      }
      end.append(item);
    });
    chapter.append(end);
    total += boxes.length;
  }
  return total;
}"""

SELFCHECK_CSS = """
.selfcheck-answers { break-before: page; }
div.selfcheck .selfcheck-label { text-transform: none !important; letter-spacing: 0 !important; }
.selfcheck-printed-answer { break-inside: avoid; margin-bottom: 0.8em; }
.selfcheck-printed-answer p { margin: 0.2em 0; }
.selfcheck-printed-wrong { margin-left: 1.2em; }
"""

# The math as the build wrote it: each `.math` element holds KaTeX's HTML; a formula KaTeX
# could not parse is a `.math-error` (the -W build fails on it first). Every font of the
# page (KaTeX's, the theme's icon font) is loaded first: printing does not wait for a font
# that only a later page needs, and would draw a blank box instead.
MATH_READY = """async () => {
  const math = [...document.querySelectorAll(".math")];
  const bare = math.filter((m) => !m.querySelector(".katex") || m.querySelector(".math-error"));
  const faces = [...document.fonts];
  await Promise.allSettled(faces.map((f) => f.load()));
  await document.fonts.ready;
  const katex = faces.filter((f) => f.family.replace(/"/g, "").startsWith("KaTeX"));
  return {formulas: math.length, untypeset: bare.slice(0, 5).map((m) => m.textContent.slice(0, 80)),
          fonts: faces.filter((f) => f.status === "loaded").length,
          katex: katex.filter((f) => f.status === "loaded").length,
          failed: faces.filter((f) => f.status !== "loaded").map((f) => f.family)};
}"""


# The theme's own stylesheets. _ext/stylesheet_bundle.py serves them inside _static/site-bundle.css
# and drops their <link>s; the bundle is written when the first page is, and the singlehtml
# builder writes its one page before it copies the theme's static files, so there the bundle
# can lack them. Any that neither a <link> nor the bundle brings is linked here.
THEME_STYLESHEETS = ("styles/theme.css", "styles/pydata-sphinx-theme.css")


# Links stylesheets ahead of the page's own (the theme's come first, as the template has them).
LINK_FIRST = """(hrefs) => {
  const first = document.head.querySelector("link[rel=stylesheet]");
  return Promise.all(hrefs.map((href) => new Promise((done, fail) => {
    const link = Object.assign(document.createElement("link"), {rel: "stylesheet", href});
    link.onload = done;
    link.onerror = () => fail(new Error("cannot load " + href));
    document.head.insertBefore(link, first);
  })));
}"""


def missing_theme_stylesheets(site: Path, page: str) -> list[str]:
    bundle = site / "_static" / "site-bundle.css"
    bundled = bundle.read_text(encoding="utf-8") if bundle.exists() else ""
    return [name for name in THEME_STYLESHEETS
            if f"_static/{name}" not in page and f"/* {name} */" not in bundled
            and (site / "_static" / name).exists()]


def single_page(site: Path) -> str:
    """The page singlehtml wrote: index.html, or the root page it redirects to."""
    index = (site / "index.html").read_text()
    redirect = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', index)
    return redirect[1] if redirect else "index.html"


# Tagged PDF (issue 48): Chromium tags the printed page from its accessibility tree. A
# formula printed as a figure named by its spoken text (the aria-label the build put on its
# <math>: _ext/katex_math.py) gets that text as the tag's /Alt; the document's title and
# language become the PDF's /Title and /Lang.
ACCESSIBLE_PRINT = """([title, language]) => {
  document.title = title;
  if (!document.documentElement.lang) document.documentElement.lang = language;
  let named = 0;
  for (const formula of document.querySelectorAll('.katex')) {
    const math = formula.querySelector('math[aria-label]');
    if (!math) continue;
    formula.setAttribute('role', 'img');
    formula.setAttribute('aria-label', math.getAttribute('aria-label'));
    named++;
  }
  return named;
}"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def print_pdf(site: Path, output: Path, student: bool) -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    title = "Attention as Linear Algebra"
    edition = "Student edition: exercises without solutions" if student else "With the solutions"
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM,
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            origin = f"http://127.0.0.1:{server.server_port}/"
            page.route(lambda url: not url.startswith(origin), lambda route: route.abort())
            # singlehtml writes the book into its root document's file (chapters/...), but
            # with links relative to the site's root: serve it from the root.
            page.route(origin + "book.html",
                       lambda route: route.fulfill(path=site / single_page(site),
                                                   content_type="text/html; charset=utf-8"))
            started = time.monotonic()
            page.goto(origin + "book.html", wait_until="load", timeout=120_000)
            book = (site / single_page(site)).read_text(encoding="utf-8")
            page.evaluate(LINK_FIRST, [f"_static/{n}" for n in missing_theme_stylesheets(site, book)])
            page.add_style_tag(content=PRINT_CSS)
            documents = page.evaluate(PREPARE, [title, edition, project["version"]])
            questions = page.evaluate(SELFCHECK_ANSWERS)
            page.add_style_tag(content=SELFCHECK_CSS)
            page.emulate_media(media="print")
            math = page.evaluate(MATH_READY)
            if not math["formulas"] or not math["katex"] or math["untypeset"] or math["failed"]:
                raise SystemExit(f"{site}: the math is not typeset by KaTeX as the build should "
                                 f"have done it ({math})")
            print(f"  loaded in {time.monotonic() - started:.0f} s: {math['formulas']} formulas, "
                  f"{math['fonts']} fonts ({math['katex']} KaTeX), {questions} self-check "
                  "questions", file=sys.stderr)
            page.evaluate(ACCESSIBLE_PRINT, [title, "en"])
            page.wait_for_timeout(500)
            output.parent.mkdir(parents=True, exist_ok=True)
            page.pdf(path=str(output), format="A4", print_background=True, outline=True,
                     tagged=True, display_header_footer=True,
                     header_template="<span></span>",
                     footer_template=('<div style="font-size:8px;width:100%;text-align:center">'
                                      '<span class="pageNumber"></span></div>'),
                     margin={"top": "18mm", "bottom": "20mm", "left": "16mm", "right": "16mm"})
            print(f"  printed in {time.monotonic() - started:.0f} s", file=sys.stderr)
            browser.close()
    finally:
        server.shutdown()
    return documents


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the singlehtml build (a folder with index.html)")
    parser.add_argument("output", type=Path, help="the PDF to write")
    parser.add_argument("--student", action="store_true", help="the student edition")
    args = parser.parse_args(argv)
    documents = print_pdf(args.site, args.output, args.student)
    print(f"wrote {args.output} ({documents} documents, {args.output.stat().st_size // 1024} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
