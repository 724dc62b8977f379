"""Grade submitted notebooks of one assignment with `otter run`, without Docker (`make grade`).

    python scripts/grade_assignments.py 03_masking path/to/submissions [--out grades.csv]

Every `*.ipynb` in the folder is run by `otter run` against the assignment's autograder zip
(_build/assignments/<name>/autograder/, from `make assignments`), in its own process with a
time limit, two at a time. One CSV, one row per submission: each autograded question's
score, the total, and a status: `ok`, `timeout` (scored 0) or `error: ...` (otter could not
grade it, scored 0). A notebook whose cells raise is graded as it is: the cells after the
error still run (otter executes with errors allowed) and the failing questions score 0.
Default output: _build/assignments/<name>/grades.csv.
"""

import argparse
import concurrent.futures
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = ROOT / "_build" / "assignments"
OTTER = Path(sys.executable).with_name("otter")


def autograder_zip(name: str) -> Path:
    zips = sorted((ASSIGNMENTS / name / "autograder").glob(f"{name}-autograder*.zip"))
    if not zips:
        raise SystemExit(f"no autograder zip for {name}: run `make assignments` first")
    return zips[-1]


def questions(name: str) -> list[str]:
    summary = json.loads((ASSIGNMENTS / name / "questions.json").read_text())
    return [q for q, info in summary.items() if info["kind"] == "auto"]


def grade_one(name: str, notebook: Path, timeout: float) -> dict:
    """`otter run` on one notebook: {'status', 'scores': {q: score}, 'output': {q: text}}."""
    with tempfile.TemporaryDirectory(prefix="otter-run-") as out:
        try:
            done = subprocess.run([str(OTTER), "run", "-a", str(autograder_zip(name)), "-o", out,
                                   str(notebook.resolve())], capture_output=True, text=True,
                                  timeout=timeout, cwd=out)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "scores": {}, "output": {}}
        results = Path(out) / "results.json"
        if done.returncode or not results.exists():
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no results"]
            return {"status": f"error: {last[0][:200]}", "scores": {}, "output": {}}
        tests = json.loads(results.read_text())["tests"]
    scores = {t["name"]: t["score"] for t in tests if "score" in t}
    output = {t["name"]: t.get("output", "") for t in tests}
    return {"status": "ok", "scores": scores, "output": output}


def grade(name: str, notebooks: list[Path], timeout: float = 900, jobs: int = 2) -> dict:
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {nb: pool.submit(grade_one, name, nb, timeout) for nb in notebooks}
        return {nb: f.result() for nb, f in futures.items()}


def write_csv(name: str, results: dict, path: Path) -> None:
    qs = questions(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", *qs, "total", "status"])
        for nb, result in sorted(results.items()):
            scores = [float(result["scores"].get(q, 0.0) or 0.0) for q in qs]
            writer.writerow([nb.name, *scores, sum(scores), result["status"]])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", help="e.g. 03_masking")
    parser.add_argument("submissions", type=Path, help="a folder of submitted .ipynb files")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per notebook")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    notebooks = sorted(args.submissions.glob("*.ipynb"))
    if not notebooks:
        raise SystemExit(f"no .ipynb in {args.submissions}")
    results = grade(args.assignment, notebooks, args.timeout, args.jobs)
    out = args.out or ASSIGNMENTS / args.assignment / "grades.csv"
    write_csv(args.assignment, results, out)
    for nb, result in sorted(results.items()):
        total = sum(float(s or 0) for s in result["scores"].values())
        print(f"{nb.name}: {total:g} ({result['status']})")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
