"""The LMS quizzes (scripts/lms_quiz.py) read back as the questions they came from.

Moodle's XML file and the assessment XML of Canvas's QTI package are read back. Both are compared with the questions' data in the executed chapters:
count and order, the right answers, the numbers' tolerances, every option's feedback.
"""

import importlib.util
import io
import re
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("text2qti")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from lib.selfcheck import parse_shape  # noqa: E402

_spec = importlib.util.spec_from_file_location("lms_quiz", ROOT / "scripts" / "lms_quiz.py")
lms_quiz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lms_quiz)

CHAPTERS = lms_quiz.chapters()
QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


def moodle_questions(name):
    root = ET.fromstring(lms_quiz.moodle_xml(name).encode())
    assert root.tag == "quiz"
    category, *questions = root.findall("question")
    assert category.get("type") == "category"
    return questions


def answers(question):
    return [(a.get("fraction"), a.findtext("text"), a.findtext("tolerance"),
             a.findtext("feedback/text") or "") for a in question.findall("answer")]


def test_every_chapter_has_questions():
    assert len(CHAPTERS) == 9
    for name in CHAPTERS:
        assert lms_quiz.chapter_questions(name)[1], f"{name}: no self-check question found"


@pytest.mark.parametrize("name", CHAPTERS)
def test_moodle_xml_reads_back_as_the_chapters_questions(name):
    _, questions = lms_quiz.chapter_questions(name)
    parsed = moodle_questions(name)
    assert [p.findtext("name/text") for p in parsed] == [q["id"] for q in questions]
    for q, p in zip(questions, parsed):
        assert p.findtext("questiontext/text") == lms_quiz.html_text(q["text"])
        got = answers(p)
        hint = lms_quiz.html_text(q["hint"]) if q["hint"] else ""
        assert (p.findtext("generalfeedback/text") or "") == hint
        other = [a for a in got if a[1] == "*"]
        # a number or a shape: any other answer gets the question's hint, never a bare
        # "wrong" (a choice: each option has its own feedback)
        assert other == ([("0", "*", None, hint)]
                         if hint and q["kind"] in ("number", "shape") else [])
        got = [a for a in got if a[1] != "*"]
        if q["kind"] == "number":
            assert p.get("type") == "numerical"
            assert [(f, float(t), float(tol), fb) for f, t, tol, fb in got] == \
                [("100", q["answer"], q["tol"], lms_quiz.html_text(q["right"]))] + \
                [("0", w["key"], q["tol"], lms_quiz.html_text(w["why"])) for w in q["wrong"]]
        elif q["kind"] == "shape":
            assert p.get("type") == "shortanswer"
            full = [t for f, t, _, _ in got if f == "100"]
            assert full and all(parse_shape(t) == tuple(q["answer"]) for t in full)
            zero = {parse_shape(t): fb for f, t, _, fb in got if f == "0"}
            assert zero == {tuple(w["key"]): lms_quiz.html_text(w["why"]) for w in q["wrong"]}
        else:
            assert p.get("type") == "multichoice"
            assert p.findtext("single") == ("true" if len(q["correct"]) == 1 else "false")
            assert len(got) == len(q["options"])
            assert [i for i, a in enumerate(got) if float(a[0]) > 0] == q["correct"]
            assert sum(float(a[0]) for a in got if float(a[0]) > 0) == \
                pytest.approx(100, abs=1e-3)
            whys = {w["key"]: w["why"] for w in q["wrong"]}
            for i, (_, _, _, fb) in enumerate(got):
                expected = q["right"] if i in q["correct"] else whys.get(i, q["hint"] or "")
                assert fb == lms_quiz.html_text(expected), (q["id"], i)


def qti_items(name):
    with zipfile.ZipFile(io.BytesIO(lms_quiz.canvas_qti(name))) as zf:
        assert "imsmanifest.xml" in zf.namelist()
        [xml_name] = [n for n in zf.namelist() if n.endswith(".xml")
                      and not n.endswith(("imsmanifest.xml", "assessment_meta.xml"))]
        root = ET.fromstring(zf.read(xml_name))
    return root.iter(f"{QTI}item")


def item_type(item):
    for field in item.iter(f"{QTI}qtimetadatafield"):
        if field.findtext(f"{QTI}fieldlabel") == "question_type":
            return field.findtext(f"{QTI}fieldentry")


@pytest.mark.parametrize("name", CHAPTERS)
def test_canvas_qti_reads_back_as_the_chapters_questions(name):
    _, questions = lms_quiz.chapter_questions(name)
    items = list(qti_items(name))
    assert [i.get("title") for i in items] == [q["id"] for q in questions]
    kinds = {"number": "numerical_question", "shape": "short_answer_question"}
    for q, item in zip(questions, items):
        want = kinds.get(q["kind"]) or ("multiple_answers_question" if len(q["correct"]) > 1
                                        else "multiple_choice_question")
        assert item_type(item) == want, q["id"]
        if q["kind"] == "number":
            low = float(item.find(f".//{QTI}vargte").text)
            high = float(item.find(f".//{QTI}varlte").text)
            assert (low, high) == (q["answer"] - q["tol"], q["answer"] + q["tol"])
            feedback = "".join(item.find(f".//{QTI}itemfeedback[@ident='general_incorrect_fb']")
                               .itertext())
            # each classic wrong answer is explained in what a wrong answer shows
            assert feedback.count("If you answered") == len(q["wrong"]), q["id"]
        elif q["kind"] == "shape":
            accepted = [v.text for v in item.iter(f"{QTI}varequal")]
            assert accepted and all(parse_shape(s) == tuple(q["answer"]) for s in accepted)
        else:
            labels = [r.get("ident") for r in item.iter(f"{QTI}response_label")]
            assert len(labels) == len(q["options"])
            # the conditions that score: Canvas marks a right option by a varequal that is
            # not inside a <not>
            scoring = set()
            for cond in item.iter(f"{QTI}respcondition"):
                if cond.find(f"{QTI}setvar") is None:
                    continue
                var = cond.find(f"{QTI}conditionvar")
                direct = [v.text for v in var.iter(f"{QTI}varequal")]
                negated = [v.text for n in var.iter(f"{QTI}not")
                           for v in n.iter(f"{QTI}varequal")]
                scoring |= {labels.index(t) for t in direct if t not in negated}
            assert sorted(scoring) == q["correct"], q["id"]


def test_math_keeps_its_backslashes_and_underscores():
    assert lms_quiz.html_text(r"$a_i \cdot b_j$ and `x_1`") == \
        r"\(a_i \cdot b_j\) and <code>x_1</code>"


def test_number_range_is_exact_where_text2qti_would_round():
    q = {"answer": 1.19777581, "tol": 5e-05}
    assert lms_quiz.number_range(q) == (repr(1.19777581 - 5e-05), repr(1.19777581 + 5e-05))


def test_quiz_command_writes_both_files(tmp_path):
    assert lms_quiz.main(["--out", str(tmp_path), CHAPTERS[0]]) == 0
    assert (tmp_path / f"{CHAPTERS[0]}.moodle.xml").read_text().count("<question type=\"") - 1 == \
        len(lms_quiz.chapter_questions(CHAPTERS[0])[1])
    assert zipfile.is_zipfile(tmp_path / f"{CHAPTERS[0]}.canvas-qti.zip")
    with pytest.raises(SystemExit):
        lms_quiz.main(["--out", str(tmp_path), "99_nothing"])
