"""A Sphinx extension, loaded by `_config.yml` (`sphinx.local_extensions`), for the book's two
editions: the full one (`make book`) and the student one (`make book-student`), which is the
same sources built with sphinx-exercise's own `hide_solutions = True` (set by the student
configuration that `scripts/student_edition.py` writes).

1. Gated solutions hidden too. sphinx-exercise 1.2.1 hides a `{solution}` block when
   `hide_solutions` is set, but a gated one (`{solution-start}` ... `{solution-end}`, used
   where a solution has code cells) is not: its start directive returns nothing, so the
   solution's paragraphs and code cells stay on the page and the orphaned end marker
   crashes the HTML writer (upstream issue executablebooks/sphinx-exercise#89, open). Here
   the start directive always builds its node, sphinx-exercise's own transform merges the
   gated solution into one solution node as usual, and, when `hide_solutions` is set, a
   transform that runs right after it removes those merged solution nodes.
2. The version: `release` and `version` come from `pyproject.toml` (the course's one version
   number), and the footer of every page shows it, with a link to the edition's PDF only
   when that PDF has been printed (`make pdf` writes it to `_build/pdf/`): the build then
   copies it to the root of the site, so a site never links a PDF it does not hold (issue
   28: a `make book` site linked a missing PDF from every page). When the PDF appears or
   goes, every page is written again.
3. Downloads and launch buttons open the edition's Jupyter notebook. The theme offers, as
   a notebook page's `.ipynb`, the notebook this build executed; after the build it is
   replaced by the committed `notebooks/reader/<name>.ipynb` (solutions folded), or in the
   student edition by `notebooks/student/<name>.ipynb` (and its `.md`), which have no
   solutions (both written by scripts/jupyter_notebooks.py). The theme's Binder and Colab
   buttons open the `.ipynb` beside the page's source; `launch_paths` points them at the
   same edition's notebook instead.
4. The assignment (issue 35). The student edition's download menu of a chapter offers the
   assignment, the notebook a student hands in (with its `grader.check` cells, the course
   version and the assignment's identifier) and its checks' `tests/` folder, as one zip,
   when `make assignments` has built it (`_build/assignments/<name>/student/`); otherwise
   the same entry says that the notebook to hand in comes from the instructor and links the
   instructor guide's section on assignments. The page's own `.ipynb` is the notebook to
   read, not the one to hand in.
"""

import html
import shutil
import tomllib
import zipfile
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx_exercise.directive import SolutionStartDirective
from sphinx_exercise.nodes import solution_node
from sphinx_exercise.transforms import MergeGatedSolutions

ROOT = Path(__file__).resolve().parents[1]
PDF_NAMES = {False: "attention-as-linear-algebra.pdf", True: "attention-as-linear-algebra-student.pdf"}
PDF_DIR = ROOT / "_build" / "pdf"   # where `make pdf` prints both editions (Makefile PDF_DIR)
ASSIGNMENTS = ROOT / "_build" / "assignments"   # where `make assignments` writes them
ASSIGNMENT_ZIPS = "_downloads/assignments"      # in the student site


def printed_pdf(app: Sphinx) -> Path | None:
    """The edition's printed PDF, if `make pdf` has made it."""
    path = PDF_DIR / PDF_NAMES[app.config.hide_solutions]
    return path if path.is_file() else None


def course_version() -> str:
    """The course's version, from pyproject.toml (CITATION.cff and CHANGELOG.md repeat it)."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


class GatedSolutionStart(SolutionStartDirective):
    """`{solution-start}` that always builds its node, so that sphinx-exercise can merge the
    gated solution before RemoveHiddenGatedSolutions drops it."""

    def run(self):
        config = self.env.app.config
        hide = config.hide_solutions
        config.hide_solutions = False
        try:
            return super().run()
        finally:
            config.hide_solutions = hide


class RemoveHiddenGatedSolutions(SphinxTransform):
    """With `hide_solutions`, remove the solution nodes left: sphinx-exercise's own directive
    already returned none for the plain `{solution}` blocks, so these are the merged gated
    ones."""

    default_priority = MergeGatedSolutions.default_priority + 1

    def apply(self):
        if not self.config.hide_solutions:
            return
        for node in list(self.document.findall(solution_node)):
            node.parent.remove(node)


def set_version(app: Sphinx, config) -> None:
    config.release = config.version = course_version()
    # pages write {{ course_version }} (MyST substitution), e.g. the licence page's citation
    subs = dict(getattr(config, "myst_substitutions", None) or {})
    subs["course_version"] = course_version()
    config.myst_substitutions = subs


def add_footer(app: Sphinx, pagename, templatename, context, doctree) -> None:
    link = ""
    if printed_pdf(app) is not None:
        pdf = context["pathto"](PDF_NAMES[app.config.hide_solutions], 1)
        link = f' · <a href="{html.escape(pdf)}">the whole book as PDF</a>'
    context["theme_extra_footer"] = (
        f'<p class="edition">{html.escape(app.config.html_title)}, version '
        f'<span class="edition-version">{html.escape(course_version())}</span>{link}</p>'
    )


def rewrite_all_when_pdf_changes(app: Sphinx, env, added, changed, removed):
    """Every page shows the PDF link or not: when the PDF appears or goes, all are written."""
    has_pdf = printed_pdf(app) is not None
    if getattr(env, "course_has_pdf", None) == has_pdf:
        return []
    env.course_has_pdf = has_pdf
    return sorted(env.found_docs - set(added) - set(changed) - set(removed))


def copy_pdf(app: Sphinx, exception) -> None:
    """The printed PDF at the root of the site, beside the pages that link it."""
    pdf = printed_pdf(app)
    if exception is None and app.builder.name == "html" and pdf is not None:
        shutil.copyfile(pdf, Path(app.outdir) / pdf.name)


def copy_committed_notebooks(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html" or app.builder.name != "html":
        return
    student = app.config.hide_solutions
    sources = Path(app.outdir) / "_sources"
    for docname in sorted(app.env.found_docs):
        source = Path(app.env.doc2path(docname))
        reference = source.with_suffix(".ipynb")
        if source.suffix != ".md" or not reference.exists():
            continue
        given = reference.parent / ("student" if student else "reader") / reference.name
        shutil.copyfile(given, sources / f"{docname}.ipynb")
        if student:
            shutil.copyfile(given.with_suffix(".md"), sources / f"{docname}.md")


def launch_paths(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Binder and Colab open notebooks/reader/<name>.ipynb (student edition:
    notebooks/student/), not the reference the theme links (it runs at priority 501)."""
    reference = f"{pagename}.ipynb"
    edition = "student" if app.config.hide_solutions else "reader"
    given = f"{Path(pagename).parent.as_posix()}/{edition}/{Path(pagename).name}.ipynb"
    if not (ROOT / given).exists():
        return
    for group in context.get("header_buttons", []):
        if group.get("label") == "launch-buttons":
            for button in group["buttons"]:
                if "url" in button and button["url"].endswith(reference):
                    button["url"] = button["url"][:-len(reference)] + given


def assignment_folder(name: str) -> Path | None:
    """The student folder of a chapter's assignment (`make assignments`), if it is built."""
    folder = ASSIGNMENTS / name / "student"
    return folder if (folder / f"{name}.ipynb").is_file() else None


def assignment_button(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The student edition's download menu of a chapter: the assignment to hand in."""
    name = Path(pagename).name
    if not app.config.hide_solutions or not (ROOT / f"{pagename}.md").is_file() \
            or Path(pagename).parent.name != "notebooks":
        return
    if assignment_folder(name):
        button = {"type": "link", "text": "assignment",
                  "url": context["pathto"](f"{ASSIGNMENT_ZIPS}/{name}-assignment.zip", 1),
                  "tooltip": "Download the assignment to hand in: its notebook and checks (.zip)",
                  "icon": "fas fa-file-archive", "label": "download-assignment-button"}
    else:
        button = {"type": "link", "text": "assignment: ask",
                  "url": context["pathto"]("chapters/instructor_guide") + "#guide-assign-grade",
                  "tooltip": "The notebook to hand in comes from your instructor (this page's "
                             ".ipynb has no checks and no assignment identifier)",
                  "icon": "fas fa-info-circle", "label": "download-assignment-button"}
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].append(button)


def copy_assignments(app: Sphinx, exception) -> None:
    """Each built assignment's student folder as one zip, where assignment_button links it."""
    if exception is not None or app.builder.name != "html" or not app.config.hide_solutions:
        return
    for docname in sorted(app.env.found_docs):
        folder = assignment_folder(Path(docname).name)
        if Path(docname).parent.name != "notebooks" or folder is None:
            continue
        out = Path(app.outdir) / ASSIGNMENT_ZIPS / f"{Path(docname).name}-assignment.zip"
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(folder.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts:
                    z.write(path, Path(folder.parent.name) / path.relative_to(folder))


def setup(app: Sphinx):
    app.setup_extension("sphinx_exercise")
    app.add_directive("solution-start", GatedSolutionStart, override=True)
    app.add_transform(RemoveHiddenGatedSolutions)
    app.connect("config-inited", set_version)
    app.connect("html-page-context", add_footer)
    app.connect("html-page-context", launch_paths, priority=502)
    app.connect("html-page-context", assignment_button, priority=502)
    app.connect("env-get-outdated", rewrite_all_when_pdf_changes)
    app.connect("build-finished", copy_pdf)
    app.connect("build-finished", copy_committed_notebooks)
    app.connect("build-finished", copy_assignments)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
