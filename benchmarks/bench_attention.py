"""Speed and memory of the course kernel against PyTorch's fused CPU attention.

Run with ``make bench`` (or ``python -m benchmarks.bench_attention [--smoke]``). For every case of
the grid, inputs shaped (1, H, n, 64), the three contenders are timed interleaved, one run
each in turn, so that a slow moment of the machine hits all of them:

- ``lib``: ``lib.attention.scaled_dot_product_attention`` (no weights requested, so it may
  take its fast path);
- ``torch``: ``torch.nn.functional.scaled_dot_product_attention`` with 2 threads;
- ``gemm``: the two NumPy matrix products ``Q @ K^T`` and ``A @ V`` alone, a floor for any
  NumPy implementation that forms the scores.

The table reports medians and the ratios lib/torch and lib/gemm, and is written as JSON.
A memory section measures, with ``tracemalloc`` (NumPy reports its allocations to it), the
peak memory allocated beyond the inputs and the output, for the plain path and for
``memory_efficient_attention``. A profile then times each pass of one fast-path task on
one thread, and PyTorch's products and whole attention on the same task. ``--smoke`` runs
a tiny grid once, so that ``make test`` keeps this script working; it measures nothing
worth reading.

A section on threads then times the fast path called from several threads at once, as it
runs (overlapping calls share the pool and count themselves in and out of one BLAS
limit), against the same calls serialised by a lock, and the cost per call of setting and
restoring the BLAS limit.

``--against OLD/fast_attention.py`` times, instead, an older copy of the fast path
against the current one (e.g. ``git show REV:lib/fast_attention.py > /tmp/old.py``),
interleaved, on the grid and on causal, boolean-mask and scale > 1 cases, and reports the minimum
and the median wall time of each, the minimum CPU time of the process (all threads: less
sensitive to other programs on a busy machine), and the ratios new/old: the cost of a
change, measured in one run.
"""

import os

# Idle worker threads of OpenMP (torch) and OpenBLAS (NumPy) spin for a while after each
# call; interleaved, one contender's spinning threads would slow down the next contender.
# Make them sleep instead. This must happen before NumPy and torch are imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("KMP_BLOCKTIME", "0")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from lib.attention import memory_efficient_attention, scaled_dot_product_attention  # noqa: E402

try:  # PyTorch is a benchmark and test dependency only, never a runtime one.
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

GRID = [(8, 512), (8, 1024), (4, 2048), (1, 4096)]
SMOKE_GRID = [(2, 64)]
E = 64
MEMORY_NS = [1024, 2048, 4096, 8192, 32768]
PLAIN_MEMORY_LIMIT = 8192  # beyond this the plain path's n x n matrices take minutes and GiBs
SMOKE_MEMORY_NS = [1024]
THREAD_CALLERS = [1, 2, 4, 8]  # threads calling the fast path at once
SMOKE_THREAD_CALLERS = [1, 2]


def inputs(H, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((1, H, n, E)).astype(dtype) for _ in range(3))


def two_gemms(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2)  # (1, H, n, n)
    return scores @ v  # (1, H, n, E)


def time_interleaved(contenders, repeats):
    """Median seconds of each contender, run in turn ``repeats`` times after one warm-up."""
    times = {name: [] for name in contenders}
    for name, fn in contenders.items():
        fn()  # warm-up: first-touch page faults, thread pools, caches
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def speed(grid, repeats):
    rows = []
    for dtype in (np.float32, np.float64):
        for H, n in grid:
            q, k, v = inputs(H, n, dtype)
            contenders = {"lib": lambda: scaled_dot_product_attention(q, k, v),
                          "gemm": lambda: two_gemms(q, k, v)}
            if torch is not None:
                tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
                contenders["torch"] = lambda: torch.nn.functional.scaled_dot_product_attention(
                    tq, tk, tv)
            med = time_interleaved(contenders, repeats)
            row = {"dtype": np.dtype(dtype).name, "H": H, "n": n,
                   **{f"{name}_ms": 1e3 * t for name, t in med.items()},
                   "lib/gemm": med["lib"] / med["gemm"]}
            if torch is not None:
                row["lib/torch"] = med["lib"] / med["torch"]
            rows.append(row)
    return rows


def peak_extra_bytes(fn, *args, **kwargs):
    """Peak bytes allocated while ``fn`` runs, beyond what was allocated before, minus
    the bytes of its result (the output is not 'extra')."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    out = fn(*args, **kwargs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak - before - out.nbytes


def memory(ns):
    rows = []
    for n in ns:
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((n, E), dtype=np.float32) for _ in range(3))
        row = {"n": n, "score_matrix_MiB": n * n * 4 / 2**20}
        row["memory_efficient_MiB"] = peak_extra_bytes(
            memory_efficient_attention, q, k, v, is_causal=True) / 2**20
        if n <= PLAIN_MEMORY_LIMIT:  # the plain path: return_weights=True forces it
            row["plain_MiB"] = peak_extra_bytes(
                lambda: scaled_dot_product_attention(q, k, v, is_causal=True,
                                                     return_weights=True)[0]) / 2**20
        rows.append(row)
    return rows


def profile_passes(n=4096, rows=512, repeats=15):
    """Median ms of each pass of one fast-path task (``rows`` queries against n keys),
    on one thread with one BLAS thread, as the fast path runs it; and, when PyTorch is
    installed, PyTorch's two matrix products and its whole attention on the same task,
    also on one thread, for comparison."""
    from threadpoolctl import threadpool_limits

    out = {}
    for dtype in (np.float32, np.float64):
        rng = np.random.default_rng(0)
        q = rng.standard_normal((rows, E)).astype(dtype) / 8
        key = rng.standard_normal((n, E)).astype(dtype)
        value_1 = np.ones((n, E + 1), dtype)
        s = q @ key.T
        buffer = np.empty_like(s)
        passes = {
            "Q K^T (GEMM)": lambda: np.matmul(q, key.T),
            "row max (shift pass, skipped when bounded)": lambda: s.max(axis=-1, keepdims=True),
            "exp (in place)": lambda: np.exp(s, out=buffer),
            "A V and row sums (GEMM)": lambda: s @ value_1,
        }
        with threadpool_limits(1, user_api="blas"):
            med = time_interleaved(passes, repeats)
        out[np.dtype(dtype).name] = {name: 1e3 * t for name, t in med.items()}
        if torch is not None:
            tq, tk, ts, tv = (torch.from_numpy(a) for a in (q, key, s, value_1[:, :E].copy()))
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                med = time_interleaved({
                    "Q K^T": lambda: tq @ tk.T,
                    "A V": lambda: ts @ tv,
                    "whole attention": lambda: torch.nn.functional.scaled_dot_product_attention(
                        tq[None, None], tk[None, None], tv[None, None]),
                }, repeats)
            finally:
                torch.set_num_threads(threads)
            out["torch " + np.dtype(dtype).name] = {name: 1e3 * t for name, t in med.items()}
    return out


def run_callers(fn, callers, calls):
    """Wall and CPU seconds (all threads of the process) for ``callers`` threads that
    start together and each call ``fn`` ``calls`` times."""
    start = threading.Barrier(callers + 1)

    def caller():
        start.wait()
        for _ in range(calls):
            fn()

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for t in threads:
        t.start()
    start.wait()
    wall, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.join()
    return time.perf_counter() - wall, time.process_time() - cpu


def concurrency(callers_list, calls, repeats, H=4, n=512):
    """The fast path called from several threads at once: as it runs (overlapping calls
    share the pool and the BLAS limit) and serialised by a lock (one call at a time),
    the minimum over ``repeats`` of the wall and CPU ms per call; and the microseconds
    one call spends setting and restoring the BLAS limit (alone: threadpoolctl's limit
    and restore, as every call did before; overlapping another: a count only)."""
    from lib import fast_attention as fast

    q, k, v = inputs(H, n, np.float32)
    assert H * n * n >= fast.FAST_PATH_MIN_SCORES  # the dispatch takes the fast path
    serial = threading.Lock()

    def serialised():
        with serial:
            scaled_dot_product_attention(q, k, v)

    modes = {"shared": lambda: scaled_dot_product_attention(q, k, v), "serialised": serialised}
    rows = []
    for callers in callers_list:
        row = {"callers": callers, "calls": calls, "H": H, "n": n}
        best = {name: (np.inf, np.inf) for name in modes}
        run_callers(modes["shared"], callers, 1)  # warm-up: the pool, caches
        for _ in range(repeats):
            for name, fn in modes.items():  # interleaved
                wall, cpu = run_callers(fn, callers, calls)
                best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
        for name, (wall, cpu) in best.items():
            row[f"{name}_wall_ms_per_call"] = 1e3 * wall / (callers * calls)
            row[f"{name}_cpu_ms_per_call"] = 1e3 * cpu / (callers * calls)
        row["shared/serialised wall"] = best["shared"][0] / best["serialised"][0]
        rows.append(row)

    _, controller = fast._thread_pool()
    reps = 200 if repeats > 1 else 5

    def per_call_us(fn):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        return 1e6 * (time.perf_counter() - start) / reps

    def alone():
        with fast._one_blas_thread(controller):
            pass

    def threadpoolctl_only():
        controller.limit(limits=1, user_api="blas").restore_original_limits()

    limit = {"alone": min(per_call_us(alone) for _ in range(3)),
             "threadpoolctl alone": min(per_call_us(threadpoolctl_only) for _ in range(3))}
    with fast._one_blas_thread(controller):  # another call holds the limit: count only
        limit["overlapping"] = min(per_call_us(alone) for _ in range(3))
    return {"rows": rows, "limit_us": limit}


def format_concurrency(result):
    rows = result["rows"]
    lines = [f"Threads: fast path, float32 (1, {rows[0]['H']}, {rows[0]['n']}, {E}), each of C "
             f"callers makes {rows[0]['calls']} calls at once; ms per call, min of runs",
             "callers  shared wall  serialised wall  shared/serialised  shared CPU  serialised CPU"]
    for r in rows:
        lines.append(f"{r['callers']:>7} {r['shared_wall_ms_per_call']:12.2f} "
                     f"{r['serialised_wall_ms_per_call']:16.2f} "
                     f"{r['shared/serialised wall']:18.2f} {r['shared_cpu_ms_per_call']:11.2f} "
                     f"{r['serialised_cpu_ms_per_call']:15.2f}")
    lim = result["limit_us"]
    lines.append(f"BLAS limit per call, us: alone (sets and restores) {lim['alone']:.1f}, "
                 f"of which threadpoolctl {lim['threadpoolctl alone']:.1f}; overlapping "
                 f"another call (counts only) {lim['overlapping']:.2f}")
    return "\n".join(lines)


def format_profile(profile, n=4096, rows=512):
    lines = [f"One fast-path task ({rows} queries x {n} keys, E = {E}), one thread, ms:"]
    for dtype, passes in profile.items():
        if dtype.startswith("torch"):
            parts = ", ".join(f"{name} {t:.2f}" for name, t in passes.items())
            lines.append(f"  PyTorch {dtype.split()[1]}, same task: {parts}")
            continue
        total = sum(passes.values())
        parts = ", ".join(f"{name} {t:.2f} ({t / total:.0%})" for name, t in passes.items())
        lines.append(f"  {dtype}: {parts}")
    return "\n".join(lines)


def machine():
    info = {"python": platform.python_version(), "numpy": np.__version__,
            "cpus": os.cpu_count(), "machine": platform.machine(),
            "torch": torch.__version__ if torch is not None else None,
            "torch_threads": torch.get_num_threads() if torch is not None else None}
    try:
        info["cpu"] = next(line.split(":", 1)[1].strip()
                           for line in Path("/proc/cpuinfo").read_text().splitlines()
                           if line.startswith("model name"))
    except (OSError, StopIteration):
        info["cpu"] = platform.processor()
    return info


def format_speed(rows):
    has_torch = "torch_ms" in rows[0]
    head = f"{'dtype':8} {'H':>2} {'n':>5} {'lib ms':>9} {'gemm ms':>9}"
    head += f" {'torch ms':>9} {'lib/torch':>9}" if has_torch else ""
    lines = [head + f" {'lib/gemm':>8}"]
    for r in rows:
        line = f"{r['dtype']:8} {r['H']:>2} {r['n']:>5} {r['lib_ms']:9.2f} {r['gemm_ms']:9.2f}"
        if has_torch:
            line += f" {r['torch_ms']:9.2f} {r['lib/torch']:9.2f}"
        lines.append(line + f" {r['lib/gemm']:8.2f}")
    worst = f"worst lib/gemm {max(r['lib/gemm'] for r in rows):.2f}"
    if has_torch:
        worst = f"worst lib/torch {max(r['lib/torch'] for r in rows):.2f}, " + worst
    else:
        worst += "  (torch columns skipped: PyTorch is not installed; pip install torch==2.13.0)"
    return "\n".join(lines + [worst])


def format_memory(rows):
    lines = [f"{'n':>6} {'n*n float32 MiB':>16} {'plain MiB':>10} {'mem-efficient MiB':>18}"]
    for r in rows:
        plain = f"{r['plain_MiB']:10.1f}" if "plain_MiB" in r else f"{'(skipped)':>10}"
        lines.append(f"{r['n']:>6} {r['score_matrix_MiB']:16.1f} {plain} "
                     f"{r['memory_efficient_MiB']:18.1f}")
    return "\n".join(lines)


def against(path, grid, repeats):
    """Minimum and median ms of an older fast_attention (loaded from ``path``) and the
    current one, interleaved on the same validated inputs, and whether they agree bitwise."""
    import importlib.util

    from lib import fast_attention as current

    spec = importlib.util.spec_from_file_location("old_fast_attention", path)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    rows = []
    for dtype in (np.float32, np.float64):
        H0, n0 = grid[min(1, len(grid) - 1)]
        for H, n, kind in [(H, n, "none") for H, n in grid] + [(H0, n0, "causal"), (H0, n0, "bool"),
                                                                (H0, n0, "scale>1")]:
            q, k, v = inputs(H, n, dtype)
            mask = np.random.default_rng(1).random((n, n)) < 0.8 if kind == "bool" else None
            scale = 1.5 if kind == "scale>1" else 1 / np.sqrt(E)  # > 1: the product is scaled
            args = (q, k, v, mask, kind == "causal", dtype(scale))
            fns = {"old": lambda: old.fast_attention(*args), "new": lambda: current.fast_attention(*args)}
            wall, cpu = {name: [] for name in fns}, {name: [] for name in fns}
            same = bool(np.array_equal(fns["old"](), fns["new"]()))  # also the warm-up
            for _ in range(repeats):
                for name, fn in fns.items():
                    start, start_cpu = time.perf_counter(), time.process_time()
                    fn()
                    cpu[name].append(time.process_time() - start_cpu)  # all threads' CPU time
                    wall[name].append(time.perf_counter() - start)
            row = {"dtype": np.dtype(dtype).name, "H": H, "n": n, "mask": kind, "bitwise_same": same}
            for name in fns:
                row[f"{name}_min_ms"] = 1e3 * min(wall[name])
                row[f"{name}_median_ms"] = 1e3 * statistics.median(wall[name])
                row[f"{name}_cpu_min_ms"] = 1e3 * min(cpu[name])
            for stat in ("min", "median", "cpu_min"):
                row[f"new/old {stat}"] = row[f"new_{stat}_ms"] / row[f"old_{stat}_ms"]
            rows.append(row)
            print(f"{row['dtype']:8} {H:>2} {n:>5} {kind:>7} wall min old {row['old_min_ms']:7.2f} "
                  f"new {row['new_min_ms']:7.2f} ratio {row['new/old min']:.3f}; median ratio "
                  f"{row['new/old median']:.3f}; CPU min old {row['old_cpu_min_ms']:7.2f} new "
                  f"{row['new_cpu_min_ms']:7.2f} ratio {row['new/old cpu_min']:.3f}; "
                  f"bitwise same {same}", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny grid, one run: checks the script")
    parser.add_argument("--repeats", type=int, default=9, help="timed runs per contender (>= 7)")
    parser.add_argument("--json", type=Path, default=Path(__file__).with_name("results.json"))
    parser.add_argument("--against", type=Path, help="an older lib/fast_attention.py to time "
                        "against the current one (nothing else is run, nothing written)")
    args = parser.parse_args(argv)
    if torch is not None:
        torch.set_num_threads(2)
    if args.against is not None:
        grid = SMOKE_GRID if args.smoke else GRID
        print(f"fast_attention, {args.against} (old) against lib (new), inputs (1, H, n, {E}), "
              f"{args.repeats} interleaved runs; min and median ms")
        return {"machine": machine(), "against": against(args.against, grid, args.repeats)}

    grid, repeats, ns = (SMOKE_GRID, 1, SMOKE_MEMORY_NS) if args.smoke else (GRID, args.repeats, MEMORY_NS)
    speed_rows = speed(grid, repeats)
    print(f"Speed: inputs (1, H, n, {E}), median of {repeats} interleaved runs")
    print(format_speed(speed_rows))
    memory_rows = memory(ns)
    print(f"\nMemory: peak extra allocation (tracemalloc), causal, float32, E = Ev = {E}")
    print(format_memory(memory_rows))
    result = {"machine": machine(), "repeats": repeats, "speed": speed_rows, "memory": memory_rows}
    n, rows, profile_repeats = (64, 16, 1) if args.smoke else (4096, 512, 15)
    result["profile"] = profile_passes(n, rows, profile_repeats)
    print("\n" + format_profile(result["profile"], n, rows))
    callers, calls = (SMOKE_THREAD_CALLERS, 1) if args.smoke else (THREAD_CALLERS, 8)
    result["threads"] = concurrency(callers, calls, repeats)
    print("\n" + format_concurrency(result["threads"]))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten: {args.json}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
