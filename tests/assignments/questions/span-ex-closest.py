"""Tests of span-ex-closest (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 1
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `q_close` is one query, a vector of 2 numbers (E = 2).
"""  # END TEST CONFIG
assert np.shape(q_close) == (2,)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  The output for `q_close` is not within `closest_tol` of v_1: key 1's score
  does not beat the other keys' by enough. Check the query's direction
  against the three keys, and its length.
"""  # END TEST CONFIG
_t_out = scaled_dot_product_attention(np.reshape(q_close, (1, 2)), K, V)
assert np.linalg.norm(_t_out[0] - V[1]) < closest_tol
