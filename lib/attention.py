"""Scaled dot-product attention in NumPy: the kernel every notebook of the course imports.

The file reads top to bottom like the course: a stable softmax, the two masks
(causal and padding), then scaled dot-product attention itself,

    Attention(Q, K, V) = softmax(Q K^T * scale + mask) V,    scale = 1 / sqrt(E),

written as the formula reads (the plain path), multi-head attention built on it, and a
memory-efficient variant that never forms the L x S score matrix (the online softmax of
Milakov & Gimelshein [3]_ and FlashAttention [4]_). The computing lines carry the
shape of their result as a comment. When the weights are not asked for and the score
matrix is large, ``scaled_dot_product_attention`` hands the call to
``lib.fast_attention.fast_attention``, which computes the same function on threads.
Everything uses the argument names and conventions of PyTorch's
``torch.nn.functional.scaled_dot_product_attention`` [2]_: ``query`` (..., L, E),
``key`` (..., S, E), ``value`` (..., S, Ev); a boolean ``attn_mask`` means
True = may attend; ``is_causal`` aligns the causal mask to the top-left corner.

Each public function checks its arguments in one call on its first line
(``lib/_checks.py`` holds every check and error message), so what follows it is the
mathematics.

Rows of NumPy arrays are vectors here (a query is a row of ``query``), whereas the
book's mathematics writes vectors as columns; the formulas agree because
``Q K^T`` pairs rows with rows either way.

References
----------
.. [1] A. Vaswani et al., "Attention is all you need", NeurIPS 2017, Eq. (1).
       https://arxiv.org/abs/1706.03762
.. [2] PyTorch documentation, ``torch.nn.functional.scaled_dot_product_attention``
       (its "reference implementation" in Python is the model for the plain path; that
       one gives NaN for a query that may attend to no key, where PyTorch itself, since
       2.5, and this kernel give zeros: see ``softmax``).
       https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
.. [3] M. Milakov and N. Gimelshein, "Online normalizer calculation for softmax", 2018.
       https://arxiv.org/abs/1805.02867
.. [4] T. Dao et al., "FlashAttention: fast and memory-efficient exact attention with
       IO-awareness", NeurIPS 2022. https://arxiv.org/abs/2205.14135
"""

import numpy as np

from lib._checks import (check_attention, check_causal_mask, check_memory_efficient,
                         check_multi_head, check_padding_mask, check_softmax)
from lib.fast_attention import (FAST_PATH_MIN_SCORES, _add_minus_inf, _copy_minus_inf, _plan,
                                 fast_attention)

__all__ = ["softmax", "causal_mask", "padding_mask", "scaled_dot_product_attention",
           "multi_head_attention", "memory_efficient_attention"]


# ---------------------------------------------------------------------------- softmax
def softmax(x, axis=-1, where=None):
    r"""Numerically stable softmax along one axis, with an optional boolean mask.

    .. math:: \operatorname{softmax}(x)_i = \frac{e^{x_i - m}}{\sum_j e^{x_j - m}},
              \qquad m = \max_j x_j

    Parameters
    ----------
    x : array_like, shape (...) with at least one axis
        Logits. Floating dtypes are preserved (float16 is computed in float32 and
        returned as float16); integer input is converted to float64. A 0-d array (or a
        bare number) has no axis to normalise over and is refused.
    axis : int, tuple of int or None, default -1
        Axis (or axes) to normalise over; for attention this is the key axis S. Any
        integer type (Python or NumPy, not bool), negative counting from the end;
        None normalises over all axes.
    where : array_like of bool, optional
        Broadcastable to ``x.shape``; True marks the entries that take part.
        Entries outside ``where`` get weight exactly 0, whatever their value in ``x``
        (even NaN or inf).

    Returns
    -------
    ndarray, same shape as ``x``
        Nonnegative weights; every slice along ``axis`` sums to 1, except a slice with
        nothing to normalise (all entries masked out or equal to -inf, or empty),
        which is all zeros. No warning is emitted in that case.

    Raises
    ------
    TypeError
        If ``x`` is boolean, complex, string or object, ``where`` is not boolean, or
        ``axis`` is not an integer, a tuple of integers or None.
    ValueError
        If ``where`` does not broadcast to the shape of ``x``, or ``axis`` names an
        axis twice.
    numpy.exceptions.AxisError
        If ``axis`` is out of range for ``x``, or ``x`` is 0-d (a subclass of ValueError).

    Notes
    -----
    Subtracting the maximum ``m`` of each slice before exponentiating is exact in
    real arithmetic, because the factor :math:`e^{-m}` cancels between numerator
    and denominator, and it makes the computation safe in floating point: the
    largest exponent is :math:`e^0 = 1`, so nothing overflows, and the denominator
    is at least 1, so nothing divides by zero. This is the shift used by
    ``scipy.special.softmax`` and ``scipy.special.logsumexp``. For finite input
    every difference :math:`x_i - m` is at most 0; one too negative for the dtype
    (as in ``[1e308, -1e308]``) rounds to -inf, and its weight
    :math:`e^{x_i - m} < e^{-10^{308}}` rounds to exactly the 0 that
    :math:`e^{-\infty}` gives, so the result is still exact and no warning is raised.

    A slice whose maximum is -inf (all -inf, all masked, or empty) would give
    ``-inf - (-inf) = nan``; there the shift is taken as 0 instead, every term is
    ``exp(-inf) = 0``, and the slice is returned as zeros. This matches PyTorch >= 2.5,
    whose ``scaled_dot_product_attention`` returns zeros for a query that may attend
    to no key since its private ``_safe_softmax`` was added and called from SDPA
    (pull requests #131060 and #133882) [3]_. The Python
    "reference implementation" on PyTorch's SDPA documentation page uses a plain
    ``torch.softmax`` and gives NaN for such a row. A slice holding +inf or NaN among its
    entries taking part returns NaN (as NumPy, SciPy and PyTorch do): the kernel
    does not hide bad input.

    References
    ----------
    .. [1] SciPy, ``scipy.special.softmax`` and ``scipy.special.logsumexp``.
    .. [2] J. S. Bridle, "Probabilistic interpretation of feedforward classification
           network outputs", 1990 (the name softmax).
    .. [3] PyTorch pull request #131060, "Add a private _safe_softmax", and #133882,
           "Update fused kernels and call _safe_softmax from SDPA" (PyTorch 2.5).
           https://github.com/pytorch/pytorch/pull/131060

    Examples
    --------
    >>> import numpy as np
    >>> from lib.attention import softmax
    >>> softmax(np.array([1000.0, 1000.0]))          # a naive exp overflows here
    array([0.5, 0.5])
    >>> softmax(np.array([1e308, 1e308, -1e308]))   # x - m overflows: the weight is still 0
    array([0.5, 0.5, 0. ])
    >>> softmax(np.array([[0.0, 1.0, 2.0]]), where=np.array([True, True, False]))
    array([[0.26894142, 0.73105858, 0.        ]])
    >>> softmax(np.array([-np.inf, -np.inf]))       # nothing to normalise: zeros
    array([0., 0.])
    """
    work, axis, out_dtype = check_softmax(x, axis, where)  # (...), masked entries -inf
    m = np.max(work, axis=axis, keepdims=True, initial=-np.inf)  # (...) with 1 along axis
    m = np.where(m == -np.inf, 0.0, m).astype(work.dtype)  # safe shift for empty slices
    # work <= m, so work - m <= 0 can only overflow towards -inf (e.g. -1e308 - 1e308), and
    # only where the exact difference is below -(largest float): its exp underflows to 0,
    # which is exp(-inf), so ignoring that overflow leaves the result exact. m is finite
    # unless a slice holds +inf or NaN (documented: NaN), so finite input gives no inf - inf.
    with np.errstate(over="ignore"):
        shifted = work - m  # (...), <= 0
    e = np.exp(shifted, out=shifted)  # (...), in [0, 1]; in place: no extra n x n array
    total = np.sum(e, axis=axis, keepdims=True)  # >= 1; 0 for an empty slice; NaN stays NaN
    out = np.divide(e, total, out=np.zeros_like(e), where=total != 0)  # (...)
    return out.astype(out_dtype, copy=False)


# ------------------------------------------------------------------------------ masks
def causal_mask(L, S=None):
    """Boolean causal mask: query ``i`` may attend to key ``j`` when ``j <= i``.

    Parameters
    ----------
    L : int
        Number of queries (rows), ``L >= 0``: a Python int or a NumPy integer (not bool,
        not a float such as ``3.0``).
    S : int, optional
        Number of keys (columns), the same kinds of integer; defaults to ``L``.

    Returns
    -------
    ndarray of bool, shape (L, S)
        True on and below the main diagonal (True = may attend). For ``L != S`` the
        diagonal starts at the top-left corner, as PyTorch's ``is_causal=True``
        does (``torch.ones(L, S).tril()``).

    Raises
    ------
    ValueError
        If ``L`` or ``S`` is not a nonnegative integer, or the mask would have more
        entries than NumPy can index (``np.iinfo(np.intp).max``).

    References
    ----------
    .. [1] A. Vaswani et al., "Attention is all you need", 2017, Sec. 3.2.3.
    .. [2] PyTorch documentation, ``torch.nn.functional.scaled_dot_product_attention``.

    Examples
    --------
    >>> from lib.attention import causal_mask
    >>> causal_mask(3)
    array([[ True, False, False],
           [ True,  True, False],
           [ True,  True,  True]])
    >>> causal_mask(2, 3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0]])
    """
    L, S = check_causal_mask(L, S)
    return np.tri(L, S, dtype=bool)  # (L, S)


def padding_mask(lengths, S):
    """Boolean key-padding mask: position ``j`` of sequence ``n`` is real when ``j < lengths[n]``.

    Parameters
    ----------
    lengths : array_like of int, shape (N,)
        True length of each of ``N`` sequences padded to ``S`` positions;
        ``0 <= lengths[n] <= S``. Integers of any kind (Python ints of any size, NumPy
        integers); an empty list gives N = 0.
    S : int
        Padded length (number of key positions): a Python int or a NumPy integer.

    Returns
    -------
    ndarray of bool, shape (N, S)
        True where a key is real (True = may attend). To mask keys in attention
        over inputs shaped (N, H, L, E), use ``padding_mask(lengths, S)[:, None, None, :]``,
        which broadcasts to (N, H, L, S).

    Raises
    ------
    TypeError
        If ``lengths`` holds anything but integers (floats such as ``2.0``, booleans).
    ValueError
        If ``lengths`` is not one-dimensional, a length lies outside ``[0, S]`` (the
        message names it), ``S`` is not a nonnegative integer, or the mask would have
        more entries than NumPy can index.

    References
    ----------
    .. [1] PyTorch documentation, ``torch.nn.MultiheadAttention`` (``key_padding_mask``;
           note that PyTorch's key padding mask uses the opposite polarity,
           True = ignore).

    Examples
    --------
    >>> from lib.attention import padding_mask
    >>> padding_mask([3, 1], 4).astype(int)
    array([[1, 1, 1, 0],
           [1, 0, 0, 0]])
    >>> padding_mask([], 4).shape                 # no sequences
    (0, 4)
    """
    lengths, S = check_padding_mask(lengths, S)  # (N,), integers in [0, S]
    return np.arange(S) < lengths[:, None]  # (N, S)


# -------------------------------------------------------- scaled dot-product attention
def scaled_dot_product_attention(query, key, value, attn_mask=None, *, is_causal=False,
                                 scale=None, return_weights=False):
    r"""Scaled dot-product attention: ``softmax(query @ key.T * scale + mask) @ value``.

    .. math:: \operatorname{Attention}(Q, K, V)
              = \operatorname{softmax}\!\Big(\frac{Q K^\top}{\sqrt{E}}\Big) V

    Parameters
    ----------
    query : array_like, shape (..., L, E)
        L queries of E features each.
    key : array_like, shape (..., S, E)
        S keys, with the same E as the queries.
    value : array_like, shape (..., S, Ev)
        One value row of Ev features per key.
        The leading axes ``...`` of query, key and value broadcast against each other.
    attn_mask : array_like, optional, shape broadcastable to (..., L, S)
        Boolean: True = query ``i`` may attend to key ``j`` (PyTorch's convention); it
        acts as the additive mask 0 (True) / ``-inf`` (False).
        Floating, of any float dtype: added to the scaled scores (use ``-np.inf`` to
        forbid a pair); it is cast to the compute dtype where it is added.
    is_causal : bool, default False
        If True, query ``i`` attends keys ``j <= i`` only (``causal_mask(L, S)``,
        top-left aligned as in PyTorch). Cannot be combined with ``attn_mask``.
    scale : real number, optional
        Factor applied to ``query @ key.T``; defaults to ``1 / sqrt(E)``. Any real
        number type: a Python int (of any size) or float, a ``fractions.Fraction``, a
        NumPy integer or floating scalar (not bool). It is converted to the compute
        dtype, where it must be finite, and nonzero unless it is exactly 0. Applied
        where it cannot overflow (Notes, *Order of operations*).
    return_weights : bool, default False
        Also return the attention weights.

    Returns
    -------
    output : ndarray, shape (..., L, Ev)
        Row ``i`` is ``sum_j weights[i, j] * value[j]``: a convex combination of the
        value rows, except for a query that may attend to no key (fully masked row, or
        S = 0), whose weights and output row are zeros.
    weights : ndarray, shape (..., L, S)
        Only if ``return_weights``. Nonnegative; each row sums to 1, except the row
        of a query with no key to attend to, which is all zeros (and so is its output
        row), as PyTorch >= 2.5 returns (its ``_safe_softmax``; see :func:`softmax`).

    Dtypes: float32 in gives float32 out, float64 gives float64; float16 is computed
    in float32 and returned as float16; integer input is treated as float64; mixed
    inputs follow ``np.result_type``. Inputs are never modified.

    Raises
    ------
    ValueError
        If an input has fewer than 2 axes; query and key differ in E; key and value
        differ in S; the leading axes do not broadcast; ``attn_mask`` does not
        broadcast to (..., L, S); both ``attn_mask`` and ``is_causal`` are given;
        ``scale`` is NaN or infinite, or is infinite or 0 once converted to the compute
        dtype (``1e39`` or ``1e-46`` for float32 inputs, ``10**400`` or
        ``Fraction(1, 10**400)`` for float32 and float64; an explicit 0 is allowed); or
        E = 0 with no ``scale``. The message names the shapes or dtypes involved.
    TypeError
        If an input is complex, boolean, string or object; ``attn_mask`` is neither
        boolean nor floating; or ``scale`` is not a real number (a bool, a complex, a
        string, an array).

    Notes
    -----
    This is the plain path: it forms the (..., L, S) score matrix, then softmax,
    then a second matrix product, exactly as the formula reads. Called without
    ``return_weights`` on at least ``FAST_PATH_MIN_SCORES`` scores, it
    returns :func:`lib.fast_attention.fast_attention` instead, the same function
    computed on blocks of queries in parallel (equal to rounding, below). Dividing by
    :math:`\sqrt{E}` keeps the variance of a score near 1 when the entries of query
    and key are independent with **mean 0** and variance 1: each product
    :math:`q_e k_e` then has variance 1, and their sum over E features variance E
    [1]_. The zero mean matters: with entries of mean 1 and variance 1 a product has
    variance :math:`E[q^2]E[k^2] - 1 = 3`, so a scaled score has variance about 3 (and
    mean :math:`\sqrt{E}`). The softmax is the stable one of :func:`softmax` (see its
    Notes).

    *Order of operations.* The scores are ``query @ key.T * scale``; in floating
    point the order of the two steps matters where one of them would leave the range
    of the dtype, so every path applies the scale where it cannot overflow. With
    ``|scale| <= 1`` (the default ``1 / sqrt(E)`` among them) the query is scaled
    first, ``(query * scale) @ key.T``: scaling down cannot overflow, whereas
    ``query @ key.T`` could pass the largest float where the scaled score does not.
    With ``|scale| > 1`` the product comes first, ``(query @ key.T) * scale``: there
    ``query * scale`` could overflow where the score does not (float64 queries of
    1e300 and keys of 1e-20 with scale 1e10 give scores near 1e290; float32 queries of
    1e37 with scale 100 likewise). Either way a score overflows only where its exact
    value, or an exact partial sum of its E products, lies beyond the largest float:
    the range of the formula itself. (An entry of ``query * scale``, or a product
    :math:`q_e k_e`, that falls below the smallest normal number keeps fewer digits, as
    in any order; that moves a score by at most :math:`E \tau \max |k_{je}| / 2`, or
    :math:`E \tau\,|\text{scale}| / 2`, which is below :math:`4 E \varepsilon` for
    every finite key and scale, with :math:`\tau` and :math:`\varepsilon` as below.)
    PyTorch's CPU backends differ: its math backend (which 3-axis inputs take)
    multiplies both query and key by :math:`\sqrt{\text{scale}}` before the product
    [3]_, its flash kernel (4-axis inputs) scales the product [4]_. Within their
    ranges all give the formula's value to rounding; ``tests/test_edge_cases.py``
    compares this kernel with PyTorch at these magnitudes.

    *Threads.* The function may be called from any number of threads at once. Calls
    that take the fast path share one pool of helper threads, started once, and while
    any of them runs NumPy's BLAS is limited to one thread, process-wide; the limit
    found when the first of overlapping calls began is restored when the last one
    ends (``lib/fast_attention.py`` says how, and what it costs).

    *Non-finite input: one rule.* The kernel hides no NaN or infinity: it returns
    what the formula gives in IEEE arithmetic, with a boolean mask (and
    ``is_causal``) acting as the additive mask 0 / -inf, and a row whose scores are
    all -inf giving zero weights. So a NaN or +inf score makes its row of weights NaN
    even where the mask forbids the pair (NaN + (-inf) is NaN), and a NaN or infinite
    ``value[j, c]`` makes column c of every output row non-finite, including rows
    whose weight for key j is 0 and fully masked rows (0 * NaN is NaN). Hence a NaN in
    query row i spoils output row i; in key row j, every row; in ``value[j, c]``,
    column c of every row. PyTorch's ``scaled_dot_product_attention`` does the same
    (checked with 2.13 on CPU, ``tests/test_edge_cases.py``).

    *The three paths agree.* The fast path and :func:`memory_efficient_attention`
    follow the same rule (they skip keys that cannot change the result, the causal
    future, only when no score and no value is NaN or infinite), and for finite input
    they give the plain path's result to rounding: for every output entry,

    .. math:: |o'_{ic} - o_{ic}| \le 4\,(E\,(b + 1) + S + 4)\,\varepsilon
              \sum_j w_{ij} |v_{jc}| \;+\; 4 S\,(16 S + \max_j |v_{jc}|)\,\tau,

    with :math:`b = |\text{scale}| \max_i \lVert q_i \rVert \max_j \lVert k_j \rVert`,
    :math:`\varepsilon` the dtype's machine epsilon and :math:`\tau` its smallest
    subnormal number (the second term matters only for subnormal weights or
    results). Where the plain result is not finite, theirs is not finite in the same
    entries (unless a score or sum lands within rounding of the largest float, where
    the order of a sum decides). ``tests/test_edge_cases.py`` checks this bound with hypothesis over
    extreme magnitudes.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention is all you need", NeurIPS 2017, Sec. 3.2.1.
    .. [2] PyTorch documentation, ``torch.nn.functional.scaled_dot_product_attention``.
    .. [3] PyTorch source, ``aten/src/ATen/native/transformers/attention.cpp``,
           ``_scaled_dot_product_attention_math`` ("Scale q, k before matmul for
           stability"). https://github.com/pytorch/pytorch
    .. [4] PyTorch source, ``aten/src/ATen/native/cpu/FlashAttentionKernel.cpp``,
           ``_scale_attn_mask_fusion_kernel`` (``out = val * a + b``: the scale times
           the product, plus the mask). https://github.com/pytorch/pytorch

    Examples
    --------
    >>> import numpy as np
    >>> from lib.attention import scaled_dot_product_attention
    >>> query = np.array([[1.0, 0.0]])                       # L=1, E=2
    >>> key = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # S=3, E=2
    >>> value = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])  # S=3, Ev=2
    >>> out, weights = scaled_dot_product_attention(query, key, value, return_weights=True)
    >>> weights.round(4), weights.sum()
    (array([[0.4011, 0.1978, 0.4011]]), np.float64(1.0))
    >>> out.round(4)
    array([[0.8022, 0.7967]])
    >>> scaled_dot_product_attention(query, key, value, is_causal=True)  # only key 0
    array([[1., 0.]])
    """
    query, key, value, attn_mask, scale, out_dtype = check_attention(
        query, key, value, attn_mask, is_causal, scale)
    L, S = query.shape[-2], key.shape[-2]
    n_scores = L * S * int(np.prod(np.broadcast_shapes(query.shape[:-2], key.shape[:-2])))
    if not return_weights and n_scores >= FAST_PATH_MIN_SCORES:  # the same function, faster
        return fast_attention(query, key, value, attn_mask, is_causal, scale).astype(
            out_dtype, copy=False)

    # The plain path: the formula, one line per step.
    if is_causal:
        attn_mask = causal_mask(L, S)  # (L, S)
    if attn_mask is not None and attn_mask.dtype == np.bool_:
        zero, minus_inf = query.dtype.type(0), query.dtype.type(-np.inf)  # not float64
        attn_mask = np.where(attn_mask, zero, minus_inf)  # (..., L, S): the additive mask 0 / -inf
    key_t = np.swapaxes(key, -1, -2)  # (..., E, S), a view
    if abs(scale) <= 1:  # query @ key.T * scale, the scale where it cannot overflow (Notes)
        scores = (query * scale) @ key_t  # (..., L, S)
    else:
        scores = (query @ key_t) * scale  # (..., L, S)
    if attn_mask is not None:
        with np.errstate(invalid="ignore"):  # +inf + -inf = NaN: bad input stays visible
            scores = scores + attn_mask.astype(scores.dtype, copy=False)  # (..., L, S)
    weights = softmax(scores, axis=-1)  # (..., L, S); -inf -> 0, a row of -inf -> zeros
    output = weights @ value  # (..., L, Ev)

    output = output.astype(out_dtype, copy=False)
    if return_weights:
        return output, weights.astype(out_dtype, copy=False)
    return output


# ------------------------------------------------------------------ multi-head attention
def multi_head_attention(query, key, value, num_heads, *, w_q, w_k, w_v, w_o, b_q=None,
                         b_k=None, b_v=None, b_o=None, attn_mask=None, is_causal=False,
                         scale=None, return_weights=False):
    r"""Multi-head attention: project, split into heads, attend, concatenate, project.

    .. math::
        \operatorname{head}_h = \operatorname{Attention}(X_q W_Q^{(h)}, X_k W_K^{(h)},
        X_v W_V^{(h)}), \qquad
        \operatorname{MultiHead} = [\operatorname{head}_0, \dots,
        \operatorname{head}_{H-1}] \, W_O

    where :math:`W_Q^{(h)}` is the block of columns ``h*d : (h+1)*d`` of ``w_q``.

    Parameters
    ----------
    query : array_like, shape (..., L, Dq)
        The sequence the queries come from (for self-attention, the same array as
        ``key`` and ``value``).
    key : array_like, shape (..., S, Dk)
    value : array_like, shape (..., S, Dv)
    num_heads : int
        H, which must divide both E and Ev: a Python int or a NumPy integer (not bool).
    w_q, w_k : array_like, shapes (Dq, E) and (Dk, E)
        Projections, applied on the right as in the book (``Q = query @ w_q``).
        PyTorch stores the transposes: ``in_proj_weight`` rows are ``w_q.T``.
    w_v : array_like, shape (Dv, Ev)
    w_o : array_like, shape (Ev, Do)
        Output projection applied to the concatenated heads.
    b_q, b_k, b_v, b_o : array_like, optional, shapes (E,), (E,), (Ev,), (Do,)
        Biases added after each projection (zero when omitted).
    attn_mask : array_like, optional
        As in :func:`scaled_dot_product_attention` (boolean True = may attend, or
        floating and added to the scores), in one of three forms:

        - broadcastable to (..., L, S), with at most as many axes as ``query``: the
          same mask for every head (e.g. (L, S), or (N, L, S) per batch element);
        - broadcastable to (..., H, L, S), one axis more than ``query``: one mask per
          head (e.g. (H, L, S) for a query (L, Dq), or (N, H, L, S) for (N, L, Dq));
        - PyTorch's (N * H, L, S) for a query (N, L, Dq) and H > 1: head ``h`` of batch
          element ``n`` uses ``attn_mask[n * H + h]``, as in
          ``torch.nn.MultiheadAttention``.

        So an (H, L, S) mask is per head for an unbatched query, and per batch element
        when the query has a batch axis N = H: give a batched per-head mask as
        (N, H, L, S) or (N * H, L, S).
    is_causal : bool, default False
    scale : real number, optional
        Defaults to ``1 / sqrt(E / H)``, the head size, as in PyTorch. Any real number
        type, as in :func:`scaled_dot_product_attention`.
    return_weights : bool, default False
        Also return every head's attention weights.

    Returns
    -------
    output : ndarray, shape (..., L, Do)
    weights : ndarray, shape (..., H, L, S)
        Only if ``return_weights``.

    Raises
    ------
    ValueError
        If ``num_heads`` is not a positive integer dividing E and Ev, a projection's
        shape does not fit its input, a bias has the wrong shape, key and value differ
        in S, the leading axes do not broadcast, ``attn_mask`` fits none of the forms
        above, or ``scale`` is invalid (see :func:`scaled_dot_product_attention`). The
        message names the shapes the caller passed.
    TypeError
        For complex, boolean, string or object inputs.

    Notes
    -----
    Splitting into heads is a reshape: the E columns of ``query @ w_q`` are cut into
    H consecutive blocks of ``d = E / H``, and each head attends with its own block.
    Each head's output row lies in the convex hull of its own (projected) value rows,
    except the row of a query that may attend to no key (a fully masked row, or
    S = 0), which is zero, as in :func:`scaled_dot_product_attention`, and a row that
    NaN or infinity reaches (its Notes give the rule). Concatenating the heads and
    multiplying by ``w_o`` mixes H such points, which is how several heads reach
    outputs that one head cannot.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention is all you need", NeurIPS 2017, Sec. 3.2.2.
    .. [2] PyTorch documentation, ``torch.nn.functional.multi_head_attention_forward``.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.attention import multi_head_attention
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((5, 8))                          # L = S = 5, D = 8
    >>> w_q, w_k, w_v, w_o = rng.standard_normal((4, 8, 8))       # E = Ev = Do = 8
    >>> out, weights = multi_head_attention(x, x, x, 2, w_q=w_q, w_k=w_k, w_v=w_v,
    ...                                     w_o=w_o, return_weights=True)
    >>> out.shape, weights.shape                                  # H = 2 heads of size 4
    ((5, 8), (2, 5, 5))
    """
    (query, key, value, H, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, attn_mask,
     out_dtype) = check_multi_head(query, key, value, num_heads, w_q, w_k, w_v, w_o, b_q, b_k,
                                   b_v, b_o, attn_mask)
    E, Ev = w_q.shape[1], w_v.shape[1]
    d, dv = E // H, Ev // H  # the width of a head's queries and keys, and of its values
    if scale is None:
        scale = 1.0 / np.sqrt(d) if d > 0 else None  # 1 / sqrt(d); d = 0: sdpa's error

    q = query @ w_q + b_q  # (..., L, E)
    k = key @ w_k + b_k  # (..., S, E)
    v = value @ w_v + b_v  # (..., S, Ev)
    q = np.swapaxes(q.reshape(q.shape[:-1] + (H, d)), -2, -3)  # (..., H, L, d)
    k = np.swapaxes(k.reshape(k.shape[:-1] + (H, d)), -2, -3)  # (..., H, S, d)
    v = np.swapaxes(v.reshape(v.shape[:-1] + (H, dv)), -2, -3)  # (..., H, S, dv)
    heads = scaled_dot_product_attention(q, k, v, attn_mask, is_causal=is_causal, scale=scale,
                                         return_weights=return_weights)
    heads, weights = heads if return_weights else (heads, None)  # (..., H, L, dv)
    concat = np.swapaxes(heads, -2, -3)  # (..., L, H, dv)
    concat = concat.reshape(concat.shape[:-2] + (Ev,))  # (..., L, Ev)
    output = (concat @ w_o + b_o).astype(out_dtype, copy=False)  # (..., L, Do)
    if return_weights:
        return output, weights.astype(out_dtype, copy=False)
    return output


# ------------------------------------------------------------ memory-efficient attention
MEMORY_EFFICIENT_MIN_QUERY_ROWS = 256  # queries per block at least: fewer Python-level steps


def _mask_block(attn_mask, is_causal, rows, cols, skip=True):
    """The mask of one (query block, key block) tile: None (all visible), a boolean or a
    floating array broadcastable to (..., len(rows), len(cols)), or False (all masked, and
    ``skip``: a tile that cannot change the result, as no score or value is NaN or inf)."""
    if is_causal:
        if cols.start > rows.stop - 1 and skip:
            return False  # the whole tile lies above the diagonal
        if cols.stop - 1 <= rows.start:
            return None  # the whole tile lies on or below the diagonal
        return (np.arange(rows.start, rows.stop)[:, None]
                >= np.arange(cols.start, cols.stop)[None, :])  # (lq, bk)
    if attn_mask is None:
        return None
    return attn_mask[..., rows, cols]  # a view of (..., lq, bk)


def _tile_scores(q, k, mask, scale, scale_first, put_minus_inf):
    """The scaled, masked scores of one tile: ``q @ k.T * scale + mask``, a new array."""
    s = q @ np.swapaxes(k, -1, -2)  # (..., lq, bk)
    if not scale_first:
        s *= scale  # the product first: query * scale could overflow
    if mask is not None and mask.dtype == np.bool_:  # as the additive mask 0 / -inf
        put_minus_inf(s, ~mask)  # in place
    elif mask is not None:
        s += mask  # a float mask of another dtype is cast tile by tile
    return s


def _online_softmax_step(m, ell, acc, s, v):
    """One step of the online softmax (Notes of :func:`memory_efficient_attention`): the
    running max ``m``, sum ``ell`` and output ``acc`` after the tile of scores ``s`` with
    values ``v``. Overwrites ``s`` (it becomes the tile's exponentials)."""
    m_new = np.maximum(m, s.max(axis=-1))  # (..., lq)
    shift = np.where(m_new == -np.inf, 0.0, m_new).astype(s.dtype)  # safe max
    # m <= shift and s <= shift, so both differences are <= 0 and can only overflow
    # towards -inf (e.g. -1e308 - 1e308), where the exact exp underflows to 0 anyway:
    # exp(-inf) = 0 is exact. For finite scores shift is finite: no inf - inf arises.
    with np.errstate(over="ignore"):
        decay = m - shift  # (..., lq), <= 0
        s -= shift[..., None]  # (..., lq, bk), <= 0
    alpha = np.exp(decay)  # (..., lq): e^(m - m'), 0 while the row had nothing
    p = np.exp(s, out=s)  # (..., lq, bk): e^(z - m'), in [0, 1]
    ell = alpha * ell + p.sum(axis=-1)  # (..., lq)
    acc = alpha[..., None] * acc + p @ v  # (..., lq, Ev)
    return m_new, ell, acc


def memory_efficient_attention(query, key, value, attn_mask=None, *, is_causal=False,
                               scale=None, block_size=None, return_lse=False):
    r"""Scaled dot-product attention computed block by block, never forming the L x S matrix.

    Same arguments, semantics, dtype rules, errors and rule for NaN and infinity as
    :func:`scaled_dot_product_attention`; the result agrees with its plain path to
    rounding, within the bound stated in its Notes.

    Parameters
    ----------
    query : array_like, shape (..., L, E)
    key : array_like, shape (..., S, E)
    value : array_like, shape (..., S, Ev)
    attn_mask : array_like, optional, broadcastable to (..., L, S)
        Boolean (True = may attend) or floating (added to the scaled scores).
    is_causal : bool, default False
        Query ``i`` attends keys ``j <= i``; key blocks wholly in the future are skipped.
    scale : real number, optional
        Defaults to ``1 / sqrt(E)``; any real number type, applied as in
        :func:`scaled_dot_product_attention` (Notes, *Order of operations*).
    block_size : int, optional
        Number of keys per block (default 512). Queries are processed in blocks of
        ``max(block_size, MEMORY_EFFICIENT_MIN_QUERY_ROWS)`` rows (256), so the extra memory is
        O(block_size * (block_size + E + Ev)) per batch element, independent of L and S
        (a float mask of another dtype is cast tile by tile, not copied). One exception:
        values so large that ``S * max|value|`` could overflow are first multiplied by a
        power of 2 (exact), a copy of ``value``. A Python int (of any size) or a NumPy
        integer, not bool.
    return_lse : bool, default False
        Also return the log-sum-exp of each row of the scaled, masked scores.

    Returns
    -------
    output : ndarray, shape (..., L, Ev)
        Zeros in the row of a query that may attend to no key.
    lse : ndarray, shape (..., L)
        Only if ``return_lse``: ``log(sum_j exp(scores[i, j]))`` over the keys query
        ``i`` may attend to; ``-inf`` for a query with none. Same dtype as ``output``,
        except float32 for float16 input.

    Raises
    ------
    ValueError, TypeError
        As :func:`scaled_dot_product_attention`; also ValueError if ``block_size`` is not
        a positive integer.

    Notes
    -----
    The online softmax [1]_ [2]_ [3]_ keeps, for every query row, a running maximum
    :math:`m`, a running sum :math:`\ell = \sum_j e^{z_j - m}` and an unnormalised
    output (accumulator) :math:`\mathrm{acc} = \sum_j e^{z_j - m} v_j`. A new block of
    scores :math:`z_B` with values :math:`V_B` updates them to

    .. math::
        m' = \max(m, \max_j z_{B,j}), \quad
        \ell' = e^{m - m'} \ell + \sum_j e^{z_{B,j} - m'}, \quad
        \mathrm{acc}' = e^{m - m'} \mathrm{acc} + \sum_j e^{z_{B,j} - m'} v_{B,j},

    and at the end :math:`o = \mathrm{acc} / \ell`, :math:`\operatorname{lse} = m + \log \ell`.
    The factor :math:`e^{m - m'}` rescales what was summed against the old maximum to
    the new one, so the result is exactly the softmax-weighted sum (in real
    arithmetic), while every exponent stays :math:`\le 0`. A row whose keys so far
    are all masked has :math:`m = -\infty`; the shift then uses 0 in place of
    :math:`m'` ("safe max"), so no :math:`-\infty - (-\infty)` NaN appears and the
    row keeps :math:`\ell = 0`, :math:`\mathrm{acc} = 0`, giving a zero output.
    An exponent too negative for the dtype (scores near -1e308 against a maximum near
    1e308) rounds to -inf, whose exponential is the exact 0 that the true one rounds to,
    as in :func:`softmax`.

    References
    ----------
    .. [1] M. Milakov and N. Gimelshein, "Online normalizer calculation for softmax",
           2018. https://arxiv.org/abs/1805.02867
    .. [2] M. N. Rabe and C. Staats, "Self-attention does not need O(n^2) memory",
           2021. https://arxiv.org/abs/2112.05682
    .. [3] T. Dao et al., "FlashAttention: fast and memory-efficient exact attention
           with IO-awareness", NeurIPS 2022. https://arxiv.org/abs/2205.14135

    Examples
    --------
    >>> import numpy as np
    >>> from lib.attention import memory_efficient_attention, scaled_dot_product_attention
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.standard_normal((3, 5, 4))                  # L = S = 5, E = Ev = 4
    >>> out, lse = memory_efficient_attention(q, k, v, is_causal=True, block_size=2,
    ...                                       return_lse=True)
    >>> bool(np.allclose(out, scaled_dot_product_attention(q, k, v, is_causal=True)))
    True
    >>> lse.shape
    (5,)
    """
    query, key, value, attn_mask, scale, out_dtype, block_size = check_memory_efficient(
        query, key, value, attn_mask, is_causal, scale, block_size)
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    L, S, Ev = query.shape[-2], key.shape[-2], value.shape[-1]
    if attn_mask is not None:
        attn_mask = np.broadcast_to(attn_mask, batch + (L, S))  # a view, no copy
    q_block = max(block_size, MEMORY_EFFICIENT_MIN_QUERY_ROWS)
    # Skip future tiles only if no NaN or inf can be in them; a power of 2 (exact) scales
    # value down when S * max|value| could overflow the accumulator (see fast_attention).
    plan = _plan(query, key, value, attn_mask, scale, allow_no_shift=False)
    scale_first = abs(scale) <= 1  # the scale where it cannot overflow, as _scores applies it
    put_minus_inf = _add_minus_inf if plan.careful else _copy_minus_inf  # NaN stays NaN
    if plan.value_scale != 1:
        value = value * plan.value_scale  # (..., S, Ev), a copy only for such huge values

    output = np.empty(batch + (L, Ev), dtype=query.dtype)  # (..., L, Ev)
    lse = np.empty(batch + (L,), dtype=query.dtype) if return_lse else None  # (..., L)
    for i0 in range(0, L, q_block):
        rows = slice(i0, min(i0 + q_block, L))
        lq = rows.stop - rows.start
        q = np.broadcast_to(query[..., rows, :], batch + (lq, query.shape[-1]))  # (..., lq, E)
        if scale_first:
            q = q * scale  # (..., lq, E), once per block of queries
        m = np.full(batch + (lq,), -np.inf, dtype=query.dtype)  # running max
        ell = np.zeros(batch + (lq,), dtype=query.dtype)  # running sum of exp
        acc = np.zeros(batch + (lq, Ev), dtype=query.dtype)  # running unnormalised output
        for j0 in range(0, S, block_size):
            cols = slice(j0, min(j0 + block_size, S))
            mask = _mask_block(attn_mask, is_causal, rows, cols, skip=not plan.careful)
            if mask is False:
                continue  # nothing here may be attended to
            s = _tile_scores(q, key[..., cols, :], mask, scale, scale_first, put_minus_inf)
            m, ell, acc = _online_softmax_step(m, ell, acc, s, value[..., cols, :])
            del s  # free this tile before the next one is allocated
        output[..., rows, :] = np.divide(acc, ell[..., None], out=np.zeros_like(acc),
                                         where=ell[..., None] != 0)  # (..., lq, Ev)
        if plan.careful:  # a query with no key: 0 * value, NaN where value is NaN or inf
            np.copyto(output[..., rows, :], acc, where=ell[..., None] == 0)
        if return_lse:
            with np.errstate(divide="ignore"):
                lse[..., rows] = m + np.log(ell)  # -inf where ell == 0
    if plan.value_scale != 1:
        output /= plan.value_scale  # undo the power of 2: exact
    output = output.astype(out_dtype, copy=False)
    if return_lse:
        return output, lse.astype(np.promote_types(out_dtype, np.float32), copy=False)
    return output
