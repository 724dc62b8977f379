"""Make a regenerated notebook reference change only where its outputs changed: drop the
per-cell execution timestamps nbconvert records, and merge the consecutive pieces of one
stream (a cell's printed text arrives in as many pieces as the kernel happened to flush,
which differs from run to run; the site, with MyST-NB's nb_merge_streams, and nbval read
them as one text). Used by `make notebooks`.

Usage: python scripts/strip_timings.py notebooks/01_span.ipynb [...]
"""

import sys

import nbformat


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


if __name__ == "__main__":
    for path in sys.argv[1:]:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            cell.metadata.pop("execution", None)
            if cell.cell_type == "code":
                cell.outputs = merge_streams(cell.outputs)
        nbformat.write(nb, path)
