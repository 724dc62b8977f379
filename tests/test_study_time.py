"""Checks of the study-time rule (_ext/study_time.py): the counting on a small MyST text
whose counts are known, and every notebook's core path and times."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))

import study_time  # noqa: E402
from study_time import Counts, analyse, count, minutes  # noqa: E402

NOTEBOOKS = [name for _, name in study_time.chapters(ROOT)]

# A notebook in miniature. Counted prose words are marked in the comments on the right
# (not part of the text); everything else is MyST syntax, hidden setup or code.
SYNTHETIC = """\
---
jupytext:
  text_representation:
    format_name: myst
course:
  core_path: [nb-toy, nb-toy-one, toy-ex-a, toy-ex-b]
---

(nb-toy)=
# Toy title

Intro has four words.

```{code-cell} ipython3
:tags: [remove-cell]

import hidden
hidden.setup()
```

```{code-cell} ipython3
import numpy as np

x = np.ones(3)
```

(nb-toy-one)=
## First section

See {ref}`the title <nb-toy>` and {glue:text}`toy_value:.3f` here.

```{code-cell} ipython3
---
tags: [hide-output]
---
print(x)
```

(nb-toy-two)=
## Second section

$a + b$ is math.

+++

## Exercises

::::{exercise}
:label: toy-ex-a

Do it.
::::

::::{solution} toy-ex-a
:class: dropdown

Done.
::::

```{exercise}
:label: toy-ex-b

Code it.
```

````{solution-start} toy-ex-b
:class: dropdown
````

Coded.

```{code-cell} ipython3
y = 2
```

````{solution-end}
````

```{exercise}
:label: toy-ex-c

Skip it.
```
"""
# Words: "Toy title" 2, "Intro has four words." 4 -> intro 6;
# "First section" 2, "See the title and 0 here." 6 -> 8;
# "Second section" 2, "$a + b$ is math." 4 ("+" has no letter) -> 6;
# "Exercises" 1; "Do it." 2, "Done." 1, "Code it." 2, "Coded." 1, "Skip it." 2 -> 8.
SYNTHETIC_WORDS = 6 + 8 + 6 + 1 + 8
# Code lines: 2 in the visible setup cell, 1 in the first section, 1 in a solution.
SYNTHETIC_CODE = 2 + 1 + 1


def test_counts_of_a_synthetic_notebook():
    assert count(SYNTHETIC) == Counts(words=SYNTHETIC_WORDS, code_lines=SYNTHETIC_CODE,
                                      exercises=3)


def test_core_path_counts_its_sections_and_exercises_only():
    toy = analyse(SYNTHETIC, "toy")
    assert toy.problems == ()
    assert toy.kinds == {"nb-toy": "intro", "nb-toy-one": "section",
                         "toy-ex-a": "exercise", "toy-ex-b": "exercise"}
    # intro 6 words and 2 code lines; first section 8 words and 1 line; exercise a
    # "Do it. Done." 3 words; exercise b "Code it. Coded." 3 words and 1 line
    assert toy.core_counts == Counts(words=6 + 8 + 3 + 3, code_lines=2 + 1 + 1, exercises=2)


def test_the_rule_adds_reading_code_and_exercises_and_rounds():
    per_exercise = study_time.MINUTES_PER_EXERCISE
    assert minutes(Counts(exercises=10)) == pytest.approx(10 * per_exercise, abs=2.5)
    words = study_time.WORDS_PER_MINUTE * 100
    assert minutes(Counts(words=words)) == 100
    lines = 60 * 100 // study_time.SECONDS_PER_CODE_LINE
    assert minutes(Counts(code_lines=lines)) == 100
    assert all(minutes(Counts(words=w)) % study_time.ROUND_TO == 0 for w in range(0, 5000, 37))
    # more text never takes less time
    times = [minutes(Counts(words=w, code_lines=w // 10, exercises=3)) for w in range(0, 6000, 50)]
    assert times == sorted(times)


QUESTION_CELL = """\
Some prose of five words.

```{code-cell} ipython3
:tags: [remove-input]

number_question(
    "sc-toy-one",
    "A question?",
    answer=float(x),
    right="Because.",
)
```

```{code-cell} ipython3
:tags: [remove-input]

shown_but_not_a_question(x)
```
"""


def test_a_question_cell_counts_one_question_and_no_code_lines():
    # the question cell's code is hidden from the reader; the other remove-input cell's
    # code is hidden too, but it is no question: its line is counted as before
    assert count(QUESTION_CELL) == Counts(words=5, code_lines=1, questions=1)
    assert minutes(Counts(questions=10)) == 10 * study_time.MINUTES_PER_QUESTION


def test_a_missing_core_path_label_is_a_problem():
    broken = SYNTHETIC.replace("nb-toy-one, toy-ex-a", "nb-toy-none, toy-ex-a")
    problems = analyse(broken, "toy").problems
    assert any("'nb-toy-none' does not exist" in p for p in problems), problems


def test_a_core_path_needs_exactly_two_exercises():
    three = SYNTHETIC.replace("toy-ex-b]", "toy-ex-b, toy-ex-c]")
    assert any("3 exercises" in p for p in analyse(three, "toy").problems)


def test_there_are_notebooks_in_the_table_of_contents():
    assert len(NOTEBOOKS) >= 8, NOTEBOOKS


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_core_path_has_two_exercises_that_exist(name):
    notebook = study_time.load(name, ROOT)
    text = (ROOT / "notebooks" / f"{name}.md").read_text()
    exercises = re.findall(r"\{exercise\}[^\n]*\n:label: (\S+)", text)
    core = notebook.core_path
    assert core, f"{name}.md has no `course: core_path:` in its front matter"
    on_path = [label for label in core if label in exercises]
    assert len(on_path) == 2, f"{name}: core-path exercises {on_path}"
    assert not notebook.problems, f"{name}: {notebook.problems}"
    assert notebook.kinds[core[0]] == "intro", (
        f"{name}: the core path starts with the notebook's title label (its introduction)")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_core_path_takes_at_most_an_hour(name):
    notebook = study_time.load(name, ROOT)
    assert notebook.core_minutes <= study_time.CORE_PATH_LIMIT, (
        f"{name}: core path {notebook.core_minutes} minutes; shorten it in the front matter")
    assert notebook.core_minutes < notebook.full_minutes


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_whole_notebook_takes_one_and_a_half_to_three_hours(name):
    # A careful student's estimate for these notebooks; outside it the rule needs a look.
    assert 90 <= study_time.load(name, ROOT).full_minutes <= 180


def test_whole_course_takes_fifteen_to_twenty_hours():
    total = sum(study_time.load(name, ROOT).full_minutes for name in NOTEBOOKS)
    assert 15 * 60 <= total <= 20 * 60, total


STUDENT_PAGES = sorted((ROOT / "notebooks").glob("*.md"))   # each chapter is its notebook


@pytest.mark.parametrize("page", STUDENT_PAGES, ids=lambda p: p.stem)
def test_no_study_time_is_typed_by_hand(page):
    text = page.read_text()
    typed = re.findall(r"about \d+ (?:minutes|hours?)|\d+ minutes", text)
    assert not typed, f"{page.name}: {typed}; use the study-time role"
    time_line = re.search(r"^\*\*Time:\*\*(?:.+\n?)+", text, re.M)   # to the blank line
    assert time_line, f"{page.name} has no **Time:** line"
    assert "{study-time}`" in time_line[0], f"{page.name}: {time_line[0]}"


def build_toy_site(tmp_path, notebook_text):
    """Build a two-page Sphinx site (the toy notebook and a page using the roles) with the
    extension; return the page's HTML and the build's warnings."""
    from io import StringIO

    from sphinx.application import Sphinx

    src = tmp_path / "src"
    (src / "notebooks").mkdir(parents=True)
    (src / "notebooks" / "01_toy.md").write_text(notebook_text)
    (src / "_toc.yml").write_text(
        "format: jb-book\nroot: index\nchapters:\n  - file: page\n    sections:\n"
        "      - file: notebooks/01_toy\n")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_nb', 'sphinx_exercise', 'study_time']\n"
        "nb_execution_mode = 'off'\nnumfig = True\n")
    (src / "index.md").write_text("# Toy\n\n```{toctree}\npage\nnotebooks/01_toy\n```\n")
    (src / "page.md").write_text(
        "# Page\n\nCore {study-time}`01_toy:core`, full {study-time}`01_toy:full`.\n\n"
        "Path: {core-path}`01_toy`.\n\n```{study-time-table}\n```\n")
    warnings = StringIO()
    app = Sphinx(str(src), str(src), str(tmp_path / "html"), str(tmp_path / "doctrees"),
                 "html", status=None, warning=warnings, freshenv=True)
    app.build()
    return (tmp_path / "html" / "page.html").read_text(), warnings.getvalue()


def test_the_roles_print_the_computed_times_and_link_the_core_path(tmp_path):
    html, warnings = build_toy_site(tmp_path, SYNTHETIC.replace("jupytext:", (
        "kernelspec:\n  name: python3\n  display_name: Python 3\njupytext:")))
    toy = analyse(SYNTHETIC, "01_toy")
    assert "study-time" not in warnings, warnings
    assert f"Core {study_time.format_minutes(toy.core_minutes)}" in re.sub(r"<[^>]+>", "", html)
    assert 'href="notebooks/01_toy.html#nb-toy-one"' in html      # a section of the path
    assert 'href="notebooks/01_toy.html#toy-ex-b"' in html        # an exercise of the path
    assert "First section" in html and "All chapters" in html


def test_a_core_path_label_that_does_not_exist_is_a_build_warning(tmp_path):
    broken = SYNTHETIC.replace("nb-toy-one, toy-ex-a", "nb-toy-none, toy-ex-a")
    _, warnings = build_toy_site(tmp_path, broken.replace("jupytext:", (
        "kernelspec:\n  name: python3\n  display_name: Python 3\njupytext:")))
    assert "core_path label 'nb-toy-none' does not exist" in warnings, warnings
