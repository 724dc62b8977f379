"""A Sphinx extension (`_config.yml`): a long table laid out in parts, as it is read
(issue 39).

The notation table (chapters/notation.md: about 50 rows and 225 formulas) is the first
thing on its page, and a table is laid out whole: at load, then again as each of KaTeX's
fonts arrives. On an emulated slow phone (4x CPU) that was the page's total blocking time
(743 ms in issue 39's audit). `content-visibility` cannot skip table rows, so its rows are
cut into runs of ROWS, each a table of its own in its own block, which `_static/site.css`
lets the browser lay out only when it nears the screen, as it does the chapters' sections.
The parts stay in the table's one scrolling box (on a phone the whole table scrolls
sideways together), and keep its fixed columns (`table-layout: fixed`, widths from the
header), so they read as one table. Every part keeps the header row, for screen readers
(each part is a table they announce with its headers); `_static/site.css` folds it to no
height in all parts but the first. Measured on one build, back to back (Chromium, 4x
CPU, two loads each): the layout objects laid out at load went from 7 338-7 413 to
3 632-5 658 and the elements styled from 5 874-6 253 to 2 802-4 194, with the lighter
MathML (chapters/maintainers/page_speed.md).

Only tables with one of the classes in SPLIT are cut: columns of a table in parts line
up only with a fixed layout.
"""

import re

from sphinx.application import Sphinx

SPLIT = ("notation-table",)   # the classes of tables laid out in parts (fixed columns)
ROWS = 8                      # rows a part (a phone's first screen shows about six)
PART = "table-part"           # the class of each part's block (_static/site.css)

TABLE = re.compile(r"<table\b[^>]*>.*?</table>", re.DOTALL)
CLASSES = re.compile(r'\bclass="([^"]*)"')
ROW = re.compile(r"<tr\b.*?</tr>\n?", re.DOTALL)


def split_table(table: str, rows: int = ROWS) -> str:
    """`table` (one <table>...</table> with a <thead> and one <tbody>) as tables of at most
    `rows` body rows each, in blocks of class PART, each with the header; unchanged if it
    has no more rows than that, or not that shape."""
    head_at, body_at, body_end = (table.find("<thead>"), table.find("<tbody>"),
                                  table.rfind("</tbody>"))
    if min(head_at, body_at, body_end) < 0 or table.count("<tbody>") != 1:
        return table
    body_rows = ROW.findall(table, body_at, body_end)
    if len(body_rows) <= rows:
        return table
    opening = table[:table.find(">") + 1]
    head = table[head_at:table.find("</thead>") + len("</thead>")] + "\n"
    parts = ["".join(body_rows[i:i + rows]) for i in range(0, len(body_rows), rows)]
    return "\n".join(f'<div class="{PART}">{opening}\n{head}<tbody>\n{part}</tbody>\n</table></div>'
                     for part in parts)


def tables_in_parts(page: str) -> str:
    """Every table of `page` with a class in SPLIT, split (split_table)."""
    def split(match):
        classes = CLASSES.search(match[0][:match[0].find(">")])
        if classes and set(classes[1].split()) & set(SPLIT):
            return split_table(match[0])
        return match[0]
    return TABLE.sub(split, page)


def split_tables(app: Sphinx, pagename, templatename, context, doctree) -> None:
    body = context.get("body", "")
    if any(name in body for name in SPLIT):
        context["body"] = tables_in_parts(body)


def setup(app: Sphinx):
    app.connect("html-page-context", split_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
