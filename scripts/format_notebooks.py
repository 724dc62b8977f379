"""Format the code cells of the notebooks' MyST sources with ruff, at 79 columns.

`make format` runs this. jupytext hands each notebooks/*.md to `ruff format` as a notebook
(`--pipe-fmt ipynb`: ruff understands IPython's `%pip` there) and writes the cells back;
the Markdown is untouched. jupytext's round trip drops front-matter keys it does not know
(the `course:` core path), so the front matter is put back as it was. Comments that do not
fit are not moved by ruff: move them above their line by hand, and a comment about a result
goes above the statement, not between its arguments (tests/test_notebooks.py
fails on a code line over 79 columns).

    python scripts/format_notebooks.py [notebooks/01_span.md ...]
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# Short tuples and calls that fit stay on one line: ruff would keep a trailing comma's
# one-element-a-line layout (its "magic trailing comma"); the book's style is the line.
RUFF = (f"{BIN / 'ruff'} format --line-length 79 --config format.skip-magic-trailing-comma=true"
        " --config lint.isort.split-on-trailing-comma=false --stdin-filename notebook.ipynb -")


def front_matter(text: str) -> str:
    """The YAML front matter, fences included ('' when there is none)."""
    if not text.startswith("---\n"):
        return ""
    return text[: text.index("\n---\n", 4) + len("\n---\n")]


def format_notebook(path: Path) -> bool:
    """Format one source in place; True when it changed."""
    before = path.read_text(encoding="utf-8")
    subprocess.run([str(BIN / "jupytext"), "--quiet", "--pipe-fmt", "ipynb", "--pipe", RUFF,
                    str(path)], check=True)
    after = path.read_text(encoding="utf-8")
    after = front_matter(before) + after[len(front_matter(after)):]
    path.write_text(after, encoding="utf-8")
    return after != before


def main() -> int:
    paths = [Path(p) for p in sys.argv[1:]] or sorted((ROOT / "notebooks").glob("*.md"))
    for path in paths:
        if format_notebook(path):
            print(f"formatted {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
