"""One download per chapter for an instructor (`make kit`): `_build/kit/<name>.zip`.

Each zip holds what a week of that chapter needs, made by the other commands from the same
chapter:

    <name>/slides/<name>.html      the lecture deck, with the files it loads (make slides);
    <name>/slides/_static/...      open it served, or from the folder in Chromium or Firefox
    <name>/slides/<name>.pdf       the deck as a handout, a slide a page (make slides-pdf)
    <name>/quiz/<name>.canvas-qti.zip, <name>.moodle.xml
                                   the self-check questions as an LMS quiz (make quiz)
    <name>/assignment/<id>-autograder.zip
                                   Gradescope's autograder (make assignments)
    <name>/assignment/student/...  the student's assignment notebook
    <name>/assignment/rubrics.md   the hand-graded questions' rubrics and model answers
    <name>/README.md               what each file is and where the instructor guide says more

A part that was not built is named in the README as missing (with the command that builds
it) rather than failing the kit: `make kit` builds every part first.

    python scripts/instructor_kit.py              # every chapter
    python scripts/instructor_kit.py 03_masking
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
OUT = BUILD / "kit"


def chapters() -> list[str]:
    return sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def parts(name: str, build: Path = BUILD) -> tuple[dict[str, Path], list[str]]:
    """The files of one chapter's kit (path in the zip -> file) and the missing parts."""
    files, missing = {}, []
    slides = build / "slides"
    deck = slides / f"{name}.html"
    if deck.exists():
        files[f"{name}/slides/{name}.html"] = deck
        for path in sorted((slides / "_static").rglob("*")):
            if path.is_file():
                files[f"{name}/slides/_static/{path.relative_to(slides / '_static')}"] = path
    else:
        missing.append("the lecture deck (make slides)")
    pdf = slides / "pdf" / f"{name}.pdf"
    if pdf.exists():
        files[f"{name}/slides/{name}.pdf"] = pdf
    else:
        missing.append("the deck's handout PDF (make slides-pdf)")
    for suffix in (".canvas-qti.zip", ".moodle.xml"):
        quiz = build / "quiz" / f"{name}{suffix}"
        if quiz.exists():
            files[f"{name}/quiz/{quiz.name}"] = quiz
        else:
            missing.append(f"the LMS quiz {name}{suffix} (make quiz)")
    assignment = build / "assignments" / name
    zips = sorted((assignment / "autograder").glob("*-autograder.zip"))
    if zips:
        files[f"{name}/assignment/{zips[-1].name}"] = zips[-1]
        for path in sorted((assignment / "student").rglob("*")):
            if path.is_file():
                files[f"{name}/assignment/student/{path.relative_to(assignment / 'student')}"] = path
        if (assignment / "rubrics.md").exists():
            files[f"{name}/assignment/rubrics.md"] = assignment / "rubrics.md"
    else:
        missing.append("the assignment (make assignments)")
    return files, missing


def readme(name: str, files: dict, missing: list) -> str:
    lines = [f"# {name}: the instructor's kit", "",
             "Made by `make kit` from the course's repository; the instructor guide (on the "
             "course's site, *Reference*) says how to use each part.", ""]
    described = [
        ("slides/", "the lecture deck: open `slides/" + name + ".html` in a browser (keys: "
         "arrows, S for the speaker notes, F full screen); the PDF is the handout"),
        ("quiz/", "the self-check questions as a quiz: Canvas imports the `.canvas-qti.zip` "
         "(Settings > Import course content > QTI .zip file), Moodle the `.moodle.xml` "
         "(Question bank > Import > Moodle XML)"),
        ("assignment/", "the graded assignment: upload the `-autograder.zip` to Gradescope, "
         "give students `student/`, grade the hand-graded questions with `rubrics.md`"),
    ]
    for folder, text in described:
        if any(k.startswith(f"{name}/{folder}") for k in files):
            lines.append(f"- `{folder}`: {text}.")
    if missing:
        lines += ["", "Not in this kit (build it, then run `make kit` again):", ""]
        lines += [f"- {m}" for m in missing]
    return "\n".join(lines) + "\n"


def write_kit(name: str, out: Path = OUT, build: Path = BUILD) -> tuple[Path, list[str]]:
    files, missing = parts(name, build)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{name}/README.md", readme(name, files, missing))
        for arcname, source in files.items():
            zf.write(source, arcname)
    return path, missing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chapters", nargs="*")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    names = args.chapters or chapters()
    unknown = sorted(set(names) - set(chapters()))
    if unknown:
        parser.error(f"no such chapter: {', '.join(unknown)}")
    for name in names:
        path, missing = write_kit(name, args.out)
        print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
              + (f" (missing: {'; '.join(missing)})" if missing else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
