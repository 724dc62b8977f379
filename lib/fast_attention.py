"""The fast path of scaled dot-product attention: the same function as the plain path, on threads.

:func:`lib.attention.scaled_dot_product_attention` dispatches here when it is not asked
for the weights and the score matrix is large (at least ``FAST_PATH_MIN_SCORES`` scores),
as PyTorch's ``scaled_dot_product_attention`` chooses among its math, flash and
memory-efficient backends. :func:`fast_attention` computes the same function as the plain
path of ``lib/attention.py``, ``softmax(query @ key.T * scale + mask) @ value``, with the
same handling of masks, of queries that may attend to no key and of NaN and infinity
(the rule in the Notes of ``scaled_dot_product_attention``); it differs only by rounding,
within the bound stated there, and ``tests/test_attention.py`` and
``tests/test_edge_cases.py`` check the two against each other. What makes it faster:

- query blocks run on a pool of threads (NumPy releases the GIL inside BLAS and ufuncs),
  the calling thread being one of the workers, with one BLAS thread each (*Threads*,
  below);
- every elementwise pass works in place on one block of scores;
- the row sums come out of the second matrix product (a column of ones appended to V);
- causal attention skips the keys after each block's last query, unless a score or a
  value is NaN or infinite (then those keys' 0 * NaN reach every row, as in the formula);
- the max-shift pass is skipped when the Cauchy-Schwarz inequality bounds every score
  by ``FAST_PATH_NO_SHIFT_BOUND`` (then ``exp`` can neither overflow nor leave the
  normal range, and the shift changes no weight in exact arithmetic);
- where products of ``exp`` and values could overflow or underflow although the plain
  path's (normalised weights times values) do not, ``value`` is multiplied by a power of
  2 (exact), decided once per call from ``max |value|`` and the score bound (``_plan``).

*Threads.* :func:`fast_attention` may be called from any number of threads at once, and
what a caller gets is:

- its own result, the same bit for bit as if the call ran alone: concurrent calls share
  the pool but no data, and every block runs on one BLAS thread whichever worker takes it;
- one pool of helper threads, started by the first call under a lock, exactly once
  however many callers arrive together, and forgotten in a child made by ``fork`` (whose
  copy of the parent has no helper threads);
- while any call runs, BLAS limited to one thread, process-wide (threadpoolctl), so BLAS
  calls that other threads make meanwhile also get one thread. The first of overlapping
  calls sets the limit, the others count themselves in, and the last one out restores
  the limit that the first found: calls that overlap in any order leave the limit as it
  was before them. (A call does not nest the limit per call, as ``with
  threadpool_limits(1)`` in each would: two calls that end in the order they began
  would then leave 1 for good. A child forked while a call runs gets the limit back.)
  A caller that changes the limit itself while a fast-path call runs sees its change
  undone when the last call ends.
- no serialisation: each caller works through its own blocks on its own thread, the
  helpers take blocks of whichever call woke them, and a small call is not queued
  behind a large one. The lock and the count cost a few microseconds per call beside
  threadpoolctl's own; the benchmark's section on threads times concurrent callers
  against the same calls serialised by a lock (``benchmarks/README.md``).

Timings, a pass-by-pass profile, and what was tried: benchmarks/README.md.

This module does not import ``lib.attention``: it receives inputs that
``scaled_dot_product_attention`` has already validated and converted.

References
----------
.. [1] PyTorch documentation, ``torch.nn.functional.scaled_dot_product_attention`` (the
       choice among backends that compute the same function).
       https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
.. [2] T. Dao, "FlashAttention-2: faster attention with better parallelism and work
       partitioning", 2023 (ICLR 2024), Sec. 3.2: parallelism over the sequence length,
       blocks of queries on parallel workers (FlashAttention, 2022, parallelised over
       batch and heads only). https://arxiv.org/abs/2307.08691
"""

import contextlib
import math
import os
import sys
import threading
from typing import NamedTuple

import numpy as np

__all__ = ["FAST_PATH_MIN_SCORES", "FAST_PATH_NO_SHIFT_BOUND", "fast_attention"]

FAST_PATH_MIN_SCORES = 1 << 16  # below this many scores per call, threads cost more than they save
# Largest score bound for which exp needs no shift: e**40 ~ 2e17 (float32 overflows at
# e**88.7) and e**-40 ~ 4e-18 is far from the subnormals; float64 overflows at e**709.
FAST_PATH_NO_SHIFT_BOUND = {np.float32: 40.0, np.float64: 300.0, np.longdouble: 300.0}
_FAST_BLOCK_ROWS = 512  # query rows per task, at most ...
_FAST_BLOCK_BYTES = 16 << 20  # ... and at most this many bytes of scores per task


# ------------------------------------------------------------------------ the thread pool
_pool_lock = threading.Lock()  # guards the start of the pool: it starts exactly once
_executor = None  # set last, under _pool_lock: not None means the pool is ready
_blas_controller = None

_blas_lock = threading.Lock()  # guards the two names below
_blas_users = 0  # fast-path calls running now, in any thread
_blas_limiter = None  # the limit the first of them set; it restores what it found


def _n_workers():
    """The number of cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _thread_pool():
    """A process-wide pool of helper threads (one per core but the caller's), and a
    handle to limit BLAS threads; started by the first call, under a lock, so that
    callers arriving together all get the same, complete pair."""
    global _executor, _blas_controller
    with _pool_lock:
        if _executor is None:
            from concurrent.futures import ThreadPoolExecutor

            from threadpoolctl import ThreadpoolController

            _blas_controller = ThreadpoolController()
            _executor = ThreadPoolExecutor(max_workers=max(1, _n_workers() - 1),
                                           thread_name_prefix="attention")
        return _executor, _blas_controller


@contextlib.contextmanager
def _one_blas_thread(controller):
    """Limit BLAS to one thread while any fast-path call runs, and restore it after the last.

    The first of overlapping calls sets the limit and keeps threadpoolctl's limiter, which
    remembers the limit it found; the others only count themselves in; the last one to
    finish restores what the first found. Calls that overlap in any order therefore
    cannot leave the limit changed, as nested ``with limit(...)`` blocks that end in
    another order than they began would (the last to end restoring the 1 that another
    call had set).
    """
    global _blas_users, _blas_limiter
    with _blas_lock:
        if _blas_users == 0:
            _blas_limiter = controller.limit(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                limiter, _blas_limiter = _blas_limiter, None
                limiter.restore_original_limits()


def _forget_thread_pool():
    """In a child made by fork the parent's helper threads do not exist, and a lock that
    another thread held at the fork stays held: start afresh. A BLAS limit that a call of
    another thread had set at the fork is restored, as that call's end would have."""
    global _executor, _blas_controller, _pool_lock, _blas_lock, _blas_users, _blas_limiter
    limiter = _blas_limiter
    _executor = _blas_controller = _blas_limiter = None
    _pool_lock, _blas_lock, _blas_users = threading.Lock(), threading.Lock(), 0
    if limiter is not None:
        limiter.restore_original_limits()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_thread_pool)


# ----------------------------------------------------------------- the plan of one call
class _Plan(NamedTuple):
    """What one call may skip, decided once from O((L + S) E + S Ev) work."""

    careful: bool  # a score or value may be non-finite: skip no key, hide nothing
    no_shift: bool  # every score is within FAST_PATH_NO_SHIFT_BOUND: exp needs no max shift
    value_scale: object  # a power of 2, by which value (and the row sums) are multiplied


def _plan(query, key, value, attn_mask, scale, allow_no_shift=True):
    """Decide, for validated inputs, how the blocks of one call are computed.

    - ``careful`` when a score could be NaN or infinite (a non-finite query or key, or a
      score bound beyond the dtype's range) or a value is NaN or infinite: then no key is
      skipped, so that every non-finite number reaches the rows the formula sends it to.
    - ``no_shift`` when the Cauchy-Schwarz bound ``b = |scale| max|q_i| max|k_j|`` is at
      most ``FAST_PATH_NO_SHIFT_BOUND`` and no float mask is added, so that every exp(z)
      lies in [e**-b, e**b], and when the products below cannot overflow.
    - ``value_scale``: exp(z) times a value can overflow (large values) or underflow
      (small exp(z) and small values) where the plain path, which normalises the
      weights first, does not. value and its column of ones are multiplied by a power
      of 2 (exact) chosen so that every visible term of a row sum is at least 1 (then no
      product is smaller than the plain path's weight times value) and the sum of a row
      of products stays below a 1/8 of the largest float (then nothing overflows).
    """
    dtype = query.dtype
    finfo = np.finfo(dtype)
    limit = min(float(finfo.max), sys.float_info.max) / 8
    with np.errstate(over="ignore", invalid="ignore"):  # inf or NaN here means "careful"
        q_sq = float(np.einsum("...e,...e->...", query, query).max(initial=0.0))  # max |q_i|^2
        k_sq = float(np.einsum("...e,...e->...", key, key).max(initial=0.0))  # max |k_j|^2
        v_max = float(np.maximum(value.max(initial=0.0), -value.min(initial=0.0)))
    q_norm = abs(float(scale)) * q_sq ** 0.5  # Python floats: inf, NaN raise nothing
    bound = q_norm * k_sq ** 0.5  # >= |every score|; NaN or inf for non-finite q or k
    S = key.shape[-2]
    # The intermediates of a score (see _scores): query * scale when |scale| <= 1, then
    # partial sums bounded by `bound` (Cauchy-Schwarz); q . k, at most bound, otherwise.
    careful = not (bound <= limit and (abs(float(scale)) > 1 or q_norm <= limit)
                   and math.isfinite(v_max))
    float_mask = attn_mask is not None and attn_mask.dtype != np.bool_
    v_big = max(v_max, 1.0)  # the row sums of exp (the column of ones) count too
    if (allow_no_shift and not careful and not float_mask
            and bound <= FAST_PATH_NO_SHIFT_BOUND[dtype.type]):
        k_up = math.ceil(bound / math.log(2))  # 2**k_up >= e**b: each visible term >= 1
        if S * v_big * math.exp(bound) * 2.0 ** k_up <= limit:  # every product <= e**2b
            return _Plan(False, True, dtype.type(2.0 ** k_up))
    # Shifted: every exp(z - m) <= 1 and the largest is 1, so a row sum is >= 1 already.
    if not math.isfinite(v_max) or S * v_big <= limit:
        return _Plan(careful, False, dtype.type(1.0))
    k_down = math.ceil(math.log2(S) + math.log2(v_big) - math.log2(limit))
    return _Plan(careful, False, dtype.type(2.0 ** -k_down))


def _scores(q, k_t, scale):
    """``q @ k_t * scale``, with the scale applied where it cannot overflow.

    For ``|scale| <= 1`` the query is scaled first, ``(q * scale) @ k_t``: scaling down
    cannot overflow, whereas ``q @ k_t`` could where the scaled score does not. For
    ``|scale| > 1`` the product comes first, ``(q @ k_t) * scale``: ``q * scale`` could
    overflow where the scaled score does not. Either way an intermediate overflows only
    if the exact score, or an exact partial sum of its products, is beyond the largest
    float (the range is stated in the Notes of ``scaled_dot_product_attention``).
    """
    if abs(scale) <= 1:
        return (q * scale) @ k_t  # (..., L, S); k_t may be a transposed view
    s = q @ k_t  # (..., L, S), a new array
    s *= scale  # in place
    return s


def _copy_minus_inf(s, where):
    """s[where] = -inf, in place: score + (-inf) for finite scores."""
    np.copyto(s, -np.inf, where=where)


def _add_minus_inf(s, where):
    """s[where] += -inf, in place: NaN stays NaN and +inf becomes NaN, without a warning."""
    with np.errstate(invalid="ignore"):
        np.add(s, -np.inf, out=s, where=where)


# -------------------------------------------------------------------------- the fast path
def fast_attention(query, key, value, attn_mask, is_causal, scale):
    """Scaled dot-product attention without the weights, on blocks of queries in parallel.

    The same function as the plain path of
    :func:`lib.attention.scaled_dot_product_attention` (to rounding), which calls this
    one for large inputs when the weights are not asked for.

    Parameters
    ----------
    query : ndarray, shape (..., L, E)
    key : ndarray, shape (..., S, E)
    value : ndarray, shape (..., S, Ev)
        Already validated, of one floating compute dtype (float32, float64 or
        longdouble; not float16), with leading axes that broadcast.
    attn_mask : ndarray or None, broadcastable to (..., L, S)
        Boolean (True = may attend; applied as the additive mask 0 / -inf) or floating
        of any float dtype (added to the scaled scores, cast block by block); None when
        ``is_causal``.
    is_causal : bool
        Query ``i`` attends keys ``j <= i`` only (top-left aligned).
    scale : float
        Factor applied to ``query @ key.T``, a Python float or a scalar of the compute
        dtype; applied to the query first when ``|scale| <= 1`` and to the product
        otherwise, so that no intermediate overflows where the score does not (the order
        of operations in the Notes of ``scaled_dot_product_attention``).

    Returns
    -------
    ndarray, shape (..., L, Ev), the compute dtype
        Zeros in the row of a query that may attend to no key.

    Notes
    -----
    Nothing is checked here: inputs come from ``scaled_dot_product_attention``, which
    validates them, converts them to the compute dtype and returns the result in the
    input dtype. Call that function, not this one. It is safe to call from any number
    of threads at once (the module's docstring says what each caller gets).

    Each task takes a block of query rows of one batch element, forms its scores
    against all S keys (only the keys up to the block's last query when causal),
    applies the mask, exponentiates in place and multiplies by ``[value, 1]``: the last
    column of that product is the row sum of the exponentials, by which the other
    columns are divided. The shift by the row maximum is the safe one of
    :func:`lib.attention.softmax` (0 for a row with nothing to attend to), and is
    skipped when ``b = |scale| * max_i |q_i| * max_j |k_j|`` (Cauchy-Schwarz, over the
    whole call) is at most ``FAST_PATH_NO_SHIFT_BOUND`` and no float mask is given.

    The plain path normalises the weights before multiplying by ``value``; this one
    multiplies first and divides by the row sum last, so its products ``exp(z) * v``
    could overflow (large ``v``) or underflow (``exp(z)`` near ``e**-b`` and small
    ``v``) where the plain path's do not. ``_plan`` prevents both once per call, from
    ``max |value|`` and ``b``: ``value`` and its column of ones are multiplied by a
    power of 2, ``2**k >= e**b`` without the shift (every visible term of a row sum is
    then at least 1), or ``2**-k`` when ``S * max|value|`` could overflow; without the
    shift only if ``S * max(|value|, 1) * e**b * 2**k`` is below an eighth of the
    largest float. Multiplying by a power of 2 is exact, so for ordinary inputs the
    result is the same, bit for bit, as without it. The cost: one pass over ``query``,
    ``key`` and ``value`` per call (``benchmarks/README.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from lib.attention import scaled_dot_product_attention
    >>> from lib.fast_attention import fast_attention
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.standard_normal((3, 2, 6, 4))         # batch 2, L = S = 6, E = Ev = 4
    >>> out = fast_attention(q, k, v, None, True, 0.5)      # validated: float64, scale 1/sqrt(4)
    >>> plain, _ = scaled_dot_product_attention(q, k, v, is_causal=True, return_weights=True)
    >>> out.shape, bool(np.allclose(out, plain, rtol=0, atol=1e-13))
    ((2, 6, 4), True)
    """
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    L, E, S, Ev = query.shape[-2], query.shape[-1], key.shape[-2], value.shape[-1]
    dtype = query.dtype
    plan = _plan(query, key, value, attn_mask, scale)
    query = np.broadcast_to(query, batch + (L, E))  # views: nothing is copied
    key = np.broadcast_to(key, batch + (S, E))
    value_1 = np.empty(batch + (S, Ev + 1), dtype=dtype)  # (..., S, Ev + 1)
    np.multiply(value, plan.value_scale, out=value_1[..., :Ev])  # a power of 2: exact
    value_1[..., Ev] = plan.value_scale  # the last column of weights @ value_1 is the row sum
    if attn_mask is not None:
        attn_mask = np.broadcast_to(attn_mask, batch + (L, S))
    output = np.empty(batch + (L, Ev), dtype=dtype)  # (..., L, Ev)

    caller_errstate = np.geterr()  # the helper threads follow the caller's np.errstate

    def one_block(job):
        with np.errstate(**caller_errstate):
            _one_block(job)

    def _one_block(job):
        b, i0, i1 = job  # batch index, query rows [i0, i1)
        # causal: later keys are masked for every row of the block, and skipped unless a
        # non-finite score or value could make them matter (0 * NaN is NaN in the formula)
        ncols = min(S, i1) if is_causal and not plan.careful else S
        q = query[b][i0:i1]  # (lq, E)
        k = key[b][:ncols]  # (ncols, E)
        s = _scores(q, k.T, scale)  # (lq, ncols); k.T is a view, BLAS reads it transposed
        # A masked pair gets score + (-inf), as the additive mask: -inf for a finite score,
        # NaN for a NaN or +inf one (never hidden: the kernel's NaN rule), without a
        # warning. Scores are finite unless plan.careful, so copying -inf is the same.
        put = _add_minus_inf if plan.careful else _copy_minus_inf
        if is_causal and i0 + 1 < ncols:
            future = np.arange(i0, i1)[:, None] < np.arange(i0 + 1, ncols)  # (lq, ncols - i0 - 1)
            put(s[:, i0 + 1:], future)
        elif attn_mask is not None and attn_mask.dtype == np.bool_:
            put(s, ~attn_mask[b][i0:i1])
        elif attn_mask is not None:
            s += attn_mask[b][i0:i1]  # cast block by block if the mask has another dtype
        if not plan.no_shift:
            m = s.max(axis=-1, keepdims=True, initial=-np.inf)  # (lq, 1); -inf if S = 0
            m[m == -np.inf] = 0.0  # safe max: a row with nothing to attend keeps exp(-inf) = 0
            # s <= m, so s - m <= 0 can only overflow towards -inf, and only where the exact
            # difference is below -(largest float): its exp underflows to 0 anyway, which is
            # exp(-inf), so the result is exact. For finite scores m is finite (a -inf row max
            # became 0 above), so no inf - inf = NaN arises; a +inf score still gives NaN.
            with np.errstate(over="ignore"):
                s -= m
        np.exp(s, out=s)  # (lq, ncols)
        o = s @ value_1[b][:ncols]  # (lq, Ev + 1), both scaled by value_scale
        total = o[:, Ev:]  # (lq, 1): the row sums of exp, times value_scale
        np.divide(o[:, :Ev], total, out=output[b][i0:i1], where=total != 0)
        nothing = (total == 0)[:, 0]  # a query with no key: zeros, or 0 * value = NaN
        output[b][i0:i1][nothing] = o[nothing, :Ev] if plan.careful else 0.0

    rows = max(1, min(_FAST_BLOCK_ROWS, _FAST_BLOCK_BYTES // (max(S, 1) * dtype.itemsize)))
    jobs = [(b, i0, min(i0 + rows, L)) for b in np.ndindex(batch) for i0 in range(0, L, rows)]
    if sys.platform == "emscripten":  # Pyodide in a browser: no threads, so no pool
        for job in jobs:
            one_block(job)
        return output
    executor, blas = _thread_pool()
    pending, lock = iter(jobs), threading.Lock()  # shared: a free worker takes the next job

    def drain():
        while True:
            with lock:
                job = next(pending, None)
            if job is None:
                return
            one_block(job)

    with _one_blas_thread(blas):  # one BLAS thread per worker, restored after the last call
        # The calling thread is one of the workers: one thread wake-up per helper per call,
        # not one per job (waking a thread costs about as much as a small block's work).
        helpers = [executor.submit(drain) for _ in range(min(_n_workers(), len(jobs)) - 1)]
        try:
            drain()
        finally:
            for helper in helpers:
                if not helper.cancel():  # a helper that never started has nothing to do
                    helper.result()  # waits; re-raises an exception from a helper
    return output
