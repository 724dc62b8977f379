"""Every way a reader gets a notebook, exercised as the reader would, on this machine (no
Binder, Colab or GitHub involved; packages come from PyPI). `make launch-check` runs it:

binder     A copy of the repository's files (what Binder checks out) and a fresh virtual
           environment that installs exactly binder/requirements.txt and runs
           binder/postBuild from the repository's root, as repo2docker does (it reads binder/
           first); the install's time and the environment's size are printed, and a size over
           BINDER_MB fails. Then the check's own tools, ipykernel (Binder's image has it),
           pytest and nbval, are added, and the reader notebook of the chapter that needs
           what postBuild installs (BINDER_NBVAL: the pretrained model) runs through a
           Jupyter kernel of that environment, its outputs compared with the stored ones by
           nbval (pytest --nbval, configured in pyproject.toml); every chapter runs in this
           environment in the jupyterlab check. Not the references: their glue cells import
           myst_nb, which only the book's build needs (make test runs nbval over them in
           .venv).
jupyterlab Then, in that environment, the pinned JupyterLab (requirements/jupyterlab.txt, as
           Binder's image has it) serves the checkout, and Debian's Chromium (Playwright)
           opens every notebooks/reader/ and notebooks/student/ notebook through the URL a
           Binder button uses (lab/tree/<path>), one after another. It fails on raw MyST in
           a rendered Markdown cell, solution text visible without a click (reader) or
           present at all (student), a self-check question not rendered or its answer
           visible without a click, an explorer not drawn as a Vega-Lite chart, a notebook
           marked modified on opening (e.g. by the PNG JupyterLab's Vega renderer adds to a
           chart's output that has none), or an error when a student notebook runs (Run All; the
           reader notebooks run in the colab check). Screenshots of each first screen, its
           first exercise and its explorer: _build/screenshots/jupyterlab/.
           `--jupyterlab-open FOLDER` opens another folder of the checkout instead (e.g.
           `notebooks`, the references, to see it fail).
colab      A fresh environment with only a Colab-like base (numpy, matplotlib, ipykernel, at
           the versions requirements/book.txt pins, and a stand-in `google.colab` module imported
           at kernel start, as Colab does). Each reader notebook (what Colab's buttons open)
           runs alone in an empty folder, like an upload to Colab: its first cell installs
           the course with pip from a local git clone (the repository address of
           _config.yml swapped for file:// of the clone) and the notebook then runs to the
           end. Colab renders Markdown itself, so the reader and student files are checked
           for raw MyST in their Markdown cells.
downloads  In the built sites (_build/html, and _build/student/html), the .ipynb and .md
           that each notebook page's download button offers are the committed files
           (notebooks/reader/<name>.ipynb and the source notebooks/<name>.md;
           notebooks/student/<name>.* in the student edition), and the Binder and Colab
           buttons open that edition's notebook in the configured repository.

assignment A student notebook of `make assignments` (03_masking), alone with its tests/ as
           on Colab, in a Colab-like environment without otter: its first cell installs the
           course and otter-grader, and its grader.check cells pass with the answers filled in.

    python scripts/launch_check.py binder jupyterlab colab downloads assignment   # all (the default)

Work folders (virtual environments, the clone) are in _build/launch/, made afresh each run;
binder, colab and assignment run at the same time (so that the assignment check does not
wait for binder), in threads of this process: each finds its kernel in its own folder,
never through os.environ. `make launch-check` gives the kernels one BLAS thread each
(OPENBLAS_NUM_THREADS=1; the three share the cores). Each step's output is in
_build/launch/<check>.log.
"""

import argparse
import concurrent.futures
import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urljoin

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "_build" / "launch"
PYTHON = os.environ.get("LAUNCH_PYTHON", "python3")   # the interpreter of binder/runtime.txt's version
BINDER = "binder"        # repo2docker reads this folder before the repository's root
BINDER_MB = 400          # the learner's Binder environment, at most (issue 37)
BINDER_TOOLS = ("ipykernel", "pytest", "nbval")   # Binder's kernel, and the check's nbval
REFERENCES = sorted((ROOT / "notebooks").glob("*.ipynb"))
READERS = sorted((ROOT / "notebooks" / "reader").glob("*.ipynb"))   # what Colab's buttons open
COLAB_BASE = ("numpy", "matplotlib", "ipykernel")
PIP_CACHE = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True,
                           text=True).stdout.strip() or str(Path.home() / ".cache" / "pip")


class CheckFailed(Exception):
    pass


def repository() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]


def repository_files() -> list[str]:
    """The files of a clone: tracked and not-ignored untracked ones that exist."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return sorted(f for f in set(out.split("\0")) if f and (ROOT / f).is_file())


def copy_repository(target: Path) -> None:
    for name in repository_files():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)


class Log:
    """Runs the steps of one check, appending their output to _build/launch/<name>.log."""

    def __init__(self, name: str):
        self.name, self.path = name, WORK / f"{name}.log"
        self.path.write_text("")

    def run(self, *cmd, cwd=None, env=None, timeout=1800):
        with self.path.open("a") as log:
            log.write(f"\n$ {' '.join(map(str, cmd))}\n")
            log.flush()
            started = time.monotonic()
            done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, stdout=log,
                                  stderr=subprocess.STDOUT, timeout=timeout)
            log.write(f"[{time.monotonic() - started:.0f} s, exit {done.returncode}]\n")
        if done.returncode:
            tail = "\n".join(self.path.read_text().splitlines()[-40:])
            raise CheckFailed(f"{self.name}: `{' '.join(map(str, cmd))}` failed; the log "
                              f"({self.path.relative_to(ROOT)}) ends:\n{tail}")


def clean_env(**extra) -> dict:
    """The environment of a reader's session: nothing from this project's .venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR",
                        "IPYTHONDIR", "MPLBACKEND")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(ROOT / ".venv")))
    # The reader's own HOME is replaced by an empty one; pip's cache stays this machine's
    # (the same wheels, only not downloaded again: `make venv` has fetched most of them).
    env.setdefault("PIP_CACHE_DIR", PIP_CACHE)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def venv(log: Log, path: Path, env: dict) -> Path:
    log.run(PYTHON, "-m", "venv", path, env=env)
    python = path / "bin" / "python"
    log.run(python, "-m", "pip", "install", "--quiet", "--upgrade", "pip", env=env)
    return python


# ---------------------------------------------------------------------------- binder
# The reader notebooks nbval compares in Binder's environment: the chapter whose code needs
# what only Binder's postBuild installs (the pretrained model's wheel). Every chapter's
# teaching code runs in this environment in the jupyterlab check (Run All of the student
# notebooks), its outputs are compared by nbval in .venv, with the same pinned numpy,
# scipy and matplotlib (binder/requirements.txt), and the reader notebooks, solutions
# included, run to the end in the colab check: comparing all nine here again was 60 CPU s.
BINDER_NBVAL = ("08_real_model",)


def binder_env(work: Path) -> dict:
    env = clean_env(JUPYTER_CONFIG_DIR=work / "jupyter-config", IPYTHONDIR=work / "ipython",
                    HOME=work / "home")
    env["PATH"] = f"{work / 'venv' / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(work / "venv")
    return env


def check_binder() -> str:
    log, work = Log("binder"), WORK / "binder"
    repo = work / "repo"
    copy_repository(repo)
    runtime = (repo / BINDER / "runtime.txt").read_text().strip()   # python-3.11
    env = clean_env(JUPYTER_CONFIG_DIR=work / "jupyter-config", IPYTHONDIR=work / "ipython",
                    HOME=work / "home")
    (work / "home").mkdir()
    python = venv(log, work / "venv", env)
    version = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2], sep='.')"],
                             capture_output=True, text=True, check=True).stdout.strip()
    if runtime != f"python-{version}":
        raise CheckFailed(f"binder: runtime.txt says {runtime}, the check has Python {version}")
    env["PATH"] = f"{work / 'venv' / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(work / "venv")
    before, started = folder_mb(work / "venv"), time.monotonic()
    log.run(python, "-m", "pip", "install", "--quiet", "-r", f"{BINDER}/requirements.txt",
            cwd=repo, env=env)
    log.run("bash", f"{BINDER}/postBuild", cwd=repo, env=env)
    seconds, size = time.monotonic() - started, folder_mb(work / "venv") - before
    installed = f"{BINDER}/requirements.txt + postBuild in {seconds:.0f} s, {size:.0f} MB"
    if size > BINDER_MB:
        raise CheckFailed(f"binder: {installed}: over {BINDER_MB} MB")
    if any(repo.glob("*.egg-info")):
        raise CheckFailed(f"binder: the install wrote {[p.name for p in repo.glob('*.egg-info')]} "
                          "into the repository's root (pyproject.toml's egg_base)")
    log.run(python, "-m", "pip", "install", "--quiet", *pinned(BINDER_TOOLS), env=env)
    notebooks = [f"notebooks/reader/{p.name}" for p in READERS if p.stem in BINDER_NBVAL]
    log.run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *notebooks, cwd=repo, env=env)
    return (f"binder: {installed} in a fresh {runtime}; nbval passed on "
            f"{', '.join(BINDER_NBVAL)} (every chapter runs in this environment in the "
            "jupyterlab check)")


def folder_mb(folder: Path) -> float:
    """What the files under folder take on disk, in MB (as `du -sm`)."""
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*")) / 2**20


# ----------------------------------------------------------------------------- colab
COLAB_STUB = '"""Stand-in for the package Colab imports into every kernel (scripts/launch_check.py)."""\n'


def pinned(names) -> list[str]:
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==([^\s#]+)", (ROOT / "requirements" / "book.txt").read_text(),
                           re.M))
    return [f"{n}=={pins[n]}" if n in pins else n for n in names]


def reader_clone(log: Log, clone: Path) -> dict:
    """The working tree committed into a git repository at `clone`, on the configured
    branch: what pip installs from in place of GitHub. Returns _config.yml's repository."""
    repo = repository()
    copy_repository(clone)
    git = ["git", "-C", clone, "-c", "user.name=launch-check", "-c", "user.email=launch-check@localhost"]
    log.run(*git, "init", "-q", "-b", repo["branch"])
    log.run(*git, "add", "-A")
    log.run(*git, "commit", "-q", "-m", "the working tree, as a reader's clone")
    return repo


def colab_like(log: Log, work: Path, kernel: str) -> dict:
    """A Colab-like environment in work/venv (COLAB_BASE at the pinned versions, and a
    stand-in `google.colab` imported at every kernel start) with a Jupyter kernel named
    `kernel` in work/kernel. Returns the environment its notebooks run in."""
    env = clean_env(IPYTHONDIR=work / "ipython", HOME=work / "home",
                    JUPYTER_CONFIG_DIR=work / "jupyter-config")
    (work / "home").mkdir()
    python = venv(log, work / "venv", env)
    log.run(python, "-m", "pip", "install", "--quiet", *pinned(COLAB_BASE), env=env)
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "google" / "colab").mkdir(parents=True)
    (Path(site) / "google" / "colab" / "__init__.py").write_text(COLAB_STUB)
    startup = work / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-colab.py").write_text("import google.colab  # as in every Colab kernel\n")
    log.run(python, "-m", "ipykernel", "install", "--prefix", work / "kernel", "--name", kernel,
            env=env)
    # The kernel listens on 127.0.0.1 for this run only: without its log at ERROR, ipykernel
    # warns on every start that the connection is not encrypted (as in _ext/jupyter/).
    spec = kernels(work) / kernel / "kernel.json"
    spec_json = json.loads(spec.read_text())
    spec_json["argv"].append("--IPKernelApp.log_level=ERROR")
    spec.write_text(json.dumps(spec_json, indent=1))
    env["PATH"] = f"{work / 'venv' / 'bin'}{os.pathsep}{env['PATH']}"
    env["JUPYTER_PATH"] = str(work / "kernel" / "share" / "jupyter")
    return env


def kernels(work: Path) -> Path:
    return work / "kernel" / "share" / "jupyter" / "kernels"


def run_notebook(nb, work: Path, kernel: str, folder: Path, env: dict) -> None:
    """Run `nb` in `folder` with the kernel of colab_like(work, kernel). The kernel is found
    in work/kernel only: the checks run in threads of one process, so none of them may
    point os.environ's JUPYTER_PATH at its own kernels."""
    import nbclient  # the driver is this project's .venv; the kernel is the Colab-like one
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    specs = KernelSpecManager(kernel_dirs=[str(kernels(work))], ensure_native_kernel=False)
    manager = KernelManager(kernel_name=kernel, kernel_spec_manager=specs)
    nbclient.NotebookClient(nb, km=manager, timeout=900,
                            resources={"metadata": {"path": str(folder)}}).execute(env=env)


def check_colab() -> str:
    log, work = Log("colab"), WORK / "colab"
    clone = work / "clone"
    repo = reader_clone(log, clone)
    env = colab_like(log, work, "colab")

    address = f"git+{repo['url']}@{repo['branch']}"
    local = f"git+{clone.as_uri()}@{repo['branch']}"
    for reference in READERS:
        nb = nbformat.read(reference, as_version=4)
        for edition in ("reader", "student"):      # Colab renders Markdown itself: the file
            opened = nb if edition == "reader" else nbformat.read(
                ROOT / "notebooks" / "student" / reference.name, as_version=4)
            raw = [m[0] for c in opened.cells if c.cell_type == "markdown"
                   for m in RAW_SOURCE.finditer(c.source)]
            if raw:
                raise CheckFailed(f"colab: {edition} {reference.name} has raw MyST: {raw[:3]}")
        first = next(c for c in nb.cells if c.cell_type == "code")
        if address not in first.source:
            raise CheckFailed(f"colab: {reference.name}'s first code cell does not install {address}")
        first.source = first.source.replace(address, local)
        folder = work / "content" / reference.stem          # an empty folder, as on Colab
        folder.mkdir(parents=True)
        started = time.monotonic()
        try:
            run_notebook(nb, work, "colab", folder, env)
        except Exception as error:  # noqa: BLE001 - any failure of the run is the check's failure
            raise CheckFailed(f"colab: {reference.name} failed: {error}") from error
        with log.path.open("a") as out:
            out.write(f"{reference.name}: ran to the end in {time.monotonic() - started:.0f} s\n")
        first_outputs = "".join(o.get("text", "") for o in first.outputs)
        if "Successfully" not in first_outputs and "ERROR" in first_outputs:
            raise CheckFailed(f"colab: {reference.name}: the install cell printed {first_outputs!r}")
    return (f"colab: {len(READERS)} reader notebooks installed the course from a clone and ran to "
            f"the end; no raw MyST in them or the student notebooks")


# ------------------------------------------------------------------------ assignment
ASSIGNMENT = "03_masking"


def check_assignment() -> str:
    """A student notebook of `make assignments` as Colab opens it: alone with its tests/, in a
    Colab-like environment without otter; its first cell installs the course (from a local
    clone) and otter-grader, and every `grader.check` cell passes once the answers are in."""
    student = ROOT / "_build" / "assignments" / ASSIGNMENT / "student"
    autograder = ROOT / "_build" / "assignments" / ASSIGNMENT / "autograder"
    if not (student / f"{ASSIGNMENT}.ipynb").exists():
        raise CheckFailed(f"assignment: no {student.relative_to(ROOT)}: run `make assignments`")
    log, work = Log("assignment"), WORK / "assignment"
    clone = work / "clone"
    repo = reader_clone(log, clone)
    env = colab_like(log, work, "colab-otter")

    nb = nbformat.read(student / f"{ASSIGNMENT}.ipynb", as_version=4)
    answers = nbformat.read(autograder / f"{ASSIGNMENT}.ipynb", as_version=4)
    solution = {}   # each question's solution, as a student would type it
    for i, cell in enumerate(answers.cells):
        if cell.source.startswith("grader.check("):
            codes = []
            j = i - 1
            while j >= 0 and "otter_assign_solution_cell" in answers.cells[j].metadata.get("tags", []):
                if answers.cells[j].cell_type == "code":
                    codes.insert(0, answers.cells[j].source)
                j -= 1
            solution[cell.source] = "\n\n".join(codes)
    for i, cell in enumerate(nb.cells):
        if cell.source in solution:
            k = i - 1
            while "otter_answer_cell" in nb.cells[k].metadata.get("tags", []):
                nb.cells[k].source = ""
                k -= 1
            nb.cells[k + 1].source = solution[cell.source]
    address = f"git+{repo['url']}@{repo['branch']}"
    first = next(c for c in nb.cells if c.cell_type == "code")
    if address not in first.source or "otter-grader==" not in first.source:
        raise CheckFailed(f"assignment: the first cell does not install the course and otter")
    first.source = first.source.replace(address, f"git+{clone.as_uri()}@{repo['branch']}")
    folder = work / "content"
    shutil.copytree(student / "tests", folder / "tests")    # uploaded beside the notebook
    try:
        run_notebook(nb, work, "colab-otter", folder, env)
    except Exception as error:  # noqa: BLE001 - any failure of the run is the check's failure
        raise CheckFailed(f"assignment: {ASSIGNMENT}'s student notebook failed: {error}") from error
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("grader.check(")]
    for cell in checks:
        shown = json.dumps(cell.outputs)
        if "passed" not in shown:
            raise CheckFailed(f"assignment: {cell.source} did not pass: {shown[:500]}")
    return (f"assignment: {ASSIGNMENT}'s student notebook installed otter and the course, "
            f"{len(checks)} grader.check cells passed")


# ------------------------------------------------------------------------ jupyterlab
# Raw MyST a reader would see in a rendered Markdown cell (its text, so a role shows as
# "{glue:text}masking_L" and a colon fence as ":::{admonition}"), or in a Markdown cell's
# source (the Colab check, which has no renderer).
RAW_RENDERED = re.compile(r"\{(?:glue|ref|numref|cite|doc|eq|study-time|core-path|math)[:}]"
                          r"|\{(?:exercise|solution|solution-start|solution-end|admonition)\}"
                          r"|^\s*:{3,}|^\s*\([\w-]+\)=\s*$|^\s*:label:", re.M)
RAW_SOURCE = re.compile(r"\{[\w:.-]+\}`|^\s*(?:`{3,}|:{3,})\s*\{[\w:-]+\}|^\s*\([\w-]+\)=\s*$", re.M)
EDITIONS = ("notebooks/reader", "notebooks/student")   # a folder named student: no solutions
SCREENSHOTS = ROOT / "_build" / "screenshots" / "jupyterlab"
# The learner's JupyterLab, with two settings for the check only: every cell kept in the page
# (JupyterLab 4 renders only the cells near the viewport by default) and no news toast.
LAB_OVERRIDES = {
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}
# What the page shows of a notebook, read in the browser: each rendered Markdown cell's text
# (all of it, and only what shows without a click: a closed <details> shows its summary),
# each code cell's source and outputs unless collapsed, the explorers' charts, the tab's
# modified mark, and the model's error outputs.
READ_NOTEBOOK = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const shown = (el) => { const c = el.cloneNode(true);
    c.querySelectorAll('details:not([open]) > :not(summary)').forEach(n => n.remove());
    return c.textContent; };
  const markdown = [...panel.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')];
  const code = [...panel.querySelectorAll('.jp-CodeCell')].map(cell => [
    cell.querySelector('.jp-InputPlaceholder') ? cell.querySelector('.jp-InputPlaceholder').textContent  // its first line
      : (cell.querySelector('.cm-content')?.textContent || ''),
    cell.querySelector('.jp-OutputPlaceholder') ? '' : (cell.querySelector('.jp-OutputArea')?.textContent || '')]);
  return {
    markdown: markdown.map(el => el.textContent),
    shown: markdown.map(shown).concat(code.flat()),
    charts: panel.querySelectorAll('.jp-RenderedVegaCommon5 canvas, .jp-RenderedVegaCommon5 svg, .vega-embed canvas, .vega-embed svg').length,
    dirty: document.querySelectorAll('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-dirty').length,
  };
}"""
MODEL_ERRORS = """() => {
  const model = window.jupyterapp.shell.currentWidget.content.model, errors = [];
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    if (cell.type === 'code') for (const o of cell.outputs.toJSON())
      if (o.output_type === 'error') errors.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
  }
  return errors;
}"""
NOTEBOOK_JSON = "() => window.jupyterapp.shell.currentWidget.content.model.toJSON()"
BUSY = "() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-InputPrompt').length === 0 || [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-InputPrompt')].some(p => p.textContent.includes('*'))"


def explorer_count(nb) -> int:
    return sum("application/vnd.vegalite.v5+json" in o.get("data", {})
               for c in nb.cells for o in c.get("outputs", []))


def what_changed(opened: dict, nb) -> str:
    """What the notebook JupyterLab holds has that the file has not: the metadata keys that
    differ and the MIME types an output gained (for the failure message). The converter
    stores a PNG beside each chart because JupyterLab's Vega renderer adds one otherwise
    (scripts/jupyter_notebooks.py cites where)."""
    def same(a, b):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

    changes = [f"metadata {key!r}" for key in sorted(set(opened.get("metadata", {})) | set(nb.metadata))
               if not same(opened["metadata"].get(key), nb.metadata.get(key))]
    if len(opened["cells"]) != len(nb.cells):
        changes.append(f"{len(opened['cells'])} cells, the file has {len(nb.cells)}")
    for i, (cell, stored) in enumerate(zip(opened["cells"], nb.cells)):
        for output, kept in zip(cell.get("outputs", []), stored.get("outputs", [])):
            gained = sorted(set(output.get("data", {})) - set(kept.get("data", {})))
            if gained:
                changes.append(f"cell {i}'s output gained {', '.join(gained)}")
    return "; ".join(changes[:3]) or "neither its metadata nor an output's MIME types"


def selfcheck_problems(seen: dict, nb) -> list[str]:
    """The self-check questions (issues 34 and 47; scripts/jupyter_notebooks.py makes
    each a Markdown cell and a check() cell after it): JupyterLab renders each, and shows
    no answer before the learner asks check() for it."""
    asked = sum(c.cell_type == "markdown" and c.source.startswith("**Check yourself.**")
                for c in nb.cells)
    rendered = [i for i, text in enumerate(seen["markdown"]) if text.startswith("Check yourself.")]
    problems = []
    if len(rendered) != asked:
        problems.append(f"{asked} self-check questions but {len(rendered)} rendered")
    shown = [i for i in rendered if "The answer:" in seen["shown"][i]]
    if shown:
        problems.append(f"{len(shown)} self-check answers visible without a click")
    return problems


def lab_problems(edition: str, name: str, seen: dict, nb) -> list[str]:
    """What is wrong with one notebook as JupyterLab shows it."""
    sys.path.insert(0, str(ROOT))
    from tests.edition_text import needles, squash
    problems = []
    raw = [m[0] for text in seen["markdown"] for m in RAW_RENDERED.finditer(text)]
    if raw:
        problems.append(f"raw MyST in {len(raw)} places, e.g. {raw[:3]}")
    md = ROOT / "notebooks" / f"{name}.md"
    if md.exists():
        text = squash("\n".join(seen["markdown"] if edition == "student" else seen["shown"]))
        visible = [n for n in needles(md) if squash(n) in text]
        if visible:
            where = "present" if edition == "student" else "visible without a click"
            at = text.index(squash(visible[0]))
            problems.append(f"{len(visible)} solution passages {where}, e.g. "
                            f"...{text[max(0, at - 150):at + 100]}...")
    if seen["dirty"]:
        problems.append(f"marked modified on opening (changed: {what_changed(seen['model'], nb)})")
    if explorer_count(nb) and seen["charts"] < explorer_count(nb):
        problems.append(f"{explorer_count(nb)} explorers but {seen['charts']} Vega-Lite charts drawn")
    problems += selfcheck_problems(seen, nb)
    return problems


def shut_down_kernels(base: str, token: str) -> None:
    """One kernel at a time: each notebook's kernel stops when its page is done."""
    headers = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels", headers=headers)) as r:
        kernels = json.load(r)
    for kernel in kernels:
        urllib.request.urlopen(urllib.request.Request(f"{base}/api/kernels/{kernel['id']}",
                                                      headers=headers, method="DELETE"))


def check_jupyterlab(folders=None, log: Log | None = None) -> str:
    """Every reader and student notebook opened in the pinned JupyterLab of the Binder-like
    environment (check_binder's), in Debian's Chromium, through the URL a Binder button
    uses; the student notebooks also run (Run All)."""
    from playwright.sync_api import sync_playwright

    work = WORK / "binder"
    repo, python = work / "repo", work / "venv" / "bin" / "python"
    if not python.exists():
        raise CheckFailed("jupyterlab: no Binder-like environment: run the binder check first")
    log = log or Log("jupyterlab")
    env = binder_env(work)
    log.run(python, "-m", "pip", "install", "--quiet", "-r", ROOT / "requirements" / "jupyterlab.txt", env=env)
    settings = work / "venv" / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "overrides.json").write_text(json.dumps(LAB_OVERRIDES, indent=1))
    folders = folders or EDITIONS
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "launch-check"
    server_log = (WORK / "jupyterlab-server.log").open("w")
    server = subprocess.Popen(
        [python, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={repo}",
         "--LabApp.expose_app_in_browser=True",
         *(["--allow-root"] if os.geteuid() == 0 else [])],   # a CI container runs as root
        cwd=repo, env=env, stdout=server_log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    failures, opened, started = [], 0, time.monotonic()
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if server.poll() is not None:
                    raise CheckFailed(f"jupyterlab: the server stopped: {WORK / 'jupyterlab-server.log'}")
                time.sleep(0.5)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            for folder in folders:
                edition = "student" if Path(folder).name == "student" else "reader"
                for k, path in enumerate(sorted((repo / folder).glob("*.ipynb"))):
                    rel = path.relative_to(repo).as_posix()
                    nb = nbformat.read(path, as_version=4)
                    t0 = time.monotonic()
                    if k == 0:
                        # what a Binder button opens (urlpath=lab/tree/<path>), a fresh workspace
                        page.goto(f"{base}/lab/tree/{rel}?reset&token={token}")
                    else:   # the same app opens the next one (a page load per notebook is slow)
                        page.evaluate("async (path) => { const app = window.jupyterapp;"
                                      " for (const w of [...app.shell.widgets('main')]) w.dispose();"
                                      " await app.commands.execute('docmanager:open', {path}); }", rel)
                    page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell", timeout=60000)
                    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60000)
                    if explorer_count(nb):
                        try:
                            page.wait_for_selector(".jp-RenderedVegaCommon5 canvas, .jp-RenderedVegaCommon5 svg, .vega-embed canvas, .vega-embed svg", timeout=15000)
                        except Exception:  # noqa: BLE001 - counted as a problem below
                            pass
                    page.wait_for_timeout(1500)     # MathJax, and a metadata rewrite if any
                    page.screenshot(path=SCREENSHOTS / f"{rel.replace('/', '-')}.png")
                    # and the first exercise, with its folded solution or its answer cell
                    exercise = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) "
                                            ".jp-MarkdownCell strong", has_text=re.compile(r"^Exercise \d"))
                    if exercise.count():
                        exercise.first.scroll_into_view_if_needed()
                        page.screenshot(path=SCREENSHOTS / f"{rel.replace('/', '-')}-exercise.png")
                    chart = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedVegaCommon5")
                    if chart.count():   # and the explorer, to see that it draws, PNG not beside it
                        chart.first.scroll_into_view_if_needed()
                        page.screenshot(path=SCREENSHOTS / f"{rel.replace('/', '-')}-explorer.png")
                    seen = page.evaluate(READ_NOTEBOOK)
                    seen["model"] = page.evaluate(NOTEBOOK_JSON) if seen["dirty"] else None
                    problems = lab_problems(edition, path.stem, seen, nb)
                    if edition == "student":            # not run elsewhere: Run All
                        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
                        page.wait_for_timeout(1000)
                        page.wait_for_function(f"!({BUSY})()", timeout=900000, polling=1000)
                        errors = page.evaluate(MODEL_ERRORS)
                        if errors:
                            problems.append(f"Run All: {errors[:2]}")
                    with log.path.open("a") as out:
                        out.write(f"{edition} {path.stem}: {'; '.join(problems) or 'ok'} "
                                  f"[{time.monotonic() - t0:.0f} s]\n")
                    failures += [f"{edition} {path.stem}: {p}" for p in problems]
                    opened += 1
                    shut_down_kernels(base, token)
            browser.close()
    except CheckFailed:
        raise
    except Exception as error:  # noqa: BLE001 - a page that does not load is the check's failure
        raise CheckFailed(f"jupyterlab: {type(error).__name__}: {error}") from error
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        server_log.close()
    if failures:
        raise CheckFailed(f"jupyterlab: {len(failures)} problems in {opened} notebooks "
                          f"(screenshots in {SCREENSHOTS.relative_to(ROOT)}):\n  " + "\n  ".join(failures))
    return (f"jupyterlab: {opened} notebooks opened in JupyterLab, no raw MyST, solutions folded "
            f"or absent, explorers drawn, none modified, student notebooks ran "
            f"[{time.monotonic() - started:.0f} s]")


# ------------------------------------------------------------------------- downloads
LINK = re.compile(r'<a\s[^>]*href="([^"]+)"')


def check_downloads(sites: dict) -> str:
    repo = repository()
    owner_repo = re.sub(r"^https://github\.com/", "", repo["url"]).rstrip("/")
    checked = 0
    for edition, (site, folder) in sites.items():
        if not (site / "index.html").exists():
            raise CheckFailed(f"downloads: no built {edition} site in {site}")
        for reference in REFERENCES:
            page = site / "notebooks" / f"{reference.stem}.html"
            text = page.read_text()
            links = [html.unescape(h) for h in LINK.findall(text)]
            for suffix in (".ipynb", ".md"):
                offered = [h for h in links if h.endswith(f"_sources/notebooks/{reference.stem}{suffix}")]
                if not offered:
                    raise CheckFailed(f"downloads: {edition} {page.name} offers no {suffix}")
                target = Path(unquote(urljoin(page.as_uri(), offered[0])).removeprefix("file://"))
                committed = (folder if suffix == ".ipynb" or edition != "full edition"
                             else ROOT / "notebooks") / f"{reference.stem}{suffix}"
                if not target.exists() or target.read_bytes() != committed.read_bytes():
                    raise CheckFailed(f"downloads: {edition} {page.name}'s {suffix} is not "
                                      f"{committed.relative_to(ROOT)}")
                checked += 1
            path = folder.relative_to(ROOT).as_posix() + f"/{reference.name}"   # the edition's notebook
            binder = f"https://mybinder.org/v2/gh/{owner_repo}/{repo['branch']}?urlpath=lab/tree/{path}"
            colab = f"https://colab.research.google.com/github/{owner_repo}/blob/{repo['branch']}/{path}"
            for button in (binder, colab):
                if button not in links:
                    raise CheckFailed(f"downloads: {edition} {page.name} has no launch link {button}")
    return f"downloads: {checked} download links serve the committed files; launch buttons open {owner_repo}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checks", nargs="*",
                        choices=["binder", "jupyterlab", "colab", "downloads", "assignment", []],
                        help="which checks (default: all five; jupyterlab runs after binder, in "
                             "its environment, or alone in the one binder left)")
    parser.add_argument("--jupyterlab-open", action="append", metavar="FOLDER",
                        help="a folder of the Binder checkout whose notebooks to open (default: "
                             "notebooks/reader and notebooks/student; one named student is "
                             "checked as a student edition)")
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--student-site", type=Path, default=ROOT / "_build" / "student" / "html")
    args = parser.parse_args(argv)
    args.checks = args.checks or ["binder", "jupyterlab", "colab", "downloads", "assignment"]
    folders = args.jupyterlab_open
    for name in ("binder", "colab", "assignment"):
        if name in args.checks:
            shutil.rmtree(WORK / name, ignore_errors=True)
            (WORK / name).mkdir(parents=True)
    def binder_then_jupyterlab():
        done = check_binder()
        try:
            return done + "\nok    " + check_jupyterlab(folders)
        except CheckFailed as error:
            raise CheckFailed(f"{done}\nFAIL  {error}") from error

    jobs = {"binder": binder_then_jupyterlab if "jupyterlab" in args.checks else check_binder,
            "jupyterlab": lambda: check_jupyterlab(folders),
            "colab": check_colab, "assignment": check_assignment,
            "downloads": lambda: check_downloads({
                "full edition": (args.site, ROOT / "notebooks" / "reader"),
                "student edition": (args.student_site, ROOT / "notebooks" / "student")})}
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        started = time.monotonic()
        # downloads takes a moment: first, so that binder, colab and assignment then share
        # the three workers
        order = sorted((c for c in args.checks if c != "jupyterlab" or "binder" not in args.checks),
                       key=lambda name: name != "downloads")
        futures = {pool.submit(jobs[name]): name for name in order}
        for future in concurrent.futures.as_completed(futures):
            try:
                print(f"ok    {future.result()} [{time.monotonic() - started:.0f} s]", flush=True)
            except CheckFailed as error:
                failures += 1
                print(f"FAIL  {error}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
