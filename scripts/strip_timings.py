"""Make a regenerated notebook reference change only where its outputs changed: drop the
per-cell execution timestamps nbconvert records, and merge the consecutive pieces of one
stream (a cell's printed text arrives in as many pieces as the kernel happened to flush,
which differs from run to run; the site, with MyST-NB's nb_merge_streams, and nbval read
them as one text). Used by `make notebooks`.

It also writes each self-check question's stored Markdown afresh from its stored data
(lib.selfcheck.markdown_from_data, what the question displays in a kernel): a change of
how questions read in Jupyter then needs no re-execution of the chapters, only this.

Usage: python scripts/strip_timings.py notebooks/01_span.ipynb [...]
"""

import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lib.selfcheck import MIME, markdown_from_data  # noqa: E402


def merge_streams(outputs: list) -> list:
    """Consecutive outputs of the same stream (stdout, stderr) joined into one."""
    merged = []
    for out in outputs:
        if (out.get("output_type") == "stream" and merged
                and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def refresh_questions(outputs: list) -> None:
    """Each question's text/markdown as lib.selfcheck displays it now, from its data."""
    for out in outputs:
        data = out.get("data", {})
        if MIME in data and not str(data.get("text/markdown", "")).startswith("````{selfcheck}"):
            data["text/markdown"] = markdown_from_data(data[MIME])


if __name__ == "__main__":
    for path in sys.argv[1:]:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            cell.metadata.pop("execution", None)
            if cell.cell_type == "code":
                cell.outputs = merge_streams(cell.outputs)
                refresh_questions(cell.outputs)
        nbformat.write(nb, path)
