"""Tests of the kernel, lib/attention.py, and of its fast path, lib/fast_attention.py:
examples, properties (hypothesis), bad inputs, dtypes, extreme finite scores, threads and
fork, and a differential test against PyTorch's SDPA when torch is importable."""

import ast
import io
import os
import subprocess
import sys
import tokenize
import warnings

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lib import _checks, attention
from lib import fast_attention as fast
from lib.attention import (causal_mask, memory_efficient_attention, multi_head_attention,
                           padding_mask, scaled_dot_product_attention, softmax)


# ------------------------------------------------------------------------------ helpers
def direct_attention(query, key, value, mask=None, scale=None):
    """The formula written out with explicit loops over batch and rows: no shared code with lib."""
    E = query.shape[-1]
    scale = 1.0 / np.sqrt(E) if scale is None else scale
    out = np.zeros(query.shape[:-1] + (value.shape[-1],))
    for idx in np.ndindex(query.shape[:-2]):
        q, k, v = query[idx], key[idx], value[idx]
        for i in range(q.shape[0]):
            s = np.array([q[i] @ k[j] * scale for j in range(k.shape[0])])
            keep = np.ones(k.shape[0], bool) if mask is None else mask[idx][i]
            if not keep.any():
                continue
            e = np.exp(s[keep] - s[keep].max())
            out[idx][i] = (e / e.sum()) @ v[keep]
    return out


def random_qkv(rng, batch=(), L=3, S=5, E=4, Ev=6, dtype=np.float64):
    q = rng.standard_normal(batch + (L, E)).astype(dtype)
    k = rng.standard_normal(batch + (S, E)).astype(dtype)
    v = rng.standard_normal(batch + (S, Ev)).astype(dtype)
    return q, k, v


def readonly(*arrays):
    for a in arrays:
        a.flags.writeable = False
    return arrays


# ----------------------------------------------------------------------------- softmax
def test_softmax_rows_sum_to_one_and_match_formula():
    x = np.array([[0.0, 1.0, 2.0], [-1.0, 5.0, 3.0]])
    expected = np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(softmax(x), expected, rtol=1e-15)


def test_softmax_large_logits_do_not_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = softmax(np.array([1000.0, 1001.0, 1002.0]))
    np.testing.assert_allclose(p, softmax(np.array([0.0, 1.0, 2.0])), rtol=1e-15)


def test_softmax_axis_zero_normalises_columns():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(softmax(x, axis=0).sum(axis=0), np.ones(3))


def test_softmax_minus_inf_entries_get_exactly_zero():
    p = softmax(np.array([0.0, -np.inf, 0.0]))
    assert p[1] == 0.0
    np.testing.assert_allclose(p, [0.5, 0.0, 0.5])


def test_softmax_all_minus_inf_row_is_zeros_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = softmax(np.array([[-np.inf, -np.inf], [0.0, 0.0]]))
    np.testing.assert_array_equal(p, [[0.0, 0.0], [0.5, 0.5]])


def test_softmax_where_gives_zero_outside_even_for_nan_and_inf():
    x = np.array([[1.0, np.nan, np.inf, 2.0]])
    where = np.array([True, False, False, True])
    p = softmax(x, where=where)
    np.testing.assert_allclose(p, softmax(np.array([[1.0, 2.0]]))[:, [0, 0, 0, 1]] * where)
    assert p[0, 1] == 0.0 and p[0, 2] == 0.0


def test_softmax_all_masked_slice_is_zeros():
    p = softmax(np.ones((2, 3)), where=np.array([[False] * 3, [True] * 3]))
    np.testing.assert_array_equal(p[0], 0.0)
    np.testing.assert_allclose(p[1], 1 / 3)


def test_softmax_empty_axis_returns_empty():
    assert softmax(np.zeros((2, 0))).shape == (2, 0)


def test_softmax_nan_in_slice_propagates():
    assert np.isnan(softmax(np.array([[0.0, np.nan], [0.0, 0.0]]))[0]).all()


def test_softmax_plus_inf_in_slice_gives_nan_not_a_silent_answer():
    with np.errstate(invalid="ignore"):
        assert np.isnan(softmax(np.array([np.inf, 0.0]))).all()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_softmax_preserves_floating_dtype(dtype):
    assert softmax(np.array([1.0, 2.0], dtype=dtype)).dtype == dtype


def test_softmax_integers_become_float64():
    p = softmax(np.array([1, 2, 3]))
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, softmax(np.array([1.0, 2.0, 3.0])))


def test_softmax_float16_large_logits_are_finite():
    p = softmax(np.array([60000.0, 60000.0], dtype=np.float16))
    np.testing.assert_array_equal(p, np.array([0.5, 0.5], dtype=np.float16))


def test_softmax_does_not_modify_input():
    x = np.array([3.0, -np.inf, 1.0])
    (x_ro,) = readonly(x.copy())
    softmax(x_ro, where=np.array([True, False, True]))
    np.testing.assert_array_equal(x_ro, x)


def test_softmax_rejects_non_boolean_where():
    with pytest.raises(TypeError, match="where must be a boolean"):
        softmax(np.ones(3), where=np.array([1, 0, 1]))


def test_softmax_rejects_where_that_does_not_broadcast():
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        softmax(np.ones(3), where=np.array([True, False]))


@pytest.mark.parametrize("bad", [np.array([1 + 1j]), np.array(["a"]), np.array([True])])
def test_softmax_rejects_complex_string_and_bool(bad):
    with pytest.raises(TypeError):
        softmax(bad)


@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
               elements=st.floats(-50, 50)),
    st.floats(-1e3, 1e3),
)
def test_softmax_is_invariant_to_a_shift(x, c):
    np.testing.assert_allclose(softmax(x + c), softmax(x), atol=1e-12)


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
                  elements=st.floats(-1e300, 1e300)))
def test_softmax_slices_sum_to_one_for_any_finite_input(x):
    p = softmax(x)
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)


def test_softmax_allocates_no_more_than_the_exponentials_and_the_output():
    import tracemalloc
    x = np.random.default_rng(5).standard_normal((512, 512))
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    softmax(x)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    assert peak < 2.1 * x.nbytes, f"peak {peak / x.nbytes:.2f} arrays of the input's size"


# The largest finite logits of each dtype: x - max(x) overflows for [big, -big].
BIG = {np.float32: 3e38, np.float64: 1e308}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_extreme_finite_logits_are_exact_without_floating_point_errors(dtype):
    big = BIG[dtype]
    x = np.array([[big, big, -big], [-big, big, -big]], dtype=dtype)
    with np.errstate(all="raise"):  # overflow, invalid, divide or underflow would raise
        p = softmax(x)
        p0 = softmax(x, axis=0)
    np.testing.assert_array_equal(p, np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]], dtype))
    np.testing.assert_array_equal(p0, np.array([[1.0, 0.5, 0.5], [0.0, 0.5, 0.5]], dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_extreme_finite_logits_with_where_and_fully_masked_rows(dtype):
    big = BIG[dtype]
    x = np.array([[big, -big, big], [-big, big, big], [big, -big, -big]], dtype=dtype)
    where = np.array([[True, True, False], [True, False, False], [False, False, False]])
    with np.errstate(all="raise"):
        p = softmax(x, where=where)
    np.testing.assert_array_equal(p, np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0],
                                               [0.0, 0.0, 0.0]], dtype))


def softmax_by_exact_shift(x, where):
    """Softmax along the last axis that subtracts the maximum only where the difference
    cannot overflow (exp(-1000) is 0 in float32 and float64, so the other weights are 0)."""
    x = np.where(where, x, -np.inf)
    m = x.max(axis=-1, keepdims=True)
    m = np.where(m == -np.inf, 0, m).astype(x.dtype)
    d = np.subtract(x, m, out=np.full_like(x, -np.inf), where=x >= m - 1000)
    e = np.exp(d)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


@st.composite
def logits_and_where(draw, dtype):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5))
    width = np.finfo(dtype).bits
    x = draw(hnp.arrays(dtype, shape, elements=st.floats(width=width, allow_nan=False,
                                                         allow_infinity=False)))
    return x, draw(hnp.arrays(np.bool_, shape))


@given(st.sampled_from([np.float32, np.float64]).flatmap(logits_and_where))
@example((np.array([1e308, 1e308, -1e308]), np.ones(3, bool)))
@example((np.array([[3e38, -3e38], [-3e38, 3e38]], np.float32), np.ones((2, 2), bool)))
def test_property_softmax_of_any_finite_logits_is_exact_and_raises_nothing(x_where):
    x, where = x_where
    dtype = x.dtype.type
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        p = softmax(x, where=where)
        p_all = softmax(x)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(p, softmax_by_exact_shift(x, where), rtol=4 * eps, atol=0)
    np.testing.assert_allclose(p_all, softmax_by_exact_shift(x, np.ones_like(where)),
                               rtol=4 * eps, atol=0)
    assert np.all((p >= 0) & (p <= 1)) and np.all(p[~where] == 0)
    sums = p.sum(axis=-1)
    np.testing.assert_allclose(sums[where.any(axis=-1)], 1.0, rtol=8 * eps)
    np.testing.assert_array_equal(sums[~where.any(axis=-1)], 0.0)


# ------------------------------------------------------------------------------- masks
def test_causal_mask_is_lower_triangle():
    np.testing.assert_array_equal(causal_mask(3), np.tril(np.ones((3, 3), bool)))


def test_causal_mask_rectangular_is_top_left_aligned():
    np.testing.assert_array_equal(causal_mask(2, 4), [[1, 0, 0, 0], [1, 1, 0, 0]])
    np.testing.assert_array_equal(causal_mask(3, 1), [[1], [1], [1]])


@pytest.mark.parametrize("bad", [-1, 2.5, True, "3"])
def test_causal_mask_rejects_bad_sizes(bad):
    with pytest.raises(ValueError, match="nonnegative integer"):
        causal_mask(bad)


def test_padding_mask_marks_positions_below_length():
    m = padding_mask(np.array([2, 0, 3]), 3)
    assert m.dtype == np.bool_ and m.shape == (3, 3)
    np.testing.assert_array_equal(m, [[1, 1, 0], [0, 0, 0], [1, 1, 1]])


def test_padding_mask_rejects_length_above_S():
    with pytest.raises(ValueError, match=r"\[0, S=3\]"):
        padding_mask([4], 3)


def test_padding_mask_rejects_two_dimensional_lengths():
    with pytest.raises(ValueError, match=r"\(1, 2\)"):
        padding_mask([[1, 2]], 3)


def test_padding_mask_rejects_float_lengths():
    with pytest.raises(TypeError, match="integers"):
        padding_mask([1.5], 3)


# ------------------------------------------------------- scaled dot-product attention
def test_matches_direct_formula_float64_with_L_ne_S_and_E_ne_Ev():
    rng = np.random.default_rng(0)
    q, k, v = random_qkv(rng, batch=(2, 3), L=3, S=5, E=4, Ev=6)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v),
                               direct_attention(q, k, v), rtol=0, atol=1e-12)


def test_default_scale_is_one_over_sqrt_E():
    rng = np.random.default_rng(1)
    q, k, v = random_qkv(rng, E=9)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v),
                               scaled_dot_product_attention(q, k, v, scale=1 / 3), atol=1e-15)
    assert not np.allclose(scaled_dot_product_attention(q, k, v),
                           scaled_dot_product_attention(q, k, v, scale=1 / 9))


def test_explicit_scale_is_used():
    rng = np.random.default_rng(2)
    q, k, v = random_qkv(rng)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, scale=0.3),
                               direct_attention(q, k, v, scale=0.3), atol=1e-12)


def test_seed_example_48_weights_and_output():
    # Seed 001: scores = Q K^T / sqrt(2), A = softmax(scores), O = A V; values by hand.
    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    K = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    V = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    O, A = scaled_dot_product_attention(Q, K, V, return_weights=True)
    e = np.exp(1 / np.sqrt(2))
    np.testing.assert_allclose(A, [[e, e, 1], [1, e, e]] / (2 * e + 1), atol=1e-15)
    np.testing.assert_allclose(O, A @ V, atol=1e-15)
    np.testing.assert_allclose(A.sum(axis=1), [1.0, 1.0], atol=1e-15)


def test_return_weights_shapes():
    rng = np.random.default_rng(3)
    q, k, v = random_qkv(rng, batch=(2,), L=3, S=5, E=4, Ev=6)
    out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    assert out.shape == (2, 3, 6) and w.shape == (2, 3, 5)


def test_leading_axes_broadcast():
    rng = np.random.default_rng(4)
    q = rng.standard_normal((2, 1, 3, 4))
    k = rng.standard_normal((1, 5, 6, 4))
    v = rng.standard_normal((6, 2))
    out = scaled_dot_product_attention(q, k, v)
    assert out.shape == (2, 5, 3, 2)
    np.testing.assert_allclose(out[1, 3], scaled_dot_product_attention(q[1, 0], k[0, 3], v),
                               atol=1e-15)


def test_is_causal_equals_lower_triangular_boolean_mask():
    rng = np.random.default_rng(5)
    q, k, v = random_qkv(rng, L=4, S=4)
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k, v, is_causal=True),
                                  scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(4)))


def test_is_causal_rectangular_is_top_left_aligned():
    rng = np.random.default_rng(6)
    q, k, v = random_qkv(rng, L=2, S=4)
    _, w = scaled_dot_product_attention(q, k, v, is_causal=True, return_weights=True)
    np.testing.assert_array_equal(w[:, 2:], 0.0)
    assert w[0, 1] == 0.0 and w[0, 0] == 1.0


def test_boolean_and_additive_minus_inf_masks_agree():
    rng = np.random.default_rng(7)
    q, k, v = random_qkv(rng, L=4, S=4)
    mask = causal_mask(4)
    additive = np.where(mask, 0.0, -np.inf)
    out_b, w_b = scaled_dot_product_attention(q, k, v, attn_mask=mask, return_weights=True)
    out_f, w_f = scaled_dot_product_attention(q, k, v, attn_mask=additive, return_weights=True)
    np.testing.assert_allclose(w_b, w_f, atol=1e-15)
    np.testing.assert_allclose(out_b, out_f, atol=1e-15)


def test_float_mask_is_added_to_scaled_scores():
    rng = np.random.default_rng(8)
    q, k, v = random_qkv(rng, L=2, S=3)
    bias = np.array([[0.5, -1.0, 2.0]])
    _, w = scaled_dot_product_attention(q, k, v, attn_mask=bias, return_weights=True)
    np.testing.assert_allclose(w, softmax(q @ k.T / 2.0 + bias), atol=1e-15)


def test_masked_weights_are_exactly_zero():
    rng = np.random.default_rng(9)
    q, k, v = random_qkv(rng, L=4, S=4)
    _, w = scaled_dot_product_attention(q, k, v, is_causal=True, return_weights=True)
    assert np.all(w[~causal_mask(4)] == 0.0)


def test_fully_masked_row_gives_zero_weights_and_zero_output():
    rng = np.random.default_rng(10)
    q, k, v = random_qkv(rng, L=3, S=4)
    mask = np.ones((3, 4), bool)
    mask[1] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, w = scaled_dot_product_attention(q, k, v, attn_mask=mask, return_weights=True)
    np.testing.assert_array_equal(w[1], 0.0)
    np.testing.assert_array_equal(out[1], 0.0)
    np.testing.assert_allclose(w[[0, 2]].sum(axis=-1), 1.0)


def test_fully_masked_row_with_additive_mask_gives_zeros():
    rng = np.random.default_rng(11)
    q, k, v = random_qkv(rng, L=2, S=3)
    out = scaled_dot_product_attention(q, k, v, attn_mask=np.array([[0.0] * 3, [-np.inf] * 3]))
    np.testing.assert_array_equal(out[1], 0.0)


def test_no_keys_gives_zero_output():
    rng = np.random.default_rng(12)
    q, k, v = random_qkv(rng, L=2, S=0)
    out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    assert out.shape == (2, 6) and w.shape == (2, 0)
    np.testing.assert_array_equal(out, 0.0)


def test_padding_mask_for_batched_heads():
    rng = np.random.default_rng(13)
    q, k, v = random_qkv(rng, batch=(2, 3), L=4, S=4)
    lengths = np.array([4, 2])
    out = scaled_dot_product_attention(q, k, v, attn_mask=padding_mask(lengths, 4)[:, None, None, :])
    short = scaled_dot_product_attention(q[1], k[1, :, :2], v[1, :, :2])
    np.testing.assert_allclose(out[1], short, atol=1e-15)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(14)
    q, k, v = random_qkv(rng, L=3, S=3)
    mask = np.where(causal_mask(3), 0.0, -np.inf)
    copies = [a.copy() for a in (q, k, v, mask)]
    readonly(q, k, v, mask)  # any write would raise
    scaled_dot_product_attention(q, k, v, attn_mask=mask, return_weights=True)
    for a, c in zip((q, k, v, mask), copies):
        np.testing.assert_array_equal(a, c)


# --------------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_output_and_weights_keep_the_input_float_dtype(dtype):
    q, k, v = random_qkv(np.random.default_rng(15), dtype=dtype)
    out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    assert out.dtype == dtype and w.dtype == dtype


def test_float32_is_computed_in_float32_not_upcast():
    q, k, v = random_qkv(np.random.default_rng(16), dtype=np.float32)
    out = scaled_dot_product_attention(q, k, v)
    scores = (q @ k.T) * np.float32(1 / 2)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    expected32 = (e / e.sum(axis=-1, keepdims=True)) @ v
    np.testing.assert_allclose(out, expected32, rtol=2e-6)


def test_float16_is_computed_in_float32():
    q, k, v = random_qkv(np.random.default_rng(17), dtype=np.float16)
    out = scaled_dot_product_attention(q, k, v)
    ref = scaled_dot_product_attention(q.astype(np.float32), k.astype(np.float32),
                                       v.astype(np.float32))
    np.testing.assert_array_equal(out, ref.astype(np.float16))


def test_integer_inputs_become_float64():
    q = np.array([[1, 0]])
    k = np.array([[1, 0], [0, 1]])
    out = scaled_dot_product_attention(q, k, k)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, scaled_dot_product_attention(q * 1.0, k * 1.0, k * 1.0))


def test_mixed_float32_and_float64_give_float64():
    q, k, v = random_qkv(np.random.default_rng(18), dtype=np.float32)
    assert scaled_dot_product_attention(q, k.astype(np.float64), v).dtype == np.float64


def test_float64_mask_does_not_upcast_float32_inputs():
    q, k, v = random_qkv(np.random.default_rng(19), L=3, S=3, dtype=np.float32)
    mask = np.where(causal_mask(3), 0.0, -np.inf)  # float64
    assert scaled_dot_product_attention(q, k, v, attn_mask=mask).dtype == np.float32


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("which", ["query", "key", "value"])
def test_rejects_fewer_than_two_axes(which):
    args = dict(zip(("query", "key", "value"), random_qkv(np.random.default_rng(20))))
    args[which] = args[which][0]
    with pytest.raises(ValueError, match=rf"{which} must have shape .* got shape \(\d+,\)"):
        scaled_dot_product_attention(**args)


def test_rejects_E_mismatch_naming_shapes():
    q, k, v = random_qkv(np.random.default_rng(21), E=4)
    with pytest.raises(ValueError, match=r"share E.*\(3, 3\).*\(5, 4\)"):
        scaled_dot_product_attention(q[:, :3], k, v)


def test_rejects_S_mismatch_naming_shapes():
    q, k, v = random_qkv(np.random.default_rng(22), S=5)
    with pytest.raises(ValueError, match=r"share S.*\(5, 4\).*\(4, 6\)"):
        scaled_dot_product_attention(q, k, v[:4])


def test_rejects_leading_axes_that_do_not_broadcast():
    q, k, v = random_qkv(np.random.default_rng(23), batch=(2,))
    with pytest.raises(ValueError, match=r"do not broadcast.*\(2, 3, 4\).*\(3, 5, 4\)"):
        scaled_dot_product_attention(q, np.concatenate([k, k[:1]]), np.concatenate([v, v[:1]]))


def test_rejects_mask_that_does_not_broadcast():
    q, k, v = random_qkv(np.random.default_rng(24), L=3, S=5)
    with pytest.raises(ValueError, match=r"attn_mask with shape \(3, 4\).*\(3, 5\)"):
        scaled_dot_product_attention(q, k, v, attn_mask=np.ones((3, 4), bool))


def test_rejects_mask_that_would_add_batch_axes():
    q, k, v = random_qkv(np.random.default_rng(25), L=3, S=5)
    with pytest.raises(ValueError, match=r"\(2, 3, 5\)"):
        scaled_dot_product_attention(q, k, v, attn_mask=np.ones((2, 3, 5), bool))


def test_rejects_integer_mask():
    q, k, v = random_qkv(np.random.default_rng(26), L=3, S=5)
    with pytest.raises(TypeError, match="neither|boolean .* or floating"):
        scaled_dot_product_attention(q, k, v, attn_mask=np.ones((3, 5), int))


def test_rejects_mask_together_with_is_causal():
    q, k, v = random_qkv(np.random.default_rng(27), L=3, S=5)
    with pytest.raises(ValueError, match="not both"):
        scaled_dot_product_attention(q, k, v, attn_mask=np.ones((3, 5), bool), is_causal=True)


@pytest.mark.parametrize("scale", [np.nan, np.inf, -np.inf])
def test_rejects_non_finite_scale(scale):
    q, k, v = random_qkv(np.random.default_rng(28))
    with pytest.raises(ValueError, match="scale must be finite"):
        scaled_dot_product_attention(q, k, v, scale=scale)


def test_rejects_non_numeric_scale():
    q, k, v = random_qkv(np.random.default_rng(29))
    with pytest.raises(TypeError, match="scale must be a real number"):
        scaled_dot_product_attention(q, k, v, scale="0.5")


def test_rejects_complex_input():
    q, k, v = random_qkv(np.random.default_rng(30))
    with pytest.raises(TypeError, match="complex128"):
        scaled_dot_product_attention(q + 0j, k, v)


def test_rejects_string_input():
    q, k, v = random_qkv(np.random.default_rng(31))
    with pytest.raises(TypeError, match="key must be a real"):
        scaled_dot_product_attention(q, k.astype(str), v)


def test_rejects_object_input():
    q, k, v = random_qkv(np.random.default_rng(32))
    with pytest.raises(TypeError, match="value must be a real.*object"):
        scaled_dot_product_attention(q, k, v.astype(object))


def test_rejects_zero_E_without_scale():
    with pytest.raises(ValueError, match="E = 0"):
        scaled_dot_product_attention(np.zeros((2, 0)), np.zeros((3, 0)), np.zeros((3, 1)))


# ------------------------------------------------------------------- property-based tests
dims = st.integers(1, 6)


@st.composite
def attention_inputs(draw, with_mask=False):
    L, S, E, Ev = draw(dims), draw(dims), draw(dims), draw(dims)
    el = st.floats(-10, 10, allow_subnormal=False)
    q = draw(hnp.arrays(np.float64, (L, E), elements=el))
    k = draw(hnp.arrays(np.float64, (S, E), elements=el))
    v = draw(hnp.arrays(np.float64, (S, Ev), elements=el))
    if not with_mask:
        return q, k, v
    return q, k, v, draw(hnp.arrays(np.bool_, (L, S)))


@given(attention_inputs(with_mask=True))
def test_property_weights_nonnegative_and_rows_sum_to_one(args):
    q, k, v, mask = args
    _, w = scaled_dot_product_attention(q, k, v, attn_mask=mask, return_weights=True)
    assert np.all(w >= 0)
    sums = w.sum(axis=-1)
    np.testing.assert_allclose(sums[mask.any(axis=-1)], 1.0, rtol=1e-12)
    np.testing.assert_array_equal(sums[~mask.any(axis=-1)], 0.0)


@given(attention_inputs())
def test_property_output_within_per_feature_range_of_values(args):
    q, k, v = args
    out = scaled_dot_product_attention(q, k, v)
    tol = 1e-12 * (1 + np.abs(v).max())
    assert np.all(out >= v.min(axis=0) - tol) and np.all(out <= v.max(axis=0) + tol)


@given(attention_inputs(), st.randoms(use_true_random=False))
def test_property_permuting_keys_and_values_together_changes_nothing(args, random):
    q, k, v = args
    perm = np.array(random.sample(range(k.shape[0]), k.shape[0]))
    np.testing.assert_allclose(scaled_dot_product_attention(q, k[perm], v[perm]),
                               scaled_dot_product_attention(q, k, v), atol=1e-12)


@given(attention_inputs(), st.randoms(use_true_random=False))
def test_property_permuting_queries_permutes_outputs(args, random):
    q, k, v = args
    perm = np.array(random.sample(range(q.shape[0]), q.shape[0]))
    np.testing.assert_allclose(scaled_dot_product_attention(q[perm], k, v),
                               scaled_dot_product_attention(q, k, v)[perm], atol=1e-12)


@given(attention_inputs())
def test_property_all_true_mask_equals_no_mask(args):
    q, k, v = args
    mask = np.ones((q.shape[0], k.shape[0]), bool)
    np.testing.assert_array_equal(scaled_dot_product_attention(q, k, v, attn_mask=mask),
                                  scaled_dot_product_attention(q, k, v))


@given(attention_inputs(with_mask=True))
def test_property_masked_keys_and_values_do_not_matter(args):
    q, k, v, mask = args
    # A key column masked for every query may hold anything, even 1e30, without effect.
    dead = ~mask.any(axis=0)
    k2, v2 = k.copy(), v.copy()
    k2[dead], v2[dead] = 1e30, 1e30
    np.testing.assert_allclose(scaled_dot_product_attention(q, k2, v2, attn_mask=mask),
                               scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=1e-12)


@given(attention_inputs(), st.data())
def test_property_future_keys_do_not_change_causal_outputs(args, data):
    q, k, v = args
    L, S = q.shape[0], k.shape[0]
    t = data.draw(st.integers(0, min(L, S) - 1))
    k2, v2 = k.copy(), v.copy()
    k2[t + 1:] = data.draw(hnp.arrays(np.float64, k2[t + 1:].shape, elements=st.floats(-10, 10)))
    v2[t + 1:] = data.draw(hnp.arrays(np.float64, v2[t + 1:].shape, elements=st.floats(-10, 10)))
    out = scaled_dot_product_attention(q, k, v, is_causal=True)
    out2 = scaled_dot_product_attention(q, k2, v2, is_causal=True)
    np.testing.assert_array_equal(out[: t + 1], out2[: t + 1])


# ------------------------------------------------------- fast path (lib/fast_attention.py)
@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 3 query rows in the fast path: many tasks even for small inputs."""
    monkeypatch.setattr(fast, "_FAST_BLOCK_ROWS", 3)


@pytest.fixture
def fast_everywhere(monkeypatch, small_blocks):
    """Send every call without weights to the fast path, in blocks of 3 query rows. The
    dispatch in lib.attention compares with the FAST_PATH_MIN_SCORES it imported."""
    monkeypatch.setattr(attention, "FAST_PATH_MIN_SCORES", 0)


def plain(q, k, v, **kwargs):
    return scaled_dot_product_attention(q, k, v, return_weights=True, **kwargs)[0]


FAST_CASES = {
    "no mask": lambda L, S, rng: {},
    "causal": lambda L, S, rng: {"is_causal": True},
    "boolean mask": lambda L, S, rng: {"attn_mask": rng.random((2, L, S)) < 0.5},
    "float mask": lambda L, S, rng: {"attn_mask": rng.standard_normal((L, S))},
    "padding mask": lambda L, S, rng: {"attn_mask": padding_mask([S, 1], S)[:, None, :]},
    "scale": lambda L, S, rng: {"scale": 0.37},
}


def fast_args(q, kwargs):
    """The validated arguments fast_attention takes, for float64 inputs and FAST_CASES."""
    return (kwargs.get("attn_mask"), kwargs.get("is_causal", False),
            kwargs.get("scale", 1 / np.sqrt(q.shape[-1])))


@pytest.mark.parametrize("call", ["dispatched", "fast_attention called directly"])
@pytest.mark.parametrize("case", FAST_CASES)
@pytest.mark.parametrize("L,S", [(7, 7), (4, 9), (10, 3), (1, 5)])
def test_fast_path_matches_plain_path(fast_everywhere, call, case, L, S):
    rng = np.random.default_rng(60)
    q, k, v = random_qkv(rng, batch=(2,), L=L, S=S, E=5, Ev=4)
    kwargs = FAST_CASES[case](L, S, rng)
    if call == "dispatched":
        out = scaled_dot_product_attention(q, k, v, **kwargs)
    else:  # validated inputs in: float64 arrays, the mask as given, the scale a float
        out = fast.fast_attention(q, k, v, *fast_args(q, kwargs))
    assert out.shape == (2, L, 4) and out.dtype == np.float64
    np.testing.assert_allclose(out, plain(q, k, v, **kwargs), rtol=0, atol=1e-13)


def test_fast_path_fully_masked_rows_are_zero(fast_everywhere):
    q, k, v = random_qkv(np.random.default_rng(61), L=5, S=4)
    mask = np.ones((5, 4), bool)
    mask[[0, 3]] = False
    out = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    np.testing.assert_array_equal(out[[0, 3]], 0.0)
    np.testing.assert_allclose(out, plain(q, k, v, attn_mask=mask), atol=1e-13)


def test_fast_path_broadcasts_leading_axes(fast_everywhere):
    rng = np.random.default_rng(62)
    q = rng.standard_normal((2, 1, 7, 4))
    k = rng.standard_normal((1, 3, 6, 4))
    v = rng.standard_normal((6, 5))
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v), plain(q, k, v), atol=1e-13)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_fast_path_keeps_dtype_and_agrees(fast_everywhere, dtype):
    q, k, v = random_qkv(np.random.default_rng(63), L=8, S=8, dtype=dtype)
    out = scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.dtype == dtype
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(out, plain(q, k, v, is_causal=True), rtol=8 * eps, atol=8 * eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_path_large_logits_take_the_shift_and_agree(fast_everywhere, dtype):
    q, k, v = random_qkv(np.random.default_rng(68), L=7, S=9)
    q = q * 1e3  # scores in the thousands: exp without the max-shift would overflow
    ref = plain(q, k, v, is_causal=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = scaled_dot_product_attention(q.astype(dtype), k.astype(dtype), v.astype(dtype),
                                           is_causal=True)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(out, ref, rtol=1e3 * eps, atol=1e3 * eps)


def test_fast_path_propagates_nan(fast_everywhere):
    q, k, v = random_qkv(np.random.default_rng(64), L=4, S=4)
    q[2, 0] = np.nan
    out = scaled_dot_product_attention(q, k, v)
    assert np.isnan(out[2]).all() and np.isfinite(np.delete(out, 2, axis=0)).all()


def test_fast_path_does_not_modify_inputs(fast_everywhere):
    q, k, v = readonly(*random_qkv(np.random.default_rng(65), L=6, S=6))
    mask = readonly(np.random.default_rng(66).standard_normal((6, 6)))[0]
    scaled_dot_product_attention(q, k, v, attn_mask=mask)


@pytest.mark.parametrize("L,S", [(3, 0), (0, 4), (0, 0)])
def test_fast_attention_with_no_queries_or_no_keys(small_blocks, L, S):
    q, k, v = random_qkv(np.random.default_rng(72), batch=(2,), L=L, S=S)
    for mask in (None, np.zeros((L, S))):  # a float mask forces the max-shift pass
        out = fast.fast_attention(q, k, v, mask, False, 0.5)
        assert out.shape == (2, L, 6)
        np.testing.assert_array_equal(out, 0.0)  # no key: zeros, as the plain path gives


def test_fast_path_concurrent_calls_from_several_threads_agree(small_blocks):
    # Callers share one pool of helper threads; each call must still get its own answer.
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(69)
    cases = [random_qkv(rng, batch=(3,), L=11, S=13) for _ in range(6)]
    expected = [plain(q, k, v, is_causal=True) for q, k, v in cases]
    with ThreadPoolExecutor(4) as callers:
        got = list(callers.map(
            lambda qkv: fast.fast_attention(*qkv, None, True, 0.5), cases * 3))
    for out, ref in zip(got, expected * 3):
        np.testing.assert_allclose(out, ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("workers", [1, 3])
def test_fast_path_result_does_not_depend_on_the_number_of_workers(small_blocks,
                                                                    monkeypatch, workers):
    monkeypatch.setattr(fast, "_n_workers", lambda: workers)
    q, k, v = random_qkv(np.random.default_rng(70), batch=(2,), L=10, S=7)
    np.testing.assert_allclose(fast.fast_attention(q, k, v, None, False, 0.5),
                               plain(q, k, v), rtol=0, atol=1e-13)


def _fast_attention_in_child(q, k, v):
    return fast._executor is None, fast.fast_attention(q, k, v, None, False, 0.5)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fast_path_works_in_a_child_forked_after_use(small_blocks):
    # The helper threads are not copied by fork; the child must not wait for them.
    import multiprocessing

    q, k, v = random_qkv(np.random.default_rng(71), batch=(2,), L=9, S=9)
    expected = fast.fast_attention(q, k, v, None, False, 0.5)  # starts the helper threads here
    assert fast._executor is not None
    with multiprocessing.get_context("fork").Pool(1) as pool:
        started_afresh, out = pool.apply_async(_fast_attention_in_child, (q, k, v)).get(timeout=60)
    assert started_afresh  # the child forgot the parent's pool before its first call
    np.testing.assert_array_equal(out, expected)


def test_large_calls_without_weights_take_the_fast_path(monkeypatch):
    calls = []
    fast_attention = attention.fast_attention  # the name the dispatch calls
    monkeypatch.setattr(attention, "fast_attention",
                        lambda *a: calls.append(1) or fast_attention(*a))
    q, k, v = random_qkv(np.random.default_rng(67), L=300, S=300, E=8, Ev=8)
    out = scaled_dot_product_attention(q, k, v, is_causal=True)
    assert calls == [1]
    out_plain, _ = scaled_dot_product_attention(q, k, v, is_causal=True, return_weights=True)
    assert calls == [1]  # asking for the weights takes the plain path
    np.testing.assert_allclose(out, out_plain, atol=1e-13)


def test_calls_below_the_threshold_take_the_plain_path(monkeypatch):
    calls = []
    monkeypatch.setattr(attention, "fast_attention", lambda *a: calls.append(1))
    n = int(np.sqrt(attention.FAST_PATH_MIN_SCORES - 1))  # n * n scores: one too few at most
    q, k, v = random_qkv(np.random.default_rng(73), L=n, S=n, E=4, Ev=4)
    out = scaled_dot_product_attention(q, k, v)
    assert calls == [] and out.shape == (n, 4)


def test_public_names_of_both_modules():
    assert attention.__all__ == ["softmax", "causal_mask", "padding_mask",
                                 "scaled_dot_product_attention", "multi_head_attention",
                                 "memory_efficient_attention"]
    assert fast.__all__ == ["FAST_PATH_MIN_SCORES", "FAST_PATH_NO_SHIFT_BOUND", "fast_attention"]
    # The threshold the dispatch uses is the fast module's, still importable from lib.attention.
    assert attention.FAST_PATH_MIN_SCORES == fast.FAST_PATH_MIN_SCORES
    assert attention.fast_attention is fast.fast_attention


def kernel_code_lines(path):
    """The lines of code of a Python file: every physical line holding a token that is not
    a comment, a line break or indentation, docstrings (of the module, its functions and
    classes) aside. A statement over three lines counts three."""
    text = open(path, encoding="utf-8").read()
    docstrings = set()
    for node in ast.walk(ast.parse(text)):
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
                and ast.get_docstring(node, clean=False) is not None):
            docstrings.update(range(node.body[0].lineno, node.body[0].end_lineno + 1))
    layout = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
              tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    code = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in layout:
            code.update(range(token.start[0], token.end[0] + 1))
    return code - docstrings


def test_the_kernel_a_student_reads_holds_at_most_200_lines_of_code(tmp_path):
    lines = kernel_code_lines(attention.__file__)
    assert 50 < len(lines) <= 200, f"lib/attention.py has {len(lines)} lines of code"
    # the rule itself, on a small file: docstrings, comments and blank lines are not code
    sample = tmp_path / "sample.py"
    sample.write_text('"""Module\ndocstring."""\n\n# a comment\ndef f(x):\n    """Doc."""\n'
                      '    return (x +  # the sum\n            1)\n')
    assert kernel_code_lines(sample) == {5, 7, 8}


def test_every_public_function_checks_its_arguments_in_one_call_first():
    """Argument checking lives in lib/_checks.py: the first statement after each public
    function's docstring is one call of a check_* function, and the kernel raises nothing."""
    tree = ast.parse(open(attention.__file__, encoding="utf-8").read())
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    for name in attention.__all__:
        first = functions[name].body[1]  # body[0] is the docstring
        call = first.value
        assert isinstance(first, ast.Assign) and isinstance(call, ast.Call), name
        assert call.func.id.startswith("check_"), name
        assert getattr(attention, call.func.id) is getattr(_checks, call.func.id)
    assert not any(isinstance(node, ast.Raise) for node in ast.walk(tree))


def test_fast_attention_module_does_not_import_lib_attention():
    # lib.attention imports lib.fast_attention; the reverse would be a circular import.
    code = "import sys, lib.fast_attention; assert 'lib.attention' not in sys.modules"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)


# ------------------------------------------------------- extreme finite scores, every path
EXTREME_PATHS = {
    "plain": lambda q, k, v, **kw: scaled_dot_product_attention(
        q, k, v, return_weights=True, **kw)[0],
    "memory-efficient, 1 key per block": lambda q, k, v, **kw: memory_efficient_attention(
        q, k, v, block_size=1, **kw),
    "memory-efficient, 2 keys per block": lambda q, k, v, **kw: memory_efficient_attention(
        q, k, v, block_size=2, **kw),
    "fast": lambda q, k, v, attn_mask=None, scale=None: fast.fast_attention(
        q, k, v, attn_mask, False, scale),
    "fast, dispatched": lambda q, k, v, **kw: scaled_dot_product_attention(q, k, v, **kw),
}


@pytest.mark.parametrize("path", EXTREME_PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mask", ["none", "boolean", "float", "fully masked row"])
def test_extreme_finite_scores_give_exact_outputs_without_floating_point_errors(
        request, path, dtype, mask):
    if path == "fast, dispatched":
        request.getfixturevalue("fast_everywhere")
    big = BIG[dtype]
    q = np.array([[1.0], [-1.0]], dtype)  # E = 1 and scale 1: the scores are exactly +-big,
    k = np.array([[big], [-big], [big]], dtype)  # so score - max overflows to -inf
    v = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 0.0]], dtype)
    expected = np.array([[2.0, 0.0], [0.0, 1.0]], dtype)  # weights [.5, 0, .5] and [0, 1, 0]
    kwargs = {"scale": 1.0}
    if mask == "boolean":
        kwargs["attn_mask"] = np.array([[True, True, False], [True, True, True]])
        expected[0] = [1.0, 0.0]  # weights [1, 0, 0]
    elif mask == "float":
        kwargs["attn_mask"] = np.zeros((2, 3), dtype)
    elif mask == "fully masked row":
        kwargs["attn_mask"] = np.array([[True, True, True], [False, False, False]])
        expected[1] = 0.0
    with np.errstate(all="raise"):  # overflow, invalid, divide or underflow would raise
        out = EXTREME_PATHS[path](q, k, v, **kwargs)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("zero_query", [False, True])
def test_fast_path_score_bound_that_overflows_keeps_the_shift(dtype, zero_query):
    # |q|^2 overflows: the Cauchy-Schwarz bound is inf (or 0 * inf = NaN for a zero query),
    # which must keep the max-shift pass and raise nothing.
    big = BIG[dtype]
    r = np.sqrt(big) * 4
    q = np.array([[r], [-r]], dtype)  # |q|^2 = 16 big: overflows
    k = np.array([[big / r], [-big / r], [big / r]], dtype)
    v = np.array([[1.0, 0.0], [0.0, 1.0], [3.0, 0.0]], dtype)
    expected = np.array([[2.0, 0.0], [0.0, 1.0]], dtype)
    if zero_query:  # scores 0, |k|^2 overflows instead
        q, k = np.zeros_like(q), k * r / (big / r)
        expected = np.repeat(v.mean(axis=0, keepdims=True), 2, axis=0)
    with np.errstate(all="raise"):
        out = fast.fast_attention(q, k, v, None, False, 1.0)
    np.testing.assert_allclose(out, expected, rtol=4 * np.finfo(dtype).eps, atol=0)


# ------------------------------------------------------------------ multi-head attention
def mha_params(rng, Dq=6, Dk=5, Dv=4, E=8, Ev=6, Do=7, bias=True):
    p = {"w_q": rng.standard_normal((Dq, E)), "w_k": rng.standard_normal((Dk, E)),
         "w_v": rng.standard_normal((Dv, Ev)), "w_o": rng.standard_normal((Ev, Do))}
    if bias:
        p.update(b_q=rng.standard_normal(E), b_k=rng.standard_normal(E),
                 b_v=rng.standard_normal(Ev), b_o=rng.standard_normal(Do))
    return p


def mha_by_hand(xq, xk, xv, H, p, **kwargs):
    """Each head separately with the single-head kernel, then concatenate and project."""
    E, Ev = p["w_q"].shape[1], p["w_v"].shape[1]
    d, dv = E // H, Ev // H
    heads = []
    for h in range(H):
        q = xq @ p["w_q"][:, h * d:(h + 1) * d] + p["b_q"][h * d:(h + 1) * d]
        k = xk @ p["w_k"][:, h * d:(h + 1) * d] + p["b_k"][h * d:(h + 1) * d]
        v = xv @ p["w_v"][:, h * dv:(h + 1) * dv] + p["b_v"][h * dv:(h + 1) * dv]
        heads.append(scaled_dot_product_attention(q, k, v, **kwargs))
    return np.concatenate(heads, axis=-1) @ p["w_o"] + p["b_o"]


@pytest.mark.parametrize("H", [1, 2])
@pytest.mark.parametrize("mask", ["none", "causal", "padding"])
def test_multi_head_matches_per_head_kernel(H, mask):
    rng = np.random.default_rng(70)
    xq, xk, xv = (rng.standard_normal((2, n, D)) for n, D in ((4, 6), (5, 5), (5, 4)))
    p = mha_params(rng)
    kwargs = {"causal": {"is_causal": True}, "none": {},
              "padding": {"attn_mask": padding_mask([5, 2], 5)[:, None, :]}}[mask]
    ours = multi_head_attention(xq, xk, xv, H, **p, **kwargs)
    np.testing.assert_allclose(ours, mha_by_hand(xq, xk, xv, H, p, **kwargs), atol=1e-12)


def test_multi_head_weights_are_per_head_and_rows_sum_to_one():
    rng = np.random.default_rng(71)
    x = rng.standard_normal((5, 6))
    p = mha_params(rng, Dk=6, Dv=6)
    out, w = multi_head_attention(x, x, x, 2, **p, is_causal=True, return_weights=True)
    assert out.shape == (5, 7) and w.shape == (2, 5, 5)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)
    assert np.all(w[:, ~causal_mask(5)] == 0)


def test_multi_head_default_scale_uses_the_head_size():
    rng = np.random.default_rng(72)
    x = rng.standard_normal((4, 6))
    p = mha_params(rng, Dk=6, Dv=6, E=8)
    np.testing.assert_allclose(multi_head_attention(x, x, x, 2, **p),
                               multi_head_attention(x, x, x, 2, **p, scale=0.5), atol=1e-15)


def test_multi_head_without_biases():
    rng = np.random.default_rng(73)
    x = rng.standard_normal((4, 6))
    p = mha_params(rng, Dk=6, Dv=6, bias=False)
    zeros = {"b_q": np.zeros(8), "b_k": np.zeros(8), "b_v": np.zeros(6), "b_o": np.zeros(7)}
    np.testing.assert_allclose(multi_head_attention(x, x, x, 2, **p),
                               multi_head_attention(x, x, x, 2, **p, **zeros), atol=1e-15)


@pytest.mark.parametrize("H", [0, 3, 2.0])
def test_multi_head_rejects_heads_that_do_not_divide(H):
    rng = np.random.default_rng(74)
    x = rng.standard_normal((4, 6))
    with pytest.raises(ValueError, match="num_heads"):
        multi_head_attention(x, x, x, H, **mha_params(rng, Dk=6, Dv=6))


def test_multi_head_rejects_projection_of_wrong_shape():
    rng = np.random.default_rng(75)
    x = rng.standard_normal((4, 6))
    p = mha_params(rng, Dk=6, Dv=6)
    p["w_k"] = p["w_k"][:5]
    with pytest.raises(ValueError, match=r"w_k must have shape \(Dk=6, \.\.\.\), got shape \(5, 8\)"):
        multi_head_attention(x, x, x, 2, **p)


def test_multi_head_rejects_bias_of_wrong_shape():
    rng = np.random.default_rng(76)
    x = rng.standard_normal((4, 6))
    p = mha_params(rng, Dk=6, Dv=6)
    p["b_o"] = np.zeros(3)
    with pytest.raises(ValueError, match=r"b_o must have shape \(7,\)"):
        multi_head_attention(x, x, x, 2, **p)


@pytest.mark.parametrize("kind", ["none", "bool", "causal"])
def test_multi_head_agrees_with_torch(torch, kind):
    rng = np.random.default_rng(77)
    L, S, N, E, H = 4, 6, 2, 8, 2
    xq, xk, xv = (rng.standard_normal((N, n, E)) for n in (L, S, S))
    p = mha_params(rng, Dq=E, Dk=E, Dv=E, E=E, Ev=E, Do=E)
    kwargs, tmask = {}, None
    if kind == "bool":
        mask = rng.random((L, S)) < 0.7
        mask[:, 0] = True
        kwargs["attn_mask"], tmask = mask, torch.from_numpy(~mask)  # torch MHA: True = ignore
    elif kind == "causal":
        kwargs["is_causal"] = True
        tmask = torch.from_numpy(~causal_mask(L, S))
    ours = multi_head_attention(xq, xk, xv, H, **p, **kwargs)
    t = {name: torch.from_numpy(np.ascontiguousarray(a)) for name, a in p.items()}
    theirs, _ = torch.nn.functional.multi_head_attention_forward(
        *(torch.from_numpy(np.swapaxes(a, 0, 1).copy()) for a in (xq, xk, xv)),  # (L, N, E)
        E, H, None, torch.cat([t["b_q"], t["b_k"], t["b_v"]]), None, None, False, 0.0,
        t["w_o"].T, t["b_o"], training=False, need_weights=False, attn_mask=tmask,
        use_separate_proj_weight=True, q_proj_weight=t["w_q"].T, k_proj_weight=t["w_k"].T,
        v_proj_weight=t["w_v"].T)
    np.testing.assert_allclose(ours, np.swapaxes(theirs.numpy(), 0, 1), atol=1e-12)


# ------------------------------------------------------------ memory-efficient attention
def mea_cases():
    """(name, L, S, mask builder) covering the masks the online softmax must survive."""
    def none(L, S):
        return {}

    def causal(L, S):
        return {"is_causal": True}

    def padding(L, S):
        return {"attn_mask": padding_mask(np.array([S, max(S - 3, 0)]), S)[:, None, :]}

    def fully_masked_rows(L, S):
        mask = np.random.default_rng(3).random((2, L, S)) < 0.6
        mask[0, 1] = False
        mask[1, -1] = False
        return {"attn_mask": mask}

    def masked_first_block(L, S):
        mask = np.ones((L, S), bool)
        mask[:, : S // 2] = False
        return {"attn_mask": mask}

    def additive(L, S):
        bias = np.random.default_rng(4).standard_normal((L, S))
        bias[0] = -np.inf
        return {"attn_mask": bias}

    return [none, causal, padding, fully_masked_rows, masked_first_block, additive]


@pytest.mark.parametrize("make_kwargs", mea_cases(), ids=lambda f: f.__name__)
@pytest.mark.parametrize("block", ["1", "2", "3", "S-1", "S", "S+5"])
def test_memory_efficient_matches_plain_float64(make_kwargs, block):
    L, S = 7, 9
    q, k, v = random_qkv(np.random.default_rng(40), batch=(2,), L=L, S=S, E=4, Ev=3)
    block_size = eval(block, {"S": S})
    kwargs = make_kwargs(L, S)
    ours = memory_efficient_attention(q, k, v, block_size=block_size, **kwargs)
    plain = scaled_dot_product_attention(q, k, v, **kwargs)
    np.testing.assert_allclose(ours, plain, rtol=0, atol=1e-12)


def test_memory_efficient_blocks_queries_too():
    q, k, v = random_qkv(np.random.default_rng(41), L=600, S=70, E=8, Ev=5)
    np.testing.assert_allclose(memory_efficient_attention(q, k, v, is_causal=True, block_size=16),
                               scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-12)


def test_memory_efficient_lse_is_logsumexp_of_scaled_masked_scores():
    q, k, v = random_qkv(np.random.default_rng(42), L=5, S=6)
    mask = np.random.default_rng(43).random((5, 6)) < 0.5
    mask[2] = False
    _, lse = memory_efficient_attention(q, k, v, attn_mask=mask, block_size=2, return_lse=True)
    scores = q @ k.T / 2.0
    for i in range(5):
        expected = np.log(np.exp(scores[i, mask[i]]).sum()) if mask[i].any() else -np.inf
        np.testing.assert_allclose(lse[i], expected, rtol=1e-13)
    assert lse[2] == -np.inf


def test_memory_efficient_float32_large_logits_agree_with_float64():
    rng = np.random.default_rng(44)
    q, k, v = random_qkv(rng, batch=(2,), L=33, S=47, E=16, Ev=8)
    q = q * 1e4 / np.abs(q @ np.swapaxes(k, -1, -2) / 4).max()  # logits around 1e4
    ref = scaled_dot_product_attention(q, k, v, is_causal=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out32 = memory_efficient_attention(q.astype(np.float32), k.astype(np.float32),
                                           v.astype(np.float32), is_causal=True, block_size=8)
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, ref, rtol=1e-4, atol=1e-4 * np.abs(v).max())


def test_memory_efficient_fully_masked_row_is_zero_without_warning():
    q, k, v = random_qkv(np.random.default_rng(45), L=3, S=8)
    mask = np.ones((3, 8), bool)
    mask[0] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, lse = memory_efficient_attention(q, k, v, attn_mask=mask, block_size=3,
                                              return_lse=True)
    np.testing.assert_array_equal(out[0], 0.0)
    assert lse[0] == -np.inf


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_memory_efficient_keeps_dtype(dtype):
    q, k, v = random_qkv(np.random.default_rng(46), dtype=dtype)
    assert memory_efficient_attention(q, k, v, block_size=2).dtype == dtype


def test_memory_efficient_does_not_modify_inputs():
    q, k, v = readonly(*random_qkv(np.random.default_rng(47)))
    memory_efficient_attention(q, k, v, block_size=2, is_causal=True)


def test_memory_efficient_validates_like_the_plain_kernel():
    q, k, v = random_qkv(np.random.default_rng(48), E=4)
    with pytest.raises(ValueError, match=r"share E.*\(3, 3\).*\(5, 4\)"):
        memory_efficient_attention(q[:, :3], k, v)


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_memory_efficient_rejects_bad_block_size(bad):
    q, k, v = random_qkv(np.random.default_rng(49))
    with pytest.raises(ValueError, match="block_size must be a positive integer"):
        memory_efficient_attention(q, k, v, block_size=bad)


def test_memory_efficient_extra_memory_does_not_grow_with_the_score_matrix():
    import tracemalloc
    n, E = 4096, 32
    q, k, v = random_qkv(np.random.default_rng(50), L=n, S=n, E=E, Ev=E, dtype=np.float32)
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    memory_efficient_attention(q, k, v, is_causal=True, block_size=256)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    score_matrix = n * n * 4  # what the plain path allocates, at least once
    assert peak < score_matrix / 8, f"peak {peak / 2**20:.1f} MiB"


# ----------------------------------------------------------- differential test vs PyTorch
@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("seed", range(40))
def test_agrees_with_torch_sdpa(torch, seed):
    rng = np.random.default_rng(1000 + seed)
    batch = tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(0, 3)))
    L, S, E, Ev = (int(n) for n in rng.integers(1, 9, size=4))
    q, k, v = random_qkv(rng, batch, L, S, E, Ev)
    kind = ["none", "bool", "float", "causal"][seed % 4]
    kwargs, tkwargs = {}, {}
    if kind == "bool":
        mask = rng.random(batch + (L, S)) < 0.7
        kwargs["attn_mask"], tkwargs["attn_mask"] = mask, torch.from_numpy(mask)
    elif kind == "float":
        mask = rng.standard_normal((L, S))
        kwargs["attn_mask"], tkwargs["attn_mask"] = mask, torch.from_numpy(mask)
    elif kind == "causal":
        kwargs["is_causal"] = tkwargs["is_causal"] = True
    if seed % 3 == 0:
        kwargs["scale"] = tkwargs["scale"] = float(rng.uniform(0.1, 2.0))
    ours = scaled_dot_product_attention(q, k, v, **kwargs)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), **tkwargs).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_fully_masked_row_agrees_with_torch(torch):
    rng = np.random.default_rng(2000)
    q, k, v = random_qkv(rng, batch=(1,), L=3, S=4)
    mask = np.ones((3, 4), bool)
    mask[1] = False
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v),
        attn_mask=torch.from_numpy(mask)).numpy()
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, attn_mask=mask), theirs,
                               atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["none", "causal", "bool"])
def test_fast_path_agrees_with_torch_on_large_inputs(torch, dtype, kind):
    rng = np.random.default_rng(3000)
    q, k, v = random_qkv(rng, batch=(1, 2), L=300, S=280, E=16, Ev=8, dtype=dtype)
    kwargs, tkwargs = {}, {}
    if kind == "causal":
        kwargs["is_causal"] = tkwargs["is_causal"] = True
    elif kind == "bool":
        mask = rng.random((300, 280)) < 0.3
        kwargs["attn_mask"], tkwargs["attn_mask"] = mask, torch.from_numpy(mask)
    ours = scaled_dot_product_attention(q, k, v, **kwargs)  # 168 000 scores: the fast path
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), **tkwargs).numpy()
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


def test_pytorch_claims_of_exercise_3_4(torch):
    # notebooks/03_masking.md, solution of the float16 exercise, says what PyTorch does with
    # the -1e9 fill in float16 without running it on the page; these are those claims.
    scores = torch.zeros(2, dtype=torch.float16)
    mask = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match="cannot be converted to type c10::Half without overflow"):
        scores.masked_fill(mask, -1e9)
    assert torch.isneginf(torch.tensor(-1e9).half())
