"""Tests of qk-av-ex-einsum: einsum_attention(query, key, value), the student's own function
(it may not call the kernel it re-implements), on several batches and heads, L != S, E != Ev.
The term's `layout` (qk-av-ex-einsum.term.yml) says whether `key` and `value` come in the
kernel's layout, (..., S, E) and (..., S, Ev), or transposed, (..., E, S) and (..., Ev, S): each
test builds its keys and values in the kernel's layout and hands them over in the term's.

points: 3
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  With queries of shape (2, 3, 4, 5) and 6 keys and values in this
  assignment's layout (E = 5, Ev = 7; see the note under the exercise), the
  call fails or the output has the wrong shape: it keeps the leading axes,
  one row per query, and the width of a value row.
"""  # END TEST CONFIG
_t_k, _t_v = np.ones((2, 3, 6, 5)), np.ones((2, 3, 6, 7))
_t_o = einsum_attention(
    np.ones((2, 3, 4, 5)),
    np.swapaxes(_t_k, -1, -2) if _t_term["layout"]["key_t"] else _t_k,
    np.swapaxes(_t_v, -1, -2) if _t_term["layout"]["value_t"] else _t_v,
)
assert np.shape(_t_o) == (2, 3, 4, 7)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  When every value row is the same vector, every output row must be that
  vector, whatever the scores; here it is not, so the weights of one query do
  not sum to 1 over the keys (check which axis the softmax runs along, and
  the layout of the keys and values in the note under the exercise).
"""  # END TEST CONFIG
_t_rng = np.random.default_rng(5)
_t_q, _t_k = _t_rng.standard_normal((4, 5)), _t_rng.standard_normal((6, 5))
_t_v = np.tile([1.0, -2.0], (6, 1))
np.testing.assert_allclose(
    einsum_attention(
        _t_q,
        _t_k.T if _t_term["layout"]["key_t"] else _t_k,
        _t_v.T if _t_term["layout"]["value_t"] else _t_v,
    ),
    np.tile([1.0, -2.0], (4, 1)),
)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  One query against two keys whose scores q.k are 4 and 0 (E = 4): the
  output is not the attention of the formula. Look at what the scores are
  divided by.
"""  # END TEST CONFIG
_t_q = np.array([[1.0, 1.0, 1.0, 1.0]])
_t_k = np.array([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
_t_v = np.array([[1.0], [0.0]])
np.testing.assert_allclose(
    einsum_attention(
        _t_q,
        _t_k.T if _t_term["layout"]["key_t"] else _t_k,
        _t_v.T if _t_term["layout"]["value_t"] else _t_v,
    ),
    [[1 / (1 + np.exp(-2.0))]],
)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `einsum_attention` must be your own function that computes attention with
  einsum: it may not be, or call, the kernel's attention functions, under any
  name (the exercise is to write what they compute).
"""  # END TEST CONFIG
_t_why = _t_own_function(
    einsum_attention,
    ["scaled_dot_product_attention", "multi_head_attention",
     "memory_efficient_attention", "fast_attention"],
)
assert _t_why is None, _t_why
_t_rng = np.random.default_rng(3)
_t_q, _t_k, _t_v = _t_rng.standard_normal((3, 2, 4, 5))
_t_used = _t_library_calls(
    lambda: einsum_attention(
        _t_q,
        np.swapaxes(_t_k, -1, -2) if _t_term["layout"]["key_t"] else _t_k,
        np.swapaxes(_t_v, -1, -2) if _t_term["layout"]["value_t"] else _t_v,
    ),
    {"scaled_dot_product_attention", "multi_head_attention",
     "memory_efficient_attention", "fast_attention", "_sdpa_fast"},
)
assert not _t_used, "einsum_attention runs " + ", ".join(sorted(_t_used))

# %%
""" # BEGIN TEST CONFIG
points: 3
hidden: true
failure_message: >-
  The values differ from attention's on random inputs with 2 batches, 3
  heads, L = 4 queries, S = 6 keys, E = 5 and Ev = 3, some scores far apart,
  keys and values in this assignment's layout (the note under the exercise);
  or the call fails; or the function is not your own (see the test above).
"""  # END TEST CONFIG
_t_rng = np.random.default_rng(19)
_t_q = 4 * _t_rng.standard_normal((2, 3, 4, 5))
_t_k = _t_rng.standard_normal((2, 3, 6, 5))   # the kernel's layout (..., S, E)
_t_v = _t_rng.standard_normal((2, 3, 6, 3))   # and (..., S, Ev)
_t_k_in = np.swapaxes(_t_k, -1, -2).copy() if _t_term["layout"]["key_t"] else _t_k
_t_v_in = np.swapaxes(_t_v, -1, -2).copy() if _t_term["layout"]["value_t"] else _t_v
_t_s = np.einsum("nhle,nhse->nhls", _t_q, _t_k) / np.sqrt(5)
_t_a = np.exp(_t_s - _t_s.max(axis=-1, keepdims=True))
_t_a /= _t_a.sum(axis=-1, keepdims=True)
# the values compared are those of the profiled call itself
_t_got, _t_used = _t_profiled(
    lambda: einsum_attention(_t_q, _t_k_in, _t_v_in),
    {"scaled_dot_product_attention", "multi_head_attention",
     "memory_efficient_attention", "fast_attention", "_sdpa_fast"},
)
assert not _t_used
np.testing.assert_allclose(_t_got, _t_a @ _t_v, rtol=1e-10, atol=1e-12)
assert _t_own_function(
    einsum_attention,
    ["scaled_dot_product_attention", "multi_head_attention",
     "memory_efficient_attention", "fast_attention"],
) is None
