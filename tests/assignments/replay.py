"""Many answers to one chapter's questions graded as `otter run` grades them, with the chapter
run once: the check's cheaper path for the second and later wrong answers of a question.

`otter run` executes the whole notebook for every submission, and a chapter's teaching cells
(before its first answer cell) are most of that time. Here the notebook goes through otter's
own grading preprocessor (otter.execute's GradingPreprocessor: the grading-mode init cell,
the checks, the export cell that pickles the GradingResults), as `otter run` prepares it, in
a folder laid out as `otter run` lays it out (the submission beside the autograder zip's
tests/ and files/); its cells before the first answer cell run once in one kernel; then, for
each set of answers, the cells from the first answer cell to the end run again with those
answers in place (the teaching cells' names rebound as they left them and Checker's results
cleared first), and the pickled results become the
dictionary `otter run` writes to results.json (GradingResults.to_gradescope_dict with the
zip's otter_config.json). So each try sees what a submission sees from the first answer on;
what it cannot see is a teaching cell's state changed by an earlier try's answer, which is
why the solutions are graded once more after the last try (they must still score full
marks), and why test_assignments.py compares this path with `otter run` on the first round
of wrong answers of every chapter.
"""

import copy
import json
import pickle
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from assignment_feedback import refused_cells, refused_source  # noqa: E402

# Run once after the teaching cells: the names they bound, to rebind before each try (a right
# answer of chapter 8 rebinds `weights`, which the teaching cells made; the next try's
# solution cells would read its value). A value changed in place is not undone: the
# solutions graded after the last try catch that.
SAVE = "_replay_saved = dict(globals())\n_replay_history = len(In)"
# Run before each try: the teaching cells' names as they left them (names a try added are
# removed, but IPython's own, which start with "_"), and Checker's results cleared.
# The record of executed cells (`In`) is cut back too: the checks read it (the cells that
# assign an answer), and an earlier try's cells are not the submission's.
RESET = """\
del In[_replay_history:]
for _replay_name in [n for n in globals() if n not in _replay_saved and not n.startswith("_")]:
    del globals()[_replay_name]
globals().update(_replay_saved)
from otter.execute import Checker as _Checker_replay
_Checker_replay.clear_results()"""


def _answer_cells(nb, question: str) -> list[int]:
    """Indices of the answer cells just before `grader.check("question")` (as test_assignments)."""
    check = next(i for i, c in enumerate(nb.cells)
                 if c.cell_type == "code" and c.source.strip() == f'grader.check("{question}")')
    found, i = [], check - 1
    while i >= 0 and "otter_answer_cell" in nb.cells[i].metadata.get("tags", []):
        if nb.cells[i].cell_type == "code":
            found.append(i)
        i -= 1
    assert found, f"no answer cell before the check of {question}"
    return sorted(found)


def grade_tries(autograder_zip: Path, notebook, tries: list[dict], timeout: float = 900) -> list:
    """Grade `notebook` (a filled student notebook) once per dict of `tries` ({question: code}
    replacing that question's answer), then once more as it is. Returns one result per try,
    and the last for the notebook as it is: {'status', 'scores', 'output'} as
    grade_assignments.grade_one returns it."""
    from nbclient import NotebookClient
    from otter.execute.logging import start_server
    from otter.execute.preprocessor import GradingPreprocessor
    from otter.run.run_autograder.autograder_config import AutograderConfig
    from traitlets.config import Config

    work = Path(tempfile.mkdtemp(prefix="otter-replay-"))
    try:
        with zipfile.ZipFile(autograder_zip) as z:
            z.extractall(work / "source")
        submission = work / "submission"
        submission.mkdir()
        if (work / "source" / "files").is_dir():
            shutil.copytree(work / "source" / "files", submission, dirs_exist_ok=True)
        shutil.copytree(work / "source" / "tests", submission / "tests")
        ag_config = AutograderConfig(json.loads((work / "source" / "otter_config.json").read_text()))

        # the guard, as otter's plugin runs it on a submission (scripts/assignment_guard.py)
        guard = next((p["assignment_guard.Guard"] for p in ag_config.plugins or []
                      if isinstance(p, dict) and "assignment_guard.Guard" in p), {})

        def guarded(code):
            refused = refused_cells({"cells": [{"cell_type": "code", "source": code}]}, guard)
            return refused_source(refused[0]) if refused else code

        notebook = copy.deepcopy(notebook)
        notebook.cells = [nbformat.v4.new_code_cell(guarded(c.source), metadata=c.metadata)
                          if c.cell_type == "code" and guarded(c.source) != c.source else c
                          for c in notebook.cells]
        answer_at = {}        # question -> its answer cells, in the notebook as given
        for cell in notebook.cells:
            if cell.cell_type == "code" and cell.source.strip().startswith('grader.check("'):
                question = cell.source.strip()[len('grader.check("'):-2]
                answer_at[question] = _answer_cells(notebook, question)
        for i, cell in enumerate(notebook.cells):   # to find them again after preprocessing
            cell.metadata["replay_index"] = i

        results_file = work / "results.pkl"
        (host, port), stop_server = start_server()
        try:
            c = Config()
            c.GradingPreprocessor.cwd = str(submission)
            c.GradingPreprocessor.test_dir = "./tests"
            c.GradingPreprocessor.tests_glob = sorted(f"./tests/{p.name}"
                                                      for p in (submission / "tests").glob("*.py"))
            c.GradingPreprocessor.results_path = str(results_file)
            c.GradingPreprocessor.seed = None             # as grade_notebook sets them for
            c.GradingPreprocessor.seed_variable = None    # `otter run` with this otter_config
            c.GradingPreprocessor.otter_log = None
            c.GradingPreprocessor.variables = None
            c.GradingPreprocessor.logging_server_host = host
            c.GradingPreprocessor.logging_server_port = port
            c.GradingPreprocessor.force_python3_kernel = False
            prepared, _ = GradingPreprocessor(config=c).preprocess(notebook)
            where = {cell.metadata.get("replay_index"): k for k, cell in enumerate(prepared.cells)
                     if "replay_index" in cell.metadata}
            first = min(where[i] for cells in answer_at.values() for i in cells)
            original = {where[i]: prepared.cells[where[i]].source
                        for cells in answer_at.values() for i in cells}

            client = NotebookClient(prepared, timeout=timeout, allow_errors=True,
                                    kernel_name="python3",
                                    resources={"metadata": {"path": str(submission)}})
            results = []
            with client.setup_kernel(cwd=str(submission)):
                def run_extra(source):     # a cell of its own, run and removed
                    extra = nbformat.v4.new_code_cell(source)
                    prepared.cells.append(extra)
                    client.execute_cell(extra, len(prepared.cells) - 1)
                    prepared.cells.pop()

                for k in range(first):
                    client.execute_cell(prepared.cells[k], k)
                run_extra(SAVE)
                for answers in [*tries, {}]:
                    for k, source in original.items():
                        prepared.cells[k].source = source
                    for question, code in answers.items():
                        cells = [where[i] for i in answer_at[question]]
                        prepared.cells[cells[0]].source = guarded(code.strip("\n"))
                        for k in cells[1:]:
                            prepared.cells[k].source = ""
                    results_file.unlink(missing_ok=True)
                    run_extra(RESET)
                    for k in range(first, len(prepared.cells)):
                        prepared.cells[k].outputs = []
                        client.execute_cell(prepared.cells[k], k)
                    results.append(_as_results_json(results_file, ag_config))
        finally:
            stop_server()
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _as_results_json(results_file: Path, ag_config) -> dict:
    if not results_file.exists():
        return {"status": "error: no results", "scores": {}, "output": {}}
    with results_file.open("rb") as f:
        graded = pickle.load(f)
    tests = graded.to_gradescope_dict(ag_config)["tests"]
    return {"status": "ok", "scores": {t["name"]: t["score"] for t in tests if "score" in t},
            "output": {t["name"]: t.get("output", "") for t in tests}}
