"""What a student is told about a graded assignment notebook: one module for both graders.

`make grade` (scripts/grade_assignments.py) writes feedback/<student>.md with it, and every
Gradescope zip carries this file (standard library only) and runs it after otter, on
/autograder/results/results.json (see `main`). Either way a student sees, per autograded
question, the score and the message of its first failing check, or "no answer" when every
answer cell of the question is blank or as handed out; never a test's code, its expected
values or otter's doctest output (which prints both).

    python assignment_feedback.py RESULTS.json SUBMISSION.ipynb CONFIG.json

rewrites RESULTS.json in place. CONFIG.json (the zip's feedback.json, written by
scripts/assignments.py) holds `visibility` ("after_published": the student sees the results
once the instructor publishes the grades, Gradescope's default; "visible": at once),
`assignment` (the identifier the notebook should carry: another one gets a visible warning)
and `templates` ({question: [answer cells as handed out]}).
"""

import json
import re
import sys
from pathlib import Path

NO_ANSWER = "no answer"
# Otter's summary of a test file: "<question> - <n> message: <text>" for each failing case
# with a failure message, then "<question> - <n> result:" and "❌ ..." for a failed case.
_QUESTION = re.compile(r"\(`([\w-]+)`\)")


def failed_messages(question: str, output: str) -> list[str]:
    """The failure messages of the failed test cases, in order, read from otter's output."""
    messages = dict(re.findall(rf"^\s*{re.escape(question)} - (\d+) message: (.*)$", output,
                               re.M))
    failed = re.findall(rf"^\s*{re.escape(question)} - (\d+) result:\s*\n\s*❌", output, re.M)
    return [messages.get(case, "a check failed") for case in failed]


def answer_cells(nb: dict) -> dict[str, list[str]]:
    """{question: [source of each answer cell]} of a notebook (a dict, as json reads it).

    A question starts at the read-only Markdown cell that names it (`**Exercise 3.1**
    (`masking-ex-padding`)`); its answer cells are the cells otter tags `otter_answer_cell`
    (in the autograder's notebook, `otter_assign_solution_cell`)."""
    found: dict[str, list[str]] = {}
    current = None
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        tags = cell.get("metadata", {}).get("tags", [])
        answer = {"otter_answer_cell", "otter_assign_solution_cell"} & set(tags)
        if cell.get("cell_type") == "markdown" and not answer:
            heading = _QUESTION.search(source)
            if heading and re.search(r"\*\*Exercise [\d.]+", source):
                current = heading[1]
                found.setdefault(current, [])
        elif current and answer:
            found[current].append(source)
    return found


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def is_blank(answers: list[str], template: list[str] | None) -> bool:
    """True if every answer cell is empty, `...`, the placeholder text, or as handed out."""
    handed_out = {_normal(t) for t in template or []}
    return all(_normal(a) in handed_out | {"", "...", "_Type your answer here, replacing this "
                                                      "text._"} for a in answers)


def submitted_assignment(nb: dict | None) -> str | None:
    """The assignment identifier a notebook carries (scripts/assignments.py's `stamp`)."""
    meta = (nb or {}).get("metadata", {}).get("course_assignment", {})
    return meta.get("assignment") if isinstance(meta, dict) else None


def version_warning(nb: dict | None, expected: str | None) -> str | None:
    """A sentence for a notebook of another assignment or course version, else None."""
    got = submitted_assignment(nb)
    if not expected or got == expected:
        return None
    if got is None:
        return (f"This notebook carries no assignment identifier: it is not the notebook of "
                f"assignment {expected} (it may be the book's own notebook, or an older "
                f"handout). It was graded against {expected}; check with your instructor.")
    return (f"This notebook is assignment {got}, but it was graded as {expected}: another "
            "version of the course or another assignment. Check with your instructor.")


def question_feedback(question: str, score: float, possible: float, output: str,
                      blank: bool) -> str:
    """What the student reads for one autograded question."""
    head = f"{question}: {score:g} / {possible:g}"
    if blank:
        return f"{head}\n{NO_ANSWER}"
    failed = failed_messages(question, output)
    if not failed:
        return f"{head}\nAll checks passed." if score >= possible else head
    return f"{head}\n{' '.join(failed[0].split())}"


def student_results(results: dict, submission: dict | None, config: dict) -> dict:
    """Gradescope's results.json as otter wrote it, rewritten for the student (see the module
    docstring): each question's output is its feedback, at config's visibility; the public
    tests' summary says, per question, its first failing public check; no stdout."""
    answers = answer_cells(submission or {})
    templates = config.get("templates", {})
    visibility = config.get("visibility", "after_published")
    out = {k: v for k, v in results.items() if k not in ("tests", "stdout_visibility")}
    tests, public = [], None
    for test in results.get("tests", []):
        name = test.get("name", "")
        if "score" not in test:
            if name == "Public Tests":
                public = dict(test)
            else:
                tests.append(test)   # otter's own notices (e.g. "Autograder Failed")
            continue
        blank = name in answers and is_blank(answers[name], templates.get(name))
        tests.append({"name": name, "score": test["score"], "max_score": test.get("max_score"),
                      "visibility": visibility,
                      "output": question_feedback(name, test["score"], test.get("max_score", 0),
                                                  test.get("output", ""), blank)})
    if public is not None:
        lines = []
        for test in results.get("tests", []):
            if "score" not in test:
                continue
            name = test["name"]
            if name in answers and is_blank(answers[name], templates.get(name)):
                lines.append(f"{name}: {NO_ANSWER}")
                continue
            failed = failed_messages(name, public.get("output", ""))
            lines.append(f"{name}: " + (" ".join(failed[0].split()) if failed
                                        else "the public checks pass"))
        public["output"] = "\n".join(lines)
        tests.insert(0, public)
    warning = version_warning(submission, config.get("assignment"))
    if warning:
        tests.insert(0, {"name": "Assignment version", "visibility": "visible",
                         "status": "failed", "output": warning})
    out["tests"] = tests
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    results_path, submission, config = (Path(a) for a in argv)
    results = json.loads(results_path.read_text())
    try:
        nb = json.loads(submission.read_text())
    except (OSError, ValueError):
        nb = None
    results_path.write_text(json.dumps(student_results(results, nb,
                                                       json.loads(config.read_text())),
                                       indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
