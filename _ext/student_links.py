"""A Sphinx extension (`_config.yml`) for the student edition: the pages it leaves out of
its navigation (the maintainers' pages, issue 43) are not built there, so a reference to
one of their labels (`{ref}`maint-testing``, in the preface, the troubleshooting page or
the instructor guide) would be unresolved; it reads as the page's title, without a link,
as the student notebooks write a link they may not give (scripts/jupyter_notebooks.py).
It acts only on a reference Sphinx could not resolve, so the full edition, where those
pages are built, is untouched.
"""

import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parents[1]
LEFT_OUT = "chapters/maintainers"        # scripts/student_edition.py: STUDENT_LEFT_OUT
LABEL = re.compile(r"^\((?P<label>[\w-]+)\)=\s*$")
HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*$")


def left_out_titles(folder: Path = ROOT / LEFT_OUT) -> dict[str, str]:
    """Each label of the left-out pages -> the title of the heading it labels (a label
    on a paragraph: its page's title)."""
    titles = {}
    for page in sorted(folder.glob("*.md")):
        lines = page.read_text().splitlines()
        page_title = next((m["title"] for line in lines if (m := HEADING.match(line))), page.stem)
        for i, line in enumerate(lines):
            match = LABEL.match(line)
            if not match:
                continue
            following = next((l for l in lines[i + 1:] if l.strip()), "")
            heading = HEADING.match(following)
            titles[match["label"]] = heading["title"] if heading else page_title
    return titles


def as_text(app: Sphinx, env, node, contnode):
    target = node.get("reftarget")
    titles = app.env.student_left_out
    if node.get("reftype") not in ("ref", "numref", "doc") or target not in titles:
        return None
    text = contnode.astext()
    return nodes.inline(text=titles[target] if text in (target, "") else text)


def setup(app: Sphinx):
    def read(app, env, docnames):
        env.student_left_out = left_out_titles()
    app.connect("env-before-read-docs", read)
    app.connect("missing-reference", as_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
