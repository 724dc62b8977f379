"""The course's otter plugin: the guard, before otter runs a submission.

Otter runs the hidden checks in the student's own kernel, after the student's code, so a
cell could replace what the checks use (otter's doctest runner, the test files, np.testing).
Before anything runs, this plugin (otter's `before_execution` event) reads every code cell
that is not one of the notebook's cells as handed out, and replaces each cell that could
change the checks by one that raises with the reason (assignment_feedback.refusal says what
is refused). Gradescope (the zip's otter_config.json), `otter run` on the zip and `make
grade` load it the same way; its settings (`trusted`, `protected`, `imports`) are written by
scripts/assignments.py from the notebook as handed out and the tests (guard_config).
"""

import nbformat
from otter.plugins import AbstractOtterPlugin

from assignment_feedback import refused_cells, refused_source


class Guard(AbstractOtterPlugin):
    """Replace the cells of a submission that could change the checks (see the module)."""

    def before_execution(self, submission):
        if isinstance(submission, str):     # a .py submission: one cell
            nb = {"cells": [{"cell_type": "code", "source": submission}]}
            refused = refused_cells(nb, self.plugin_config or {})
            return refused_source(refused[0]) if refused else submission
        refused = refused_cells(submission, self.plugin_config or {})
        for index, reason in refused.items():
            submission.cells[index] = nbformat.v4.new_code_cell(refused_source(reason))
        if refused:
            print("guard: cells not run: " + "; ".join(f"cell {i + 1}: {r}"
                                                       for i, r in refused.items()))
        return submission
