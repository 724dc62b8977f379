"""Write the student notebooks: notebooks/student/<name>.ipynb (and its MyST .md) is the
executed reference notebooks/<name>.ipynb without its solutions. `make student-notebooks`
runs this; never edit the output by hand (tests/test_editions.py checks it is up to date).

A solution is removed with everything in it:
- a `{solution}` block (colon or backtick fence) inside a Markdown cell;
- a gated solution, from its `{solution-start}` block to its `{solution-end}` block, with
  the code cells between them.
Markdown cells left empty are dropped; every other cell is kept as it is, outputs included.

    python scripts/student_notebooks.py            # every notebooks/*.ipynb
    python scripts/student_notebooks.py --check    # exit 1 if a student notebook is stale
"""

import argparse
import re
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
STUDENT = NOTEBOOKS / "student"

OPENING = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[\w-]+)\}")


def _closes(line: str, fence: str) -> bool:
    """A fence closes on a line of at least as many of the same character, and nothing else."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


class SolutionFilter:
    """Walks a notebook's cells in order; knows whether it is inside a gated solution."""

    def __init__(self):
        self.in_gated = False

    def markdown(self, text: str) -> str:
        kept, lines, i = [], text.split("\n"), 0
        while i < len(lines):
            match = OPENING.match(lines[i])
            name = match["name"] if match else None
            if self.in_gated:
                if name == "solution-end":
                    i = self._skip_block(lines, i, match["fence"])
                    self.in_gated = False
                else:
                    i += 1
                continue
            if name == "solution":
                i = self._skip_block(lines, i, match["fence"])
            elif name == "solution-start":
                i = self._skip_block(lines, i, match["fence"])
                self.in_gated = True
            else:
                kept.append(lines[i])
                i += 1
        return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")

    @staticmethod
    def _skip_block(lines, start, fence) -> int:
        """The index just after the block that opens at lines[start]."""
        for j in range(start + 1, len(lines)):
            if _closes(lines[j], fence):
                return j + 1
        raise ValueError(f"unclosed {lines[start]!r}")


def student_notebook(reference: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(reference, as_version=4)
    keep, solutions = [], SolutionFilter()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = solutions.markdown(cell.source)
            if cell.source.strip():
                keep.append(cell)
        elif not solutions.in_gated:
            keep.append(cell)
    if solutions.in_gated:
        raise ValueError(f"{reference.name}: a solution-start without its solution-end")
    nb.cells = keep
    return nb


def rendered(reference: Path) -> dict[Path, str]:
    """The student files made from one reference: path -> text."""
    nb = student_notebook(reference)
    target = STUDENT / reference.name
    return {target: nbformat.writes(nb) + "\n",
            target.with_suffix(".md"): jupytext.writes(nb, fmt="md:myst")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    stale = []
    STUDENT.mkdir(exist_ok=True)
    for reference in sorted(NOTEBOOKS.glob("*.ipynb")):
        for path, text in rendered(reference).items():
            if not path.exists() or path.read_text() != text:
                stale.append(path.relative_to(ROOT))
                if not args.check:
                    path.write_text(text)
    wanted = {p for r in NOTEBOOKS.glob("*.ipynb") for p in rendered(r)}
    extra = [p for p in STUDENT.glob("*.*") if p.suffix in (".ipynb", ".md") and p not in wanted]
    for path in extra:
        stale.append(path.relative_to(ROOT))
        if not args.check:
            path.unlink()
    if args.check and stale:
        print("stale student notebooks (run `make student-notebooks`):", *stale, sep="\n  ")
        return 1
    for path in stale if not args.check else []:
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
