"""A Sphinx extension, loaded by `_config.yml` (`sphinx.local_extensions`): a "Run" control on
every chapter page that runs the chapter's code in the reader's browser, with no server
(issue 44).

Before the click the page gets a button, a status line and two small files
(`_static/run_on_page/run_on_page.js` and `.css`); no Python. Pressed, the script starts a
Web Worker (`worker.js`) that loads Pyodide, NumPy and Matplotlib from the site's own
`_static/pyodide/` (laid out and verified by `make pyodide`, scripts/pyodide_assets.py; SciPy
only when a cell first needs it: `chapter_spec`), unpacks `lib.zip` (the course's
`lib/*.py`) into its file system, loads `driver.py` and runs the chapter's code cells in
order (in the student edition, without the solutions' cells, which are not sent to the
browser at all); each visible cell's new output (text and figures, what it prints shown as
it is printed) replaces the build's. Then every visible code cell becomes editable, with a
Run button; in the student edition each exercise gains an answer cell.

The chapter's code is its notebook's code cells, read with myst-nb's own reader (so cell
indices agree with the page's): written to `_static/run_on_page/cells/<name>.json`, fetched
on the click. Skipped: the Colab install cell. Glue cells run against a stub (`driver.py`).
A chapter whose code needs what the browser cannot have (chapter 8's pretrained model, a
wheel of weights) says so on the control and links Binder and Colab.

The one-page build (singlehtml, printed to PDF) gets nothing. How it works and how to move
to a newer Pyodide: chapters/maintainers/run_on_page.md.
"""

import json
import re
import shutil
import zipfile
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OWN = HERE / "run_on_page"
STATIC_SUBDIR = "run_on_page"
PYODIDE_BUILT = ROOT / "_build" / "pyodide"   # make pyodide
OWN_FILES = ("run_on_page.js", "run_on_page.css", "worker.js", "driver.py")
# Every chapter starts with NumPy and Matplotlib (the driver draws figures). SciPy (a 20 MB
# download, as much again) is loaded only when a cell that needs it is about to run: one
# that names scipy or calls the course's hull helpers (lib.figures imports SciPy inside them
# in the browser), so a chapter's first outputs do not wait for it. The worker also loads it
# for an edited cell that imports it.
START = ["numpy", "matplotlib"]
LATER = ["scipy"]   # what else the site ships (make pyodide), for any chapter's edited cells
NEEDS_SCIPY = re.compile(r"\bscipy\b|convex_hull\w*\s*\(")
CANNOT_RUN = {"lib.pretrained": "the pretrained model's weights, which are not shipped to the "
                                "browser"}
logger = logging.getLogger(__name__)
# The control's look before the click, inline: no stylesheet request, nothing that moves when
# run_on_page.css (the editors and outputs; fetched by the script on the click) arrives.
BOX = ("margin:1rem 0;padding:0.75rem 1rem;border:1px solid var(--pst-color-border,#ccc);"
       "border-radius:0.25rem")
BUTTON = ("font:inherit;padding:0.3rem 0.9rem;min-height:44px;border-radius:0.25rem;"
          "border:2px solid var(--pst-color-primary,#0a6a7d);"
          # the theme's primary colour as text on the page's own background: readable in
          # light and dark (white on dark mode's lighter primary was 3.3:1, HTML_CodeSniffer)
          "background:var(--pst-color-background,#fff);color:var(--pst-color-primary,#0a6a7d);"
          "font-weight:600;cursor:pointer")


def is_chapter(docname: str) -> bool:
    return docname.startswith("notebooks/")


def chapter_cells(path: Path) -> list[dict]:
    """The chapter's code cells in order: index (as myst-nb numbers cells), source, tags."""
    from myst_nb.core.read import read_myst_markdown_notebook

    if path.suffix == ".ipynb":   # an executed notebook (a test project builds from one)
        import nbformat

        notebook = nbformat.read(path, as_version=4)
    else:
        notebook = read_myst_markdown_notebook(path.read_text(encoding="utf-8"))
    cells, in_solution = [], False
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            # a gated solution's code cells lie between these two directives; one Markdown
            # cell may close a solution and open the next: the last directive in it counts
            start = cell.source.rfind("{solution-start}")
            end = cell.source.rfind("{solution-end}")
            if start != -1 or end != -1:
                in_solution = start > end
            continue
        source = cell.source
        if "google.colab" in source:   # the Colab install cell
            continue
        tags = list(cell.metadata.get("tags", []))
        cells.append({"index": index, "source": source, "tags": tags, "solution": in_solution})
    return cells


def cell_needs(source: str) -> list[str]:
    """The packages beyond START that one cell's code needs before it runs."""
    return ["scipy"] if NEEDS_SCIPY.search(source) else []


def packages_for(cells: list[dict]) -> list[str]:
    """Every package the chapter's code loads, at the start or later."""
    later = sorted({name for cell in cells for name in cell_needs(cell["source"])})
    return START + later


def chapter_spec(cells: list[dict], info: dict) -> dict:
    """What the page fetches on the click (`cells/<name>.json`): the packages to start with
    and the megabytes they weigh with the interpreter, the megabytes of each package the
    site ships besides (LATER: loaded before a cell that needs it, the chapter's or one the
    reader wrote; its dependencies not already loaded included), and the cells, each with
    the packages it needs."""
    start_bytes = load_size(info, START)
    return {"packages": START,
            "megabytes": round(start_bytes / 1e6),
            "later": {name: round((load_size(info, START + [name]) - start_bytes) / 1e6)
                      for name in LATER},
            "cells": [cell | {"needs": cell_needs(cell["source"])} for cell in cells]}


def cannot_run(cells: list[dict]) -> str | None:
    code = "\n".join(cell["source"] for cell in cells)
    return next((why for word, why in CANNOT_RUN.items() if word in code), None)


def mark_cells(app: Sphinx, doctree) -> None:
    """Each code cell's container gets the class `run-cell-<index>`: the script finds it."""
    if not is_chapter(app.env.docname):
        return
    for node in doctree.findall(nodes.container):
        if node.get("nb_element") == "cell_code" and node.get("cell_index") is not None:
            node["classes"].append(f"run-cell-{node['cell_index']}")


def lock_sizes() -> dict:
    """Bytes of each package's wheel and of the interpreter, from `make pyodide`'s output."""
    lock = json.loads((PYODIDE_BUILT / "pyodide-lock.json").read_text())
    sizes = {name: (PYODIDE_BUILT / entry["file_name"]).stat().st_size
             for name, entry in lock["packages"].items()}
    sizes["_core"] = sum((PYODIDE_BUILT / f).stat().st_size for f in
                         ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip"))
    return {"sizes": sizes, "lock": lock, "numpy": lock["packages"]["numpy"]["version"],
            "pyodide": lock["info"]["version"]}


def load_size(info: dict, packages: list[str]) -> int:
    lock, seen, todo = info["lock"]["packages"], set(), list(packages)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(lock[name]["depends"])
    return info["sizes"]["_core"] + sum(info["sizes"][n] for n in seen)


def launch_links(app: Sphinx, name: str) -> tuple[str, str]:
    repo = app.config.html_theme_options.get("repository_url", "") or ""
    branch = app.config.html_theme_options.get("repository_branch", "main") or "main"
    slug = repo.removeprefix("https://github.com/").strip("/")
    path = f"notebooks/reader/{name}.ipynb"
    return (f"https://mybinder.org/v2/gh/{slug}/{branch}?urlpath=lab/tree/{path}",
            f"https://colab.research.google.com/github/{slug}/blob/{branch}/{path}")


def add_control(app: Sphinx, pagename, templatename, context, doctree) -> None:
    if app.builder.name not in ("html", "dirhtml") or not is_chapter(pagename) or doctree is None:
        return
    if not (PYODIDE_BUILT / "pyodide-lock.json").exists():
        logger.warning("run_on_page: no %s: run `make pyodide` (the Run control needs it)",
                       PYODIDE_BUILT)
        return
    info = app.env.run_on_page_info if hasattr(app.env, "run_on_page_info") else lock_sizes()
    app.env.run_on_page_info = info
    name = pagename.split("/")[-1]
    cells = chapter_cells(Path(app.env.doc2path(pagename)))
    student = bool(getattr(app.config, "hide_solutions", False))
    if student:   # the student edition ships no solution, not even to the browser
        cells = [cell for cell in cells if not cell["solution"]]
    packages = packages_for(cells)
    static = context["pathto"](f"_static/{STATIC_SUBDIR}", 1)
    why = cannot_run(cells)
    if why:
        binder, colab = launch_links(app, name)
        control = (
            f'<div class="run-on-page run-on-page-off" role="note" style="{BOX}">'
            f"<p>This chapter's code needs {why}: it cannot run on this page. Run it on "
            f'<a href="{binder}">Binder</a> or <a href="{colab}">Colab</a>.</p></div>')
    else:
        out = Path(app.outdir) / "_static" / STATIC_SUBDIR / "cells"
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.json").write_text(json.dumps(
            chapter_spec(cells, info), separators=(",", ":")), encoding="utf-8")
        megabytes = round(load_size(info, packages) / 1e6)
        control = (
            f'<div class="run-on-page" data-static="{static}" data-chapter="{name}" '
            f'data-student="{int(student)}" style="{BOX}">'
            f'<button type="button" class="run-on-page-button" style="{BUTTON}">'
            "Run this chapter's code here</button> "
            f'<span class="run-on-page-note">In your browser, offline once loaded '
            f"({megabytes} MB, Python by Pyodide {info['pyodide']}); its NumPy is "
            f"{info['numpy']}, the book's printed outputs were computed with NumPy "
            f"{numpy_version()}, so a last digit may differ.</span>"
            '<p class="run-on-page-status" role="status" aria-live="polite"></p></div>')
        app.builder.add_js_file(f"{STATIC_SUBDIR}/run_on_page.js", defer="defer")
    body = context.get("body", "")
    # after the chapter's title
    end = body.find("</h1>")
    cut = body.find("\n", end) + 1 if end >= 0 else 0
    context["body"] = body[:cut] + control + "\n" + body[cut:]


def numpy_version() -> str:
    import numpy

    return numpy.__version__


def copy_assets(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.name not in ("html", "dirhtml"):
        return
    out = Path(app.outdir) / "_static" / STATIC_SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    for name in OWN_FILES:
        shutil.copyfile(OWN / name, out / name)
    with zipfile.ZipFile(out / "lib.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted((ROOT / "lib").glob("*.py")):
            archive.write(path, f"lib/{path.name}")
    if (PYODIDE_BUILT / "pyodide-lock.json").exists():
        target = Path(app.outdir) / "_static" / "pyodide"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(PYODIDE_BUILT, target)


def setup(app: Sphinx):
    app.connect("doctree-read", mark_cells)
    app.connect("html-page-context", add_control)
    app.connect("build-finished", copy_assets)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
