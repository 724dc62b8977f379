"""What the editions must and must not contain, read from the MyST sources notebooks/*.md:
each exercise's label, and "needles" from each solution (its code lines and runs of plain
words), which must not appear anywhere in the student edition. Used by tests/test_editions.py
and tests/editions/.

Read independently of scripts/jupyter_notebooks.py, so a bug there cannot hide itself.
"""

import html
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks").glob("*.md"))

FENCE = r"(?P<fence>:{3,}|`{3,})"
PLAIN_SOLUTION = re.compile(rf"^{FENCE}\{{solution\}}.*?\n(?P<body>.*?)^(?P=fence)[:`]*[ \t]*$", re.M | re.S)
GATED_SOLUTION = re.compile(r"^[:`]{3,}\{solution-start\}.*?\n(?P<body>.*?)^[:`]{3,}\{solution-end\}", re.M | re.S)
EXERCISE_LABEL = re.compile(r"^[:`]{3,}\{exercise(?:-start)?\}[^\n]*\n:label: ([\w-]+)", re.M)
WORD_RUN = re.compile(r"[A-Za-z][A-Za-z'’,;.()-]*(?: [A-Za-z][A-Za-z'’,;.()-]*){6,}")
MIN_CODE_LINE = 30
# A code cell tagged remove-cell inside a solution: an assignment's tests (scripts/
# assignments.py), shown in neither edition, so not solution text a reader could see.
HIDDEN_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n:tags: \[remove-cell\]\n.*?^```[ \t]*$",
                         re.M | re.S)


QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "--", "—": "---"})


def squash(text: str) -> str:
    """Whitespace collapsed, and Sphinx's smart quotes and dashes undone."""
    return " ".join(text.translate(QUOTES).split())


def html_text(page: str) -> str:
    """The text of an HTML page as a reader sees it (tags dropped, entities decoded), twice:
    with tags as nothing (highlighted code is one span per token) and as spaces (prose)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return "\n".join(squash(html.unescape(re.sub(r"<[^>]+>", gap, page))) for gap in ("", " "))


@cache
def exercises(md: Path) -> tuple[str, ...]:
    return tuple(EXERCISE_LABEL.findall(md.read_text()))


@cache
def raw_solutions(md: Path) -> tuple[str, ...]:
    text = md.read_text()
    return tuple(m["body"] for m in PLAIN_SOLUTION.finditer(text)) + tuple(
        m["body"] for m in GATED_SOLUTION.finditer(text))


@cache
def solutions(md: Path) -> tuple[str, ...]:
    """The solutions as a reader of the full edition sees them (no hidden cells)."""
    return tuple(HIDDEN_CELL.sub("", body) for body in raw_solutions(md))


def outside_solutions(md: Path) -> str:
    text = md.read_text()
    for body in raw_solutions(md):
        text = text.replace(body, "\n")
    return text


@cache
def needles(md: Path) -> tuple[str, ...]:
    """Distinctive bits of md's solutions, each of which a reader would see if a solution
    leaked: long code lines, and runs of seven or more plain words between markup."""
    elsewhere = squash(" ".join(outside_solutions(m) for m in SOURCES))
    found = []
    for body in solutions(md):
        for line in body.splitlines():
            line = line.strip()
            if line.startswith((":", "```", "+++", "#", "---")):
                continue
            # a code cell's options in YAML (`mystnb: code_prompt_show: '... pinv''s ...'`,
            # `tags: [...]`): the page shows the label unquoted, or not at all
            if re.match(r"^(mystnb|code_prompt_show|code_prompt_hide|tags|remove_\w+):", line):
                continue
            # (not a line of displayed TeX, `Z = \frac{...}`: the page's MathML no longer
            # carries the TeX, so the page shows no such text)
            if len(line) >= MIN_CODE_LINE and not re.search(r"\\[A-Za-z]", line) \
                    and re.match(r"^[\w.\[\], ]+ ?[-+*/@]?= |^(assert|for|print|np\.)", line):
                found.append(line)
            # prose: split at math, roles, code spans and emphasis, keep long runs of words
            for piece in re.split(r"\$[^$]*\$|\{[^}]*\}`[^`]*`|`[^`]*`|\*+|\[|\]|\(http\S+\)", line):
                found += [squash(run) for run in WORD_RUN.findall(piece)]
    return tuple(sorted({n for n in found if squash(n) not in elsewhere}))
