"""Tests of real-ex-positions (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `w_nopos` must hold one (L, L) table of weights per sentence and per head:
  its shape is not that.
"""  # END TEST CONFIG
_t_N, _t_L = np.shape(batch.input_ids)
assert np.shape(w_nopos) == (_t_N, H, _t_L, _t_L)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  Without positions the two tokens 'the' (1 and 5) are the same input, so
  every query must weigh them equally in every head; in `w_nopos` they are
  not.
"""  # END TEST CONFIG
np.testing.assert_allclose(
    w_nopos[0, :, :, 1], w_nopos[0, :, :, 5], rtol=0, atol=1e-7
)
