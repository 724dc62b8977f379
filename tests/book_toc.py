"""The book's table of contents as a list of files, for the notebook checks and the site
tests alike (both import it from here)."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def toc_files():
    """Every file `_toc.yml` lists (root, chapters, sections), without extension."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    found = [toc["root"]]

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                found.append(entry["file"])
            walk(entry.get("sections", []))
            walk(entry.get("chapters", []))

    for part in toc.get("parts", []):
        walk(part["chapters"])
    walk(toc.get("chapters", []))
    return found
