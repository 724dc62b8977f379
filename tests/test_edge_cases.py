"""Edge cases of the kernel (issue 26): the three paths (plain, fast, memory-efficient)
agree on extreme finite magnitudes and on NaN and infinity; scale is validated in the
dtype it is used in; a float mask of another dtype is cast block by block; per-head
masks in multi_head_attention. Each test of items 1-5 fails on the kernel as it was
before the fix (commit 1aa3a49).

Issue 38, at the end: the scale applied where it cannot overflow (the order of
operations, at the magnitudes where it matters, against an exact reference and PyTorch),
and the kernel's own errors for arguments of any real scalar type, 0-d input to softmax
and empty lengths. (The fast path's threads: tests/test_concurrency.py.)"""

import math
import sys
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib import attention
from lib import fast_attention as fast
from lib.attention import (memory_efficient_attention, multi_head_attention,
                           scaled_dot_product_attention)


@pytest.fixture
def fast_everywhere(monkeypatch):
    """Every call without weights takes the fast path, in blocks of 3 query rows."""
    monkeypatch.setattr(fast, "_FAST_BLOCK_ROWS", 3)
    monkeypatch.setattr(attention, "FAST_PATH_MIN_SCORES", 0)


def plain(q, k, v, **kwargs):
    return scaled_dot_product_attention(q, k, v, return_weights=True, **kwargs)


PATHS = {
    "fast": lambda q, k, v, **kw: scaled_dot_product_attention(q, k, v, **kw),
    "memory-efficient, 2 keys per block": lambda q, k, v, **kw: memory_efficient_attention(
        q, k, v, block_size=2, **kw),
    "memory-efficient, default blocks": lambda q, k, v, **kw: memory_efficient_attention(
        q, k, v, **kw),
}


def tolerance(q, k, v, weights, scale):
    """The bound documented in scaled_dot_product_attention's Notes, entry by entry."""
    dtype = q.dtype
    eps, tiny = np.finfo(dtype).eps, np.finfo(dtype).smallest_subnormal
    E, S = q.shape[-1], k.shape[-2]
    with np.errstate(over="ignore"):
        b = (abs(float(scale)) * float(np.sqrt(np.einsum("...e,...e->...", q, q).max(initial=0)))
             * float(np.sqrt(np.einsum("...e,...e->...", k, k).max(initial=0))))
    w = weights.astype(np.float64)
    av = np.abs(v).astype(np.float64)
    mass = w @ av  # (..., L, Ev): sum_j w_ij |v_jc|
    vmax = av.max(axis=-2, keepdims=True, initial=0.0)  # (..., 1, Ev)
    return (4 * (E * (b + 1) + S + 4) * float(eps) * mass
            + 4 * S * (16 * S * float(tiny) + vmax * float(tiny)))


def assert_agree(out, ref, tol):
    ref64, out64 = ref.astype(np.float64), out.astype(np.float64)
    finite = np.isfinite(ref64)
    np.testing.assert_array_equal(np.isfinite(out64), finite)
    err = np.abs(out64 - ref64)
    bad = finite & ~(err <= tol)
    assert not bad.any(), (
        f"{bad.sum()} entries beyond the bound: worst error {err[bad].max()!r} against "
        f"tolerance {tol[bad][np.argmax(err[bad])]!r}")


# ------------------------------------------- item 1: overflow and underflow, the examples
ISSUE_EXAMPLES = [  # (dtype, every score, every value): the plain result is the value
    (np.float32, 39.0, 1e20), (np.float64, 299.0, 1e180),  # fast path gave inf
    (np.float32, -39.0, 1e-30), (np.float64, -299.0, 1e-200),  # fast path gave 0
    (np.float32, 1.0, 3e38), (np.float64, 1.0, 1.7e308),  # S * |v| overflows in any path
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype,score,v", ISSUE_EXAMPLES)
def test_uniform_scores_give_the_value_for_extreme_magnitudes(fast_everywhere, path, dtype,
                                                               score, v):
    n = 256
    q = np.ones((n, 1), dtype)
    k = np.full((n, 1), score, dtype)  # scale 1: every score is `score`, every weight 1/n
    value = np.full((n, 2), v, dtype)
    ref, _ = plain(q, k, value, scale=1.0)
    with np.errstate(all="raise"):  # no overflow, underflow or invalid operation
        out = PATHS[path](q, k, value, scale=1.0)
    np.testing.assert_allclose(ref, v, rtol=16 * n * np.finfo(dtype).eps)
    np.testing.assert_allclose(out, ref, rtol=16 * n * np.finfo(dtype).eps, atol=0)


# ------------------------------------ item 1: hypothesis over extreme magnitudes, all paths
@st.composite
def extreme_inputs(draw):
    """Scores near the no-shift bound (either sign), values from subnormal to near the
    dtype's limit, any mask; arrays from a seeded generator (quick to draw)."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    L, S = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    E, Ev = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bound = fast.FAST_PATH_NO_SHIFT_BOUND[dtype]
    b = draw(st.sampled_from([0.5, 0.9, 0.99, 1.0, 1.01, 1.5, 3.0])) * bound
    q = rng.standard_normal((L, E))
    k = rng.standard_normal((S, E))
    if draw(st.booleans()):  # all scores of one sign, near +-b: no cancellation
        q, k = np.abs(q) * draw(st.sampled_from([1, -1])), np.abs(k)
    q *= b / np.linalg.norm(q, axis=-1).max()
    k /= np.linalg.norm(k, axis=-1).max()
    finfo = np.finfo(dtype)
    lo, hi = math.log10(finfo.smallest_subnormal), math.log10(finfo.max / (4 * S))
    exponent = draw(st.floats(lo, hi))
    spread = draw(st.sampled_from([0.0, 1.0, 10.0]))  # orders of magnitude within value
    value = rng.standard_normal((S, Ev)) * 10.0 ** (
        np.clip(exponent + spread * rng.uniform(-1, 1, (S, Ev)), lo, hi))
    mask_kind = draw(st.sampled_from(["none", "bool", "float", "causal"]))
    scale = draw(st.sampled_from([1.0, 1.0, 0.125, 8.0, 1e10]))  # > 1: the product first
    q /= scale  # the same score bound b
    kwargs = {"scale": scale}
    if mask_kind == "bool":
        kwargs["attn_mask"] = rng.random((L, S)) < 0.7
    elif mask_kind == "float":
        kwargs["attn_mask"] = rng.standard_normal((L, S)) * draw(st.sampled_from([1.0, 30.0]))
    elif mask_kind == "causal":
        kwargs["is_causal"] = True
    q, k, value = (a.astype(dtype) for a in (q, k, value))
    return q, k, value, kwargs


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=150, deadline=None)
@given(args=extreme_inputs())
def test_property_paths_agree_with_plain_within_the_documented_bound(path, args):
    q, k, v, kwargs = args
    with np.errstate(over="ignore", invalid="ignore"):  # a non-finite result returns below
        ref, weights = plain(q, k, v, **kwargs)
    if not np.isfinite(ref).all():
        return  # finite input whose plain result is not finite: the next test's subject
    fn = PATHS[path]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast, "_FAST_BLOCK_ROWS", 3)
        mp.setattr(attention, "FAST_PATH_MIN_SCORES", 0)
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            out = fn(q, k, v, **kwargs)
    assert_agree(out, ref, tolerance(q, k, v, weights, kwargs["scale"]))


# -------------------------------------------------- item 2 and 6: NaN and infinity, one rule
def test_causal_nan_in_the_last_value_row_reaches_every_row_on_every_path():
    rng = np.random.default_rng(260)
    n = 1024  # the default call takes the fast path; memory_efficient has two query blocks
    q, k, v = rng.standard_normal((3, n, 16))
    v[-1, 0] = np.nan
    ref, _ = plain(q, k, v, is_causal=True)
    assert np.isnan(ref[:, 0]).all() and np.isfinite(ref[:, 1:]).all()
    for out in (scaled_dot_product_attention(q, k, v, is_causal=True),
                memory_efficient_attention(q, k, v, is_causal=True)):
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))


NONFINITE_CASES = ["nan query", "nan key", "inf key", "nan value", "inf value",
                   "huge key", "nan float mask"]


def nonfinite_inputs(case, mask_kind, rng, L=7, S=9):
    q, k, v = rng.standard_normal((L, 4)), rng.standard_normal((S, 4)), rng.standard_normal((S, 3))
    kwargs = {}
    mask = rng.random((L, S)) < 0.6
    mask[2] = False  # a fully masked row
    if mask_kind == "bool":
        kwargs["attn_mask"] = mask
    elif mask_kind == "additive":
        kwargs["attn_mask"] = np.where(mask, 0.0, -np.inf)
    elif mask_kind == "causal":
        kwargs["is_causal"] = True
    j = S - 1  # the last key: in the causal future of every query but the last ones
    if case == "nan query":
        q[3, 1] = np.nan
    elif case == "nan key":
        k[j, 2] = np.nan
    elif case == "inf key":
        k[j, 0] = np.inf
    elif case == "nan value":
        v[j, 1] = np.nan
    elif case == "inf value":
        v[j, 2] = -np.inf
    elif case == "huge key":  # finite, but its scores overflow to +-inf (or NaN)
        k[j], q[:, 0] = np.finfo(k.dtype).max, 4.0  # q_i0 * scale * k_j0 = 2 * max = inf
    elif case == "nan float mask":
        kwargs = {"attn_mask": np.where(mask, 0.0, -np.inf)}
        kwargs["attn_mask"][4, 0] = np.nan
    return q, k, v, kwargs


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mask_kind", ["none", "bool", "additive", "causal"])
@pytest.mark.parametrize("case", NONFINITE_CASES)
def test_non_finite_entries_are_the_plain_paths(fast_everywhere, path, mask_kind, case):
    q, k, v, kwargs = nonfinite_inputs(case, mask_kind, np.random.default_rng(261))
    with np.errstate(all="ignore"):
        ref, _ = plain(q, k, v, **kwargs)
        out = PATHS[path](q, k, v, **kwargs)
    assert not np.isfinite(ref).all()
    np.testing.assert_array_equal(np.isfinite(out), np.isfinite(ref))
    finite = np.isfinite(ref)
    np.testing.assert_allclose(out[finite], ref[finite], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mask_kind", ["bool", "additive"])
def test_nan_rule_a_masked_nan_key_or_value_is_not_hidden(mask_kind):
    rng = np.random.default_rng(262)
    q, k, v = rng.standard_normal((3, 5, 4))
    mask = np.ones((5, 5), bool)
    mask[:, 4] = False  # no query may attend to key 4
    m = mask if mask_kind == "bool" else np.where(mask, 0.0, -np.inf)
    k_nan, v_nan = k.copy(), v.copy()
    k_nan[4, 0], v_nan[4, 2] = np.nan, np.nan
    out_k, w_k = plain(q, k_nan, v, attn_mask=m)
    assert np.isnan(out_k).all() and np.isnan(w_k).all()  # NaN + (-inf) is NaN
    out_v, w_v = plain(q, k, v_nan, attn_mask=m)
    assert (w_v[:, 4] == 0).all()
    assert np.isnan(out_v[:, 2]).all() and np.isfinite(out_v[:, :2]).all()  # 0 * NaN


def test_nan_rule_a_nan_query_spoils_only_its_row_and_a_fully_masked_row_is_zeros():
    rng = np.random.default_rng(263)
    q, k, v = rng.standard_normal((3, 5, 4))
    q[1, 0] = np.nan
    mask = np.ones((5, 5), bool)
    mask[3] = False
    out, _ = plain(q, k, v, attn_mask=mask)
    assert np.isnan(out[1]).all()
    np.testing.assert_array_equal(out[3], 0.0)
    assert np.isfinite(np.delete(out, 1, axis=0)).all()


@pytest.mark.parametrize("mask_kind", ["bool", "additive", "causal"])
@pytest.mark.parametrize("case", ["nan query", "nan key", "inf key", "nan value", "inf value"])
def test_non_finite_rows_agree_with_torch(torch, case, mask_kind):
    q, k, v, kwargs = nonfinite_inputs(case, mask_kind, np.random.default_rng(264))
    with np.errstate(all="ignore"):
        ours = scaled_dot_product_attention(q, k, v, **kwargs)
    t = {"is_causal": kwargs.get("is_causal", False)}
    if "attn_mask" in kwargs:
        t["attn_mask"] = torch.from_numpy(kwargs["attn_mask"])
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), **t).numpy()
    np.testing.assert_array_equal(np.isfinite(ours), np.isfinite(theirs))


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# ---------------------------------------------- item 3: scale validated in its compute dtype
@pytest.mark.parametrize("scale", [1e39, 3.5e38, 1e-46, -1e39])
@pytest.mark.parametrize("fn", [scaled_dot_product_attention, memory_efficient_attention])
def test_scale_that_is_inf_or_zero_in_float32_is_refused(fn, scale):
    q = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"scale = .* in float32"):
        fn(q, q, q, scale=scale)


def test_scale_fine_in_float64_is_accepted_and_zero_is_allowed():
    q = np.ones((2, 3))
    assert np.isfinite(scaled_dot_product_attention(q, q, q, scale=1e39)).all()
    np.testing.assert_array_equal(
        scaled_dot_product_attention(q.astype(np.float32), q, q, scale=0.0), 1.0)


# ----------------------------------------- item 4: a float mask of another dtype, not copied
def peak_bytes(fn, *args, **kwargs):
    best = None
    for _ in range(3):
        tracemalloc.start()
        try:
            out = fn(*args, **kwargs)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        best = peak - out.nbytes if best is None else min(best, peak - out.nbytes)
    return best


@pytest.mark.parametrize("broadcast_view", [False, True])
def test_memory_efficient_casts_a_float64_mask_tile_by_tile(broadcast_view):
    n, E = 2048, 64
    rng = np.random.default_rng(265)
    q, k, v = rng.standard_normal((3, n, E), dtype=np.float32)
    row = rng.standard_normal(n)  # float64
    mask = np.broadcast_to(row, (n, n)) if broadcast_view else np.tile(row, (n, 1))
    mask_f32 = mask.astype(np.float32)
    with_f64 = peak_bytes(memory_efficient_attention, q, k, v, attn_mask=mask)
    with_f32 = peak_bytes(memory_efficient_attention, q, k, v, attn_mask=mask_f32)
    one_matrix = n * n * 4  # 16 MiB: what a whole cast costs
    # the same tiles as a float32 mask (2.1 MiB here), far from one L x S matrix
    assert with_f64 < with_f32 + one_matrix / 16, (with_f64, with_f32)
    out = memory_efficient_attention(q, k, v, attn_mask=mask)
    assert out.dtype == np.float32
    np.testing.assert_allclose(
        out, memory_efficient_attention(q, k, v, attn_mask=mask_f32), rtol=1e-5, atol=1e-6)


def test_fast_path_adds_a_float64_mask_without_upcasting():
    rng = np.random.default_rng(266)
    q, k, v = rng.standard_normal((3, 300, 8), dtype=np.float32)
    mask = rng.standard_normal((300, 300))
    out = scaled_dot_product_attention(q, k, v, attn_mask=mask)  # 90000 scores: fast path
    ref, _ = plain(q, k, v, attn_mask=mask)
    assert out.dtype == ref.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------- item 5: per-head masks, multi-head
def mha_params(rng, D=8, E=8):
    return {"w_q": rng.standard_normal((D, E)), "w_k": rng.standard_normal((D, E)),
            "w_v": rng.standard_normal((D, E)), "w_o": rng.standard_normal((E, D))}


def heads_by_hand(x, H, p, masks):
    """masks[n][h] for batch element n and head h, each head with the plain kernel."""
    E = p["w_q"].shape[1]
    d = E // H
    out = []
    for n in range(x.shape[0]):
        heads = []
        for h in range(H):
            cols = slice(h * d, (h + 1) * d)
            heads.append(scaled_dot_product_attention(
                x[n] @ p["w_q"][:, cols], x[n] @ p["w_k"][:, cols], x[n] @ p["w_v"][:, cols],
                attn_mask=masks[n][h]))
        out.append(np.concatenate(heads, axis=-1) @ p["w_o"])
    return np.stack(out)


@pytest.mark.parametrize("form", ["(N, H, L, S)", "(N * H, L, S)"])
def test_multi_head_per_head_mask_with_batch_equal_to_heads(form):
    rng = np.random.default_rng(267)
    N = H = 2
    L = 5
    x = rng.standard_normal((N, L, 8))
    p = mha_params(rng)
    masks = rng.random((N, H, L, L)) < 0.6
    masks[..., 0] = True
    given = masks if form == "(N, H, L, S)" else masks.reshape(N * H, L, L)
    out = multi_head_attention(x, x, x, H, **p, attn_mask=given)
    np.testing.assert_allclose(out, heads_by_hand(x, H, p, masks), atol=1e-12)


def test_multi_head_unbatched_per_head_mask_is_H_L_S():
    rng = np.random.default_rng(268)
    H, L = 2, 4
    x = rng.standard_normal((L, 8))
    p = mha_params(rng)
    masks = rng.random((H, L, L)) < 0.6
    masks[..., 0] = True
    out = multi_head_attention(x, x, x, H, **p, attn_mask=masks)
    np.testing.assert_allclose(out, heads_by_hand(x[None], H, p, masks[None])[0], atol=1e-12)


def test_multi_head_shared_mask_per_batch_element_is_documented_N_L_S():
    rng = np.random.default_rng(269)
    N = H = 2
    x = rng.standard_normal((N, 4, 8))
    p = mha_params(rng)
    masks = rng.random((N, 4, 4)) < 0.6
    masks[..., 0] = True
    out = multi_head_attention(x, x, x, H, **p, attn_mask=masks)
    np.testing.assert_allclose(out, heads_by_hand(x, H, p, masks[:, None].repeat(H, 1)),
                               atol=1e-12)


def test_multi_head_per_head_mask_agrees_with_torch(torch):
    rng = np.random.default_rng(270)
    N, H, L = 2, 2, 5
    x = rng.standard_normal((N, L, 8))
    p = mha_params(rng)
    masks = rng.random((N * H, L, L)) < 0.6
    masks[..., 0] = True
    ours = multi_head_attention(x, x, x, H, **p, attn_mask=masks)
    t = {name: torch.from_numpy(np.ascontiguousarray(a)) for name, a in p.items()}
    xt = torch.from_numpy(np.swapaxes(x, 0, 1).copy())  # (L, N, E)
    theirs, _ = torch.nn.functional.multi_head_attention_forward(
        xt, xt, xt, 8, H, None, None, None, None, False, 0.0, t["w_o"].T, None,
        training=False, need_weights=False, attn_mask=torch.from_numpy(~masks),
        use_separate_proj_weight=True, q_proj_weight=t["w_q"].T, k_proj_weight=t["w_k"].T,
        v_proj_weight=t["w_v"].T)
    np.testing.assert_allclose(ours, np.swapaxes(theirs.numpy(), 0, 1), atol=1e-12)


@pytest.mark.parametrize("mask_shape", [(3, 5, 5), (2, 3, 5, 5), (5, 4)])
def test_multi_head_bad_mask_error_names_the_callers_shapes(mask_shape):
    rng = np.random.default_rng(271)
    x = rng.standard_normal((2, 5, 8))
    with pytest.raises(ValueError) as info:
        multi_head_attention(x, x, x, 2, **mha_params(rng), attn_mask=np.ones(mask_shape, bool))
    message = str(info.value)
    assert f"attn_mask with shape {mask_shape}" in message
    assert "query (2, 5, 8)" in message and "num_heads = 2" in message
    assert "(2, 2, 5, 5)" in message  # the per-head shape it would accept


def test_multi_head_key_value_mismatch_names_the_callers_shapes():
    rng = np.random.default_rng(272)
    x, y = rng.standard_normal((5, 8)), rng.standard_normal((6, 8))
    with pytest.raises(ValueError, match=r"key shape \(5, 8\) and value shape \(6, 8\)"):
        multi_head_attention(x, x, y, 2, **mha_params(rng))


# ------------------------------- issue 38, item 2: the scale where it cannot overflow
EXTREME_SCALE_CASES = {  # dtype, |query entries|, |key entries|, scale
    "float64, query * scale overflows (issue 38)": (np.float64, 1e300, 1e-20, 1e10),
    "float32, query * scale overflows (issue 38)": (np.float32, 1e37, 1e-30, 100.0),
    "float64, query @ key.T overflows": (np.float64, 1e300, 1e10, 1e-20),
    "float32, query @ key.T overflows": (np.float32, 1e30, 1e10, 1e-5),
}


def extreme_scale_inputs(dtype, q_size, k_size, seed=380, L=3, S=5, E=4, Ev=2):
    """Entries of the given magnitudes (a factor in [0.5, 1], random signs); keys 1 and 3
    equal, so that their scores tie exactly and some weights are 1/2, not 0 or 1."""
    rng = np.random.default_rng(seed)

    def entries(shape, size):
        return (size * rng.uniform(0.5, 1, shape) * rng.choice([-1, 1], shape)).astype(dtype)

    q, k = entries((L, E), q_size), entries((S, E), k_size)
    k[3] = k[1]
    v = rng.standard_normal((S, Ev)).astype(dtype)
    return q, k, v


def exact_weights(q, k, scale):
    """softmax(query @ key.T * scale) from scores computed exactly (Fractions), then
    rounded once to float64; the softmax itself in float64."""
    scale = Fraction(float(scale))
    scores = np.array([[float(sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(qi, kj))
                              * scale) for kj in k] for qi in q])
    assert np.isfinite(scores).all()  # the formula's scores are finite: a fair case
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("case", EXTREME_SCALE_CASES)
def test_extreme_scales_give_the_formulas_weights_on_the_plain_path(case):
    dtype, q_size, k_size, scale = EXTREME_SCALE_CASES[case]
    q, k, v = extreme_scale_inputs(dtype, q_size, k_size)
    with np.errstate(over="raise", invalid="raise"):  # nothing overflows on the way
        out, weights = scaled_dot_product_attention(q, k, v, scale=scale, return_weights=True)
    expected = exact_weights(q, k, dtype(scale))
    assert 0 < np.count_nonzero((expected > 0.25) & (expected < 0.75))  # a tie is there
    np.testing.assert_allclose(weights, expected, rtol=0, atol=8 * np.finfo(dtype).eps)
    np.testing.assert_allclose(out, expected @ v.astype(np.float64), rtol=0,
                               atol=32 * np.finfo(dtype).eps)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", EXTREME_SCALE_CASES)
def test_extreme_scales_give_the_plain_paths_output_on_every_path(fast_everywhere, path, case):
    dtype, q_size, k_size, scale = EXTREME_SCALE_CASES[case]
    q, k, v = extreme_scale_inputs(dtype, q_size, k_size, L=7, S=9)
    ref, _ = plain(q, k, v, scale=scale)
    with np.errstate(over="raise", invalid="raise"):
        out = PATHS[path](q, k, v, scale=scale)
    assert np.isfinite(ref).all()
    np.testing.assert_allclose(out, ref, rtol=0, atol=32 * np.finfo(dtype).eps)


@pytest.mark.parametrize("case", EXTREME_SCALE_CASES)
def test_extreme_scales_agree_with_torch(torch, case):
    # PyTorch 2.13's math backend (3-axis inputs) scales query and key by sqrt(scale):
    # finite here too, and the same weights.
    dtype, q_size, k_size, scale = EXTREME_SCALE_CASES[case]
    q, k, v = extreme_scale_inputs(dtype, q_size, k_size)
    ours = scaled_dot_product_attention(q[None], k[None], v[None], scale=scale)
    theirs = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a[None]) for a in (q, k, v)), scale=scale).numpy()
    assert np.isfinite(theirs).all()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=32 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scores_beyond_the_largest_float_overflow_on_every_path_alike(fast_everywhere, dtype):
    # The documented range: a score whose exact value is beyond the largest float
    # overflows in any order; every path gives the same non-finite entries.
    big = np.sqrt(np.finfo(dtype).max)
    q, k, v = extreme_scale_inputs(dtype, big, big)
    with np.errstate(all="ignore"):
        ref, _ = plain(q, k, v, scale=4.0)
        outs = [fn(q, k, v, scale=4.0) for fn in PATHS.values()]
    assert not np.isfinite(ref).all()
    for out in outs:
        np.testing.assert_array_equal(np.isfinite(out), np.isfinite(ref))


# -------------------------- issue 38, item 3: arguments of any real type, the kernel's errors
SCALES = {  # a real number of another type, and the float it stands for
    "Fraction(1, 2)": (Fraction(1, 2), 0.5),
    "Fraction(2, 3)": (Fraction(2, 3), 2 / 3),
    "int 2": (2, 2.0),
    "int 2**70": (2**70, 2.0**70),
    "numpy int64": (np.int64(3), 3.0),
    "numpy uint8": (np.uint8(1), 1.0),
    "numpy float16": (np.float16(0.25), 0.25),
    "numpy float32": (np.float32(0.5), 0.5),
    "numpy longdouble": (np.longdouble(0.125), 0.125),
}


@pytest.mark.parametrize("fn", [scaled_dot_product_attention, memory_efficient_attention])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", SCALES)
def test_scale_of_any_real_type_is_the_real_number_it_is(fn, dtype, name):
    scale, as_float = SCALES[name]
    q, k, v = (a.astype(dtype) for a in np.random.default_rng(381).standard_normal((3, 4, 3)))
    q /= 2.0**70 if as_float > 1e6 else 1.0  # scores of moderate size
    out = fn(q, k, v, scale=scale)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, fn(q, k, v, scale=as_float))


TOO_BIG_OR_SMALL = {  # a real number that is inf or 0 in float32 and float64
    "int 10**400": 10**400,
    "int -10**400": -(10**400),
    "int of 5000 digits (beyond str(int)'s default limit)": 10**5000,
    "Fraction(10**400, 3)": Fraction(10**400, 3),
    "Fraction(1, 10**400)": Fraction(1, 10**400),
    "numpy longdouble 1e400": np.longdouble("1e400"),
}


@pytest.mark.parametrize("fn", [scaled_dot_product_attention, memory_efficient_attention])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", TOO_BIG_OR_SMALL)
def test_scale_beyond_the_compute_dtype_gets_the_kernels_value_error(fn, dtype, name):
    scale = TOO_BIG_OR_SMALL[name]
    if name.startswith("numpy longdouble") and not np.isinf(np.float64(scale)):
        pytest.skip("longdouble is float64 here: 1e400 is already inf")
    q = np.ones((2, 3), dtype)
    message = rf"^scale = .* is (-?inf|0\.0) in {np.dtype(dtype)}, the dtype"
    with pytest.raises(ValueError, match=message):
        fn(q, q, q, scale=scale)


@pytest.mark.skipif(np.finfo(np.longdouble).max < 1e401, reason="longdouble is float64 here")
def test_huge_int_scale_is_accepted_where_the_compute_dtype_holds_it():
    q = np.eye(2, dtype=np.longdouble) * np.longdouble("1e-400")
    out = scaled_dot_product_attention(q, q, np.eye(2), scale=10**400)  # scores 1e-400, 0
    assert out.dtype == np.longdouble and np.isfinite(out).all()


@pytest.mark.parametrize("scale", ["0.5", 1j, np.complex64(1), np.array(0.5), np.array([0.5]),
                                   True, np.bool_(False), None.__class__])
def test_scale_that_is_not_a_real_number_gets_the_kernels_type_error(scale):
    q = np.ones((2, 3))
    with pytest.raises(TypeError, match="^scale must be a real number"):
        scaled_dot_product_attention(q, q, q, scale=scale)


@pytest.mark.parametrize("scale", [float("nan"), -math.inf, np.float32("nan"), np.float16("inf")])
def test_nan_or_infinite_scale_of_any_float_type_is_refused(scale):
    q = np.ones((2, 3))
    with pytest.raises(ValueError, match="^scale must be finite"):
        scaled_dot_product_attention(q, q, q, scale=scale)


@pytest.mark.parametrize("args", [(10**400,), (2**63,), (np.uint64(2**64 - 1),), (3, 10**400),
                                  (2**40, 2**40)], ids=str)
def test_causal_mask_sizes_numpy_cannot_index_get_the_kernels_value_error(args):
    with pytest.raises(ValueError, match=r"^(L|S) = .* more than NumPy can index|^a mask of shape"):
        attention.causal_mask(*args)


@pytest.mark.parametrize("L", [np.int8(3), np.uint64(3), 3])
def test_causal_mask_takes_any_integer_type(L):
    np.testing.assert_array_equal(attention.causal_mask(L), np.tri(3, dtype=bool))


@pytest.mark.parametrize("lengths", [[], (), np.array([]), np.array([], np.int32)], ids=repr)
def test_padding_mask_of_no_sequences_is_empty(lengths):
    mask = attention.padding_mask(lengths, 4)
    assert mask.shape == (0, 4) and mask.dtype == np.bool_


@pytest.mark.parametrize("lengths", [[10**400], [-(10**30), 1], [2**64], [2**63, 1]], ids=str)
def test_padding_mask_lengths_beyond_int64_get_the_kernels_value_error(lengths):
    with pytest.raises(ValueError, match=r"^every length must lie in \[0, S=3\], got"):
        attention.padding_mask(lengths, 3)


def test_padding_mask_mixed_integer_types_and_huge_S():
    np.testing.assert_array_equal(attention.padding_mask([np.int64(2), np.uint8(1), 0], 2),
                                  [[True, True], [True, False], [False, False]])
    with pytest.raises(ValueError, match=r"^S = .* more than NumPy can index"):
        attention.padding_mask([1], 10**400)
    with pytest.raises(TypeError, match="^lengths must be integers"):
        attention.padding_mask([Fraction(1, 1)], 3)


@pytest.mark.parametrize("x", [np.array(2.0), np.float64(2.0), 2.0, 7, np.float32(-np.inf)],
                         ids=repr)
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_softmax_of_a_0d_input_gets_the_kernels_error(x, axis):
    with pytest.raises(ValueError, match="^softmax normalises along an axis, but x is 0-d"):
        attention.softmax(x, axis=axis)


@pytest.mark.parametrize("axis,error,message", [
    (10**400, ValueError, "^axis .* is out of range for x with shape"),
    (2, ValueError, "^axis 2 is out of range for x with shape"),
    (Fraction(1, 1), TypeError, "^axis must be an integer"),
    (1.0, TypeError, "^axis must be an integer"),
    (True, TypeError, "^axis must be an integer"),
    ((0, -2), ValueError, "names an axis twice"),
])
def test_softmax_bad_axis_gets_the_kernels_error(axis, error, message):
    with pytest.raises(error, match=message):
        attention.softmax(np.ones((2, 3)), axis=axis)


@pytest.mark.parametrize("axis", [np.int64(0), np.uint8(1), (np.int32(0), 1), None])
def test_softmax_axis_of_any_integer_type(axis):
    x = np.arange(6.0).reshape(2, 3)
    expected = {0: (0,), 1: (1,), None: (0, 1)}.get(
        axis if axis is None else (None if isinstance(axis, tuple) else int(axis)), (0, 1))
    e = np.exp(x - x.max(axis=expected, keepdims=True))
    np.testing.assert_allclose(attention.softmax(x, axis=axis),
                               e / e.sum(axis=expected, keepdims=True), rtol=1e-15)


@pytest.mark.parametrize("H", [10**400, 2**63, Fraction(2, 1)], ids=str)
def test_multi_head_num_heads_of_any_size_gets_the_kernels_error(H):
    rng = np.random.default_rng(382)
    x = rng.standard_normal((4, 8))
    with pytest.raises(ValueError, match="^num_heads must be a positive integer"):
        multi_head_attention(x, x, x, H, **mha_params(rng))


def test_multi_head_numpy_integer_heads_and_memory_efficient_huge_block_size():
    rng = np.random.default_rng(383)
    x = rng.standard_normal((4, 8))
    p = mha_params(rng)
    np.testing.assert_array_equal(multi_head_attention(x, x, x, np.int8(2), **p),
                                  multi_head_attention(x, x, x, 2, **p))
    np.testing.assert_array_equal(memory_efficient_attention(x, x, x, block_size=10**400),
                                  memory_efficient_attention(x, x, x, block_size=4))
