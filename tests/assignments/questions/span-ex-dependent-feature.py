"""Tests of span-ex-dependent-feature (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 1
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `w3` holds one weight per column of X3: 3 numbers.
"""  # END TEST CONFIG
assert np.shape(w3) == (3,)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `w3` are not the weights lstsq returns for X3: with a dependent column
  many weights fit equally well, and lstsq returns one particular choice.
  Did you change its weights, or fit another matrix?
"""  # END TEST CONFIG
_t_X3 = np.column_stack([X, 3 * X[:, 0] - 2 * X[:, 1]])
np.testing.assert_allclose(w3, np.linalg.pinv(_t_X3) @ y, atol=1e-10)
