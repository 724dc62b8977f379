"""Drop the per-cell execution timestamps nbconvert records, so that regenerating a
notebook reference changes only the outputs that changed. Used by `make notebooks`.

Usage: python scripts/strip_timings.py notebooks/01_span.ipynb [...]
"""

import sys

import nbformat

for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)
