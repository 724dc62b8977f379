"""Tests of multi-head-ex-one-head: `total`, the sum over the heads of head_h W_O^(h), each
head computed alone with scaled_dot_product_attention; in a term that ablates a head
(`_t_term["ablate"]["h"]`, None in the book), the sum over the other heads. The reference is
recomputed here from the layer's inputs (X, H, W_Q, ..., b_v), the ablated head's rows of
W_O set to zero, never from the notebook's `out`.

points: 3
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `total` must have one row per token and the layer's output width: its
  shape is not that of X @ W_Q's rows by W_O's columns.
"""  # END TEST CONFIG
assert np.shape(total) == (np.shape(X)[0], np.shape(W_O)[1])

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `total` must be accumulated from the heads you computed with
  scaled_dot_product_attention: the statements that store it may not use the
  layer's output `out`, its weights or multi_head_attention (the exercise is
  to rebuild the layer from its heads).
"""  # END TEST CONFIG
_t_values, _t_cell = _t_assignment("total")
assert _t_values and "scaled_dot_product_attention" in _t_calls(_t_cell)
assert not _t_names(_t_values) & {"out", "out_steps", "weights"}
assert not _t_calls(_t_values) & {"multi_head_attention"}

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `total` plus b_o differs from the layer's output by the same vector in
  every row: a bias term is missing from a head, or counted twice.
"""  # END TEST CONFIG
_t_wo, _t_h = np.array(W_O, dtype=float), _t_term["ablate"]["h"]
if _t_h is not None:  # the ablated head's rows of W_O
    _t_wo[_t_h * (len(_t_wo) // H) : (_t_h + 1) * (len(_t_wo) // H)] = 0
_t_ref = multi_head_attention(
    X, X, X, H, w_q=W_Q, w_k=W_K, w_v=W_V, w_o=_t_wo,
    b_q=b_q, b_k=b_k, b_v=b_v, b_o=np.zeros(np.shape(W_O)[1]),
)
_t_diff = np.asarray(total) - _t_ref
assert not (np.allclose(_t_diff, _t_diff[:1], atol=1e-9)
            and not np.allclose(_t_diff, 0, atol=1e-9))

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `total` plus b_o is not the layer's output (with the head the exercise
  ablates left out, if any): check which columns of W_Q, W_K and W_V, and
  which rows of W_O, head h takes (contiguous blocks, or strides?), that each
  head is scaled by its own width, and which heads the sum takes.
"""  # END TEST CONFIG
_t_wo, _t_h = np.array(W_O, dtype=float), _t_term["ablate"]["h"]
if _t_h is not None:  # the ablated head's rows of W_O
    _t_wo[_t_h * (len(_t_wo) // H) : (_t_h + 1) * (len(_t_wo) // H)] = 0
_t_ref = multi_head_attention(
    X, X, X, H, w_q=W_Q, w_k=W_K, w_v=W_V, w_o=_t_wo,
    b_q=b_q, b_k=b_k, b_v=b_v, b_o=np.zeros(np.shape(W_O)[1]),
)
np.testing.assert_allclose(total, _t_ref, rtol=1e-8, atol=1e-10)

# %%
""" # BEGIN TEST CONFIG
points: 3
hidden: true
failure_message: >-
  `total` plus b_o is not the layer's output (with the head the exercise
  ablates left out, if any): a head takes its own block of columns of W_Q,
  W_K and W_V (with the same entries of the biases) and its own block of rows
  of W_O; other blocks, strides or a missing bias mix the heads; the sum
  takes the heads the exercise names; or `total` is not built from the heads
  (see the test above).
"""  # END TEST CONFIG
from lib.attention import multi_head_attention as _t_mha

_t_wo, _t_h = np.array(W_O, dtype=float), _t_term["ablate"]["h"]
if _t_h is not None:  # the ablated head's rows of W_O
    _t_wo[_t_h * (len(_t_wo) // H) : (_t_h + 1) * (len(_t_wo) // H)] = 0
_t_ref = _t_mha(
    X, X, X, H, w_q=W_Q, w_k=W_K, w_v=W_V, w_o=_t_wo,
    b_q=b_q, b_k=b_k, b_v=b_v, b_o=np.zeros(np.shape(W_O)[1]),
)
np.testing.assert_allclose(total, _t_ref, rtol=1e-10, atol=1e-12)
_t_values, _t_cell = _t_assignment("total")
assert not _t_names(_t_values) & {"out", "out_steps", "weights"}
# the exercise's rule holds the points too (not only the public check): each head by
# scaled_dot_product_attention, the layer not called for it (found by a red-team pass)
assert _t_values and "scaled_dot_product_attention" in _t_calls(_t_cell)
assert not _t_calls(_t_values) & {"multi_head_attention"}
