"""Grade submitted notebooks of one assignment with `otter run`, without Docker (`make grade`).

    python scripts/grade_assignments.py 03_masking path/to/submissions [--out grades.csv]
                                        [--jobs N] [--roster roster.csv]
    python scripts/grade_assignments.py --lms grades.csv [--lms-out lms.csv]
                                        [--lms-format plain|canvas|moodle] [03_masking]

Every `*.ipynb` in the folder (or one level down: `submissions/<student>/<any>.ipynb`, as
course platforms export them) is a submission. The student is the folder's name, or in a
flat folder the notebook's name without a resubmission's suffix (`ada.ipynb`,
`ada (2).ipynb`, `ada-v2.ipynb`, `ada_resubmission.ipynb` and `ada-late.ipynb` are all
`ada`); in an LMS's own export (Moodle's folders, Canvas's file names: lms_identity) the
student is their name and LMS identifier, whatever the file's name, and `--roster` maps
other names to an identifier; a student's latest submission (by modification time, then name) counts, the
earlier ones are listed. Each counted notebook is run by `otter run` against the
assignment's autograder zip (_build/assignments/<name>/autograder/, from `make
assignments`), in its own process with a time limit, N at a time (`--jobs`, `make grade
JOBS=N`), with the zip's guard (scripts/assignment_guard.py, otter's plugin: the cells that
could change the checks are not run). A notebook whose cells raise is graded as it is: the cells after the error still
run and the failing tests score 0. A file that is not a readable notebook (truncated,
empty, not JSON) is a row with status `unreadable` and no scores; the run goes on and
exits 0 whenever it could write the grades.

Beside the CSV (default _build/assignments/<name>/grades.csv) it writes:

- grades.csv: one row per student: `student`, then each question's score in the
  assignment's order (the autograded ones filled in, the manual ones left empty for the
  grader), `total` (the scores present), `max` (every question's maximum), `graded max`
  (the maxima of the questions scored so far), `percent` (total / graded max: the
  percentage of the points graded so far), `status` (`ok`, `no answer`, `unreadable`,
  `timeout`, `other version: ...`, `refused code cells: ...` or `error: ...`),
  `submission` (the file graded), `earlier submissions`, `identical to` (other students
  whose answer cells are the same, character for character, and not blank), `lms` and
  `lms id` (the LMS and the student's identifier there). Each question's maximum is in its feedback and
  in the assignment's questions.json.
- feedback/<student>.md: each autograded question's score and maximum and the message of
  its first failing check, or "no answer" for a question left as handed out (never a
  hidden test's code or expected values).
- answers/<student>.md: every question's prompt with the student's answer cells (each code
  cell beside what it printed, as saved in the notebook handed in), and for
  each manual question its rubric and model answer (tests/assignments/questions/<q>.yml).

`--lms grades.csv` reads the grades after the manual scores have been filled in and writes
an LMS gradebook import (lms_export): `--lms-format canvas` (Canvas's gradebook columns,
matched by ID), `moodle` (Moodle's grading worksheet, matched by Identifier) or `plain`
(`student` and one grade column, the percentage of the maximum; `--lms-points`: the points).
"""

import argparse
import concurrent.futures
import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from assignment_feedback import (NO_ANSWER, answer_cells, answer_problems,  # noqa: E402
                                 blank_questions, code_cell_number, failed_messages, is_blank,
                                 question_feedback, refused_cells, refused_notice,
                                 submitted_assignment,
                                 version_warning)

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = ROOT / "_build" / "assignments"
OTTER = Path(sys.executable).with_name("otter")
# A resubmission's suffix in a flat folder: "ada (2)", "ada-v2", "ada_resubmission", "ada-late"
RESUBMISSION = re.compile(r"(?:\s*\(\d+\)|[-_ ]v\d+|[-_ ](?:re-?submi(?:ssion|tted|t)|late|"
                          r"final|new|copy)(?:[-_ ]?\d+)?)+$", re.I)

__all__ = ["failed_messages"]  # re-exported: tests read otter's output with it


def autograder_zip(name: str) -> Path:
    zips = sorted((ASSIGNMENTS / name / "autograder").glob(f"{name}-*autograder*.zip"))
    if not zips:
        raise SystemExit(f"no autograder zip for {name}: run `make assignments` first")
    return zips[-1]


def summary(name: str) -> dict:
    """{question: {'kind': 'auto' | 'manual', 'points': ..., ...}} in the assignment's order."""
    return json.loads((ASSIGNMENTS / name / "questions.json").read_text())


def feedback_config(name: str) -> dict:
    """The assignment's identifier and its answer cells as handed out (see assignments.py)."""
    return json.loads((ASSIGNMENTS / name / "feedback.json").read_text())


def questions(name: str) -> list[str]:
    return [q for q, info in summary(name).items() if info["kind"] == "auto"]


def read_notebook(path: Path) -> dict | None:
    """The notebook as JSON, or None if it is not a readable notebook."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        return None
    return nb


def grade_one(name: str, notebook: Path, timeout: float) -> dict:
    """`otter run` on one notebook: {'status', 'scores': {q: score}, 'output': {q: text}}."""
    if read_notebook(notebook) is None:
        return {"status": "unreadable", "scores": {}, "output": {}}
    with tempfile.TemporaryDirectory(prefix="otter-run-") as out:
        # the zip's otter_config.json names the guard, otter's plugin (scripts/assignment_guard.py)
        env = os.environ | {"PYTHONPATH": os.pathsep.join(
            [str(ROOT / "scripts"), *filter(None, [os.environ.get("PYTHONPATH")])])}
        try:
            done = subprocess.run([str(OTTER), "run", "-a", str(autograder_zip(name)), "-o", out,
                                   str(notebook.resolve())], capture_output=True, text=True,
                                  timeout=timeout, cwd=out, env=env)
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


# The LMS's own export of the submissions. Moodle ("Download all submissions"): a folder a
# student, "<full name>_<participant id>_assignsubmission_file_" (or _onlinetext_).
# Canvas ("Download submissions"): one flat folder, "<lastfirst>[_late]_<user id>_<submission
# id>_<file name as uploaded>", a resubmission's name with "-1", "-2", ... after it.
MOODLE_FOLDER = re.compile(r"^(?P<name>.+?)_(?P<id>\d+)_assignsubmission_\w*$")
CANVAS_FILE = re.compile(r"^(?P<name>[^_]+)(?:_late)?_(?P<id>\d+)_\d+_.+$")


def lms_identity(notebook: Path, submissions: Path) -> tuple[str, str, str] | None:
    """(the LMS, the student's name, their identifier in it) from the export's folder or file
    name, or None."""
    if notebook.parent.resolve() != submissions.resolve():
        match = MOODLE_FOLDER.match(notebook.parent.name)
        return ("moodle", match["name"], match["id"]) if match else None
    match = CANVAS_FILE.match(notebook.stem)
    return ("canvas", match["name"], match["id"]) if match else None


def student_of(notebook: Path, submissions: Path) -> str:
    """The student: in an LMS's export (lms_identity), their name and identifier ("Ada
    Lovelace (100001)": every resubmission of one student, whatever its file name, is theirs);
    else the folder's name, or in a flat folder the notebook's name without a resubmission's
    suffix."""
    identity = lms_identity(notebook, submissions)
    if identity:
        return f"{identity[1]} ({identity[2]})"
    if notebook.parent.resolve() != submissions.resolve():
        return notebook.parent.name
    return RESUBMISSION.sub("", notebook.stem) or notebook.stem


def latest(notebooks: list[Path], submissions: Path) -> dict[str, list[Path]]:
    """{student: [their notebooks, the one that counts first, then the earlier ones]}."""
    by_student: dict[str, list[Path]] = {}
    for nb in notebooks:
        by_student.setdefault(student_of(nb, submissions), []).append(nb)
    return {s: sorted(nbs, key=lambda nb: (nb.stat().st_mtime, nb.name), reverse=True)
            for s, nbs in sorted(by_student.items())}


def identical(notebooks: dict[str, dict | None], templates: dict,
              numbers: dict | None = None) -> dict[str, list[str]]:
    """{student: [other students whose answer cells are all the same]}, ignoring blank ones."""
    groups: dict[str, list[str]] = {}
    for student, nb in notebooks.items():
        if nb is None:
            continue
        answers = answer_cells(nb, numbers)
        if not answers or all(is_blank(c, templates.get(q)) for q, c in answers.items()):
            continue
        key = hashlib.sha256(json.dumps(answers, sort_keys=True).encode()).hexdigest()
        groups.setdefault(key, []).append(student)
    return {s: [o for o in group if o != s] for group in groups.values() if len(group) > 1
            for s in group}


def status_of(result: dict, nb: dict | None, config: dict, blank: set[str],
              name: str) -> str:
    if result["status"] != "ok":
        return result["status"]
    if set(summary(name)) <= blank:
        return NO_ANSWER
    if submitted_assignment(nb) != config.get("assignment"):
        return f"other version: {submitted_assignment(nb) or 'no assignment identifier'}"
    refused = refused_cells(nb or {}, config.get("guard", {}))
    if refused:   # graded, without the cells that could change the checks
        return "refused code cells: " + ", ".join(str(code_cell_number(nb, i)) for i in refused)
    return "ok"


def write_csv(name: str, rows: list[dict], path: Path) -> None:
    info = summary(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    full = sum(q["points"] for q in info.values())
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *info, "total", "max", "graded max", "percent", "status",
                         "submission", "earlier submissions", "identical to", "lms", "lms id"])
        for row in rows:
            scores, total, graded = [], 0.0, 0
            for q, q_info in info.items():
                if q_info["kind"] == "auto" and row["status"] != "unreadable":
                    score = float(row["scores"].get(q, 0.0) or 0.0)
                    total, graded = total + score, graded + q_info["points"]
                    scores.append(f"{score:g}")
                else:
                    scores.append("")
            percent = f"{100 * total / graded:.1f}" if graded else ""
            writer.writerow([row["student"], *scores, f"{total:g}", f"{full:g}", f"{graded:g}",
                             percent,
                             row["status"], row["submission"],
                             " ".join(row["earlier"]), " ".join(row["identical"]),
                             row.get("lms", ""), row.get("lms id", "")])


def write_feedback(name: str, result: dict, path: Path, student: str,
                   blank: set[str] = frozenset(), warning: str | None = None,
                   problems: dict[str, str] | None = None, notice: str | None = None) -> None:
    info = summary(name)
    lines = [f"# {name}: feedback for {student}", ""]
    if warning:
        lines += [warning, ""]
    if notice:
        lines += [notice, ""]
    if result["status"] == "unreadable":
        lines += ["The file handed in is not a readable notebook (truncated, empty or not "
                  "a .ipynb): nothing could be graded. Hand in the notebook again.", ""]
    elif result["status"] == "timeout":
        lines += ["The notebook did not finish running within the time limit: every "
                  "autograded question scored 0.", ""]
    elif result["status"] != "ok":
        lines += [f"The notebook could not be graded ({result['status']}); every autograded "
                  "question scored 0.", ""]
    for q, q_info in info.items():
        if q_info["kind"] != "auto":
            what = "in words" if q.endswith("-written") else "written"
            note = f"; {NO_ANSWER}" if q in blank else ""
            lines.append(f"- **{q}** ({what}): graded by hand, out of {q_info['points']}{note}.")
            continue
        score = float(result["scores"].get(q, 0.0) or 0.0)
        text = question_feedback(q, score, q_info["points"], result["output"].get(q, ""),
                                 q in blank, (problems or {}).get(q))
        head, *rest = text.splitlines()
        lines.append(f"- **{q}**: {score:g} / {q_info['points']}")
        lines += [f"  - {line}" for line in rest if line != "All checks passed."]
    total = sum(float(result["scores"].get(q, 0) or 0) for q in questions(name))
    auto_max = sum(q["points"] for q in info.values() if q["kind"] == "auto")
    lines += ["", f"Autograded: {total:g} / {auto_max}."]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def rubric_markdown(question: str, info: dict) -> list[str]:
    """A hand-graded question's rubric and model answer (questions.json, from its spec
    tests/assignments/questions/<question>.yml), as Markdown."""
    if not info.get("rubric"):
        return []
    points = info["points"]
    lines = [f"**Rubric** ({points:g} point{'s' * (points != 1)})", ""]
    lines += [f"- {c['points']:g} pt: {' '.join(c['criterion'].split())}"
              + (f" *Partly right:* {' '.join(c['partial'].split())}" if c.get("partial") else "")
              for c in info["rubric"]]
    if info.get("mistakes"):
        lines += ["", f"**Common mistakes:** {' '.join(info['mistakes'].split())}"]
    lines += ["", "**Model answer**", "", *(f"> {line}".rstrip()
                                           for line in (info.get("model") or "").splitlines()),
              ""]
    return lines


def cell_output(cell: dict, limit: int = 3000) -> str:
    """What a code cell printed, as saved in the notebook: its streams, its results' and
    displays' plain text, an error's name and message (at most `limit` characters)."""
    parts = []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            text = out.get("text", "")
        elif kind in ("execute_result", "display_data"):
            text = out.get("data", {}).get("text/plain", "")
        elif kind == "error":
            text = f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"
        else:
            continue
        parts.append("".join(text) if isinstance(text, list) else text)
    printed = "\n".join(p.rstrip("\n") for p in parts if p.strip())
    return printed if len(printed) <= limit else printed[:limit] + "\n... (cut)"


def write_answers(notebook: Path, nb: dict | None, path: Path, student: str, name: str) -> None:
    """Each question's prompt and the student's answer cells, as Markdown; for a manual
    question its rubric and model answer after the student's answer."""
    info = summary(name)
    lines = [f"# Answers of {student} ({notebook.name})", ""]
    if nb is None:
        lines += ["The file is not a readable notebook: nothing to grade.", ""]
    current = None

    def close():
        if current and info.get(current, {}).get("kind") == "manual":
            lines.extend(rubric_markdown(current, info[current]))

    for cell in (nb or {}).get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        tags = cell.get("metadata", {}).get("tags", [])
        heading = re.search(r"\*\*(Exercise [\d.]+(?:, [\w ]+)?)\*\* \(`([\w-]+)`\)", source)
        if cell.get("cell_type") == "markdown" and heading and "otter_answer_cell" not in tags:
            close()
            current = heading[2]
            prompt = "\n\n".join(source[heading.start():].split("\n\n")[:2])
            lines += [f"## {heading[1]} ({current})", "",
                      *(f"> {line}".rstrip() for line in prompt.splitlines()), ""]
        elif current and {"otter_answer_cell", "otter_assign_solution_cell"} & set(tags):
            if cell.get("cell_type") == "markdown":
                lines += [source, ""]
            else:
                lines += ["```python", source, "```", ""]
                printed = cell_output(cell)
                lines += (["What it printed (in the notebook as handed in):", "", "```text",
                           printed, "```", ""] if printed else
                          ["*(No output saved: the cell was not run before handing in.)*", ""])
    close()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def read_roster(path: Path) -> dict[str, str]:
    """{student: LMS identifier} from a roster CSV with the columns `student` and `id`."""
    with path.open(newline="", encoding="utf-8-sig") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"student", "id"} <= set(rows[0]):
        raise SystemExit(f"{path}: the roster's columns are `student` and `id`")
    return {r["student"].strip(): r["id"].strip() for r in rows}


# The gradebook imports (--lms-format). canvas: Canvas's own gradebook export's first columns
# (Student, ID, SIS User ID, SIS Login ID, Section), then one column, the assignment, in
# points; Canvas matches each row by ID (the Canvas user id). moodle: Moodle's grading
# worksheet (Identifier "Participant <id>", Full name, Grade, Maximum Grade), for the
# assignment's "Upload grading worksheet", which matches each row by Identifier. plain:
# `student` and one grade.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Identifier", "Full name", "Grade", "Maximum Grade"]


def lms_export(grades: Path, out: Path, points: bool = False, form: str = "plain",
               assignment: str | None = None) -> int:
    """An LMS gradebook import from grades.csv once the manual scores are filled in: the
    student and one grade (percent of the maximum, or points), in `form`'s columns."""
    with grades.open(newline="") as f:
        rows = list(csv.DictReader(f))
    fixed = {"student", "total", "max", "graded max", "percent", "status", "submission",
             "earlier submissions", "identical to", "lms", "lms id"}
    missing, no_id = 0, []
    title = assignment or grades.parent.name
    with out.open("w", newline="") as f:
        writer = csv.writer(f)
        if form == "canvas":
            writer.writerow(CANVAS_COLUMNS + [title])
        elif form == "moodle":
            writer.writerow(MOODLE_COLUMNS)
        else:
            writer.writerow(["student", "points" if points else "grade"])
        for row in rows:
            scores = [row[q] for q in row if q not in fixed]
            missing += sum(s == "" for s in scores) * (row["status"] != "unreadable")
            total = sum(float(s) for s in scores if s != "")
            grade = total if points else 100 * total / float(row["max"])
            shown = f"{grade:.1f}" if not points else f"{grade:g}"
            ident = row.get("lms id", "")
            name = re.sub(r" \(\d+\)$", "", row["student"])
            if form != "plain" and not ident:
                no_id.append(row["student"])
                continue
            if form == "canvas":
                writer.writerow([name, ident, "", "", "", f"{total:g}"])
            elif form == "moodle":
                writer.writerow([f"Participant {ident}", name, shown, "100.0" if not points
                                 else row["max"]])
            else:
                writer.writerow([row["student"], shown])
    print(f"wrote {out}: {len(rows) - len(no_id)} students" + (
        f"; {missing} scores still empty (counted as 0)" if missing else "") + (
        f"; left out, with no LMS identifier (give a --roster when grading): "
        f"{', '.join(no_id)}" if no_id else ""))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", nargs="?", help="e.g. 03_masking")
    parser.add_argument("submissions", type=Path, nargs="?",
                        help="a folder of submitted .ipynb files")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per notebook")
    parser.add_argument("--jobs", type=int, default=2, help="otter runs at a time")
    parser.add_argument("--lms", type=Path, help="grades.csv to export for an LMS gradebook")
    parser.add_argument("--lms-out", type=Path)
    parser.add_argument("--lms-points", action="store_true")
    parser.add_argument("--lms-format", choices=("plain", "canvas", "moodle"), default="plain",
                        help="the gradebook import's columns (see the module docstring)")
    parser.add_argument("--roster", type=Path,
                        help="a CSV of `student` (as make grade names them) and `id`, the "
                             "LMS's identifier")
    args = parser.parse_args(argv)
    if args.lms:
        return lms_export(args.lms, args.lms_out or args.lms.with_name("lms.csv"),
                          args.lms_points, args.lms_format, args.assignment)
    if not args.assignment or not args.submissions:
        parser.error("an assignment and a folder of submissions (or --lms grades.csv)")
    notebooks = sorted(set(args.submissions.glob("*.ipynb"))
                       | set(args.submissions.glob("*/*.ipynb")))
    if not notebooks:
        raise SystemExit(f"no .ipynb in {args.submissions}")
    name = args.assignment
    roster = read_roster(args.roster) if args.roster else {}
    config = feedback_config(name)
    templates = config["templates"]
    by_student = latest(notebooks, args.submissions)
    counted = {student: nbs[0] for student, nbs in by_student.items()}
    read = {student: read_notebook(nb) for student, nb in counted.items()}
    results = grade(name, list(counted.values()), args.timeout, args.jobs)
    copies = identical(read, templates, config.get("numbers"))
    out = args.out or ASSIGNMENTS / name / "grades.csv"
    rows = []
    for student, nb_path in counted.items():
        nb, result = read[student], results[nb_path]
        blank = blank_questions(nb, config, summary(name))
        status = status_of(result, nb, config, blank, name)
        identity = lms_identity(nb_path, args.submissions) or ("", "", "")
        if student in roster:
            identity = ("roster", student, roster[student])
        rows.append({"student": student, "lms": identity[0], "lms id": identity[2],
                     "scores": result["scores"], "status": status,
                     "submission": str(nb_path.relative_to(args.submissions)),
                     "earlier": [str(p.relative_to(args.submissions))
                                 for p in by_student[student][1:]],
                     "identical": copies.get(student, [])})
        warning = version_warning(nb, config.get("assignment")) if nb is not None else None
        write_feedback(name, result, out.parent / "feedback" / f"{student}.md", student, blank,
                       warning, answer_problems(nb, config), refused_notice(nb, config))
        write_answers(nb_path, nb, out.parent / "answers" / f"{student}.md", student, name)
    write_csv(name, rows, out)
    for row in rows:
        total = sum(float(s or 0) for s in row["scores"].values())
        extra = f"; identical to {', '.join(row['identical'])}" if row["identical"] else ""
        print(f"{row['student']}: {total:g} ({row['status']}{extra})")
    statuses = [r["status"] for r in rows]
    counts = {s: sum(st.split(":")[0] == s for st in statuses)
              for s in ("ok", NO_ANSWER, "refused code cells", "unreadable", "timeout", "error",
                        "other version")}
    flagged = sum(bool(r["identical"]) for r in rows)
    earlier = sum(len(r["earlier"]) for r in rows)
    print(f"graded {len(rows)} students ({len(notebooks)} notebooks, {earlier} earlier "
          "submissions not counted): " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
          + (f"; {flagged} flagged as identical" if flagged else "")
          + f". Wrote {out}, and feedback/ and answers/ beside it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
