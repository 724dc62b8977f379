"""The chapters' code as the Run control runs it in the reader's browser (issue 44): in
Pyodide under Node (tests/run_on_page_node.mjs), from `make pyodide`'s verified files,
offline. Each enabled chapter runs every cell without an error, and each cell's printed
output matches the executed notebook's under nbval's own sanitizer
(tests/nbval_sanitize.cfg), numbers to 1e-12 where the text differs.

Slow (Pyodide boots, and runs every chapter): run by `make test-pyodide`
(CHECK_RUN_ON_PAGE=1), not by plain pytest; which cells load SciPy is checked by both. The verification of the bytes (scripts/pyodide_assets.py) is checked
here too: a wheel that differs from Pyodide's lock by one byte stops it.
"""

import configparser
import json
import math
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
sys.path.insert(0, str(ROOT / "scripts"))
import pyodide_assets
import run_on_page

BUILT = ROOT / "_build" / "pyodide"
in_pyodide = pytest.mark.skipif(os.environ.get("CHECK_RUN_ON_PAGE") != "1",
                                reason="make test-pyodide runs these (CHECK_RUN_ON_PAGE=1)")
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("0*.md"))
ENABLED = [c for c in CHAPTERS if not run_on_page.cannot_run(
    run_on_page.chapter_cells(ROOT / "notebooks" / f"{c}.md"))]
# RUN_ON_PAGE_CHAPTERS="01_span 02_qk_av": only these (make test-pyodide CHAPTERS=...; .ci/run
# leaves out the two slowest, see chapters/maintainers/run_on_page.md)
CHOSEN = os.environ.get("RUN_ON_PAGE_CHAPTERS", "").split() or ENABLED
NUMBER = re.compile(r"-?\d+\.?\d*(?:[eE][-+]?\d+)?")


def sanitizers():
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg")
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


def sanitize(text: str) -> str:
    for regex, replace in sanitizers():
        text = regex.sub(replace, text)
    return text


def expected_outputs(chapter: str) -> dict[int, str]:
    """What nbval compares: each code cell's printed text and its value's text/plain."""
    notebook = json.loads((ROOT / "notebooks" / f"{chapter}.ipynb").read_text())
    expected = {}
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        text = ""
        for output in cell["outputs"]:
            if output["output_type"] == "stream":
                text += "".join(output["text"])
            elif output["output_type"] == "execute_result":
                data = output["data"]
                if set(data) == {"text/plain"}:   # a value with a rich display is not printed
                    text += "".join(data["text/plain"]) + "\n"
        expected[index] = text
    return expected


def same(browser: str, book: str) -> bool:
    browser, book = sanitize(browser), sanitize(book)
    if browser == book:
        return True
    if NUMBER.sub("#", browser) != NUMBER.sub("#", book):
        return False
    return all(math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-12)
               for a, b in zip(NUMBER.findall(browser), NUMBER.findall(book)))


# Cells whose printed numbers measure the machine rather than attention, and which
# nbval itself does not ignore: their text must keep its form (numbers aside).
# Each is found by a line it prints (a cell index moves when a cell is added above it).
MEASURES = {("07_memory_efficient", "n  peak MiB  n x n MiB"):
            "tracemalloc's peaks of NumPy's temporaries, which NumPy 2.0.2 and 2.4 allocate "
            "differently",
            ("07_memory_efficient", "n  blocked MiB  plain MiB"):
            "the same peaks, beside the memory-efficient path's"}


def measures(chapter: str, source: str) -> bool:
    return any(c == chapter and line in source for c, line in MEASURES)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every enabled chapter, run once in one Node process (Pyodide boots once, and again
    for a chapter that loads SciPy on the way)."""
    folder = tmp_path_factory.mktemp("run_on_page")
    specs = []
    info = run_on_page.lock_sizes()
    for chapter in CHOSEN:
        cells = run_on_page.chapter_cells(ROOT / "notebooks" / f"{chapter}.md")
        spec = folder / f"{chapter}.json"
        spec.write_text(json.dumps(run_on_page.chapter_spec(cells, info)))   # as the page's
        specs.append(str(spec))
    done = subprocess.run(["node", str(ROOT / "tests" / "run_on_page_node.mjs"), str(BUILT),
                           *specs], capture_output=True, text=True, timeout=1800, check=True)
    print(done.stderr)   # each chapter's seconds (pytest -s, or the log of a failure)
    return json.loads(done.stdout)


@in_pyodide
def test_no_request_leaves_the_process(runs):
    assert runs["requests"] == 0


@in_pyodide
@pytest.mark.parametrize("chapter", CHOSEN)
def test_chapter_runs_in_pyodide_and_prints_what_the_book_prints(chapter, runs):
    results = runs["chapters"][chapter]
    errors = [(r["index"], r["error"]) for r in results if r.get("error")]
    assert not errors, errors
    expected = expected_outputs(chapter)
    cells = run_on_page.chapter_cells(ROOT / "notebooks" / f"{chapter}.md")
    tags = {c["index"]: c["tags"] for c in cells}
    sources = {c["index"]: c["source"] for c in cells}
    differ = []
    for r in results:
        i = r["index"]
        printed = r["text"] + (r["result"] + "\n" if r.get("result") is not None else "")
        if "nbval-ignore-output" in tags[i] or "nbval-skip" in tags[i]:
            continue
        if measures(chapter, sources[i]):
            if NUMBER.sub("#", printed) != NUMBER.sub("#", expected[i]):
                differ.append((i, printed, expected[i]))
        elif not same(printed, expected[i]):
            differ.append((i, printed, expected[i]))
    assert not differ, differ[:3]


def test_chapter_eight_is_the_only_one_that_cannot_run():
    assert [c for c in CHAPTERS if c not in ENABLED] == ["08_real_model"]


@in_pyodide
def test_a_wheel_that_differs_from_the_lock_stops_the_layout(tmp_path):
    cache = Path(os.environ.get("PYODIDE_CACHE", pyodide_assets.DEFAULT_CACHE))
    carrier = cache / pyodide_assets.CARRIER_FILE
    bad = tmp_path / "cache"
    bad.mkdir()
    with zipfile.ZipFile(carrier) as src, zipfile.ZipFile(bad / carrier.name, "w") as dst:
        for item in src.infolist():
            if item.filename.startswith(pyodide_assets.CARRIER_PREFIX):
                data = src.read(item)
                if item.filename.endswith("/cycler-0.12.1-py3-none-any.whl"):
                    data = data[:-1] + bytes([data[-1] ^ 1])
                dst.writestr(item, data)
    with pytest.raises(SystemExit):
        pyodide_assets.build(tmp_path / "out", bad)
    assert not (tmp_path / "out").exists()
    shutil.rmtree(bad)


def spec_of(chapter: str) -> dict:
    cells = run_on_page.chapter_cells(ROOT / "notebooks" / f"{chapter}.md")
    info = {"sizes": {"_core": 10e6, "numpy": 5e6, "matplotlib": 7e6, "scipy": 40e6},
            "lock": {"packages": {"numpy": {"depends": []},
                                  "matplotlib": {"depends": ["numpy"]},
                                  "scipy": {"depends": ["numpy"]}}}}
    return run_on_page.chapter_spec(cells, info)


@pytest.mark.parametrize("chapter", ENABLED)
def test_scipy_waits_for_the_first_cell_that_needs_it(chapter):
    """Issue 44's bar, the first output within 10 s of the click: SciPy (a 20 MB download)
    is not loaded at the start, only before a cell that imports it or calls the hull
    helpers, and no chapter needs it before its first printed output."""
    spec = spec_of(chapter)
    assert spec["packages"] == ["numpy", "matplotlib"] and spec["megabytes"] == 22
    expected = expected_outputs(chapter)
    first_output = next(n for n, c in enumerate(spec["cells"]) if expected[c["index"]].strip())
    first_scipy = next((n for n, c in enumerate(spec["cells"]) if c["needs"]), None)
    for cell in spec["cells"]:
        uses = re.search(r"^\s*(import scipy|from scipy)|scipy\.\w|convex_hull\w*\(",
                         cell["source"], re.M)
        assert cell["needs"] == (["scipy"] if uses else []), cell["source"][:200]
    assert spec["later"] == {"scipy": 40}   # any chapter: a reader's edited cell may import it
    if first_scipy is not None and chapter != "05_stable_softmax":   # its setup imports it
        assert first_scipy > first_output, (chapter, first_scipy, first_output)


def test_an_import_line_alone_does_not_load_scipy():
    needs = run_on_page.cell_needs
    assert needs("from lib.figures import plot_convex_hull") == []
    assert needs("fig = plot_convex_hull(values)") == ["scipy"]
    assert needs("hull = convex_hull_2d(points)") == ["scipy"]
    assert needs("from scipy.special import logsumexp") == ["scipy"]
    assert needs("import numpy as np") == []


def test_each_measuring_cell_is_found_once():
    for chapter, line in MEASURES:
        cells = run_on_page.chapter_cells(ROOT / "notebooks" / f"{chapter}.md")
        assert sum(line in c["source"] for c in cells) == 1, (chapter, line)
