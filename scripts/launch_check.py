"""Every way a reader gets a notebook, exercised as the reader would, on this machine (no
Binder, Colab or GitHub involved; packages come from PyPI). `make launch-check` runs it:

binder     A copy of the repository's files (what Binder checks out) and a fresh virtual
           environment that installs exactly requirements.txt and runs postBuild, as
           repo2docker does; then every notebooks/*.ipynb reference runs through a Jupyter
           kernel of that environment and its outputs are compared with the stored ones by
           nbval (pytest --nbval, configured in pyproject.toml).
colab      A fresh environment with only a Colab-like base (numpy, matplotlib, ipykernel, at
           the versions requirements.txt pins, and a stand-in `google.colab` module imported
           at kernel start, as Colab does). Each reference notebook runs alone in an empty
           folder, like an upload to Colab: its first cell installs the course with pip from
           a local git clone (the repository address of _config.yml swapped for file:// of
           the clone) and the notebook then runs to the end.
downloads  In the built sites (_build/html, and _build/student/html), the .ipynb and .md
           that each notebook page's download button offers are the committed files
           (notebooks/reader/<name>.ipynb and the source notebooks/<name>.md;
           notebooks/student/<name>.* in the student edition), and the Binder and Colab
           buttons open that edition's notebook in the configured repository.

assignment A student notebook of `make assignments` (03_masking), alone with its tests/ as
           on Colab, in a Colab-like environment without otter: its first cell installs the
           course and otter-grader, and its grader.check cells pass with the answers filled in.

    python scripts/launch_check.py binder colab downloads assignment   # all four (the default)

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
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urljoin

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "_build" / "launch"
PYTHON = os.environ.get("LAUNCH_PYTHON", "python3")   # the interpreter of runtime.txt's version
REFERENCES = sorted((ROOT / "notebooks").glob("*.ipynb"))
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
def check_binder() -> str:
    log, work = Log("binder"), WORK / "binder"
    repo = work / "repo"
    copy_repository(repo)
    runtime = (repo / "runtime.txt").read_text().strip()            # python-3.11
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
    log.run(python, "-m", "pip", "install", "--quiet", "-r", "requirements.txt", cwd=repo, env=env)
    log.run("bash", "postBuild", cwd=repo, env=env)
    notebooks = [f"notebooks/{p.name}" for p in REFERENCES]
    log.run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *notebooks, cwd=repo, env=env)
    return f"binder: requirements.txt + postBuild in a fresh {runtime}; nbval passed on {len(notebooks)} notebooks"


# ----------------------------------------------------------------------------- colab
COLAB_STUB = '"""Stand-in for the package Colab imports into every kernel (scripts/launch_check.py)."""\n'


def pinned(names) -> list[str]:
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==([^\s#]+)", (ROOT / "requirements.txt").read_text(), re.M))
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
    for reference in REFERENCES:
        nb = nbformat.read(reference, as_version=4)
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
    return f"colab: {len(REFERENCES)} notebooks installed the course from a clone and ran to the end"


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
    parser.add_argument("checks", nargs="*", choices=["binder", "colab", "downloads", "assignment", []],
                        help="which checks (default: all four)")
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--student-site", type=Path, default=ROOT / "_build" / "student" / "html")
    args = parser.parse_args(argv)
    args.checks = args.checks or ["binder", "colab", "downloads", "assignment"]
    for name in ("binder", "colab", "assignment"):
        if name in args.checks:
            shutil.rmtree(WORK / name, ignore_errors=True)
            (WORK / name).mkdir(parents=True)
    jobs = {"binder": check_binder, "colab": check_colab, "assignment": check_assignment,
            "downloads": lambda: check_downloads({
                "full edition": (args.site, ROOT / "notebooks" / "reader"),
                "student edition": (args.student_site, ROOT / "notebooks" / "student")})}
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        started = time.monotonic()
        # downloads takes a moment: first, so that binder, colab and assignment then share
        # the three workers
        order = sorted(args.checks, key=lambda name: name != "downloads")
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
