"""nbval over every notebook as other x86-64 machines compute: `make test` runs this.

A notebook's printed outputs must be the same on every x86-64 CPU, whatever BLAS kernel
NumPy's OpenBLAS picks for it, whatever SIMD code NumPy dispatches to and however many
cores it has. The references in notebooks/*.ipynb were written on one machine; pytest's
own nbval pass checks them as this machine computes, and this script re-runs nbval as the
MACHINES below compute, two at a time (one per core). Each one sets, in the notebooks'
kernels:

- ``OPENBLAS_CORETYPE``: OpenBLAS (bundled with NumPy's wheels, built with the kernels of
  every x86-64 CPU family) uses that family's kernel instead of the one it picks for this
  CPU, so the matrix products add in another order and round differently in the last bits;
- ``NPY_DISABLE_CPU_FEATURES``: NumPy skips the SIMD code that CPU family would not have
  (a Sandy Bridge has no AVX2, so NumPy runs its baseline code for exp, sums, ...);
- for the one-core machines (a Pentium 4, a one-core Sandy Bridge), the process is pinned
  to one CPU and OpenBLAS to one thread, so BLAS and the kernel's fast path run on one
  thread instead of one per core.
  (Besides, the matrix shares the cores with pytest and the build in `make test`: OpenBLAS's
  idle threads spin, so a second thread there only took the CPU from the others.)

Before nbval runs, a fresh interpreter with the machine's settings reports what it computes
with (threadpoolctl: the OpenBLAS kernel and its threads; NumPy: its dispatch targets; the
cores), and the run stops if a setting did not take effect, so the check cannot pass by
testing the default arithmetic again. A machine whose report equals this machine's own (a
Zen CPU runs Haswell's kernels, so on an AMD EPYC both are the default) is not run twice:
pytest's pass already ran it; nor is one whose report equals another machine's of the
matrix (Zen's equals Haswell's everywhere: OpenBLAS's Zen kernels are Haswell's, and both
keep the same NumPy code), which runs once, under the first name. A kernel whose instructions this CPU lacks (SkylakeX's
AVX-512 on most AMD CPUs stops Python with SIGILL) is skipped and said so. Exits 1 when a
machine fails or none could run.

    python scripts/nbval_matrix.py                  # every machine but Sandybridge
    python scripts/nbval_matrix.py Sandybridge      # some machines (any of them by name)
    python scripts/nbval_matrix.py Prescott -- notebooks/07_memory_efficient.ipynb
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# NumPy >= 2.4 names its x86-64 dispatch targets by microarchitecture level. (The older
# names, e.g. "AVX2 FMA3 AVX512F AVX512CD AVX512_SKX", are no longer dispatch targets:
# NumPy 2.4 warns and disables nothing, so they would test nothing.)
ABOVE_BASELINE = ("X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR")   # X86_V3: AVX2, FMA3
ABOVE_V3 = ("X86_V4", "AVX512_ICL", "AVX512_SPR")                   # X86_V4: AVX-512


@dataclass(frozen=True)
class Machine:
    """An x86-64 machine, as NumPy and OpenBLAS would compute on it."""

    kernel: str                    # OPENBLAS_CORETYPE
    reported: str                  # what threadpoolctl reports for that kernel
    cpu_flags: frozenset           # what the kernel's instructions need (/proc/cpuinfo)
    numpy_off: tuple = ()          # NPY_DISABLE_CPU_FEATURES
    one_core: bool = False         # pinned to one CPU, OpenBLAS on one thread
    one_thread: bool = False       # OpenBLAS on one thread, not pinned
    by_name: bool = False          # run only when named (not in `make test`'s run)


# From a 2004 Pentium 4 to today's AVX-512 servers. Zen (AMD EPYC, Ryzen; GitHub's hosted
# runners are often EPYC) runs Haswell's kernels. /proc/cpuinfo calls SSE3 "pni".
# Sandybridge runs only when named: it keeps Prescott's NumPy code (the baseline) and differs
# only in OpenBLAS's kernel (AVX instead of SSE), so `make test` runs the three arithmetics
# that differ most (SSE and NumPy's baseline on one core, AVX2, and this machine's own) and
# leaves the fourth to `python scripts/nbval_matrix.py Sandybridge`.
# Haswell and Zen compute on one BLAS thread, as Prescott does: beside pytest's own pass
# (this machine as it is, with OpenBLAS's threads) and the strict build in `make test`, a
# second thread mostly spins waiting for work (one thread for Prescott took `make test` from
# 252 s to 203 s), and what the matrix varies is the kernels' instructions, not the threads.
MACHINES = {
    "Prescott": Machine("Prescott", "Katmai", frozenset({"pni"}), ABOVE_BASELINE,
                        one_core=True),
    "Sandybridge": Machine("Sandybridge", "Sandybridge", frozenset({"avx"}), ABOVE_BASELINE,
                           one_core=True, by_name=True),
    "Haswell": Machine("Haswell", "Haswell", frozenset({"avx2", "fma"}), ABOVE_V3,
                       one_thread=True),
    "Zen": Machine("Zen", "Haswell", frozenset({"avx2", "fma"}), ABOVE_V3, one_thread=True),
    "SkylakeX": Machine("SkylakeX", "SkylakeX",
                        frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})),
}
CELL_TIMEOUT = 600   # seconds for one cell (a kernel that died leaves nbval waiting); chapter 7's
                     # timing cell took over 300 s as Sandybridge (one core) on a loaded machine
RUN_TIMEOUT = 900    # seconds for one machine's whole run

# What a fresh interpreter computes with.
PROBE = """
import json, os
import numpy, threadpoolctl
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
info = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"]
print(json.dumps({"kernels": [i["architecture"] for i in info],
                  "threads": [i["num_threads"] for i in info],
                  "cores": len(os.sched_getaffinity(0)),
                  "dispatched": [d for d in __cpu_dispatch__ if __cpu_features__.get(d)]}))
"""


def environment(machine: Machine | None) -> dict:
    """The environment of a notebook kernel on `machine` (None: this machine as it is)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "OPENBLAS_NUM_THREADS")}
    if machine is not None:
        env["OPENBLAS_CORETYPE"] = machine.kernel
        if machine.numpy_off:
            env["NPY_DISABLE_CPU_FEATURES"] = " ".join(machine.numpy_off)
        if machine.one_core or machine.one_thread:
            env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def pinning(machine: Machine | None):
    """For a one-core machine, what pins a child process (and its kernels) to one CPU."""
    if machine is None or not machine.one_core:
        return None
    return lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def cpu_flags() -> set[str] | None:
    """This CPU's flags from /proc/cpuinfo (None where there is no such file)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    return {flag for line in text.splitlines() if line.startswith("flags")
            for flag in line.split(":", 1)[1].split()}


def cannot_run(machine: Machine) -> str | None:
    """Why this CPU cannot run the machine's kernel, or None."""
    flags = cpu_flags()
    lacking = sorted(machine.cpu_flags - flags) if flags is not None else []
    return f"this CPU lacks {' '.join(lacking)}" if lacking else None


def probe(machine: Machine | None) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE], env=environment(machine),
                          capture_output=True, text=True, check=False,
                          preexec_fn=pinning(machine))
    if done.returncode:
        raise RuntimeError(f"the probe failed:\n{done.stderr}")
    return json.loads(done.stdout)


def not_in_force(machine: Machine, seen: dict) -> str | None:
    """None when `seen` (a probe) is the machine's arithmetic, else what differs."""
    if seen["kernels"] != [machine.reported]:
        return f"OpenBLAS runs {seen['kernels']}, not {machine.reported}"
    if set(seen["dispatched"]) & set(machine.numpy_off):
        return (f"NumPy still dispatches to {seen['dispatched']} with "
                f"NPY_DISABLE_CPU_FEATURES={' '.join(machine.numpy_off)!r}")
    if machine.one_core and (seen["cores"], seen["threads"]) != (1, [1]):
        return f"{seen['cores']} cores and BLAS threads {seen['threads']}, not one"
    if machine.one_thread and seen["threads"] != [1]:
        return f"BLAS threads {seen['threads']}, not one"
    return None


def plan(name: str, default: dict, seen_before: dict) -> tuple[str, str]:
    """('run', '') or (status, what to say) for a machine that is not run: 'skipped' when
    this CPU cannot run it or another run computes as it does, 'FAILED' when its settings
    did not take effect. `seen_before`: probe (as JSON) -> the machine already planned."""
    machine = MACHINES[name]
    reason = cannot_run(machine)
    if reason:
        return "skipped", reason
    seen = probe(machine)
    problem = not_in_force(machine, seen)
    if problem:
        return "FAILED", f"its settings did not take effect: {problem}"
    if seen == default:
        return "skipped", f"computes as this machine does (pytest's nbval pass ran it): {seen}"
    key = json.dumps(seen, sort_keys=True)
    if key in seen_before:
        return "skipped", f"computes as {seen_before[key]} does, which runs: {seen}"
    seen_before[key] = name
    return "run", ""


# A kernel that exits while it starts, before any cell ran: jupyter_client's "Kernel died
# before replying to kernel_info", every cell of that notebook an ERROR. Seen once in `make
# test` (Prescott, chapter 2), where a dozen kernels start on two cores at once; nothing of
# the notebook ran, so its notebooks are run once more, and only they.
DIED_AT_START = re.compile(r"^ERROR (\S+?\.ipynb)::Cell \d+ - RuntimeError: Kernel died before rep",
                           re.M)
FAILED_OR_ERROR = re.compile(r"^(?:FAILED|ERROR) (\S+?\.ipynb)::", re.M)


def died_at_start(output: str) -> list[str]:
    """The notebooks whose kernel died as it started, when that is all that failed."""
    died = sorted(set(DIED_AT_START.findall(output)))
    failed = set(FAILED_OR_ERROR.findall(output))
    every_one = len(DIED_AT_START.findall(output)) == len(FAILED_OR_ERROR.findall(output))
    return died if died and failed == set(died) and every_one else []


def run(name: str, targets: list[str], again: bool = True) -> tuple[str, str, str, float]:
    """(name, 'ok' | 'FAILED', what to say, seconds)."""
    start = time.monotonic()
    machine = MACHINES[name]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--nbval", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg",
               "--nbval-current-env", "--nbval-cell-timeout", str(CELL_TIMEOUT),
               "-o", "addopts=", *targets]
    try:
        done = subprocess.run(command, cwd=ROOT, env=environment(machine), capture_output=True,
                              text=True, check=False, timeout=RUN_TIMEOUT,
                              preexec_fn=pinning(machine))
    except subprocess.TimeoutExpired as stopped:
        output = (stopped.stdout or b"").decode(errors="replace")
        return name, "FAILED", f"{output}\nstopped after {RUN_TIMEOUT} s", time.monotonic() - start
    output = done.stdout + done.stderr
    died = died_at_start(output) if done.returncode and again else []
    if died:
        _, status, output_again, _ = run(name, died, again=False)
        last = output_again.strip().splitlines()[-1] if output_again.strip() else status
        note = (f"the kernel of {', '.join(died)} died as it started (nothing ran); "
                f"run again: {last}")
        return name, status, f"{output_again}\n{note}", time.monotonic() - start
    return name, "ok" if done.returncode == 0 else "FAILED", output, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("machines", nargs="*", help=f"any of {', '.join(MACHINES)}")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    targets = argv[split + 1:] or ["notebooks"]  # after --: what pytest collects
    names = args.machines or [name for name, m in MACHINES.items() if not m.by_name]
    unknown = sorted(set(names) - set(MACHINES))
    if unknown:
        parser.error(f"unknown machines {unknown}; choose from {', '.join(MACHINES)}")
    default = probe(None)
    results = {"ok": [], "FAILED": [], "skipped": []}
    # Each machine's probe first (a second each), one after another: a machine that computes
    # as another does (Zen runs Haswell's kernels with the same NumPy code) is run once.
    seen_before, to_run = {}, []
    for name in names:
        status, output = plan(name, default, seen_before)
        if status == "run":
            to_run.append(name)
            continue
        results[status].append(name)
        print(f"nbval as on {name}: {status}, {output}", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for name, status, output, seconds in pool.map(lambda n: run(n, targets), to_run):
            results[status].append(name)
            summary = output.strip().splitlines()[-1] if output.strip() else ""
            print(f"nbval as on {name}: {status} ({seconds:.0f} s) {summary}", flush=True)
            if status == "FAILED":
                print(output[-6000:], flush=True)
    if results["FAILED"]:
        print(f"nbval failed as on: {', '.join(results['FAILED'])}. A cell prints what "
              "rounding can move: print a bound, a count or a value rounded where the "
              "error cannot reach the printed digit, and assert the rest.")
        return 1
    if not results["ok"]:
        print("nbval ran as on no other machine: none differs from this one, or this CPU "
              "can run none of them")
        return 1
    print(f"nbval passed as on: {', '.join(results['ok'])}"
          + (f" (not run: {', '.join(results['skipped'])})" if results["skipped"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
