"""The chapters' code as the Run control runs it in the reader's browser (issue 44): in
Pyodide under Node (tests/run_on_page_node.mjs), from `make pyodide`'s verified files,
offline. Each enabled chapter runs every cell without an error, and each cell's printed
output matches the executed notebook's under nbval's own sanitizer
(tests/nbval_sanitize.cfg), numbers to 1e-12 where the text differs.

Slow (Pyodide boots once per chapter): run by `make test-pyodide` (CHECK_RUN_ON_PAGE=1),
not by plain pytest. The verification of the bytes (scripts/pyodide_assets.py) is checked
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
import pyodide_assets  # noqa: E402
import run_on_page  # noqa: E402

BUILT = ROOT / "_build" / "pyodide"
pytestmark = pytest.mark.skipif(os.environ.get("CHECK_RUN_ON_PAGE") != "1",
                                reason="make test-pyodide runs these (CHECK_RUN_ON_PAGE=1)")
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("0*.md"))
ENABLED = [c for c in CHAPTERS if not run_on_page.cannot_run(
    run_on_page.chapter_cells(ROOT / "notebooks" / f"{c}.md"))]
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


def run_chapter(chapter: str, tmp_path: Path) -> dict:
    cells = run_on_page.chapter_cells(ROOT / "notebooks" / f"{chapter}.md")
    spec = tmp_path / f"{chapter}.json"
    spec.write_text(json.dumps({"packages": run_on_page.packages_for(cells), "cells": cells}))
    done = subprocess.run(["node", str(ROOT / "tests" / "run_on_page_node.mjs"), str(BUILT),
                           str(spec)], capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("chapter", ENABLED)
def test_chapter_runs_in_pyodide_and_prints_what_the_book_prints(chapter, tmp_path):
    run = run_chapter(chapter, tmp_path)
    assert run["requests"] == 0
    errors = [(r["index"], r["error"]) for r in run["results"] if r.get("error")]
    assert not errors, errors
    expected = expected_outputs(chapter)
    printed = {r["index"]: r["text"] + (r["result"] + "\n" if r.get("result") is not None else "")
               for r in run["results"]}
    differ = [(i, printed[i], expected[i]) for i in printed if not same(printed[i], expected[i])]
    assert not differ, differ[:3]


def test_chapter_eight_is_the_only_one_that_cannot_run():
    assert [c for c in CHAPTERS if c not in ENABLED] == ["08_real_model"]


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
