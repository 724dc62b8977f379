"""The fast path (lib/fast_attention.py) called from many threads at once (issue 38): the pool
starts exactly once, overlapping calls leave the BLAS thread limit as they found it, and
every call gets its own result. Deterministic interleavings where the order matters, plus
hypothesis over interleavings and over concurrent calls; nothing here is timed.

The BLAS limit is set to ``LIMIT`` = 3 around each test: a value that neither the
environment (``OPENBLAS_NUM_THREADS=1`` in CI) nor the kernel (1) would give, so that a
leaked or wrongly restored limit shows."""

import contextlib
import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import threadpoolctl
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import attention
from lib import fast_attention as fast
from lib.attention import padding_mask, scaled_dot_product_attention

LIMIT = 3


def blas_limits():
    """The thread limit of every BLAS library NumPy loaded, as threadpoolctl reports it."""
    return [info["num_threads"] for info in threadpoolctl.threadpool_info()
            if info["user_api"] == "blas"]


@pytest.fixture(autouse=True)
def blas_limit_of_three():
    with threadpoolctl.threadpool_limits(LIMIT, user_api="blas"):
        assert blas_limits() and set(blas_limits()) == {LIMIT}
        yield
        assert fast._blas_users == 0 and fast._blas_limiter is None  # no call left inside


@pytest.fixture
def fresh_pool(monkeypatch):
    """No pool yet, as in a new process: the first callers race to start it."""
    monkeypatch.setattr(fast, "_executor", None)
    monkeypatch.setattr(fast, "_blas_controller", None)
    yield
    if fast._executor is not None:
        fast._executor.shutdown()  # the test's own pool; the old one comes back after


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 3 query rows: many jobs per call, so that the workers interleave."""
    monkeypatch.setattr(fast, "_FAST_BLOCK_ROWS", 3)


def problem(rng, kind, batch=2, L=11, S=13, E=5, Ev=4):
    """Validated fast_attention arguments of one kind of call (float64)."""
    q = rng.standard_normal((batch, L, E))
    k = rng.standard_normal((batch, S, E))
    v = rng.standard_normal((batch, S, Ev))
    mask = {"none": None, "causal": None,
            "boolean": rng.random((batch, L, S)) < 0.6,
            "padding": padding_mask(rng.integers(0, S + 1, size=batch), S)[:, None, :],
            "float": rng.standard_normal((L, S))}[kind]
    return q, k, v, mask, kind == "causal", 1 / np.sqrt(E)


def call_together(args_list, callers):
    """Run fast_attention on every argument tuple, spread over ``callers`` threads that
    start together; return the results in order and any exception raised."""
    results, errors = [None] * len(args_list), []
    start = threading.Barrier(callers)

    def caller(first):
        start.wait()
        for i in range(first, len(args_list), callers):
            try:
                results[i] = fast.fast_attention(*args_list[i])
            except Exception as error:  # noqa: BLE001 - reported by the test
                errors.append(error)

    threads = [threading.Thread(target=caller, args=(c,)) for c in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


# --------------------------------------------------------- the pool starts exactly once
def test_callers_arriving_while_the_pool_starts_all_get_the_whole_pool(fresh_pool,
                                                                       monkeypatch):
    # The controller takes a while to build (it scans the loaded libraries); a caller that
    # arrives meanwhile must wait for it, not find a pool without one (issue 38: the
    # AttributeError 'NoneType' object has no attribute 'limit').
    built, real = [], threadpoolctl.ThreadpoolController

    def slow_controller():
        threading.Event().wait(0.2)  # a window in which the other callers arrive
        built.append(1)
        return real()

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", slow_controller)
    callers = 6
    start, pools, errors = threading.Barrier(callers), [], []

    def caller():
        start.wait()
        try:
            pools.append(fast._thread_pool())
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=caller) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert built == [1]  # started exactly once
    assert len(pools) == callers and all(pool == pools[0] for pool in pools)
    executor, controller = pools[0]
    assert executor is fast._executor and controller is not None


def test_first_calls_from_many_threads_at_once_in_a_new_process():
    # The race as a user meets it: a fresh interpreter whose first fast-path calls come
    # from several threads at once (issue 38 saw it fail in 1 of 8 fresh processes).
    code = (
        "import threading, numpy as np\n"
        "from lib import fast_attention as fast\n"
        "q = np.random.default_rng(0).standard_normal((2, 40, 8))\n"
        "start, errors = threading.Barrier(8), []\n"
        "def caller():\n"
        "    start.wait()\n"
        "    try: fast.fast_attention(q, q, q, None, True, 0.5)\n"
        "    except Exception as e: errors.append(repr(e))\n"
        "ts = [threading.Thread(target=caller) for _ in range(8)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]\n"
        "assert errors == [], errors\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


# ------------------------------ the BLAS limit: set by the first, restored by the last
@pytest.mark.parametrize("order", ["first in, first out", "first in, last out"])
def test_two_overlapping_calls_restore_the_limit_in_either_order(order):
    # Issue 38: call A saves 3 and sets 1; call B saves 1; A restores 3; B restores 1, for
    # good. Each call here is a thread inside the limit; events fix the interleaving.
    _, controller = fast._thread_pool()
    inside = {name: threading.Event() for name in "AB"}
    leave = {name: threading.Event() for name in "AB"}
    seen = []

    def call(name):
        with fast._one_blas_thread(controller):
            seen.append((name, "in", blas_limits()))
            inside[name].set()
            leave[name].wait()
        seen.append((name, "out", blas_limits()))

    threads = {name: threading.Thread(target=call, args=(name,)) for name in "AB"}
    threads["A"].start()
    inside["A"].wait()
    threads["B"].start()
    inside["B"].wait()
    first_out = "A" if order == "first in, first out" else "B"
    last_out = "B" if first_out == "A" else "A"
    leave[first_out].set()
    threads[first_out].join()
    assert blas_limits() == [1] * len(blas_limits())  # the other call still runs
    leave[last_out].set()
    threads[last_out].join()
    assert set(blas_limits()) == {LIMIT}
    assert all(set(limits) == {1} for name, step, limits in seen if step == "in")


@settings(max_examples=60, deadline=None)
@given(events=st.integers(1, 5).flatmap(lambda n: st.permutations(list(range(n)) * 2)))
def test_property_any_interleaving_of_calls_restores_the_limit(events):
    # Calls 0..n-1 each enter the limit (first time their number comes) and leave it
    # (second time), in any interleaving: the limit is 1 exactly while some call is
    # inside, and what it was (3) after the last one leaves.
    _, controller = fast._thread_pool()
    inside, entered = {}, set()
    for call in events:
        if call not in entered:
            entered.add(call)
            inside[call] = fast._one_blas_thread(controller)
            inside[call].__enter__()
        else:
            inside.pop(call).__exit__(None, None, None)
        assert set(blas_limits()) == ({1} if inside else {LIMIT})
    assert fast._blas_users == 0


@pytest.mark.parametrize("another_call_running", [False, True])
def test_a_call_whose_blocks_raise_still_counts_itself_out(monkeypatch, small_blocks,
                                                           another_call_running):
    q, k, v, mask, causal, scale = problem(np.random.default_rng(80), "none")

    def broken_block(*args):
        raise FloatingPointError("a block failed")

    monkeypatch.setattr(fast, "_scores", broken_block)
    with contextlib.ExitStack() as stack:
        if another_call_running:
            stack.enter_context(fast._one_blas_thread(fast._thread_pool()[1]))
        with pytest.raises(FloatingPointError):
            fast.fast_attention(q, k, v, mask, causal, scale)
        assert fast._blas_users == int(another_call_running)
        assert set(blas_limits()) == ({1} if another_call_running else {LIMIT})
    assert fast._blas_users == 0 and set(blas_limits()) == {LIMIT}


# ------------------------------------------------ overlapping calls from many threads
def test_overlapping_calls_from_many_threads_leave_the_limit_and_get_their_results(
        fresh_pool, small_blocks):
    rng = np.random.default_rng(81)
    kinds = ["none", "causal", "boolean", "padding", "float"]
    args_list = [problem(rng, kinds[i % len(kinds)], L=int(rng.integers(1, 20)),
                         S=int(rng.integers(1, 20))) for i in range(40)]
    expected = [fast.fast_attention(*args) for args in args_list]  # one at a time
    assert set(blas_limits()) == {LIMIT}
    for _ in range(5):  # 8 threads, 5 calls each, 5 times: the calls overlap
        got, errors = call_together(args_list, callers=8)
        assert errors == []
        assert set(blas_limits()) == {LIMIT}
        for out, ref in zip(got, expected):
            np.testing.assert_array_equal(out, ref)  # the same blocks, the same bits
    for args, ref in zip(args_list, expected):  # and the right answer: the plain path
        q, k, v, mask, causal, scale = args
        plain, _ = scaled_dot_product_attention(q, k, v, mask, is_causal=causal, scale=scale,
                                                return_weights=True)
        np.testing.assert_allclose(ref, plain, rtol=0, atol=1e-13)


def test_a_call_meanwhile_sees_one_blas_thread_and_other_threads_too(small_blocks):
    # What a caller gets, as documented: while a fast-path call runs, BLAS is limited to
    # one thread for every thread of the process; after it, the limit it found.
    _, controller = fast._thread_pool()
    seen_by_another_thread = []
    with fast._one_blas_thread(controller):
        t = threading.Thread(target=lambda: seen_by_another_thread.append(blas_limits()))
        t.start()
        t.join()
    assert seen_by_another_thread and set(seen_by_another_thread[0]) == {1}
    assert set(blas_limits()) == {LIMIT}


def _blas_state_in_child():
    return fast._blas_users, fast._blas_limiter is None, fast._executor is None, blas_limits()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_during_a_call_of_another_thread_gets_the_limit_back():
    # The child has no running call: its count starts at 0 and its BLAS limit is the one
    # the running call found, not that call's 1 (which no call of the child would undo).
    _, controller = fast._thread_pool()
    inside, leave = threading.Event(), threading.Event()

    def running_call():
        with fast._one_blas_thread(controller):
            inside.set()
            leave.wait()

    t = threading.Thread(target=running_call)
    t.start()
    inside.wait()
    try:
        assert set(blas_limits()) == {1}
        with multiprocessing.get_context("fork").Pool(1) as pool:
            users, no_limiter, no_pool, limits = pool.apply_async(_blas_state_in_child).get(
                timeout=60)
    finally:
        leave.set()
        t.join()
    assert (users, no_limiter, no_pool) == (0, True, True)
    assert set(limits) == {LIMIT}
    assert set(blas_limits()) == {LIMIT}


# -------------------------------------------------------------- hypothesis: concurrent calls
KINDS = ["none", "causal", "boolean", "padding", "float"]


@st.composite
def concurrent_calls(draw):
    """Up to 6 fast-path calls of any kind and size, and the number of threads making them."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, 6))
    calls = []
    for _ in range(n):
        kind = draw(st.sampled_from(KINDS))
        batch, L, S = draw(st.integers(1, 3)), draw(st.integers(0, 17)), draw(st.integers(1, 17))
        calls.append(problem(rng, kind, batch=batch, L=L, S=S, E=draw(st.integers(1, 6)),
                             Ev=draw(st.integers(1, 5))))
    return calls, draw(st.integers(2, 5))


@settings(max_examples=30, deadline=None)
@given(case=concurrent_calls())
def test_property_concurrent_calls_equal_the_same_calls_one_at_a_time(case):
    calls, callers = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast, "_FAST_BLOCK_ROWS", 2)
        expected = [fast.fast_attention(*args) for args in calls]
        got, errors = call_together(calls, callers)
    assert errors == []
    for out, ref in zip(got, expected):
        np.testing.assert_array_equal(out, ref)
    assert set(blas_limits()) == {LIMIT} and fast._blas_users == 0


@settings(max_examples=20, deadline=None)
@given(case=concurrent_calls(), workers=st.integers(1, 4))
def test_property_concurrent_dispatched_calls_match_the_plain_path(case, workers):
    # Through the public function, with any number of pool workers: the formula's result.
    calls, callers = case
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(attention, "FAST_PATH_MIN_SCORES", 0)
        mp.setattr(fast, "_FAST_BLOCK_ROWS", 3)
        mp.setattr(fast, "_n_workers", lambda: workers)
        public = [(q, k, v, mask, causal, scale) for q, k, v, mask, causal, scale in calls]
        results, errors = [None] * len(public), []
        start = threading.Barrier(callers)

        def caller(first):
            start.wait()
            for i in range(first, len(public), callers):
                q, k, v, mask, causal, scale = public[i]
                try:
                    results[i] = scaled_dot_product_attention(q, k, v, mask, is_causal=causal,
                                                              scale=scale)
                except Exception as error:  # noqa: BLE001
                    errors.append(error)

        threads = [threading.Thread(target=caller, args=(c,)) for c in range(callers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    for (q, k, v, mask, causal, scale), out in zip(public, results):
        plain, _ = scaled_dot_product_attention(q, k, v, mask, is_causal=causal, scale=scale,
                                                return_weights=True)
        np.testing.assert_allclose(out, plain, rtol=0, atol=1e-13)
    assert set(blas_limits()) == {LIMIT}
