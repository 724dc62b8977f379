"""Tests of multi-head-ex-one-wide-head (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

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
points: 1
hidden: true
failure_message: >-
  `out_wide` is not the output of the exercise's one wide head on X_r.
"""  # END TEST CONFIG
_t_out = multi_head_attention(
    X_r, X_r, X_r, 1, w_q=Wq_r[:, :d_r], w_k=Wk_r[:, :d_r], w_v=Wv_r, w_o=Wo_r
)
np.testing.assert_allclose(out_wide, _t_out, rtol=1e-10, atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `rank_wide` is not the rank of your `out_wide`.
"""  # END TEST CONFIG
assert rank_wide == np.linalg.matrix_rank(np.asarray(out_wide))
