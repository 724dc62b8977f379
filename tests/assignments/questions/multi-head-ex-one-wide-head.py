"""Tests of multi-head-ex-one-wide-head: `out_wide`, the output of one head with the value
features lo:hi of this term's `_t_term["wide"]` (all H_r of them in the book: Wv_r and Wo_r
whole), num_heads=1, queries and keys of one head's width d_r; and `rank_wide`, its rank,
each graded on its own.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `out_wide` must have one row per token of X_r and the layer's output
  width, and `rank_wide` must be an int.
"""  # END TEST CONFIG
assert np.shape(out_wide) == (n_r, D_r) and int(rank_wide) == rank_wide

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `out_wide` is the output of a layer of narrow heads (one value feature
  each, as in the section), not of a single head: check `num_heads`.
"""  # END TEST CONFIG
assert not np.allclose(
    out_wide,
    multi_head_attention(X_r, X_r, X_r, H_r, w_q=Wq_r, w_k=Wk_r, w_v=Wv_r, w_o=Wo_r),
)
# the exercise's value features, each a head of its own with its query/key columns
_t_lo, _t_hi = _t_term["wide"]["lo"], _t_term["wide"]["hi"]
_t_qk = slice(_t_lo * d_r, _t_hi * d_r)
assert not np.allclose(
    out_wide,
    multi_head_attention(X_r, X_r, X_r, _t_hi - _t_lo, w_q=Wq_r[:, _t_qk],
                         w_k=Wk_r[:, _t_qk], w_v=Wv_r[:, _t_lo:_t_hi], w_o=Wo_r[_t_lo:_t_hi]),
)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `out_wide` uses queries and keys of all the columns of Wq_r and Wk_r: the
  exercise's head keeps the width of one head, Wq_r[:, :d_r] (which also
  sets the scale).
"""  # END TEST CONFIG
_t_cols = slice(_t_term["wide"]["lo"], _t_term["wide"]["hi"])
assert not np.allclose(
    out_wide,
    multi_head_attention(X_r, X_r, X_r, 1, w_q=Wq_r, w_k=Wk_r, w_v=Wv_r[:, _t_cols],
                         w_o=Wo_r[_t_cols]),
)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `rank_wide` is not the rank of your `out_wide`: the rank counts its
  independent rows, it is not a dimension of the array.
"""  # END TEST CONFIG
assert rank_wide == np.linalg.matrix_rank(np.asarray(out_wide))

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `out_wide` is not the output of the exercise's one head on X_r (its
  queries and keys, its value features).
"""  # END TEST CONFIG
from lib.attention import multi_head_attention as _t_mha

_t_cols = slice(_t_term["wide"]["lo"], _t_term["wide"]["hi"])
_t_out = _t_mha(
    X_r, X_r, X_r, 1, w_q=Wq_r[:, :d_r], w_k=Wk_r[:, :d_r], w_v=Wv_r[:, _t_cols],
    w_o=Wo_r[_t_cols],
)
np.testing.assert_allclose(out_wide, _t_out, rtol=1e-10, atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `rank_wide` is not the rank of the exercise's head's output.
"""  # END TEST CONFIG
from lib.attention import multi_head_attention as _t_mha

_t_cols = slice(_t_term["wide"]["lo"], _t_term["wide"]["hi"])
_t_out = _t_mha(
    X_r, X_r, X_r, 1, w_q=Wq_r[:, :d_r], w_k=Wk_r[:, :d_r], w_v=Wv_r[:, _t_cols],
    w_o=Wo_r[_t_cols],
)
assert rank_wide == np.linalg.matrix_rank(_t_out)
