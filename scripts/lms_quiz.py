"""Each chapter's self-check questions as a quiz an LMS imports as it is (`make quiz`).

For every chapter, from the questions' data in its executed reference notebook
(``notebooks/<name>.ipynb``, the ``application/vnd.course.selfcheck+json`` outputs that
``lib.selfcheck`` writes; the page, the Jupyter notebooks and the PDF read the same data):

- ``_build/quiz/<name>.moodle.xml``, Moodle XML (Question bank > Import > Moodle XML
  format): a number with its tolerance and each classic wrong answer with its own
  feedback, any other answer getting the question's hint; a shape as a short answer in its
  usual spellings; a choice with each option's feedback (several right options share the
  marks, a wrong one takes them back); "which output is wrong" as a choice of outputs.
  Texts are HTML (written from the Markdown by Python-Markdown), math as ``\\(...\\)``
  for Moodle's MathJax filter.
- ``_build/quiz/<name>.canvas-qti.zip``, a QTI 1.2 package written by text2qti for Canvas
  (Settings > Import course content > QTI .zip file): the same questions; Canvas's
  numerical questions take one answer, so the classic wrong answers' explanations go into
  the feedback a wrong answer shows. Math is rendered by Canvas's own equation images.

tests/test_lms_quiz.py reads both back (their XML) as the questions
they came from: count, answers, tolerances, feedback. The instructor guide lists them.

    python scripts/lms_quiz.py                 # every chapter, into _build/quiz/
    python scripts/lms_quiz.py 03_masking      # one chapter
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import markdown
from text2qti.config import Config
from text2qti.qti import QTI
from text2qti.quiz import Quiz

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
OUT = ROOT / "_build" / "quiz"
MIME = "application/vnd.course.selfcheck+json"
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)


def chapters() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def chapter_questions(name: str) -> tuple[str, list[dict]]:
    """The chapter's title and its questions' data, in the page's order."""
    nb = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))
    title, questions = name, []
    for cell in nb["cells"]:
        source = "".join(cell.get("source", ""))
        if cell["cell_type"] == "markdown" and title == name:
            heading = re.search(r"^# (.+)$", source, re.M)
            if heading:
                title = heading.group(1).strip()
        for output in cell.get("outputs", []):
            data = output.get("data", {}).get(MIME)
            if data is not None:
                questions.append(data)
    return title, questions


# ---- Moodle: Moodle XML ------------------------------------------------------------------
def html_text(text: str) -> str:
    """Markdown with ``$...$`` math as HTML with ``\\(...\\)`` math (MathJax's delimiters):
    the math is set aside before Markdown runs, so that no backslash or underscore in it is
    read as Markdown."""
    maths = []

    def keep(match):
        display = match.group(1) is not None
        tex = match.group(1) if display else match.group(2)
        maths.append((r"\[" + tex + r"\]") if display else (r"\(" + tex + r"\)"))
        return f"\x00{len(maths) - 1}\x00"

    out = markdown.markdown(MATH.sub(keep, text))
    if out.startswith("<p>") and out.endswith("</p>") and out.count("<p>") == 1:
        out = out[3:-4]            # one paragraph: inline, as an option or a feedback reads
    return re.sub("\x00(\\d+)\x00", lambda m: html.escape(maths[int(m.group(1))],
                                                          quote=False), out)


def shape_spellings(shape) -> list[str]:
    """The spellings a reader types for a shape (the page accepts more; Moodle compares
    strings)."""
    items = [str(int(n)) for n in shape]
    one = ",)" if len(items) == 1 else ")"
    return list(dict.fromkeys([
        "(" + ", ".join(items) + one, "(" + ",".join(items) + one, ", ".join(items),
        ",".join(items), " x ".join(items), "x".join(items)]))


def output_html(option: str) -> str:
    """A printed output as the page shows it: its lines kept."""
    return f"<pre>{html.escape(option)}</pre>"


def _text(parent, tag, text, html_format=True):
    element = ET.SubElement(parent, tag, {"format": "html"} if html_format else {})
    ET.SubElement(element, "text").text = text
    return element


def _answer(question, fraction, text, feedback, fmt="moodle_auto_format", tolerance=None):
    answer = ET.SubElement(question, "answer", {"fraction": fraction, "format": fmt})
    ET.SubElement(answer, "text").text = text
    if tolerance is not None:
        ET.SubElement(answer, "tolerance").text = tolerance
    _text(answer, "feedback", feedback)


def moodle_question(quiz, q: dict) -> None:
    kind = {"number": "numerical", "shape": "shortanswer"}.get(q["kind"], "multichoice")
    question = ET.SubElement(quiz, "question", {"type": kind})
    _text(question, "name", q["id"], html_format=False)
    _text(question, "questiontext", html_text(q["text"]))
    _text(question, "generalfeedback", html_text(q["hint"]) if q.get("hint") else "")
    ET.SubElement(question, "defaultgrade").text = "1"
    ET.SubElement(question, "penalty").text = "0.3333333"
    ET.SubElement(question, "hidden").text = "0"
    other = html_text(q["hint"]) if q.get("hint") else None   # for any other answer
    if kind == "numerical":
        _answer(question, "100", repr(q["answer"]), html_text(q["right"]),
                tolerance=repr(q["tol"]))
        for w in q["wrong"]:
            _answer(question, "0", repr(w["key"]), html_text(w["why"]), tolerance=repr(q["tol"]))
        if other:
            _answer(question, "0", "*", other)
        return
    if kind == "shortanswer":
        ET.SubElement(question, "usecase").text = "0"
        for spelling in shape_spellings(q["answer"]):
            _answer(question, "100", spelling, html_text(q["right"]))
        for w in q["wrong"]:
            for spelling in shape_spellings(w["key"]):
                _answer(question, "0", spelling, html_text(w["why"]))
        if other:
            _answer(question, "0", "*", other)
        return
    correct = q["correct"]
    whys = {w["key"]: w["why"] for w in q["wrong"]}
    single = len(correct) == 1
    ET.SubElement(question, "single").text = "true" if single else "false"
    ET.SubElement(question, "shuffleanswers").text = "0"
    ET.SubElement(question, "answernumbering").text = "ABCD"
    share = f"{100 / len(correct):.5f}"              # Moodle's grades: 100, 50, 33.33333, 25
    for i, option in enumerate(q["options"]):
        text = (f"output {i + 1}: {output_html(option)}" if q["kind"] == "wrong_output"
                else html_text(option))
        why = q["right"] if i in correct else whys.get(i, q.get("hint") or "")
        fraction = (("100" if single else share) if i in correct
                    else ("0" if single else "-100"))
        _answer(question, fraction, text, html_text(why), fmt="html")


def moodle_xml(name: str) -> str:
    title, questions = chapter_questions(name)
    quiz = ET.Element("quiz")
    category = ET.SubElement(quiz, "question", {"type": "category"})
    _text(category, "category", f"$course$/top/Attention as Linear Algebra/{title}",
          html_format=False)
    for q in questions:
        moodle_question(quiz, q)
    ET.indent(quiz)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<!-- Self-check questions of the chapter \"{title}\" ({name}), written by "
            "scripts/lms_quiz.py from the chapter's executed notebook. Moodle: Question bank, "
            "Import, Moodle XML format. -->\n" + ET.tostring(quiz, encoding="unicode") + "\n")


# ---- Canvas: QTI through text2qti ----------------------------------------------------------
def qti_line(text: str) -> str:
    """A text2qti field on one line (its fields continue on indented lines; one line is
    enough here)."""
    return re.sub(r"\s*\n\s*", " ", text.strip())


def qti_feedback_for_wrong(q: dict) -> str:
    parts = [f"If you answered {w['label']}: {w['why']}" for w in q["wrong"]]
    if q.get("hint"):
        parts.append(q["hint"])
    return " ".join(parts)


def text2qti_source(name: str) -> str:
    title, questions = chapter_questions(name)
    out = [f"Quiz title: Check yourself: {qti_line(title)}",
           "Quiz description: The chapter's self-check questions (Attention as Linear "
           "Algebra).", "Shuffle answers: false", "Show correct answers: true", ""]
    for n, q in enumerate(questions, 1):
        out.append(f"Title: {q['id']}")
        out.append(f"{n}.  {qti_line(q['text'])}")
        out.append(f"+   {qti_line(q['right'])}")
        if q["kind"] == "number":
            out.append(f"-   {qti_line(qti_feedback_for_wrong(q))}")
            out.append("=   [1, 2]")   # the exact range is written by canvas_qti()
        elif q["kind"] == "shape":
            out.append(f"-   {qti_line(qti_feedback_for_wrong(q))}")
            for spelling in shape_spellings(q["answer"]):
                out.append(f"*   {spelling}")
        else:
            correct = q["correct"]
            whys = {w["key"]: w["why"] for w in q["wrong"]}
            for i, option in enumerate(q["options"]):
                # a printed output on one line (Canvas's options are a paragraph)
                text = (f"output {i + 1}: `{' '.join(option.split())}`"
                        if q["kind"] == "wrong_output"
                        else qti_line(option))
                letter = "abcdefghijklmnopqrstuvwxyz"[i]
                if len(correct) > 1:
                    out.append(f"{'[*]' if i in correct else '[ ]'} {text}")
                else:
                    out.append(f"{'*' if i in correct else ''}{letter}) {text}")
                why = q["right"] if i in correct else whys.get(i, q.get("hint") or "")
                if why:
                    out.append(f"... {qti_line(why)}")
        out.append("")
    return "\n".join(out)


def number_range(q: dict) -> tuple[str, str]:
    """A number question's right answers, [answer - tol, answer + tol], as QTI writes them."""
    return repr(q["answer"] - q["tol"]), repr(q["answer"] + q["tol"])


def canvas_qti(name: str) -> bytes:
    """The QTI package (zip). text2qti writes a numerical answer's range to 4 decimals and
    refuses one within 1e-4 of 0, which several questions need (a tolerance of 5e-05, an
    answer of 0): each number question is written with a placeholder range, which is then
    replaced in the item's XML by the exact one."""
    _, questions = chapter_questions(name)
    qti = QTI(Quiz(text2qti_source(name), config=Config(), source_name=name))
    for q in questions:
        if q["kind"] != "number":
            continue
        low, high = number_range(q)
        item = re.compile(r'(<item ident="[^"]+" title="' + re.escape(q["id"]) + r'">.*?'
                          r'<vargte respident="response1">)1\.0(</vargte>\s*'
                          r'<varlte respident="response1">)2\.0(</varlte>)', re.S)
        qti.assessment, n = item.subn(lambda m: m.group(1) + low + m.group(2) + high
                                      + m.group(3), qti.assessment, count=1)
        if n != 1:
            raise RuntimeError(f"{name}: question {q['id']}: no numerical range in the QTI")
    return qti.zip_bytes()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapters (default: every chapter)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    names = args.chapters or chapters()
    unknown = sorted(set(names) - set(chapters()))
    if unknown:
        parser.error(f"no such chapter: {', '.join(unknown)} (chapters: {', '.join(chapters())})")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        (args.out / f"{name}.moodle.xml").write_text(moodle_xml(name), encoding="utf-8")
        (args.out / f"{name}.canvas-qti.zip").write_bytes(canvas_qti(name))
        print(f"{name}: {len(chapter_questions(name)[1])} questions -> "
              f"{args.out / name}.moodle.xml, .canvas-qti.zip")
    return 0


if __name__ == "__main__":
    sys.exit(main())
