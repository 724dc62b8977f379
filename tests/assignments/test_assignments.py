"""The otter-grader assignments (`make assignments`), graded as an instructor grades them.

`make test-assignments` runs this after `make assignments` (a plain `pytest` skips it: it
needs the built assignments and runs `otter run` about 30 times, two at a time). For every
chapter: the autograder notebook (the solutions) scores full marks; the student notebook as
handed out scores 0 on every autograded question; and each wrong answer of
wrong_answers.py, put in a copy of the student notebook whose other answers are the
solutions, loses its question's points, with the teaching message in otter's output, while
the other questions keep theirs (and one marked "public" is caught by the public tests alone,
what the student's `grader.check` runs, with that message: every code question has one); its
RIGHT_ANSWERS score full marks. `make grade` is run on
three submissions, and one chapter's Gradescope zip is set up and run as Gradescope does
(gradescope.py).
"""

import csv
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).parent))

from wrong_answers import RIGHT_ANSWERS, WRONG_ANSWERS  # noqa: E402

pytestmark = pytest.mark.skipif(not os.environ.get("CHECK_ASSIGNMENTS"),
                                reason="make test-assignments runs these")

ASSIGNMENTS = ROOT / "_build" / "assignments"
WORK = ASSIGNMENTS / "_check"
ALL_CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))
# CHAPTERS="02_qk_av 03_masking" checks only those (a targeted run); make test-assignments: all
CHAPTERS = os.environ.get("CHAPTERS", "").split() or ALL_CHAPTERS
WRONG_ANSWERS = [w for w in WRONG_ANSWERS if w["chapter"] in CHAPTERS]
RIGHT_ANSWERS = [w for w in RIGHT_ANSWERS if w["chapter"] in CHAPTERS]


def summary(chapter):
    return json.loads((ASSIGNMENTS / chapter / "questions.json").read_text())


def autograded(chapter):
    return [q for q, info in summary(chapter).items() if info["kind"] == "auto"]


def points(chapter):
    return {q: summary(chapter)[q]["points"] for q in autograded(chapter)}


def answer_cells(nb, question, tag):
    """Indices of the code cells just before `grader.check("question")` tagged `tag`."""
    check = next(i for i, c in enumerate(nb.cells)
                 if c.cell_type == "code" and c.source.strip() == f'grader.check("{question}")')
    found, i = [], check - 1
    while i >= 0 and tag in nb.cells[i].metadata.get("tags", []):
        if nb.cells[i].cell_type == "code":
            found.append(i)
        i -= 1
    assert found, f"no answer cell before the check of {question}"
    return sorted(found)


def filled(chapter, answers):
    """The student notebook with each question's answer cells replaced by answers[question]."""
    student = nbformat.read(ASSIGNMENTS / chapter / "student" / f"{chapter}.ipynb", as_version=4)
    for question, code in answers.items():
        cells = answer_cells(student, question, "otter_answer_cell")
        student.cells[cells[0]].source = code.strip("\n")
        for i in cells[1:]:
            student.cells[i].source = ""
    return student


def solutions(chapter):
    autograder = nbformat.read(ASSIGNMENTS / chapter / "autograder" / f"{chapter}.ipynb",
                               as_version=4)
    return {q: "\n\n".join(autograder.cells[i].source
                           for i in answer_cells(autograder, q, "otter_assign_solution_cell"))
            for q in autograded(chapter)}


def rounds(chapter):
    """Wrong answers of one chapter in rounds: at most one per question in each round."""
    out = []
    for wrong in (w for w in WRONG_ANSWERS if w["chapter"] == chapter):
        for r in out:
            if wrong["question"] not in {w["question"] for w in r}:
                r.append(wrong)
                break
        else:
            out.append([wrong])
    return out


@pytest.fixture(scope="session")
def graded():
    """Every submission of the check, graded by `otter run`: (chapter, kind) -> result."""
    from grade_assignments import grade_one
    import concurrent.futures

    jobs = {}
    for chapter in CHAPTERS:
        folder = WORK / chapter
        folder.mkdir(parents=True, exist_ok=True)
        jobs[(chapter, "solution")] = ASSIGNMENTS / chapter / "autograder" / f"{chapter}.ipynb"
        student = folder / "unanswered.ipynb"
        student.write_bytes((ASSIGNMENTS / chapter / "student" / f"{chapter}.ipynb").read_bytes())
        jobs[(chapter, "unanswered")] = student
        answers = solutions(chapter)
        for k, wrongs in enumerate(rounds(chapter), 1):
            path = folder / f"wrong-{k}.ipynb"
            nbformat.write(filled(chapter, answers | {w["question"]: w["answer"] for w in wrongs}),
                           path)
            jobs[(chapter, f"wrong-{k}")] = path
        right = {w["question"]: w["answer"] for w in RIGHT_ANSWERS if w["chapter"] == chapter}
        if right:
            path = folder / "right.ipynb"
            nbformat.write(filled(chapter, answers | right), path)
            jobs[(chapter, "right")] = path
    # The longest chapters first, so that the two workers finish together.
    order = sorted(jobs, key=lambda key: key[0] not in ("07_memory_efficient", "04_scaling"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(grade_one, key[0], jobs[key], 900) for key in order}
        return {key: f.result() for key, f in futures.items()}


def test_every_chapter_is_an_assignment_with_otters_layout():
    for chapter in CHAPTERS:
        folder = ASSIGNMENTS / chapter
        assert (folder / "student" / f"{chapter}.ipynb").is_file()
        assert (folder / "autograder" / f"{chapter}.ipynb").is_file()
        assert list((folder / "autograder").glob(f"{chapter}-autograder*.zip"))
    assert len(ALL_CHAPTERS) == 8


def test_every_code_exercise_is_autograded_and_every_other_is_manual():
    kinds = defaultdict(int)
    for chapter in CHAPTERS:
        for question, info in summary(chapter).items():
            kinds[info["kind"]] += 1
            if info["kind"] == "auto":
                assert info["hidden"] >= 1 and info["tests"] > info["hidden"], question
    if CHAPTERS == ALL_CHAPTERS:
        assert kinds["auto"] >= 19 and kinds["manual"] >= 18


def test_gradescope_zips_carry_what_they_need_and_nothing_from_github():
    import zipfile

    for chapter in CHAPTERS:
        zips = sorted((ASSIGNMENTS / chapter / "autograder").glob(f"{chapter}-autograder*.zip"))
        with zipfile.ZipFile(zips[-1]) as z:
            names = z.namelist()
            text = {n: z.read(n).decode() for n in names if not n.endswith(".whl")}
            wheel = next(n for n in names if n.startswith("wheels/attention_as_linear_algebra"))
            with zipfile.ZipFile(z.open(wheel)) as w:
                kernel = w.read("lib/attention.py")
        assert kernel == (ROOT / "lib" / "attention.py").read_bytes(), chapter
        assert "python3.11 -m venv" in text["setup.sh"] and "--require-hashes" in text["setup.sh"]
        assert not any("github.com" in t or "git+" in t for t in text.values()), chapter
        assert json.loads(text["otter_config.json"])["show_hidden"] is False
        assert ("requirements-model.txt" in names) == (chapter == "08_real_model")


def test_student_notebooks_write_references_as_the_book_numbers_them():
    # the book writes "Exercise 1.5", "Fig. 1.1", "section 1.6"; a student notebook once
    # showed "Exercise {number}" and the bare label "fig-span-hull"
    for chapter in CHAPTERS:
        nb = nbformat.read(ASSIGNMENTS / chapter / "student" / f"{chapter}.ipynb", as_version=4)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert "{number}" not in text and "{numref}" not in text and "{ref}" not in text
        shown = re.sub(r"\]\([^)\s]*\)", "]", text)   # a link's address (the site's #label) is not shown
        bare = re.findall(r"(?<![\w`(-])(?:fig|nb)-[a-z][\w-]*", shown)
        assert not bare, f"{chapter}: labels left as text: {bare}"


def test_student_notebooks_hold_no_hidden_test_and_no_solution():
    for chapter in CHAPTERS:
        student = ASSIGNMENTS / chapter / "student"
        for test in (student / "tests").glob("*.py"):
            assert "'hidden': True" not in test.read_text(), test
        text = (student / f"{chapter}.ipynb").read_text()
        assert "BEGIN TEST CONFIG" not in text and "BEGIN SOLUTION" not in text
        for question, code in solutions(chapter).items():
            longest = max(code.splitlines(), key=len).strip()
            assert longest not in text, f"{chapter}: {question}'s solution line {longest!r}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_solutions_score_full_marks(graded, chapter):
    result = graded[(chapter, "solution")]
    assert result["status"] == "ok", result
    assert result["scores"] == points(chapter)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_unanswered_student_notebook_scores_zero(graded, chapter):
    result = graded[(chapter, "unanswered")]
    assert result["status"] == "ok", result
    assert set(result["scores"]) == set(autograded(chapter))
    assert all(score == 0 for score in result["scores"].values()), result["scores"]


def test_the_wrong_answers_cover_the_classic_mistakes():
    assert len(WRONG_ANSWERS) >= 12 or CHAPTERS != ALL_CHAPTERS
    assert len({w["id"] for w in WRONG_ANSWERS}) == len(WRONG_ANSWERS)
    right = [(w["chapter"], w["question"]) for w in RIGHT_ANSWERS]
    assert len(set(right)) == len(right)  # one notebook per chapter holds them all


@pytest.mark.parametrize("chapter", sorted({w["chapter"] for w in RIGHT_ANSWERS}))
def test_right_answers_written_afresh_score_full_marks(graded, chapter):
    result = graded[(chapter, "right")]
    assert result["status"] == "ok", result
    assert result["scores"] == points(chapter), result["output"]


def test_points_follow_the_questions_size():
    # 1 to 4 points a code question (tests/assignments/questions/<label>.py says how many)
    sizes = {q: p for chapter in CHAPTERS for q, p in points(chapter).items()}
    assert set(sizes.values()) <= {1, 2, 3, 4}
    if CHAPTERS == ALL_CHAPTERS:
        assert len(set(sizes.values())) >= 3
        assert sizes["memory-ex-merge-code"] > sizes["masking-ex-padding"]


def test_every_code_question_has_a_mistake_its_public_tests_catch():
    # issue 27: "for every code question at least one public test fails on a typical
    # shape/axis mistake"; a wrong answer marked "public" is checked below to be caught by
    # the public tests alone (what the student's grader.check runs)
    caught = {w["question"] for w in WRONG_ANSWERS if w.get("public")}
    missing = [q for chapter in CHAPTERS for q in autograded(chapter) if q not in caught]
    assert not missing, f"no public wrong answer in wrong_answers.py for {missing}"


@pytest.mark.parametrize("wrong", [w for w in WRONG_ANSWERS if w.get("public")],
                         ids=lambda w: w["id"])
def test_public_tests_alone_catch_the_mistake_with_its_message(graded, wrong):
    """The "Public Tests" result of otter run is what grader.check shows the student: only
    the public tests (points 0), run on the same notebook."""
    from grade_assignments import failed_messages

    chapter = wrong["chapter"]
    k = next(k for k, r in enumerate(rounds(chapter), 1) if wrong in r)
    result = graded[(chapter, f"wrong-{k}")]
    assert result["status"] == "ok", result
    public = result["output"]["Public Tests"]
    failed = " ".join(" ".join(failed_messages(wrong["question"], public)).split())
    assert failed, f"{wrong['id']}: the public tests of {wrong['question']} all pass"
    assert wrong["message"] in failed, f"{wrong['id']}: the public tests said {failed!r}"


@pytest.mark.parametrize("wrong", WRONG_ANSWERS, ids=lambda w: w["id"])
def test_wrong_answer_loses_its_points_with_its_message(graded, wrong):
    chapter = wrong["chapter"]
    k = next(k for k, r in enumerate(rounds(chapter), 1) if wrong in r)
    result = graded[(chapter, f"wrong-{k}")]
    assert result["status"] == "ok", result
    assert result["scores"][wrong["question"]] == wrong.get("keeps", 0), \
        f"{wrong['id']} scored {result['scores'][wrong['question']]}"
    assert wrong["message"] in " ".join(result["output"][wrong["question"]].split())
    others = {q: s for q, s in result["scores"].items()
              if q not in {w["question"] for w in rounds(chapter)[k - 1]}}
    assert all(s == points(chapter)[q] for q, s in others.items()), \
        f"other questions lost points: {others}"


def test_make_grade_writes_csv_feedback_and_answers(tmp_path):
    chapter = "03_masking"
    answers = solutions(chapter)
    submissions = tmp_path / "submissions"
    for student in ("ada", "ben", "cy"):
        (submissions / student).mkdir(parents=True)
    nbformat.write(filled(chapter, answers), submissions / "ada" / f"{chapter}.ipynb")
    wrong = next(w for w in WRONG_ANSWERS if w["chapter"] == chapter and "keeps" not in w)
    nbformat.write(filled(chapter, answers | {wrong["question"]: wrong["answer"]}),
                   submissions / "ben" / f"{chapter}.ipynb")
    raising = filled(chapter, answers | {"masking-ex-padding": "raise RuntimeError('oops')"})
    nbformat.write(raising, submissions / "cy" / f"{chapter}.ipynb")
    out = tmp_path / "grades.csv"
    done = subprocess.run(["make", "-s", "grade", f"ASSIGNMENT={chapter}",
                           f"SUBMISSIONS={submissions}", f"GRADES={out}", "JOBS=2"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["student"]: r for r in csv.DictReader(out.open())}
    assert set(rows) == {"ada", "ben", "cy"}
    info = summary(chapter)
    full = sum(q["points"] for q in info.values())
    auto = sum(points(chapter).values())
    manual = [q for q, i in info.items() if i["kind"] == "manual"]
    assert manual and all(rows["ada"][q] == "" and rows["ada"][f"{q} max"] for q in manual)
    assert float(rows["ada"]["total"]) == auto and float(rows["ada"]["max"]) == full
    assert float(rows["ada"]["percent"]) == round(100 * auto / full, 1)
    lost = points(chapter)[wrong["question"]]
    assert float(rows["ben"]["total"]) == auto - lost
    assert float(rows["ben"][wrong["question"]]) == 0
    assert float(rows["cy"]["masking-ex-padding"]) == 0
    assert float(rows["cy"]["total"]) == auto - points(chapter)["masking-ex-padding"]
    assert all(r["status"] == "ok" for r in rows.values())
    feedback = (tmp_path / "feedback" / "ben.md").read_text()
    assert wrong["message"] in " ".join(feedback.split())
    assert f"{wrong['question']}**: 0 / {lost}" in feedback
    assert "np.testing" not in feedback and "_t_" not in feedback  # no test code
    written = (tmp_path / "answers" / "ada.md").read_text()
    assert all(f"({q})" in written for q in info)


def test_gradescope_zip_installs_and_grades_as_gradescope_runs_it(tmp_path):
    """One chapter's zip: setup.sh into a fresh venv from PyPI, then run_autograder offline on
    the solutions (full marks) and on a wrong answer (loses its question)."""
    from gradescope import emulate

    probe = subprocess.run(["unshare", "-m", "-n", "true"], capture_output=True, text=True)
    if probe.returncode:  # e.g. an unprivileged container
        pytest.skip(f"unshare -m -n is not permitted here: {probe.stderr.strip()}")
    chapter = "03_masking"
    wrong = next(w for w in WRONG_ANSWERS if w["chapter"] == chapter and "keeps" not in w)
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "solution.ipynb").write_bytes(
        (ASSIGNMENTS / chapter / "autograder" / f"{chapter}.ipynb").read_bytes())
    nbformat.write(filled(chapter, solutions(chapter) | {wrong["question"]: wrong["answer"]}),
                   subs / "wrong.ipynb")
    zips = sorted((ASSIGNMENTS / chapter / "autograder").glob(f"{chapter}-autograder*.zip"))
    report = emulate(zips[-1], [subs / "solution.ipynb", subs / "wrong.ipynb"],
                     tmp_path / "gradescope")
    print(f"Gradescope setup.sh: {report['setup_seconds']:.0f} s")
    solution, wrong_result = report["results"]
    assert solution["tests"] == points(chapter)
    assert wrong_result["tests"][wrong["question"]] == 0
    assert wrong_result["score"] == sum(points(chapter).values()) - points(chapter)[wrong["question"]]
    assert "python3.11" in (tmp_path / "gradescope" / "source" / "setup.sh").read_text()
    # students see the public tests' summary, never a hidden test's code or expected values
    assert all(wrong_result["visibility"][q] == "hidden" for q in points(chapter))
    assert wrong_result["visibility"]["Public Tests"] == "visible"
