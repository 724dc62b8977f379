"""Argument checking for :mod:`lib.attention`: every error the kernel raises, in one place.

Each public function of ``lib.attention`` calls one ``check_*`` function here on its first
line; it returns the arguments converted (arrays in the compute dtype, sizes as Python
ints) or raises the error its docstring documents, with a message naming the shapes and
dtypes involved. The kernel file then holds only the mathematics.
"""

import numbers

import numpy as np

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


def check_softmax(x, axis, where):
    """``(work, axis, out_dtype)`` for :func:`lib.attention.softmax`: ``x`` in the compute
    dtype (not copied when it already is), masked entries set to -inf (a new array),
    ``axis`` as a tuple of axes, and the dtype to return."""
    x = _floating_input(x, "x")
    axis = _check_axis(axis, x.shape)
    work = x.astype(_compute_dtype(x.dtype), copy=False)  # never written to by softmax
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
    return work, axis, x.dtype


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


def check_causal_mask(L, S):
    """``(L, S)`` as Python ints for :func:`lib.attention.causal_mask` (S defaults to L)."""
    L = _check_size(L, "L")
    S = L if S is None else _check_size(S, "S")
    _check_mask_size((L, S))
    return L, S


def check_padding_mask(lengths, S):
    """``(lengths, S)`` for :func:`lib.attention.padding_mask`: an (N,) integer array with
    entries in [0, S], and S as a Python int."""
    S = _check_size(S, "S")
    return _check_lengths(lengths, S), S


# -------------------------------------------------------- scaled dot-product attention
def check_attention(query, key, value, attn_mask, is_causal, scale):
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


def check_multi_head(query, key, value, num_heads, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o,
                     attn_mask):
    """The arguments of :func:`lib.attention.multi_head_attention`, checked and converted:
    ``(query, key, value, num_heads, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, attn_mask,
    out_dtype)``: arrays and weights in the compute dtype, biases 0 when omitted, the mask
    as (..., H or 1, L, S), and the dtype to return. The kernel's call checks the rest (``scale`` among it)."""
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
        attn_mask = _per_head_mask(attn_mask, batch, num_heads, query.shape[-2], key.shape[-2],
                                   query, key)  # (..., H or 1, L, S)
    out_dtype = np.result_type(query.dtype, key.dtype, value.dtype)
    return (query.astype(dtype, copy=False), key.astype(dtype, copy=False),
            value.astype(dtype, copy=False), num_heads, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o,
            attn_mask, out_dtype)


def check_memory_efficient(query, key, value, attn_mask, is_causal, scale, block_size):
    """:func:`check_attention`'s result and ``block_size`` as a Python int (default 512),
    for :func:`lib.attention.memory_efficient_attention`."""
    checked = check_attention(query, key, value, attn_mask, is_causal, scale)
    if block_size is None:
        block_size = 512
    elif (isinstance(block_size, (bool, np.bool_)) or not isinstance(block_size, numbers.Integral)
          or block_size < 1):
        raise ValueError(f"block_size must be a positive integer, got {_show(block_size)}")
    return checked + (int(block_size),)
