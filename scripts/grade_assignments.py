"""Grade submitted notebooks of one assignment with `otter run`, without Docker (`make grade`).

    python scripts/grade_assignments.py 03_masking path/to/submissions [--out grades.csv]
                                        [--jobs N]

Every `*.ipynb` in the folder (or one level down: `submissions/<student>/<any>.ipynb`, as
course platforms export them) is run by `otter run` against the assignment's autograder zip
(_build/assignments/<name>/autograder/, from `make assignments`), in its own process with a
time limit, N at a time (`--jobs`, `make grade JOBS=N`; never more than there are
submissions). A notebook whose cells raise is graded as it is: the cells after the error
still run (otter executes with errors allowed) and the failing tests score 0.

Beside the CSV (default _build/assignments/<name>/grades.csv) it writes:

- grades.csv: one row per student: `student` (the notebook's name without `.ipynb`, or its
  folder's name when submissions sit in one folder per student), `submission` (the file),
  then for every question, in the assignment's order, its score and `<question> max`: the
  autograded ones filled in, the manual (pen-and-paper) ones left empty for the grader;
  then `total` (the scores present), `max` (every question's maximum), `percent`
  (total / max), `autograded max`, and `status`: `ok`, `timeout` or `error: ...` (otter
  could not grade it; its autograded questions scored 0).
- feedback/<student>.md: each autograded question's score and maximum and the message of
  every test it failed (never a hidden test's code or expected values).
- answers/<student>.md: every question's prompt with the student's answer cells (the
  written answers and the code), for grading the manual questions.
"""

import argparse
import concurrent.futures
import csv
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = ROOT / "_build" / "assignments"
OTTER = Path(sys.executable).with_name("otter")


def autograder_zip(name: str) -> Path:
    zips = sorted((ASSIGNMENTS / name / "autograder").glob(f"{name}-autograder*.zip"))
    if not zips:
        raise SystemExit(f"no autograder zip for {name}: run `make assignments` first")
    return zips[-1]


def summary(name: str) -> dict:
    """{question: {'kind': 'auto' | 'manual', 'points': ..., ...}} in the assignment's order."""
    return json.loads((ASSIGNMENTS / name / "questions.json").read_text())


def questions(name: str) -> list[str]:
    return [q for q, info in summary(name).items() if info["kind"] == "auto"]


def failed_messages(question: str, output: str) -> list[str]:
    """The failure messages of the failed test cases, read from otter's output."""
    messages = dict(re.findall(rf"^\s*{re.escape(question)} - (\d+) message: (.*)$", output,
                               re.M))
    failed = re.findall(rf"^\s*{re.escape(question)} - (\d+) result:\s*\n\s*❌", output, re.M)
    return [messages.get(case, "a test failed") for case in failed]


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
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(jobs,
                                                                      len(notebooks)))) as pool:
        futures = {nb: pool.submit(grade_one, name, nb, timeout) for nb in notebooks}
        return {nb: f.result() for nb, f in futures.items()}


def student_of(notebook: Path, submissions: Path) -> str:
    """The notebook's name, or its folder's when submissions sit one folder per student."""
    if notebook.parent.resolve() != submissions.resolve():
        return notebook.parent.name
    return notebook.stem


def write_csv(name: str, results: dict, path: Path, students: dict) -> None:
    info = summary(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    full = sum(q["points"] for q in info.values())
    auto_max = sum(q["points"] for q in info.values() if q["kind"] == "auto")
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        header = ["student", "submission"]
        for q in info:
            header += [q, f"{q} max"]
        writer.writerow(header + ["total", "max", "percent", "autograded max", "status"])
        for nb, result in sorted(results.items(), key=lambda item: students[item[0]]):
            row, total = [students[nb], nb.name], 0.0
            for q, q_info in info.items():
                if q_info["kind"] == "auto":
                    score = float(result["scores"].get(q, 0.0) or 0.0)
                    total += score
                    row += [f"{score:g}", q_info["points"]]
                else:
                    row += ["", q_info["points"]]
            writer.writerow(row + [f"{total:g}", full, f"{100 * total / full:.1f}", auto_max,
                                   result["status"]])


def write_feedback(name: str, result: dict, path: Path, student: str) -> None:
    info = summary(name)
    lines = [f"# {name}: feedback for {student}", ""]
    if result["status"] != "ok":
        lines += [f"The notebook could not be graded ({result['status']}); every autograded "
                  "question scored 0.", ""]
    for q, q_info in info.items():
        if q_info["kind"] != "auto":
            what = "in words" if q.endswith("-written") else "pen and paper"
            lines.append(f"- **{q}** ({what}): graded by hand, out of {q_info['points']}.")
            continue
        score = float(result["scores"].get(q, 0.0) or 0.0)
        lines.append(f"- **{q}**: {score:g} / {q_info['points']}")
        for message in failed_messages(q, result["output"].get(q, "")):
            lines.append(f"  - {message}")
    total = sum(float(result["scores"].get(q, 0) or 0) for q in questions(name))
    auto_max = sum(q["points"] for q in info.values() if q["kind"] == "auto")
    lines += ["", f"Autograded: {total:g} / {auto_max}."]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def write_answers(notebook: Path, path: Path, student: str) -> None:
    """Each question's prompt (its first line) and the student's answer cells, as Markdown."""
    nb = nbformat.read(notebook, as_version=4)
    lines, current = [f"# Answers of {student} ({notebook.name})", ""], None
    for cell in nb.cells:
        heading = re.search(r"\*\*(Exercise [\d.]+(?:, in words)?)\*\* \(`([\w-]+)`\)",
                            cell.source)
        if cell.cell_type == "markdown" and heading:
            current = heading[2]
            prompt = "\n\n".join(cell.source[heading.start():].split("\n\n")[:2])
            lines += [f"## {heading[1]} ({current})", "",
                      *(f"> {line}".rstrip() for line in prompt.splitlines()), ""]
        elif current and "otter_answer_cell" in cell.metadata.get("tags", []):
            if cell.cell_type == "markdown":
                lines += [cell.source, ""]
            else:
                lines += ["```python", cell.source, "```", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", help="e.g. 03_masking")
    parser.add_argument("submissions", type=Path, help="a folder of submitted .ipynb files")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per notebook")
    parser.add_argument("--jobs", type=int, default=2, help="otter runs at a time")
    args = parser.parse_args(argv)
    notebooks = sorted(set(args.submissions.glob("*.ipynb"))
                       | set(args.submissions.glob("*/*.ipynb")))
    if not notebooks:
        raise SystemExit(f"no .ipynb in {args.submissions}")
    students = {nb: student_of(nb, args.submissions) for nb in notebooks}
    if len(set(students.values())) < len(students):
        raise SystemExit("two submissions of one student: keep one notebook per student")
    results = grade(args.assignment, notebooks, args.timeout, args.jobs)
    out = args.out or ASSIGNMENTS / args.assignment / "grades.csv"
    write_csv(args.assignment, results, out, students)
    for nb, result in results.items():
        write_feedback(args.assignment, result, out.parent / "feedback" / f"{students[nb]}.md",
                       students[nb])
        write_answers(nb, out.parent / "answers" / f"{students[nb]}.md", students[nb])
    for nb, result in sorted(results.items(), key=lambda item: students[item[0]]):
        total = sum(float(s or 0) for s in result["scores"].values())
        print(f"{students[nb]}: {total:g} ({result['status']})")
    print(f"wrote {out}, and feedback/ and answers/ beside it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
