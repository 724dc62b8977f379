"""nbval over every notebook on other machines' arithmetic: `make test` runs this.

A notebook's printed outputs must be the same on every x86-64 CPU, whatever BLAS kernel
NumPy's OpenBLAS picks for it and whatever SIMD code NumPy dispatches to. The references
in notebooks/*.ipynb were written on one CPU; this script re-runs nbval over them as
other CPUs would compute, two variants at a time (one per core):

- ``OPENBLAS_CORETYPE=<kernel>`` for each of KERNELS: OpenBLAS (bundled with NumPy's
  wheels, built for every x86-64 kernel) uses that kernel instead of the one it picks
  for this CPU; the GEMMs then add their products in another order and round
  differently in the last bits;
- ``NPY_DISABLE_CPU_FEATURES`` set to NumPy's dispatch targets above its baseline: every
  ufunc (exp, sum, ...) takes its baseline SIMD code path;
- one core (the process pinned to CPU 0, ``OPENBLAS_NUM_THREADS=1``): one BLAS thread and
  one thread in the kernel's fast path.

Before nbval runs, each variant proves that it took effect (threadpoolctl reports the
requested OpenBLAS kernel; NumPy reports no dispatch target found), so the check cannot
pass by testing the default arithmetic twice. Exits 1 when a variant fails.

    python scripts/nbval_matrix.py                 # every variant, every notebook
    python scripts/nbval_matrix.py Haswell          # some variants (names as below)
    python scripts/nbval_matrix.py --jobs 1 -- notebooks/07_memory_efficient.ipynb
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# OpenBLAS kernels for x86-64 CPUs from 2004 to today's servers (Zen: AMD EPYC/Ryzen,
# which GitHub's hosted runners often are; SkylakeX: AVX-512 Intel servers).
KERNELS = ("Prescott", "Sandybridge", "Haswell", "Zen", "SkylakeX")
# A kernel runs only on a CPU with its instructions (SkylakeX's AVX-512 on an AMD EPYC of
# the Zen 2/3 generations stops the kernel with SIGILL): the CPU flags each one needs, as
# /proc/cpuinfo names them (SSE3 is "pni" there). A kernel this CPU cannot run is
# reported as skipped.
NEEDS_FLAGS = {"Prescott": {"pni"}, "Sandybridge": {"avx"}, "Haswell": {"avx2", "fma"},
               "Zen": {"avx2", "fma"},
               "SkylakeX": {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}}
# NumPy >= 2.4 names its x86-64 dispatch targets by microarchitecture level. (The older
# names, e.g. "AVX2 FMA3 AVX512F AVX512CD AVX512_SKX", are no longer dispatch targets:
# NumPy 2.4 warns and disables nothing, so they would test nothing.)
NUMPY_DISPATCH = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"
BASELINE = "numpy-baseline"
# One core: the kernel's fast path runs on one thread instead of one per core, and
# OpenBLAS on one thread (a laptop has 4-16 cores, this machine 2: together they show that
# the thread count does not reach a printed digit).
ONE_CORE = "one-core"
CELL_TIMEOUT = 300   # seconds for one cell (a kernel that died leaves nbval waiting)
RUN_TIMEOUT = 900    # seconds for one variant's whole run
VARIANTS = (*KERNELS, BASELINE, ONE_CORE)

# What a fresh interpreter computes with: the OpenBLAS kernel(s) threadpoolctl finds, and
# the dispatch targets NumPy uses (numpy.show_runtime() reports the same as "found").
PROBE = """
import json
import numpy, threadpoolctl
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
import os
info = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"]
print(json.dumps({"kernels": [i["architecture"] for i in info],
                  "threads": [i["num_threads"] for i in info],
                  "cores": len(os.sched_getaffinity(0)),
                  "dispatched": [d for d in __cpu_dispatch__ if __cpu_features__.get(d)]}))
"""


def environment(variant: str) -> dict:
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    if variant == BASELINE:
        env["NPY_DISABLE_CPU_FEATURES"] = NUMPY_DISPATCH
    elif variant == ONE_CORE:
        env["OPENBLAS_NUM_THREADS"] = "1"
    else:
        env["OPENBLAS_CORETYPE"] = variant
    return env


def cpu_flags() -> set[str] | None:
    """The CPU's flags from /proc/cpuinfo (None where there is no such file)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    return {flag for line in text.splitlines() if line.startswith("flags")
            for flag in line.split(":", 1)[1].split()}


def cannot_run(variant: str) -> str | None:
    """Why this CPU cannot run the variant's kernel, or None."""
    flags = cpu_flags()
    lacking = sorted(NEEDS_FLAGS.get(variant, set()) - flags) if flags is not None else []
    return f"this CPU lacks {' '.join(lacking)}" if lacking else None


def pinning(variant: str):
    """For the one-core variant, what pins a child process (and its kernels) to CPU 0."""
    if variant != ONE_CORE:
        return None
    return lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def took_effect(variant: str, env: dict) -> str | None:
    """None when the variant's arithmetic is in force in a fresh interpreter, else why not."""
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                          text=True, check=False, preexec_fn=pinning(variant))
    if done.returncode:
        return f"the probe failed:\n{done.stderr}"
    seen = json.loads(done.stdout)
    if variant == ONE_CORE:
        return None if seen["cores"] == 1 and seen["threads"] == [1] else (
            f"{seen['cores']} cores and BLAS threads {seen['threads']}, not one")
    if variant == BASELINE:
        return None if not seen["dispatched"] else (
            f"NumPy still dispatches to {seen['dispatched']} with "
            f"NPY_DISABLE_CPU_FEATURES={NUMPY_DISPATCH!r}")
    # OpenBLAS reports the kernel family it loaded: Prescott's is called Katmai there,
    # and Zen runs Haswell's kernels (so a Zen CPU and a Haswell one print alike).
    expected = {"Prescott": "Katmai", "Zen": "Haswell"}.get(variant, variant)
    return None if seen["kernels"] == [expected] else (
        f"OpenBLAS runs {seen['kernels']}, not {expected}, with OPENBLAS_CORETYPE={variant}")


def run(variant: str, targets: list[str]) -> tuple[str, int | None, str, float]:
    """(variant, pytest's exit code or None when skipped, output, seconds)."""
    start = time.monotonic()
    reason = cannot_run(variant)
    if reason:
        return variant, None, reason, 0.0
    env = environment(variant)
    problem = took_effect(variant, env)
    if problem:
        return variant, 1, problem, time.monotonic() - start
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--nbval", "--nbval-sanitize-with", "nbval_sanitize.cfg",
               "--nbval-current-env", "--nbval-cell-timeout", str(CELL_TIMEOUT),
               "-o", "addopts=", *targets]
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                              check=False, timeout=RUN_TIMEOUT, preexec_fn=pinning(variant))
    except subprocess.TimeoutExpired as stopped:
        output = (stopped.stdout or b"").decode(errors="replace")
        return variant, 1, f"{output}\nstopped after {RUN_TIMEOUT} s", time.monotonic() - start
    return variant, done.returncode, done.stdout + done.stderr, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("variants", nargs="*", help=f"any of {', '.join(VARIANTS)}")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    targets = argv[split + 1:] or ["notebooks"]  # after --: what pytest collects
    variants = args.variants or list(VARIANTS)
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {', '.join(VARIANTS)}")
    failed, skipped = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for variant, code, output, seconds in pool.map(lambda v: run(v, targets), variants):
            if code is None:
                skipped.append(variant)
                print(f"nbval, {variant}: skipped, {output}", flush=True)
                continue
            summary = output.strip().splitlines()[-1] if output.strip() else ""
            print(f"nbval, {variant}: {'ok' if code == 0 else 'FAILED'} ({seconds:.0f} s) "
                  f"{summary}", flush=True)
            if code:
                failed.append(variant)
                print(output[-6000:], flush=True)
    if failed:
        print(f"nbval failed on other machines' arithmetic: {', '.join(failed)}. A cell "
              "prints what rounding can move: print a bound, a count or a value rounded "
              "where the error cannot reach the printed digit, and assert the rest.")
        return 1
    ran = [v for v in variants if v not in skipped]
    if not ran:
        print("nbval ran under no variant: this CPU can run none of them")
        return 1
    print(f"nbval passed under {len(ran)} variants: {', '.join(ran)}"
          + (f" (skipped on this CPU: {', '.join(skipped)})" if skipped else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
