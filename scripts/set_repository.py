"""Point a fork at its own repository: replace the address (and branch) in `_config.yml`'s
`repository` everywhere the repository's files repeat it (the notebooks' Colab install
cell, in the MyST sources, the executed references and the student notebooks; CITATION.cff;
the README). Only the address changes, so no notebook needs re-executing.

    .venv/bin/python scripts/set_repository.py https://github.com/you/your-course [--branch main]

Then `make test` checks that no file names another address (tests/test_editions.py).
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="https://github.com/you/your-course")
    parser.add_argument("--branch", help="the branch the launch buttons open (default: unchanged)")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", args.url):
        parser.error("the address must look like https://github.com/you/your-course")
    old = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    branch = args.branch or old["branch"]
    pairs = [(f"git+{old['url']}@{old['branch']}", f"git+{args.url}@{branch}"),
             (old["url"], args.url)]
    if branch != old["branch"]:
        pairs.append((f"  branch: {old['branch']}\n", f"  branch: {branch}\n"))
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, check=True, capture_output=True,
                           text=True).stdout.split("\0")
    for name in filter(None, names):
        path = ROOT / name
        if not path.is_file() or path.suffix in (".png", ".ico", ".pdf"):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = text
        for before, after in pairs:
            if name == "_config.yml" or "branch:" not in before:
                new = new.replace(before, after)
        if new != text:
            path.write_text(new)
            print("updated", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
