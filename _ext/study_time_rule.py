"""Study times computed from the notebooks themselves: the rule (study_time.py prints them).

No page types a study time by hand. One rule, `minutes`, turns a notebook's own counts
into minutes, so a time changes when the text does:

    minutes = prose words / WORDS_PER_MINUTE
            + code lines * SECONDS_PER_CODE_LINE / 60
            + exercises * MINUTES_PER_EXERCISE
            + questions * MINUTES_PER_QUESTION,

rounded to the nearest ROUND_TO minutes (halves up), never below ROUND_TO.

What is counted, in a notebook's MyST source (notebooks/NN_name.md):

* prose words: whitespace-separated tokens with a letter or digit in them, outside code
  cells, after removing MyST syntax (front matter, `(label)=` lines, directive fences and
  their `:option:` lines, `+++` cell breaks, `%` and HTML comments, the deck's `{only}`
  blocks; a role counts as the text it shows: `{ref}`title <label>`` as its title,
  `{glue:text}`key:.3f`` as one number).
  Mathematics counts token by token, as it is read.
* code lines: the non-blank lines of code cells, and of displayed code blocks (a fence with
  no directive, or `{code-block}`), without the cells tagged `remove-cell` (the hidden
  Colab setup cell), their options and their metadata.
* questions: the self-check questions (lib.selfcheck), not counted as their hidden code.
* exercises: the `{exercise}` directives. An exercise's statement and solution are also
  read (their words and code lines count); MINUTES_PER_EXERCISE is the time to attempt it.

A core path is declared in a notebook's front matter,

    course:
      core_path: [nb-span, nb-span-xw, ..., span-ex-bounds, span-ex-closest]

as section labels and exactly two exercise labels. Its time is the same rule applied to
those units only: a section runs from its `(label)=` line to the next heading of the same
or a higher level, or the next labelled heading of any level (the title's label so covers
the introduction, up to the first section); a label above a paragraph runs to the next
heading. An exercise runs from its directive to the end of its solution.

The roles and the table that print the times are the extension study_time.py, which
imports this module (its docstring lists them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

# The rule's constants (the instructor guide prints them from here).
WORDS_PER_MINUTE = 100          # dense technical prose with mathematics, read with care
# Read a line, run its cell, look at what it prints. (6 s while code ran to 100-150
# columns; formatted at 79 columns the same code takes 28 % more lines, counted without
# lines that only close brackets: 2417 -> 3087 over the eight notebooks. 5 s keeps about
# the same time per character of code.)
SECONDS_PER_CODE_LINE = 5
MINUTES_PER_EXERCISE = 12       # attempt an exercise before opening its solution
MINUTES_PER_QUESTION = 1        # read a self-check question, answer it, read the feedback
ROUND_TO = 5                    # minutes
CORE_PATH_LIMIT = 60            # minutes: the longest core path allowed
CORE_EXERCISES = 2              # exercises on every core path

CONSTANTS = {
    "WORDS_PER_MINUTE": WORDS_PER_MINUTE,
    "SECONDS_PER_CODE_LINE": SECONDS_PER_CODE_LINE,
    "MINUTES_PER_EXERCISE": MINUTES_PER_EXERCISE,
    "MINUTES_PER_QUESTION": MINUTES_PER_QUESTION,
    "ROUND_TO": ROUND_TO,
    "CORE_PATH_LIMIT": CORE_PATH_LIMIT,
    "CORE_EXERCISES": CORE_EXERCISES,
}

ROOT = Path(__file__).resolve().parents[1]

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|:{3,})\s*(?P<info>.*?)\s*$")
DIRECTIVE = re.compile(r"^\{(?P<name>[\w:.-]+)\}\s*(?P<arg>.*)$")
OPTION = re.compile(r"^\s*:[\w-]+:")
LABEL = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+\S")
ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}`(?P<content>[^`]*)`")
LINK = re.compile(r"\[(?P<text>[^\]]*)\]\([^)]*\)")
COMMENT = re.compile(r"<!--.*?-->", re.S)
LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
WORD = re.compile(r"[^\W_]")
# A code line counts when it holds more than brackets and commas: a formatter's line that
# only closes a call or a list (`)`, `],`) is not read.
READ_CODE = re.compile(r"[^\s()\[\]{},]")
QUESTION_CALL = re.compile(r"\b(?:number|shape|choice|wrong_output)_question\(")
TITLED = {"admonition", "exercise", "dropdown", "topic", "sidebar"}   # an argument is a title


@dataclass(frozen=True)
class Counts:
    """What the rule counts in some MyST text."""

    words: int = 0
    code_lines: int = 0
    exercises: int = 0
    questions: int = 0

    def __add__(self, other: "Counts") -> "Counts":
        return Counts(self.words + other.words, self.code_lines + other.code_lines,
                      self.exercises + other.exercises, self.questions + other.questions)


def minutes(counts: Counts) -> int:
    """The rule: a study time in minutes, rounded to the nearest ROUND_TO (halves up).

    >>> minutes(Counts(words=1000, code_lines=100, exercises=1))  # 10 + 10 + 12 = 32
    30
    """
    raw = (counts.words / WORDS_PER_MINUTE + counts.code_lines * SECONDS_PER_CODE_LINE / 60
           + counts.exercises * MINUTES_PER_EXERCISE + counts.questions * MINUTES_PER_QUESTION)
    return max(ROUND_TO, int(raw / ROUND_TO + 0.5) * ROUND_TO)


def format_minutes(total: int) -> str:
    """'45 minutes', '1 hour', '2 hours 10 minutes'."""
    hours, mins = divmod(total, 60)
    parts = []
    if hours:
        parts.append(f"{hours} hour{'s' if hours > 1 else ''}")
    if mins or not hours:
        parts.append(f"{mins} minute{'s' if mins != 1 else ''}")
    return " ".join(parts)


def short_minutes(total: int) -> str:
    """'45 min', '1 h', '2 h 10 min' (for tables)."""
    hours, mins = divmod(total, 60)
    if not hours:
        return f"{mins} min"
    return f"{hours} h" + (f" {mins:02d} min" if mins else "")


def split_front_matter(text: str) -> tuple[dict, list[str]]:
    """The YAML front matter (a dict, empty if none) and the lines after it."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        for end in range(1, len(lines)):
            if lines[end].strip() == "---":
                return yaml.safe_load("\n".join(lines[1:end])) or {}, lines[end + 1:]
    return {}, lines


def prose_words(line: str) -> int:
    """Words of one line of prose, a role counting as the text it shows."""

    def shown(match):
        name, content = match["name"], match["content"]
        if name.startswith("glue"):
            return "0"                                   # a glued number
        title = re.match(r"^(.*?)\s*<[^<>]+>$", content, re.S)
        return title[1] if title else content

    line = LIST_MARKER.sub("", LINK.sub(r"\g<text>", ROLE.sub(shown, line)))
    return sum(1 for token in line.split() if WORD.search(token))


@dataclass
class Line:
    """One line of the source, classified: its words and code lines, and its structure."""

    number: int
    words: int = 0
    code: int = 0
    label: str | None = None        # a `(label)=` line
    heading: int = 0                # the level of a heading line
    exercise: str | None = None     # the label of an exercise that opens on this line
    solution: str | None = None     # the exercise label of a solution that opens here
    closes: str | None = None       # the directive name a closing fence ends
    question: bool = False          # a self-check question's cell opens on this line


def classify(lines: list[str]) -> list[Line]:
    """Walk MyST lines (front matter removed) and classify each one."""
    text = COMMENT.sub(lambda m: "\n" * m[0].count("\n"), "\n".join(lines))
    lines = text.split("\n")
    out = [Line(number=i) for i in range(len(lines))]
    stack: list[dict] = []          # open fences: char, length, name, kind
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        top = stack[-1] if stack else None
        # inside a code cell or a displayed code block: count or skip, until the close
        if top and top["kind"] in ("code", "hidden"):
            if fence and fence["fence"][0] == top["char"] and len(fence["fence"]) >= top["len"] \
                    and not fence["info"]:
                stack.pop()
            elif READ_CODE.search(line) and top["kind"] == "code":
                out[i].code = 1
            i += 1
            continue
        if fence and top and fence["fence"][0] == top["char"] \
                and len(fence["fence"]) >= top["len"] and not fence["info"]:
            out[i].closes = stack.pop()["name"]
            i += 1
            continue
        if fence:
            directive = DIRECTIVE.match(fence["info"])
            name = directive["name"] if directive else ""
            arg = directive["arg"] if directive else ""
            options, j = {}, i + 1
            # the directive's options: `:key: value` lines, or a `---` YAML block
            if directive and j < len(lines) and lines[j].strip() == "---":
                end = j + 1
                while end < len(lines) and lines[end].strip() != "---":
                    end += 1
                try:
                    options = yaml.safe_load("\n".join(lines[j + 1:end])) or {}
                except yaml.YAMLError:
                    options = {}
                j = end + 1
            elif directive:
                while j < len(lines) and OPTION.match(lines[j]):
                    key, _, value = lines[j].strip()[1:].partition(":")
                    options[key] = value.strip()
                    j += 1
            if name == "code-cell":
                tags = options.get("tags", [])
                if isinstance(tags, str):
                    tags = yaml.safe_load(tags) or []
                kind = "hidden" if "remove-cell" in tags else "code"
                if "remove-input" in tags and QUESTION_CALL.search(
                        "\n".join(cell_body(lines, j, fence))):
                    kind, out[i].question = "hidden", True
            elif not directive or name in ("code-block", "code", "sourcecode"):
                kind = "code"
            else:   # an {only} block is the lecture deck's, not the page's
                kind = "hidden" if name == "only" else "prose"
            if name == "exercise":
                out[i].exercise = options.get("label") or f"<exercise line {i}>"
            if name in ("solution", "solution-start"):
                out[i].solution = arg.split()[0] if arg else None
            if name in TITLED and arg:
                out[i].words = prose_words(arg)          # e.g. an admonition's title
            stack.append({"char": fence["fence"][0], "len": len(fence["fence"]),
                          "name": name, "kind": kind})
            i = j
            continue
        label = LABEL.match(line)
        heading = HEADING.match(line)
        if label:
            out[i].label = label["label"]
        elif line.strip().startswith(("+++", "%")):
            pass                                         # a cell break or a MyST comment
        else:
            if heading:
                out[i].heading = len(heading["hashes"])
            out[i].words = prose_words(line.lstrip("#"))
        i += 1
    return out


def cell_body(lines: list[str], start: int, fence) -> list[str]:  # up to its closing fence
    ends = (e for e in range(start, len(lines)) if (c := FENCE.match(lines[e]))
            and c["fence"][0] == fence["fence"][0] and not c["info"]
            and len(c["fence"]) >= len(fence["fence"]))
    return lines[start:next(ends, len(lines))]


def total(lines: list[Line]) -> Counts:
    return Counts(sum(x.words for x in lines), sum(x.code for x in lines),
                  sum(1 for x in lines if x.exercise), sum(1 for x in lines if x.question))


def count(text: str) -> Counts:
    """The counts of a whole MyST text (prose words, code lines, exercises).

    >>> count("# Title\\n\\nTwo words.\\n\\n```{code-cell} ipython3\\nx = 1\\n\\ny = 2\\n```\\n")
    Counts(words=3, code_lines=2, exercises=0, questions=0)
    """
    return total(classify(split_front_matter(text)[1]))


def units(lines: list[Line]) -> dict[str, tuple[str, int, int]]:
    """Every label of the text: (kind, first line, end line).

    The kind is "intro" (the title's label: the text up to the first section), "section"
    or "exercise"; the lines are indices into `lines`, the end excluded.
    """
    found: dict[str, tuple[str, int, int]] = {}
    n = len(lines)

    def labelled_heading(k):
        """The heading line that the label at line k sits on, or None (a paragraph label)."""
        m = k + 1
        while m < n and lines[m].label:
            m += 1
        return m if m < n and lines[m].heading else None

    def unit_start(m):
        """Line m, moved up over the label lines just above it."""
        while m > 0 and lines[m - 1].label:
            m -= 1
        return m

    for k, line in enumerate(lines):
        if line.label:
            h = labelled_heading(k)
            level = lines[h].heading if h is not None else 7
            end = n
            for m in range((h if h is not None else k) + 1, n):
                if lines[m].heading and (lines[m].heading <= level or unit_start(m) < m):
                    end = unit_start(m)
                    break
            found[line.label] = ("intro" if level == 1 else "section", k, end)
        if line.exercise:
            end = n
            for m in range(k + 1, n):
                if lines[m].solution == line.exercise:
                    # the solution ends at its closing fence (or solution-end)
                    end = next((e + 1 for e in range(m + 1, n)
                                if lines[e].closes in ("solution", "solution-end")), n)
                    break
                if lines[m].exercise or lines[m].heading:
                    end = unit_start(m)
                    break
            found[line.exercise] = ("exercise", k, end)
    return found


@dataclass(frozen=True)
class Notebook:
    """A notebook's counts and core path, as the rule sees them."""

    name: str                      # "01_span"
    counts: Counts
    core_counts: Counts
    core_path: tuple[str, ...]
    kinds: dict                    # core-path label -> "section" / "exercise"
    problems: tuple[str, ...]      # what is wrong with the core path

    @property
    def full_minutes(self) -> int:
        return minutes(self.counts)

    @property
    def core_minutes(self) -> int:
        return minutes(self.core_counts)


def analyse(text: str, name: str = "") -> Notebook:
    """Counts, core path and core-path counts of one notebook's MyST text."""
    front, body = split_front_matter(text)
    lines = classify(body)
    labels = units(lines)
    core = tuple(((front.get("course") or {}).get("core_path")) or ())
    problems = []
    if not core:
        problems.append("no `course: core_path:` in the front matter")
    covered: set[int] = set()
    kinds = {}
    for label in core:
        if label not in labels:
            problems.append(f"core_path label {label!r} does not exist in the notebook")
            continue
        kind, start, end = labels[label]
        kinds[label] = kind
        covered.update(range(start, end))
    exercises = [label for label in core if kinds.get(label) == "exercise"]
    if len(exercises) != CORE_EXERCISES:
        problems.append(f"the core path has {len(exercises)} exercises, not {CORE_EXERCISES}: "
                        f"{exercises}")
    core_counts = total([lines[k] for k in sorted(covered)])
    notebook = Notebook(name, total(lines), core_counts, core, kinds, tuple(problems))
    if not problems and notebook.core_minutes > CORE_PATH_LIMIT:
        problems.append(f"the core path takes {notebook.core_minutes} minutes, more than "
                        f"{CORE_PATH_LIMIT}")
        notebook = Notebook(name, notebook.counts, core_counts, core, kinds, tuple(problems))
    return notebook


def notebook_path(name: str, root: Path = ROOT) -> Path:
    return root / "notebooks" / f"{name}.md"


def load(name: str, root: Path = ROOT) -> Notebook:
    return analyse(notebook_path(name, root).read_text(encoding="utf-8"), name)


def chapters(root: Path = ROOT) -> list[tuple[str, str]]:
    """(parent page or "", notebook name) for every notebook of `_toc.yml`, in order (each
    chapter is its notebook, so the parent is "" for the chapters)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    found = []

    def walk(entries, parent):
        for entry in entries or []:
            file = entry.get("file", "")
            if file.startswith("notebooks/"):
                found.append((parent, file.split("/", 1)[1]))
            walk(entry.get("sections"), file)

    for part in toc.get("parts", []):
        walk(part.get("chapters"), "")
    walk(toc.get("chapters"), "")
    return found
