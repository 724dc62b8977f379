"""How scripts/assignments.py writes the book's references in an assignment's Markdown, with
the converter of scripts/jupyter_notebooks.py (a plain `pytest` runs these; the graded checks
are in test_assignments.py)."""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import assignments  # noqa: E402

BOOK = assignments.Book.read()
NUMBERS = {label: target.number for label, target in BOOK.labels.items() if target.number}


def test_a_chapters_labelled_sections_are_numbered_in_order():
    for md in sorted((ROOT / "notebooks").glob("*.md")):
        chapter = int(md.name[:2])
        labels = re.findall(r"^\(([\w-]+)\)=\s*\n## ", md.read_text(), re.M)
        numbers = [NUMBERS[label] for label in labels]
        assert numbers and all(n.startswith(f"Section {chapter}.") for n in numbers)
        tops = [int(n.split(".")[1]) for n in numbers]
        assert tops == sorted(tops) and len(set(tops)) == len(tops), md.name


def test_numbered_references_are_written_with_their_numbers():
    convert = assignments.Chapter("01_span", BOOK, assignments.Bibliography())
    text = convert.text("\n".join([
        "as {numref}`section {number} <nb-span-hull>` does,",
        "({numref}`Exercise {number} <span-ex-bounds>`);",
        "{numref}`fig-span-hull` shows the outputs.",
    ]))
    hull = NUMBERS["nb-span-hull"].split()[-1]
    bounds = NUMBERS["span-ex-bounds"].split()[-1]
    assert text.splitlines() == [f"as section {hull} does,", f"(Exercise {bounds});",
                                 f"{NUMBERS['fig-span-hull']} shows the outputs."]
    assert re.fullmatch(r"1\.\d+", hull) and NUMBERS["fig-span-hull"].startswith("Fig. 1.")


def question_files():
    return sorted(p for p in assignments.QUESTIONS.glob("*.py")
                  if p.name not in ("_helpers.py", "conftest.py"))


def test_every_question_file_has_teaching_public_tests_and_hidden_tests_holding_its_points():
    assert len(question_files()) >= 19
    for path in question_files():
        points, tests = assignments.question_tests(path.stem)
        assert 1 <= points <= 4, path.name
        public = [t for t in tests if not re.search(r"^hidden:\s*true", t, re.M)]
        hidden = [t for t in tests if re.search(r"^hidden:\s*true", t, re.M)]
        assert public and hidden, path.name
        assert all(re.search(r"^points: 0$", t, re.M) for t in public), path.name
        hidden_points = [int(re.search(r"^points: (\d+)$", t, re.M)[1]) for t in hidden]
        assert sum(hidden_points) == points, path.name
        assert all("failure_message" in t for t in tests), path.name


def test_gradescope_lock_pins_every_package_by_hash():
    lines = [line for line in assignments.LOCK.read_text().splitlines()
             if line and not line.startswith("#")]
    assert all(re.fullmatch(r"[\w.-]+==[\w.]+ --hash=sha256:[0-9a-f]{64}", line)
               for line in lines), lines
    names = {line.split("==")[0].lower() for line in lines}
    assert f"otter-grader=={assignments.OTTER_VERSION}" in {line.split()[0] for line in lines}
    assert {"numpy", "scipy", "myst-nb", "ipykernel", "safetensors", "tokenizers"} <= names
    assert not names & assignments.LOCK_LEAVES_OUT and "torch" not in names
