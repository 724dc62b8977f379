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

import numbers

import numpy as np

from lib.fast_attention import (FAST_PATH_MIN_SCORES, _add_minus_inf, _copy_minus_inf, _plan,
                                 fast_attention)

__all__ = ["softmax", "causal_mask", "padding_mask", "scaled_dot_product_attention",
           "multi_head_attention", "memory_efficient_attention"]


# -------------------------------------------------------------- dtypes and scalars
_MAX_SIZE = int(np.iinfo(np.intp).max)  # the largest length NumPy can index


def _show(x):
    """``repr(x)`` for an error message, short even for a Python int of any size."""
    if isinstance(x, numbers.Integral) and not -10**30 < x < 10**30:
        bits = int(x).bit_length()
        return f"{'a negative' if x < 0 else 'an'} integer of {bits} bits (|n| >= 2**{bits - 1})"
    try:
        text = repr(x)
    except ValueError:  # e.g. a Fraction whose numerator has more digits than int -> str allows
        return f"a {type(x).__name__} too large to print"
    return text if len(text) <= 60 else text[:40] + "..." + text[-10:]


def _floating_input(x, name):
    """Return ``x`` as an array whose dtype the kernel accepts (ints become float64).

    Raises TypeError for bool, complex, string, object and other dtypes.
    Never copies a floating input, and never writes to it.
    """
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return x
    if x.dtype.kind in "iu":
        return x.astype(np.float64)
    raise TypeError(
        f"{name} must be a real floating or integer array, got dtype {x.dtype} "
        f"(shape {x.shape}); complex, boolean, string and object arrays are not supported"
    )


def _compute_dtype(dtype):
    """float16 (and other narrow floats) are computed in float32; wider ones as they are."""
    return np.promote_types(dtype, np.float32)


# ---------------------------------------------------------------------------- softmax
def _check_axis(axis, shape):
    """``axis`` as a tuple of distinct axes of an array of this shape, or the kernel's error."""
    if len(shape) == 0:
        raise np.exceptions.AxisError(
            "softmax normalises along an axis, but x is 0-d (shape ()): give an array with "
            "at least one axis, e.g. np.atleast_1d(x)")
    if axis is None:
        return tuple(range(len(shape)))
    axes = axis if isinstance(axis, tuple) else (axis,)
    for a in axes:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, numbers.Integral):
            raise TypeError(f"axis must be an integer or a tuple of integers, got {_show(axis)}")
        if not -len(shape) <= a < len(shape):
            raise np.exceptions.AxisError(
                f"axis {_show(a)} is out of range for x with shape {shape}")
    axes = tuple(int(a) % len(shape) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axis {axis!r} names an axis twice")
    return axes


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
    x = _floating_input(x, "x")
    axis = _check_axis(axis, x.shape)
    out_dtype = x.dtype
    work = x.astype(_compute_dtype(x.dtype), copy=False)  # never written to below
    if where is not None:
        where = np.asarray(where)
        if where.dtype != np.bool_:
            raise TypeError(f"where must be a boolean array, got dtype {where.dtype}")
        try:
            where = np.broadcast_to(where, work.shape)
        except ValueError:
            raise ValueError(
                f"where with shape {where.shape} does not broadcast to x with shape {work.shape}"
            ) from None
        work = np.where(where, work, -np.inf)  # masked entries cannot win the max
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
def _check_size(n, name):
    """``n`` as a Python int: a nonnegative integer that NumPy can index, or ValueError."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"{name} must be a nonnegative integer, got {_show(n)}")
    if n > _MAX_SIZE:
        raise ValueError(f"{name} = {_show(n)} is more than NumPy can index ({_MAX_SIZE})")
    return int(n)


def _check_mask_size(shape):
    if shape[0] * shape[1] > _MAX_SIZE:
        raise ValueError(f"a mask of shape {shape} has more entries than NumPy can index "
                         f"({_MAX_SIZE})")


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
    L = _check_size(L, "L")
    S = L if S is None else _check_size(S, "S")
    _check_mask_size((L, S))
    return np.tri(L, S, dtype=bool)  # (L, S)


def _is_integer(n):
    return isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_))


def _check_lengths(lengths, S):
    """``lengths`` as an integer array of shape (N,) with entries in [0, S], or the
    kernel's error. Read exactly: NumPy turns the list [2**63, 1] into floats, [10**20]
    into objects and [] into float64."""
    if not isinstance(lengths, np.ndarray):
        try:
            as_array = np.asarray(lengths)
        except ValueError:  # ragged nesting: reported below, element by element
            as_array = None
        lengths = as_array if as_array is not None and as_array.dtype.kind in "iu" else (
            np.array(lengths, dtype=object))  # Python ints of any size stay exact
    if lengths.size == 0 and lengths.dtype.kind in "fO":
        lengths = lengths.astype(np.intp)  # [] or np.array([]): no sequences
    if lengths.dtype == object:
        odd = next((n for n in lengths.flat if not _is_integer(n)), None)
        if odd is not None:
            raise TypeError(f"lengths must be integers, got {_show(odd)} of type "
                            f"{type(odd).__name__}")
    elif lengths.dtype.kind not in "iu":
        raise TypeError(f"lengths must be integers, got dtype {lengths.dtype}")
    if lengths.ndim != 1:
        raise ValueError(f"lengths must have shape (N,), got shape {lengths.shape}")
    outside = [n for n in lengths.tolist() if not 0 <= n <= S]  # exact, for ints of any size
    if outside:
        raise ValueError(f"every length must lie in [0, S={S}], got "
                         f"{', '.join(_show(n) for n in outside[:5])}"
                         f"{', ...' if len(outside) > 5 else ''} (N = {lengths.shape[0]})")
    _check_mask_size((lengths.shape[0], S))
    return lengths.astype(np.intp, copy=False)


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
    S = _check_size(S, "S")
    lengths = _check_lengths(lengths, S)  # (N,), integers in [0, S]
    return np.arange(S) < lengths[:, None]  # (N, S)


# -------------------------------------------------------- scaled dot-product attention
def _check_attention_inputs(query, key, value, attn_mask, is_causal, scale):
    """Validate and convert the inputs: (query, key, value, attn_mask, scale, out_dtype),
    with the arrays and the scale in the compute dtype (float32 for float16 input)."""
    query = _floating_input(query, "query")
    key = _floating_input(key, "key")
    value = _floating_input(value, "value")
    for name, x, axes in (("query", query, "(..., L, E)"), ("key", key, "(..., S, E)"),
                          ("value", value, "(..., S, Ev)")):
        if x.ndim < 2:
            raise ValueError(f"{name} must have shape {axes} with at least 2 axes, got shape {x.shape}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"query (..., L, E) and key (..., S, E) must share E: got query shape "
            f"{query.shape} and key shape {key.shape}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"key (..., S, E) and value (..., S, Ev) must share S: got key shape "
            f"{key.shape} and value shape {value.shape}"
        )
    try:
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading (batch) axes do not broadcast: query {query.shape}, key {key.shape}, "
            f"value {value.shape}"
        ) from None
    L, E, S = query.shape[-2], query.shape[-1], key.shape[-2]

    out_dtype = np.result_type(query.dtype, key.dtype, value.dtype)
    dtype = _compute_dtype(out_dtype)

    if is_causal and attn_mask is not None:
        raise ValueError("give either attn_mask or is_causal=True, not both "
                         "(combine them with causal_mask(L, S) & attn_mask)")
    if attn_mask is not None:
        attn_mask = np.asarray(attn_mask)
        if attn_mask.dtype.kind not in "bf":
            raise TypeError(
                f"attn_mask must be boolean (True = may attend) or floating (added to the "
                f"scores), got dtype {attn_mask.dtype} with shape {attn_mask.shape}"
            )
        target = batch + (L, S)
        try:
            fits = np.broadcast_shapes(attn_mask.shape, target) == target
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"attn_mask with shape {attn_mask.shape} does not broadcast to the "
                f"attention weights' shape (..., L, S) = {target} (query {query.shape}, "
                f"key {key.shape})"
            )
        # A float mask of another dtype is cast where it is used (block by block in the
        # fast and memory-efficient paths), never here: a cast copies the whole L x S mask.

    if scale is None:
        if E == 0:
            raise ValueError(f"E = 0 (query shape {query.shape}): give scale explicitly")
        scale = 1.0 / np.sqrt(E)
    elif isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number (an int, float, Fraction or NumPy "
                        f"scalar), got {_show(scale)} of type {type(scale).__name__}")
    elif scale != scale or (isinstance(scale, (float, np.floating)) and np.isinf(scale)):
        raise ValueError(f"scale must be finite, got {scale!r}")
    # Validated in the dtype it is used in: 1e39 is inf in float32, 1e-46 is 0, and an int
    # or a Fraction may be beyond every float (10**400: OverflowError from the conversion).
    try:
        with np.errstate(over="ignore", under="ignore"):
            cast = dtype.type(scale)  # a float64 scalar would upcast float32 work under NumPy 2
    except (OverflowError, ValueError):  # ValueError: too many digits for longdouble's parser
        cast = dtype.type(np.inf if scale > 0 else -np.inf)
    if not np.isfinite(cast) or (cast == 0 and scale != 0):
        raise ValueError(
            f"scale = {_show(scale)} is {cast} in {dtype}, the dtype the inputs are computed "
            f"in (query {query.dtype}, key {key.dtype}, value {value.dtype}); give a scale "
            f"that is finite and nonzero in {dtype}"
        )
    scale = cast

    return (query.astype(dtype, copy=False), key.astype(dtype, copy=False),
            value.astype(dtype, copy=False), attn_mask, scale, out_dtype)


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
    query, key, value, attn_mask, scale, out_dtype = _check_attention_inputs(
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
def _check_projection(name, w, rows, rows_name, dtype):
    w = _floating_input(w, name)
    if w.ndim != 2 or w.shape[0] != rows:
        raise ValueError(f"{name} must have shape ({rows_name}={rows}, ...), got shape {w.shape}")
    return w.astype(dtype, copy=False)


def _check_bias(name, b, size, dtype):
    if b is None:
        return dtype.type(0)
    b = _floating_input(b, name)
    if b.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got shape {b.shape}")
    return b.astype(dtype, copy=False)


def _per_head_mask(attn_mask, batch, H, L, S, query, key):
    """The mask of :func:`multi_head_attention` as (..., H or 1, L, S), checked against
    the caller's own shapes (not the projected, per-head ones the kernel sees)."""
    mask = np.asarray(attn_mask)
    if mask.dtype.kind not in "bf":
        raise TypeError(
            f"attn_mask must be boolean (True = may attend) or floating (added to the "
            f"scores), got dtype {mask.dtype} with shape {mask.shape}"
        )
    N = batch[0] if len(batch) == 1 else None
    if mask.ndim == len(batch) + 3:
        per_head = mask  # (..., H, L, S): one mask per head
    elif N is not None and mask.ndim == 3 and H > 1 and mask.shape[0] == N * H:
        per_head = mask.reshape((N, H) + mask.shape[1:])  # PyTorch's (N * H, L, S)
    elif mask.ndim >= 2:
        per_head = mask[..., None, :, :]  # (..., 1, L, S): the same for every head
    else:
        per_head = mask  # (S,) or (): broadcasts as it is
    target = batch + (H, L, S)
    try:
        fits = np.broadcast_shapes(per_head.shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        shared = batch + (L, S)
        torch_shape = f", or PyTorch's (N * H, L, S) = {(N * H, L, S)}" if N is not None else ""
        raise ValueError(
            f"attn_mask with shape {mask.shape} fits neither the mask shared by all heads, "
            f"broadcastable to (..., L, S) = {shared}, nor a per-head mask, broadcastable "
            f"to (..., H, L, S) = {target}{torch_shape} (query {query.shape}, key "
            f"{key.shape}, num_heads = {H})"
        )
    return per_head


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
    query = _floating_input(query, "query")
    key = _floating_input(key, "key")
    value = _floating_input(value, "value")
    dtype = _compute_dtype(np.result_type(query.dtype, key.dtype, value.dtype))
    if (isinstance(num_heads, (bool, np.bool_)) or not isinstance(num_heads, numbers.Integral)
            or not 1 <= num_heads <= _MAX_SIZE):
        raise ValueError(f"num_heads must be a positive integer that NumPy can index, got "
                         f"{_show(num_heads)}")
    num_heads = int(num_heads)
    for name, x in (("query", query), ("key", key), ("value", value)):
        if x.ndim < 2:
            raise ValueError(f"{name} must have at least 2 axes, got shape {x.shape}")
    w_q = _check_projection("w_q", w_q, query.shape[-1], "Dq", dtype)
    w_k = _check_projection("w_k", w_k, key.shape[-1], "Dk", dtype)
    w_v = _check_projection("w_v", w_v, value.shape[-1], "Dv", dtype)
    E, Ev = w_q.shape[1], w_v.shape[1]
    if w_k.shape[1] != E:
        raise ValueError(f"w_q {w_q.shape} and w_k {w_k.shape} must give the same E")
    w_o = _check_projection("w_o", w_o, Ev, "Ev", dtype)
    if E % num_heads or Ev % num_heads:
        raise ValueError(f"num_heads = {num_heads} must divide E = {E} and Ev = {Ev}")
    b_q, b_k = _check_bias("b_q", b_q, E, dtype), _check_bias("b_k", b_k, E, dtype)
    b_v, b_o = _check_bias("b_v", b_v, Ev, dtype), _check_bias("b_o", b_o, w_o.shape[1], dtype)
    H, d, dv = num_heads, E // num_heads, Ev // num_heads
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"key (..., S, Dk) and value (..., S, Dv) must share S: got key shape "
            f"{key.shape} and value shape {value.shape}"
        )
    try:
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading (batch) axes do not broadcast: query {query.shape}, key {key.shape}, "
            f"value {value.shape}"
        ) from None
    if attn_mask is not None:
        attn_mask = _per_head_mask(attn_mask, batch, H, query.shape[-2], key.shape[-2],
                                   query, key)  # (..., H or 1, L, S)
    if scale is None:
        scale = 1.0 / np.sqrt(d) if d > 0 else None

    q = query.astype(dtype, copy=False) @ w_q + b_q  # (..., L, E)
    k = key.astype(dtype, copy=False) @ w_k + b_k  # (..., S, E)
    v = value.astype(dtype, copy=False) @ w_v + b_v  # (..., S, Ev)
    q = np.swapaxes(q.reshape(q.shape[:-1] + (H, d)), -2, -3)  # (..., H, L, d)
    k = np.swapaxes(k.reshape(k.shape[:-1] + (H, d)), -2, -3)  # (..., H, S, d)
    v = np.swapaxes(v.reshape(v.shape[:-1] + (H, dv)), -2, -3)  # (..., H, S, dv)
    heads = scaled_dot_product_attention(q, k, v, attn_mask, is_causal=is_causal, scale=scale,
                                         return_weights=return_weights)
    heads, weights = heads if return_weights else (heads, None)  # (..., H, L, dv)
    concat = np.swapaxes(heads, -2, -3)  # (..., L, H, dv)
    concat = concat.reshape(concat.shape[:-2] + (Ev,))  # (..., L, Ev)
    output = concat @ w_o + b_o  # (..., L, Do)

    out_dtype = np.result_type(query.dtype, key.dtype, value.dtype)
    output = output.astype(out_dtype, copy=False)
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
    query, key, value, attn_mask, scale, out_dtype = _check_attention_inputs(
        query, key, value, attn_mask, is_causal, scale)
    if block_size is None:
        block_size = 512
    elif (isinstance(block_size, (bool, np.bool_)) or not isinstance(block_size, numbers.Integral)
          or block_size < 1):
        raise ValueError(f"block_size must be a positive integer, got {_show(block_size)}")
    block_size = int(block_size)
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
            s = q @ np.swapaxes(key[..., cols, :], -1, -2)  # (..., lq, bk), a new array
            if not scale_first:
                s *= scale  # the product first: query * scale could overflow
            if mask is not None and mask.dtype == np.bool_:  # as the additive mask 0 / -inf
                put_minus_inf(s, ~mask)  # in place, as every step below
            elif mask is not None:
                s += mask  # a float mask of another dtype is cast tile by tile
            m_new = np.maximum(m, s.max(axis=-1))  # (..., lq)
            shift = np.where(m_new == -np.inf, 0.0, m_new).astype(query.dtype)  # safe max
            # m <= shift and s <= shift, so both differences are <= 0 and can only overflow
            # towards -inf (e.g. -1e308 - 1e308), where the exact exp underflows to 0 anyway:
            # exp(-inf) = 0 is exact. For finite scores shift is finite: no inf - inf arises.
            with np.errstate(over="ignore"):
                decay = m - shift  # (..., lq), <= 0
                s -= shift[..., None]  # (..., lq, bk), <= 0
            alpha = np.exp(decay)  # (..., lq); 0 while the row had nothing
            p = np.exp(s, out=s)  # (..., lq, bk), in [0, 1]
            ell = alpha * ell + p.sum(axis=-1)  # (..., lq)
            acc = alpha[..., None] * acc + p @ value[..., cols, :]  # (..., lq, Ev)
            m = m_new
            del s, p  # free this tile before the next one is allocated
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
