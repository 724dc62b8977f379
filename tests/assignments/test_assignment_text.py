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
