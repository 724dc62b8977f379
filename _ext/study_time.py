"""A Sphinx extension (`_config.yml`): the roles and the table that print study times.

The rule that computes them from the notebooks' own text is study_time_rule.py (its
docstring says what is counted); this file prints its results:

* role ``{study-time}`core``` / ``{study-time}`full``` in a notebook (its own counts);
  ``{study-time}`01_span:core``` anywhere else. It prints e.g. "45 minutes".
* role ``{core-path}`01_span``` prints the core path as links to its sections and
  exercises.
* role ``{study-time-constant}`WORDS_PER_MINUTE``` prints a constant of the rule.
* directive ``{study-time-table}`` (no arguments) prints a table of every notebook of
  `_toc.yml`: chapter, words, code lines, exercises, core and full times, and a total.

The source files are read at read time and noted as dependencies, so a changed notebook
rebuilds every page that shows its times. A core-path label that does not exist, or a
core path without exactly two exercises, is a build warning (an error in the strict
build, `-W`).

    python _ext/study_time.py     # the table, in the terminal
"""

from __future__ import annotations

from pathlib import Path

from study_time_rule import (  # noqa: F401  (re-exported: tests and scripts use study_time.X)
    COMMENT,
    CONSTANTS,
    CORE_EXERCISES,
    CORE_PATH_LIMIT,
    Counts,
    DIRECTIVE,
    FENCE,
    HEADING,
    LABEL,
    LINK,
    LIST_MARKER,
    Line,
    MINUTES_PER_EXERCISE,
    MINUTES_PER_QUESTION,
    Notebook,
    OPTION,
    READ_CODE,
    ROLE,
    ROOT,
    ROUND_TO,
    SECONDS_PER_CODE_LINE,
    TITLED,
    WORD,
    WORDS_PER_MINUTE,
    analyse,
    chapters,
    classify,
    count,
    format_minutes,
    load,
    minutes,
    notebook_path,
    prose_words,
    short_minutes,
    split_front_matter,
    total,
    units,
)
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.roles import XRefRole
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole
from sphinx.util.nodes import make_refnode

logger = logging.getLogger(__name__)
REF = XRefRole(lowercase=True, innernodeclass=nodes.inline, warn_dangling=True)
NUMREF = XRefRole(lowercase=True, warn_dangling=True)
DOC = XRefRole(warn_dangling=True, innernodeclass=nodes.inline)


def _notebook(env, name: str, location) -> Notebook | None:
    """Read a notebook from disk, note it as a dependency, and warn about its problems."""
    path = notebook_path(name, Path(env.srcdir))
    if not path.exists():
        logger.warning("study-time: no notebook %s", path, location=location,
                       type="study_time", subtype="missing")
        return None
    env.note_dependency(str(path))
    notebook = analyse(path.read_text(encoding="utf-8"), name)
    for problem in notebook.problems:
        logger.warning("study-time: %s: %s", path.name, problem, location=location,
                       type="study_time", subtype="core_path")
    return notebook


class StudyTimeRole(SphinxRole):
    """``{study-time}`core``` / ``full`` (this notebook) or ``01_span:core``."""

    def run(self):
        name, _, which = self.text.strip().rpartition(":")
        if not name:
            name = self.env.docname.rsplit("/", 1)[-1]
        if which not in ("core", "full"):
            msg = self.inliner.reporter.error(
                f"study-time: {self.text!r}: expected 'core', 'full' or 'NN_name:core|full'",
                line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        notebook = _notebook(self.env, name, self.get_location())
        if notebook is None:
            return [nodes.inline(text="?")], []
        value = notebook.core_minutes if which == "core" else notebook.full_minutes
        return [nodes.inline(text=format_minutes(value), classes=["study-time"])], []


class CorePathRole(SphinxRole):
    """``{core-path}`01_span```: the core path as links, e.g. "Intro, ..., and Exercise 1.3"."""

    def run(self):
        name = self.text.strip() or self.env.docname.rsplit("/", 1)[-1]
        notebook = _notebook(self.env, name, self.get_location())
        if notebook is None:
            return [nodes.inline(text="?")], []
        links, messages = [], []
        for label in notebook.core_path:
            kind = notebook.kinds.get(label)
            if kind == "section":       # its title, mathematics included (SectionLinks)
                link = section_link("", label=label, refdoc=self.env.docname)
                self.set_source_info(link)
                links.append([link])
                continue
            role, role_name = (NUMREF, "std:numref") if kind == "exercise" else (REF, "std:ref")
            target = f"the introduction <{label}>" if kind == "intro" else label
            result, msgs = role(role_name, f"{{{role_name}}}`{target}`", target, self.lineno,
                                self.inliner, {}, [])
            links.append(result)
            messages.extend(msgs)
        out: list = []
        for k, link in enumerate(links):
            if k:
                out.append(nodes.Text(" and " if k == len(links) - 1 else "; "))
            out.extend(link)
        return [nodes.inline("", "", *out, classes=["core-path"])], messages


class section_link(nodes.Inline, nodes.Element):
    """A link to a labelled section, shown as the section's title (SectionLinks fills it)."""


class SectionLinks(SphinxPostTransform):
    """Turn each `section_link` into a link whose text is the section's title as typeset.

    `{ref}` would show a title as plain text, so mathematics in a title would be raw TeX;
    this copies the title's nodes (math included) from the target document's doctree.
    """

    default_priority = 5

    def run(self, **kwargs) -> None:
        std = self.env.get_domain("std")
        doctrees: dict = {}
        for node in list(self.document.findall(section_link)):
            label = node["label"]
            if label not in std.labels:
                logger.warning("study-time: undefined label %r on a core path", label,
                               location=node, type="study_time", subtype="core_path")
                node.replace_self(nodes.inline(text=label))
                continue
            docname, labelid, sectname = std.labels[label]
            if docname not in doctrees:
                doctrees[docname] = self.env.get_doctree(docname)
            title = [nodes.Text(sectname)]
            for section in doctrees[docname].findall(nodes.section):
                if labelid in section["ids"] and isinstance(section[0], nodes.title):
                    title = [child.deepcopy() for child in section[0].children]
                    break
            inner = nodes.inline("", "", *title, classes=["std", "std-ref"])
            node.replace_self(make_refnode(self.app.builder, node.get("refdoc", self.env.docname),
                                           docname, labelid, inner))


class StudyTimeConstantRole(SphinxRole):
    """``{study-time-constant}`WORDS_PER_MINUTE```: a constant of the rule."""

    def run(self):
        key = self.text.strip()
        if key not in CONSTANTS:
            msg = self.inliner.reporter.error(
                f"study-time-constant: {key!r} is not one of {sorted(CONSTANTS)}",
                line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        return [nodes.inline(text=str(CONSTANTS[key]))], []


class StudyTimeTable(SphinxDirective):
    """A table of every notebook's counts and times, with a total row."""

    has_content = False

    def run(self):
        root = Path(self.env.srcdir)
        self.env.note_dependency(str(root / "_toc.yml"))
        headers = ["Chapter", "Prose words", "Code lines", "Exercises", "Core path",
                   "Whole notebook"]
        rows, everything, core_sum, full_sum = [], Counts(), 0, 0
        for number, (page, name) in enumerate(chapters(root), start=1):
            notebook = _notebook(self.env, name, self.get_location())
            if notebook is None:
                continue
            chapter = nodes.paragraph()
            chapter += nodes.Text(f"{number}. ")
            target = f"/{page}" if page else f"/notebooks/{name}"
            link, _ = DOC("std:doc", f"{{doc}}`{target}`", target, self.lineno,
                          self.state.inliner, {}, [])
            chapter += link
            c = notebook.counts
            rows.append([chapter, f"{c.words:,}", f"{c.code_lines:,}", c.exercises,
                         short_minutes(notebook.core_minutes),
                         short_minutes(notebook.full_minutes)])
            everything = everything + c
            core_sum += notebook.core_minutes
            full_sum += notebook.full_minutes
        rows.append([nodes.paragraph(text="All chapters"), f"{everything.words:,}",
                     f"{everything.code_lines:,}", everything.exercises,
                     short_minutes(core_sum), short_minutes(full_sum)])

        table = nodes.table(classes=["study-time-table"])
        group = nodes.tgroup(cols=len(headers))
        table += group
        for width in (40, 12, 12, 12, 14, 16):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        head += self._row(headers)
        body = nodes.tbody()
        group += body
        for row in rows:
            body += self._row(row)
        return [table]

    @staticmethod
    def _row(cells):
        row = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=str(cell))
            row += entry
        return row


def setup(app: Sphinx) -> dict:
    app.add_role("study-time", StudyTimeRole())
    app.add_role("core-path", CorePathRole())
    app.add_role("study-time-constant", StudyTimeConstantRole())
    app.add_directive("study-time-table", StudyTimeTable)
    app.add_node(section_link)
    app.add_post_transform(SectionLinks)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":      # python _ext/study_time.py: the table, in the terminal
    print(f"{'notebook':<22}{'words':>7}{'code':>6}{'ex':>4}{'core':>7}{'full':>7}")
    for _, name in chapters():
        nb = load(name)
        print(f"{name:<22}{nb.counts.words:>7}{nb.counts.code_lines:>6}{nb.counts.exercises:>4}"
              f"{nb.core_minutes:>7}{nb.full_minutes:>7}  {'; '.join(nb.problems)}")
