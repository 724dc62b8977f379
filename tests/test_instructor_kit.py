"""The instructor's kit (scripts/instructor_kit.py): one zip per chapter with its deck (and
the files the deck loads), its handout, its LMS quizzes and its assignment, and a README
that names what is missing instead of leaving it out silently."""

import importlib.util
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("instructor_kit", ROOT / "scripts" / "instructor_kit.py")
kit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kit)


def _touch(path, text="x"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _built(tmp_path, name):
    build = tmp_path / "_build"
    _touch(build / "slides" / f"{name}.html", "<html>deck</html>")
    _touch(build / "slides" / "_static" / "reveal" / "reveal.js")
    _touch(build / "slides" / "pdf" / f"{name}.pdf", "%PDF")
    _touch(build / "quiz" / f"{name}.canvas-qti.zip")
    _touch(build / "quiz" / f"{name}.moodle.xml")
    _touch(build / "assignments" / name / "autograder" / f"{name}-v1-open-autograder.zip")
    _touch(build / "assignments" / name / "autograder" / f"{name}-autograder_2026.zip")
    _touch(build / "assignments" / name / "student" / f"{name}.ipynb")
    _touch(build / "assignments" / name / "rubrics.md", "# rubrics")
    return build


def test_a_kit_holds_every_part_where_its_readme_says(tmp_path):
    name = kit.chapters()[2]
    build = _built(tmp_path, name)
    path, missing = kit.write_kit(name, tmp_path / "kit", build)
    assert missing == []
    names = set(zipfile.ZipFile(path).namelist())
    assert {f"{name}/README.md", f"{name}/slides/{name}.html",
            f"{name}/slides/_static/reveal/reveal.js", f"{name}/slides/{name}.pdf",
            f"{name}/quiz/{name}.canvas-qti.zip", f"{name}/quiz/{name}.moodle.xml",
            f"{name}/assignment/{name}-v1-open-autograder.zip",
            f"{name}/assignment/student/{name}.ipynb",
            f"{name}/assignment/rubrics.md"} == names
    readme = zipfile.ZipFile(path).read(f"{name}/README.md").decode()
    assert "slides/" in readme and "quiz/" in readme and "assignment/" in readme
    assert "Not in this kit" not in readme


def test_a_missing_part_is_named_with_the_command_that_builds_it(tmp_path):
    name = kit.chapters()[0]
    build = _built(tmp_path, name)
    (build / "slides" / "pdf" / f"{name}.pdf").unlink()
    for p in (build / "assignments" / name / "autograder").iterdir():
        p.unlink()
    path, missing = kit.write_kit(name, tmp_path / "kit", build)
    readme = zipfile.ZipFile(path).read(f"{name}/README.md").decode()
    assert "make slides-pdf" in readme and "make assignments" in readme
    assert len(missing) == 2
    assert not any(n.startswith(f"{name}/assignment/") for n in zipfile.ZipFile(path).namelist())
