"""Tests of multi-head-ex-relative (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `R_k` is a D x D matrix.
"""  # END TEST CONFIG
assert np.shape(R_k) == (D, D)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  R_k PE_i is not PE_(i+k): your R_k turns the (sine, cosine) pairs by
  another angle or the wrong way. Check its signs against the angle-addition
  formulas, and which of R_k and its transpose acts on the rows.
"""  # END TEST CONFIG
_t_pe = sinusoidal_positions(20 + 3, D)
np.testing.assert_allclose(
    _t_pe[3:23], _t_pe[:20] @ np.transpose(R_k), atol=1e-12
)
