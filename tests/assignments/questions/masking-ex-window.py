"""Tests of masking-ex-window (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `window` is the (L, L) boolean mask of the exercise's L, and no row may
  allow more than the exercise's w keys.
"""  # END TEST CONFIG
assert np.shape(window) == (_t_term["L"],) * 2 and window.dtype == bool
assert np.all(window.sum(axis=-1) <= _t_term["w"])

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  The first query of `window` sees no key, or a key after it: which keys may
  the first token attend to? (A row with no key gives NaN weights.)
"""  # END TEST CONFIG
assert np.asarray(window)[0].sum() == 1 and not np.any(np.triu(window, k=1))

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `window` must be built with broadcasting: the statements that store it may
  not loop (`for`, `while`, a comprehension, map, np.vectorize,
  functools.reduce or recursion).
"""  # END TEST CONFIG
_t_value, _t_cell = _t_assignment("window")
assert _t_value and not _t_reached(_t_feeding("window"), set())

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `window` is not the sliding causal window of the exercise: compare, row by
  row, which keys each query may see (its own position? how many before
  it?); or it is built with a loop (see the check above).
"""  # END TEST CONFIG
_t_i, _t_j = np.arange(_t_term["L"])[:, None], np.arange(_t_term["L"])[None, :]
_t_expected = (_t_j <= _t_i) & (_t_j > _t_i - _t_term["w"])
np.testing.assert_array_equal(window, _t_expected)
_t_value, _t_cell = _t_assignment("window")
assert _t_value and not _t_reached(_t_feeding("window"), set())
