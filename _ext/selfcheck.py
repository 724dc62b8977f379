"""A Sphinx extension, loaded by `_config.yml` (`sphinx.local_extensions`): the self-check
questions on the page (issue 34).

A question is the output of a notebook cell that displays a `lib.selfcheck.Question`. While
the site is built (`COURSE_SITE_BUILD`, which _ext/explorers.py sets for the kernels), its
`text/markdown` is a MyST directive, ```` ```{selfcheck} <id> ```` ````, whose one line of
content is the question's data as JSON; myst-nb parses a cell's Markdown output with the
book's own MyST parser once `nb_render_markdown_format` is "myst" (set here: the book has no
other Markdown output). The directive below parses each text of the question (the question,
the options, every explanation) as MyST into the page, so its math is typeset at build time
by KaTeX like the rest (_ext/katex_math.py), and writes around them the form: a labelled
text input (number, shape) or a group of labelled radio buttons or checkboxes (choice,
which output is wrong), a "Check" button, a live region for the verdict, and the
explanations and the answer, hidden (`hidden`) until the reader has tried.

`_ext/selfcheck.js` answers back, in the browser, with no server: it reads the question's
data (the expected answer, the tolerance, the classic wrong answers' keys) from an inert
`<script type="application/json">` and puts the verdict and the matching explanation in the
live region. It and `_ext/selfcheck.css` are added only to the pages that have a question
and served from `_static/selfcheck/`. The one-page build (singlehtml), which is printed to
PDF, gets no script: print shows each question with its options in place, and
scripts/print_pdf.py moves the answers to the chapter's end.
"""

import html
import json
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

HERE = Path(__file__).resolve().parent
STATIC_SUBDIR = "selfcheck"          # _static/selfcheck/ in the built site
MARKER = '<div class="selfcheck" '   # what visit_selfcheck writes
OWN_FILES = ("selfcheck.js", "selfcheck.css")
KINDS = ("number", "shape", "choice", "wrong_output")


class selfcheck(nodes.General, nodes.Element):
    """A question: its parts are `selfcheck_part` children, in order."""


class selfcheck_part(nodes.General, nodes.Element):
    """One part of a question: `role` is question, option, feedback or answer."""


def attr(value) -> str:
    return (str(value).replace("&", "&amp;").replace('"', "&quot;")
            .replace("<", "&lt;").replace(">", "&gt;"))


class SelfCheckDirective(SphinxDirective):
    """```{selfcheck} <id>`` with the question's data (lib.selfcheck.Question.data) as its
    one line of JSON content."""

    required_arguments = 1
    has_content = True

    def markdown(self, text: str, inline: bool = False) -> list[nodes.Node]:
        holder = nodes.Element()
        self.state.nested_parse(StringList(text.splitlines(), self.get_source_info()[0]),
                                self.content_offset, holder)
        children = list(holder.children)
        if inline and len(children) == 1 and isinstance(children[0], nodes.paragraph):
            return list(children[0].children)
        return children

    def part(self, role: str, text: str | None = None, inline=False, **attrs) -> selfcheck_part:
        node = selfcheck_part(role=role, **attrs)
        if text is not None:
            node += self.markdown(text, inline=inline)
        return node

    def run(self) -> list[nodes.Node]:
        qid = self.arguments[0]
        try:
            data = json.loads("\n".join(self.content))
        except json.JSONDecodeError as error:
            raise self.error(f"selfcheck {qid}: its data are not JSON ({error})") from error
        if data.get("id") != qid or data.get("kind") not in KINDS:
            raise self.error(f"selfcheck {qid}: data of another question or of no kind")
        kind = data["kind"]
        script = {"kind": kind, "wrong": [w["key"] for w in data["wrong"]],
                  "hint": bool(data.get("hint"))}
        if kind == "number":
            script.update(answer=data["answer"], tol=data["tol"])
        elif kind == "shape":
            script.update(answer=data["answer"])
        else:
            script.update(correct=data["correct"], options=len(data["options"]))
        node = selfcheck(ids=[qid], kind=kind, prompt=data["prompt"],
                         several=kind == "choice" and len(data["correct"]) > 1,
                         data=json.dumps(script, separators=(",", ":")))
        self.set_source_info(node)
        node += self.part("question", data["text"])
        for index, option in enumerate(data.get("options", [])):
            if kind == "choice":
                node += self.part("option", option, inline=True, index=index)
            else:  # an output, shown as printed: a bare <pre>, not a code block, so that
                # sphinx-copybutton adds no button inside the form (its <button> has no type:
                # it submitted the form, and added Tab stops before Check; issue 47)
                opt = self.part("option", index=index)
                opt += nodes.raw("", f'<pre class="selfcheck-pre">{html.escape(option)}</pre>',
                                 format="html")
                node += opt
        node += self.part("feedback", data["right"], key="right")
        for i, wrong in enumerate(data["wrong"]):
            node += self.part("feedback", wrong["why"], key=f"w{i}",
                              label=wrong["label"].strip("`"))
        if data.get("hint"):
            node += self.part("feedback", data["hint"], key="hint")
        node += self.part("answer", f"**The answer: {data['answer_text']}.** {data['right']}")
        return [node]


# ---- HTML -------------------------------------------------------------------------------
def visit_selfcheck(self, node) -> None:
    qid = node["ids"][0]
    self.body.append(
        f'<div class="selfcheck" id="{qid}" data-kind="{node["kind"]}" role="group" '
        f'aria-labelledby="{qid}-label">\n'
        f'<p class="selfcheck-label" id="{qid}-label">Check yourself</p>\n')
    self.selfcheck_state = {"id": qid, "node": node, "form_open": False,
                            "form_closed": False}


def close_form(self, state) -> None:
    """After the question (number, shape) or the last option: the button, the reveal
    button, the live region."""
    node, qid = state["node"], state["id"]
    if node["kind"] in ("number", "shape"):
        mode = "decimal" if node["kind"] == "number" else "text"
        self.body.append(
            f'<form class="selfcheck-form" novalidate>\n'
            f'<label class="selfcheck-prompt" for="{qid}-input">{attr(node["prompt"])}</label>\n'
            f'<span class="selfcheck-row"><input id="{qid}-input" class="selfcheck-input" '
            f'type="text" inputmode="{mode}" autocomplete="off" spellcheck="false" '
            f'autocapitalize="off" aria-describedby="{qid}-question">\n')
    else:
        self.body.append("</fieldset>\n<span class=\"selfcheck-row\">")
    self.body.append(
        '<button type="submit" class="selfcheck-check">Check</button>\n'
        '<button type="button" class="selfcheck-reveal" hidden>Show the answer</button>'
        '</span>\n</form>\n'
        f'<div class="selfcheck-verdict" id="{qid}-verdict" role="status" '
        'aria-live="polite"></div>\n')
    state["form_closed"] = True


def depart_selfcheck(self, node) -> None:
    state = self.selfcheck_state
    if not state["form_closed"]:
        close_form(self, state)
    data = node["data"].replace("</", "<\\/")
    self.body.append(f'<script type="application/json" class="selfcheck-data">{data}'
                     '</script>\n</div>\n')
    del self.selfcheck_state


def visit_part(self, node) -> None:
    state = self.selfcheck_state
    qid, role = state["id"], node["role"]
    question = state["node"]
    if role == "question":
        self.body.append(f'<div class="selfcheck-question" id="{qid}-question">\n')
    elif role == "option":
        if not state["form_open"]:
            state["form_open"] = True
            self.body.append(
                '<form class="selfcheck-form" novalidate>\n<fieldset class="selfcheck-options">'
                f'<legend class="selfcheck-prompt">{attr(question["prompt"])}</legend>\n')
        index = node["index"]
        kind = "checkbox" if question["several"] else "radio"
        ident = f"{qid}-option-{index}"
        letter = (chr(ord("A") + index) + "." if question["kind"] == "choice"
                  else f"Output {index + 1}")
        self.body.append(
            f'<div class="selfcheck-option"><input type="{kind}" name="{qid}" '
            f'id="{ident}" value="{index}"')
        if question["kind"] == "choice":
            self.body.append(f'><label for="{ident}"><span class="selfcheck-letter">'
                             f'{letter}</span> ')
        else:
            self.body.append(f' aria-describedby="{ident}-text"><label for="{ident}">'
                             f'{letter}</label><div class="selfcheck-output" '
                             f'id="{ident}-text">')
    else:
        if role == "feedback" and not state["form_closed"]:
            close_form(self, state)
        key = f' data-key="{node["key"]}"' if role == "feedback" else ""
        if node.get("label"):       # what the reader answered, for the printed answers
            key += f' data-label="{attr(node["label"])}"'
        self.body.append(f'<div class="selfcheck-{role}"{key} hidden>\n')


def depart_part(self, node) -> None:
    state = self.selfcheck_state
    role = node["role"]
    if role == "option":
        self.body.append("</label></div>\n" if state["node"]["kind"] == "choice"
                         else "</div></div>\n")
    else:
        self.body.append("</div>\n")


def skip(self, node) -> None:
    raise nodes.SkipNode


# ---- assets -----------------------------------------------------------------------------
def add_assets(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """On a page with a question, its stylesheet, and (not in the one-page build that is
    printed) its script; on this page only (the builder restores its lists after each)."""
    if app.builder.format != "html" or MARKER not in context.get("body", ""):
        return
    app.builder.add_css_file(f"{STATIC_SUBDIR}/selfcheck.css")
    if app.builder.name in ("html", "dirhtml"):
        app.builder.add_js_file(f"{STATIC_SUBDIR}/selfcheck.js", defer="defer")


def copy_assets(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / "_static" / STATIC_SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    for name in OWN_FILES:
        (out / name).write_bytes((HERE / name).read_bytes())


def markdown_outputs_as_myst(app: Sphinx, config) -> None:
    """myst-nb parses a cell's text/markdown output as CommonMark unless told "myst":
    the question's directive needs MyST."""
    config.nb_render_markdown_format = "myst"


def setup(app: Sphinx):
    app.connect("config-inited", markdown_outputs_as_myst)
    app.add_node(selfcheck, html=(visit_selfcheck, depart_selfcheck),
                 latex=(skip, None), text=(skip, None), man=(skip, None),
                 texinfo=(skip, None))
    app.add_node(selfcheck_part, html=(visit_part, depart_part),
                 latex=(skip, None), text=(skip, None), man=(skip, None),
                 texinfo=(skip, None))
    app.add_directive("selfcheck", SelfCheckDirective)
    app.connect("html-page-context", add_assets)
    app.connect("build-finished", copy_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
