"""The fast path of scaled dot-product attention: the same function as the plain path, on threads.

:func:`lib.attention.scaled_dot_product_attention` dispatches here when it is not asked
for the weights and the score matrix is large (at least ``FAST_PATH_MIN_SCORES`` scores),
as PyTorch's ``scaled_dot_product_attention`` chooses among its math, flash and
memory-efficient backends. :func:`fast_attention` computes the same function as the plain
path of ``lib/attention.py``, ``softmax(query @ key.T * scale + mask) @ value``, with the
same handling of masks and of queries that may attend to no key; it differs only by
rounding, and ``tests/test_attention.py`` checks the two against each other. What makes
it faster:

- query blocks run on a pool of threads (NumPy releases the GIL inside BLAS and ufuncs),
  the calling thread being one of the workers, with one BLAS thread each;
- every elementwise pass works in place on one block of scores;
- the row sums come out of the second matrix product (a column of ones appended to V);
- causal attention skips the keys after each block's last query;
- the max-shift pass is skipped when the Cauchy-Schwarz inequality bounds every score of
  a block by ``FAST_PATH_NO_SHIFT_BOUND`` (then ``exp`` can neither overflow nor leave
  the normal range, and the shift changes no weight in exact arithmetic).

The limit of one BLAS thread is process-wide while a call runs (threadpoolctl): BLAS
calls that other threads make meanwhile also get one thread. The pool is started on
first use and forgotten in a child made by ``fork`` (whose copy of the parent has no
helper threads). Timings, a pass-by-pass profile, and what was tried: benchmarks/README.md.

This module does not import ``lib.attention``: it receives inputs that
``scaled_dot_product_attention`` has already validated and converted.

References
----------
.. [1] PyTorch documentation, ``torch.nn.functional.scaled_dot_product_attention`` (the
       choice among backends that compute the same function).
       https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
.. [2] T. Dao et al., "FlashAttention: fast and memory-efficient exact attention with
       IO-awareness", NeurIPS 2022 (blocks of queries on parallel workers).
       https://arxiv.org/abs/2205.14135
"""

import os
import threading

import numpy as np

__all__ = ["FAST_PATH_MIN_SCORES", "FAST_PATH_NO_SHIFT_BOUND", "fast_attention"]

FAST_PATH_MIN_SCORES = 1 << 16  # below this many scores per call, threads cost more than they save
# Largest score bound for which exp needs no shift: e**40 ~ 2e17 (float32 overflows at
# e**88.7) and e**-40 ~ 4e-18 is far from the subnormals; float64 overflows at e**709.
FAST_PATH_NO_SHIFT_BOUND = {np.float32: 40.0, np.float64: 300.0, np.longdouble: 300.0}
_FAST_BLOCK_ROWS = 512  # query rows per task, at most ...
_FAST_BLOCK_BYTES = 16 << 20  # ... and at most this many bytes of scores per task


# ------------------------------------------------------------------------ the thread pool
_executor = None
_blas_controller = None


def _n_workers():
    """The number of cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _thread_pool():
    """A process-wide pool of helper threads (one per core but the caller's), and a
    handle to limit BLAS threads."""
    global _executor, _blas_controller
    if _executor is None:
        from concurrent.futures import ThreadPoolExecutor

        from threadpoolctl import ThreadpoolController

        _executor = ThreadPoolExecutor(max_workers=max(1, _n_workers() - 1),
                                       thread_name_prefix="attention")
        _blas_controller = ThreadpoolController()
    return _executor, _blas_controller


def _forget_thread_pool():
    """In a child made by fork the parent's helper threads do not exist: start afresh."""
    global _executor, _blas_controller
    _executor = _blas_controller = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_thread_pool)


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
        Boolean (True = may attend) or of the compute dtype (added to the scaled scores);
        None when ``is_causal``.
    is_causal : bool
        Query ``i`` attends keys ``j <= i`` only (top-left aligned).
    scale : float
        Factor applied to ``query @ key.T``, a Python float or a scalar of the compute
        dtype.

    Returns
    -------
    ndarray, shape (..., L, Ev), the compute dtype
        Zeros in the row of a query that may attend to no key.

    Notes
    -----
    Nothing is checked here: inputs come from ``scaled_dot_product_attention``, which
    validates them, converts them to the compute dtype and returns the result in the
    input dtype. Call that function, not this one.

    Each task takes a block of query rows of one batch element, forms its scores
    against all S keys (only the keys up to the block's last query when causal),
    applies the mask, exponentiates in place and multiplies by ``[value, 1]``: the last
    column of that product is the row sum of the exponentials, by which the other
    columns are divided. The shift by the row maximum is the safe one of
    :func:`lib.attention.softmax` (0 for a row with nothing to attend to), and is
    skipped when ``|scale| * max_i |q_i| * max_j |k_j|`` (Cauchy-Schwarz) is at most
    ``FAST_PATH_NO_SHIFT_BOUND``.

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
    query = np.broadcast_to(query, batch + (L, E))  # views: nothing is copied
    key = np.broadcast_to(key, batch + (S, E))
    value_1 = np.empty(batch + (S, Ev + 1), dtype=dtype)  # (..., S, Ev + 1)
    value_1[..., :Ev] = value
    value_1[..., Ev] = 1.0  # the last column of weights @ value_1 is the row sum
    if attn_mask is not None:
        attn_mask = np.broadcast_to(attn_mask, batch + (L, S))
    output = np.empty(batch + (L, Ev), dtype=dtype)  # (..., L, Ev)
    no_shift_below = FAST_PATH_NO_SHIFT_BOUND[dtype.type]
    shift_needed = attn_mask is not None and attn_mask.dtype != np.bool_  # a float mask

    def one_block(job):
        b, i0, i1 = job  # batch index, query rows [i0, i1)
        ncols = min(S, i1) if is_causal else S  # causal: later keys are masked for every row
        q = query[b][i0:i1]  # (lq, E)
        k = key[b][:ncols]  # (ncols, E)
        s = (q * scale) @ k.T  # (lq, ncols); k.T is a view, BLAS reads it transposed
        if is_causal and i0 + 1 < ncols:
            future = np.arange(i0, i1)[:, None] < np.arange(i0 + 1, ncols)  # (lq, ncols - i0 - 1)
            np.copyto(s[:, i0 + 1:], -np.inf, where=future)
        elif attn_mask is not None and attn_mask.dtype == np.bool_:
            np.copyto(s, -np.inf, where=~attn_mask[b][i0:i1])
        elif attn_mask is not None:
            s += attn_mask[b][i0:i1]
        # Cauchy-Schwarz bounds every score of the block: |z_ij| <= |scale| |q_i| |k_j|. Where
        # the bound is small, exp(z) can neither overflow nor leave the normal range, so the
        # max-shift pass is skipped: softmax is the same with or without it (up to rounding).
        # A squared norm that overflows is inf, and NaN or inf inputs give a NaN or inf bound:
        # each keeps the shift, so ignoring the overflow is safe. The product is taken in
        # Python floats, where inf and 0 * inf = NaN raise no warning (NaN also keeps it).
        with np.errstate(over="ignore"):
            q_sq = float(np.einsum("le,le->l", q, q).max(initial=0.0))  # largest |q_i|^2
            k_sq = float(np.einsum("se,se->s", k, k).max(initial=0.0))  # largest |k_j|^2
        bound = abs(float(scale)) * q_sq ** 0.5 * k_sq ** 0.5
        if shift_needed or not bound <= no_shift_below:
            m = s.max(axis=-1, keepdims=True, initial=-np.inf)  # (lq, 1); -inf if S = 0
            m[m == -np.inf] = 0.0  # safe max: a row with nothing to attend keeps exp(-inf) = 0
            # s <= m, so s - m <= 0 can only overflow towards -inf, and only where the exact
            # difference is below -(largest float): its exp underflows to 0 anyway, which is
            # exp(-inf), so the result is exact. For finite scores m is finite (a -inf row max
            # became 0 above), so no inf - inf = NaN arises; a +inf score still gives NaN.
            with np.errstate(over="ignore"):
                s -= m
        np.exp(s, out=s)  # (lq, ncols)
        o = s @ value_1[b][:ncols]  # (lq, Ev + 1)
        total = o[:, Ev:]  # (lq, 1): the row sums of exp
        np.divide(o[:, :Ev], total, out=output[b][i0:i1], where=total != 0)
        output[b][i0:i1][(total == 0)[:, 0]] = 0.0  # a query with no key: zeros

    rows = max(1, min(_FAST_BLOCK_ROWS, _FAST_BLOCK_BYTES // (max(S, 1) * dtype.itemsize)))
    jobs = [(b, i0, min(i0 + rows, L)) for b in np.ndindex(batch) for i0 in range(0, L, rows)]
    executor, blas = _thread_pool()
    pending, lock = iter(jobs), threading.Lock()  # shared: a free worker takes the next job

    def drain():
        while True:
            with lock:
                job = next(pending, None)
            if job is None:
                return
            one_block(job)

    with blas.limit(limits=1, user_api="blas"):  # one BLAS thread per worker
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
