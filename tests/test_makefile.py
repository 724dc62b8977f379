"""The Makefile's checks of system tools: a target that needs a tool missing from PATH
stops before any work, with one line that names the tool and its Debian package, exit
non-zero, no traceback, nothing written. Each case runs the real `make` on the real
Makefile with a PATH from which one tool was taken away (links to everything else)."""

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def path_without(tmp_path: Path, *tools: str, fakes: dict[str, str] | None = None) -> str:
    """A one-folder PATH holding links to every command on today's PATH but `tools`,
    plus small shell scripts standing in for the commands in `fakes`."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            target = folder / entry.name
            if entry.name in tools or target.exists() or not os.access(entry.path, os.X_OK):
                continue
            target.symlink_to(entry.path)
    for name, script in (fakes or {}).items():
        (folder / name).unlink(missing_ok=True)
        (folder / name).write_text(f"#!/bin/sh\n{script}\n")
        (folder / name).chmod(0o755)
    return str(folder)


def tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


def make(target: str, path: str) -> subprocess.CompletedProcess:
    """`make target` with the real Makefile, in a folder of its own (so that nothing else
    writing into the repository's _build/ meanwhile can confuse the check that it wrote
    nothing)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CHROMIUM", "CHROME_PATH", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    env["PATH"] = path
    work = Path(path).parent / "repo"
    work.mkdir()
    shutil.copy(ROOT / "Makefile", work / "Makefile")
    done = subprocess.run([MAKE, "--no-print-directory", target], cwd=work, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert tree(work) == {"Makefile"}, f"make {target} wrote {sorted(tree(work))}"
    return done


def assert_stops(done: subprocess.CompletedProcess, target: str, *named: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode != 0, f"make {target} went on without the tool:\n{output}"
    assert "Traceback" not in output
    last = output.strip().splitlines()[-1]
    for word in named:
        assert word in last, f"make {target}'s last line does not name {word!r}: {last}"
    assert len(output.strip().splitlines()) == 1, f"more than one line:\n{output}"


@pytest.mark.parametrize("tool", ["pdftotext", "pdfimages"])
def test_pdf_without_poppler_names_poppler_utils(tmp_path, tool):
    done = make("pdf", path_without(tmp_path, tool))
    assert_stops(done, "pdf", "poppler-utils", "pdftotext")


@pytest.mark.parametrize("target", ["test-site", "audit", "pdf"])
def test_browser_targets_without_chromium_name_the_package(tmp_path, target):
    done = make(target, path_without(tmp_path, "chromium"))
    assert_stops(done, target, "chromium", "apt-get install chromium")


@pytest.mark.parametrize("target", ["book", "test", "book-student"])
def test_node_targets_without_node_name_nodejs(tmp_path, target):
    done = make(target, path_without(tmp_path, "node", "npm"))
    assert_stops(done, target, "Node.js", "nodejs")


def test_an_old_node_is_refused(tmp_path):
    done = make("book", path_without(tmp_path, fakes={"node": "echo false; exit 0",
                                                      "npm": "exit 0"}))
    assert_stops(done, "book", "Node.js 20")


def test_an_old_python_is_refused(tmp_path):
    # python3 that is 3.10: the check asks it whether it is at least 3.11
    fake = "echo False"
    done = make("venv", path_without(tmp_path, fakes={"python3": fake}))
    assert_stops(done, "venv", "Python 3.11")


@pytest.mark.parametrize("target", ["pdf", "test-site", "book"])
def test_with_every_tool_the_checks_pass(target):
    # a dry run parses the Makefile, checks included, and runs nothing
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")}
    if shutil.which("chromium") is None or shutil.which("pdftotext") is None:
        pytest.skip("chromium or poppler-utils is not installed here")
    done = subprocess.run([MAKE, "-n", target], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert "***" not in done.stderr, done.stderr


def dry_run(target: str, path: str | None = None) -> subprocess.CompletedProcess:
    """`make -n target` in the repository: the Makefile parsed, its checks included,
    nothing run."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")}
    if path:
        env["PATH"] = path
    return subprocess.run([MAKE, "--no-print-directory", "-n", target], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("target", ["book", "test", "book-student"])
def test_book_targets_do_not_need_graphviz(tmp_path, target):
    # the maintainers' build picture is a committed SVG: no build draws it
    done = dry_run(target, path_without(tmp_path, "dot"))
    assert done.returncode == 0 and "***" not in done.stderr, done.stderr
    assert "graphviz" not in (done.stdout + done.stderr).lower()


def test_redrawing_the_build_picture_without_graphviz_names_the_package(tmp_path):
    done = make("build-picture", path_without(tmp_path, "dot"))
    assert_stops(done, "build-picture", "graphviz", "apt-get install graphviz")


def test_the_committed_build_picture_is_drawn_from_build_dot():
    # `make build-picture` writes the hash of the .dot it drew into the SVG's first line
    picture = ROOT / "chapters" / "maintainers" / "build"
    first = picture.with_suffix(".svg").read_text().splitlines()[0]
    digest = hashlib.sha256(picture.with_suffix(".dot").read_bytes()).hexdigest()
    assert first == f"<!-- drawn from build.dot, sha256 {digest} -->", \
        "build.dot changed: run `make build-picture` and commit build.svg"
    assert "build.svg" in (ROOT / "chapters" / "maintainers" / "build.md").read_text()


def test_make_book_ends_by_saying_how_to_read_it_served():
    # from disk (file://) the explorers and the math's fonts do not load: the last thing
    # `make book` prints is the command that serves the site (tests/site/test_served.py
    # runs it and reads the site at the address it prints)
    done = dry_run("book")
    last = done.stdout.strip().splitlines()[-1]
    assert "make serve" in last and "_build/html" in last, last
    serve = dry_run("serve").stdout
    assert "-m http.server --bind 127.0.0.1 --directory _build/html 0" in serve, serve


def test_the_browser_the_makefile_exports_is_a_path_without_spaces():
    # `export CHROME_PATH ?= $(CHROMIUM)     # comment` gave "/usr/bin/chromium     ", which
    # Lighthouse could not start: make audit wrote no report in CI (fixed 2026-11-25)
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed here")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MAKELEVEL", "CHROME_PATH", "CHROMIUM")}
    done = subprocess.run(
        [MAKE, "--no-print-directory", "--eval",
         'show-browser: ; @printf "[%s][%s]" "$$CHROMIUM" "$$CHROME_PATH"', "show-browser"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    chromium = shutil.which("chromium")
    assert done.stdout == f"[{chromium}][{chromium}]", (done.stdout, done.stderr)
    assert os.access(chromium, os.X_OK)


def test_a_change_to_an_extension_drops_the_pages_and_keeps_the_execution_cache(tmp_path):
    """Sphinx does not notice that the code of the book's own extensions changed, and keeps
    the pages they wrote (the Run control's files stayed stale once): `_build/.lib-hash`
    drops the built pages then; the execution cache goes only when lib/ changes."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    for folder, name in (("lib", "attention.py"), ("_ext", "run_on_page.py")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text("x = 1\n")
    built = tmp_path / "_build"

    def build():
        for part in ("html/index.html", ".doctrees/env.pickle", ".jupyter_cache/global.db"):
            (built / part).parent.mkdir(parents=True, exist_ok=True)
            (built / part).write_text("built")

    def rule():
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL")}
        subprocess.run([MAKE, "--no-print-directory", "_build/.lib-hash"], cwd=tmp_path,
                       env=env, check=True, capture_output=True, timeout=60)
        return {p for p in ("html", ".doctrees", ".jupyter_cache") if (built / p).exists()}

    rule()
    build()
    assert rule() == {"html", ".doctrees", ".jupyter_cache"}        # nothing changed
    (tmp_path / "_ext" / "run_on_page.py").write_text("x = 2\n")
    assert rule() == {".jupyter_cache"}                             # pages dropped, cache kept
    build()
    (tmp_path / "lib" / "attention.py").write_text("x = 2\n")
    assert rule() == set()                                          # lib/: the cache too
