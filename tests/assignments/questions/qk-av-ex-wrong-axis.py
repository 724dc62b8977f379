"""Tests of qk-av-ex-wrong-axis (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `lam_wrong` has one row of barycentric coordinates per row of `O_wrong`,
  each summing to 1 (the last equation of the system).
"""  # END TEST CONFIG
assert np.shape(lam_wrong) == np.shape(A_wrong)
np.testing.assert_allclose(np.sum(lam_wrong, axis=1), 1.0)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `O_wrong` is not the output of the weights `A_wrong`, or a row of
  `lam_wrong` does not reproduce its row of `O_wrong` as lam @ V: check the
  system you solve, chapter 1's, including its last equation.
"""  # END TEST CONFIG
np.testing.assert_allclose(O_wrong, A_wrong @ V)
np.testing.assert_allclose(lam_wrong @ V, O_wrong)
