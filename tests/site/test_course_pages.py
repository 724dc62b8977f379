"""Checks, without a browser, that the pages for people cannot drift from the notebooks
(exercises listed, study times computed by _ext/study_time.py rather than typed) and that
Binder is set up the way the launch buttons and the troubleshooting page say."""

import re
import sys

import pytest
import yaml
from site_config import PAGES, ROOT, site_dir

sys.path.insert(0, str(ROOT / "_ext"))
import study_time  # noqa: E402

GUIDE = ROOT / "chapters" / "instructor_guide.md"


def toc_notebooks():
    toc = (ROOT / "_toc.yml").read_text()
    return [ROOT / f"{name}.md" for name in re.findall(r"^\s*- file: (notebooks/\S+)", toc, re.M)]


def exercise_labels(notebook):
    text = notebook.read_text()
    return re.findall(r"[`:]{3,}\{exercise\}[^\n]*\n:label: (\S+)", text)


def chapter_items():
    """The guide's numbered list: chapter label -> the text of its item."""
    text = GUIDE.read_text()
    items = re.split(r"^\d+\. (?=\{ref\}`ch-)", text, flags=re.M)[1:]
    return {re.match(r"\{ref\}`(ch-[\w-]+)`", item)[1]: item for item in items}


def chapter_page(label):
    """The chapter's page: its notebook, whose title carries the chapter's label."""
    for page in (ROOT / "notebooks").glob("*.md"):
        if re.search(rf"^\({re.escape(label)}\)=$", page.read_text(), re.M):
            return page
    raise AssertionError(f"no notebook has the chapter label {label}")


@pytest.mark.parametrize("notebook", toc_notebooks(), ids=lambda p: p.stem)
def test_instructor_guide_lists_every_exercise(notebook):
    guide = GUIDE.read_text()
    labels = exercise_labels(notebook)
    assert labels, f"{notebook.name} has no exercises"
    missing = [label for label in labels if f"{{numref}}`{label}`" not in guide]
    assert not missing, f"chapters/instructor_guide.md does not list {missing}"


def test_instructor_guide_has_every_chapter_of_the_table_of_contents():
    toc = (ROOT / "_toc.yml").read_text()
    chapters = re.findall(r"^\s*- file: notebooks/(\S+)$", toc, re.M)
    assert len(chapters) == 9, chapters
    listed = {chapter_page(label).stem for label in chapter_items()}
    assert set(chapters) <= listed, f"not in the guide: {set(chapters) - listed}"


@pytest.mark.parametrize("label", list(chapter_items()))
def test_instructor_guide_computes_each_chapters_times_from_its_notebook(label):
    # No time is typed: the guide's item and the chapter's notebook both ask
    # _ext/study_time.py for the times of that notebook.
    item = chapter_items()[label]
    page = chapter_page(label)
    notebook = page.stem
    assert notebook in {name for _, name in study_time.chapters(ROOT)}
    assert not re.search(r"about \d+ minutes", item), f"{label}: a time typed by hand"
    for role in (f"{{study-time}}`{notebook}:core`", f"{{study-time}}`{notebook}:full`",
                 f"{{core-path}}`{notebook}`"):
        assert role in item, f"guide, {label}: no {role}"
    for role in ("{study-time}`core`", "{study-time}`full`", f"{{core-path}}`{notebook}`"):
        assert role in page.read_text(), f"{page.name}: no {role}"


def test_instructor_guide_shows_the_study_time_table_and_the_rule():
    guide = GUIDE.read_text()
    assert "```{study-time-table}" in guide
    for constant in ("WORDS_PER_MINUTE", "SECONDS_PER_CODE_LINE", "MINUTES_PER_EXERCISE",
                     "MINUTES_PER_QUESTION", "ROUND_TO"):
        assert f"{{study-time-constant}}`{constant}`" in guide, constant
    assert "seven and a half hours" not in guide
    assert "either order" not in guide


def test_binder_installs_the_repository_and_opens_md_as_markdown():
    # repo2docker reads binder/ when it exists (and then ignores the root's files).
    binder = ROOT / "binder"
    assert not (ROOT / ".binder").exists()
    assert re.fullmatch(r"python-3\.1[1-9]\n?", (binder / "runtime.txt").read_text())
    requirements = (binder / "requirements.txt").read_text().splitlines()
    assert "-e ." in requirements, "Binder must install the repository (import lib)"
    post_build = (binder / "postBuild").read_text()
    # the launch buttons open .ipynb notebooks: no default viewer, so README.md opens as Markdown
    assert "set-default-viewer" not in post_build
    assert (binder / "postBuild").stat().st_mode & 0o111, "postBuild must be executable"


def test_config_points_the_launch_buttons_at_the_repository():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["repository"]["url"].startswith("https://github.com/")
    assert config["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert config["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert config["launch_buttons"]["thebe"] is False


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("notebooks/")])
def test_a_folded_check_is_named_for_what_it_checks_closed_and_opened(page):
    """Each folded cell of a chapter is a check: closed, its bar names it ("Check: the
    causal mask is the lower triangle..."); opened, the bar says "Hide this check"
    (_config.yml's nb_code_prompt_hide), not myst-nb's "Hide code cell content"."""
    html = (site_dir() / page).read_text(encoding="utf-8")
    closed = re.findall(r'<p class="collapsed admonition-title">(.*?)</p>', html)
    opened = re.findall(r'<p class="expanded admonition-title">(.*?)</p>', html)
    # issue 43: at most two a chapter, only where the prose points to one as evidence
    assert len(closed) == len(opened) <= 2, (page, len(closed), len(opened))
    if not closed:
        return
    assert [t for t in closed if not t.startswith("Check: ")] == []
    assert set(opened) == {"Hide this check"}, set(opened)
