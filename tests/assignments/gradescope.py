"""Run an autograder zip as Gradescope's autograder image does, on this machine.

    python tests/assignments/gradescope.py ZIP SUBMISSION.ipynb [SUBMISSION.ipynb ...]

Gradescope's documentation of the autograder (its "specifications" page): the zip is unpacked
into /autograder/source, `setup.sh` runs there once, as root, to build the image; then, for
each submission, the student's files are put in /autograder/submission, `run_autograder`
runs and writes /autograder/results/results.json. Here each step runs in a fresh directory
bind-mounted on /autograder in a private mount namespace (`unshare -m`: the machine gets
only an empty /autograder mount point). setup.sh with a clean environment (no pip configuration,
find-links, mirror or cache: packages come from PyPI as on Gradescope), then each
run_autograder with no network (`unshare -n`, loopback only: the notebook's kernel talks to
otter over it). Needs root (unshare, mount). It is not a container: what setup.sh installs
with apt-get lands on this machine (the course's setup.sh needs apt-get only where
python3.11 is missing; otter's own ran apt-get install always). Prints one JSON line per submission:
{"submission", "score", "max_score", "tests": {name: score}} and the seconds setup took.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

CLEAN_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "LANG": "C.UTF-8", "PIP_CONFIG_FILE": os.devnull, "PIP_NO_CACHE_DIR": "1"}


def in_namespace(root: Path, script: str, network: bool, timeout: float):
    """Run `script` (bash) with root bind-mounted on /autograder, as Gradescope's root user."""
    flags = ["-m"] if network else ["-m", "-n"]
    inner = ("set -e; mount --make-rprivate /; mkdir -p /autograder; "
             f"mount --bind {root} /autograder; "
             + ("" if network else "ip link set lo up; ") + script)
    env = CLEAN_ENV | {"HOME": str(root / "home")}
    return subprocess.run(["unshare", *flags, "bash", "-c", inner], env=env, text=True,
                          capture_output=True, timeout=timeout)


def emulate(zip_path: Path, submissions: list[Path], work: Path | None = None) -> dict:
    """Set up the zip's image once, then grade each submission: {'setup_seconds', 'results'}."""
    root = Path(work or tempfile.mkdtemp(prefix="gradescope-"))
    for sub in ("source", "submission", "results", "home"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):  # zipfile drops the mode bits
        (root / "source" / name).chmod(0o755)
    started = time.monotonic()
    done = in_namespace(root, "cd /autograder/source && bash ./setup.sh", True, 1800)
    setup_seconds = time.monotonic() - started
    (root / "setup.log").write_text(done.stdout + done.stderr)
    if done.returncode:
        raise RuntimeError(f"setup.sh failed ({done.returncode}); last lines:\n"
                           + "\n".join((done.stdout + done.stderr).splitlines()[-15:]))
    results = []
    for notebook in submissions:
        shutil.rmtree(root / "submission")
        (root / "submission").mkdir()
        shutil.copy(notebook, root / "submission" / notebook.name)
        # Gradescope writes the submission's metadata beside it (otter's plugins read it)
        (root / "submission_metadata.json").write_text(json.dumps(
            {"id": 1, "created_at": "2027-01-01T00:00:00Z", "assignment": {"title": "check"},
             "users": [{"name": notebook.stem, "sid": "1"}]}))
        (root / "results" / "results.json").unlink(missing_ok=True)
        done = in_namespace(root, "cd /autograder && /autograder/source/run_autograder",
                            False, 900)
        out = root / "results" / "results.json"
        if done.returncode or not out.exists():
            raise RuntimeError(f"run_autograder failed on {notebook.name} ({done.returncode}):\n"
                               + "\n".join((done.stdout + done.stderr).splitlines()[-15:]))
        data = json.loads(out.read_text())
        tests = {t["name"]: t.get("score") for t in data["tests"] if "score" in t}
        results.append({"submission": notebook.name, "score": sum(tests.values()),
                        "max_score": sum(t.get("max_score", 0) for t in data["tests"]),
                        "tests": tests,
                        "visibility": {t["name"]: t.get("visibility") for t in data["tests"]},
                        "output": {t["name"]: t.get("output", "") for t in data["tests"]}})
    return {"setup_seconds": setup_seconds, "results": results, "root": str(root)}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        raise SystemExit(__doc__)
    report = emulate(Path(argv[0]), [Path(a) for a in argv[1:]])
    print(f"setup.sh: {report['setup_seconds']:.0f} s")
    for r in report["results"]:
        print(json.dumps({k: r[k] for k in ("submission", "score", "max_score", "tests")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
