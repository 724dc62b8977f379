"""Tests of masking-ex-float16 (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  Keep the names of the exercise: `scores16` (the float16 row, filled),
  `shifted` (minus its maximum) and `fill_min` (the row filled with a value
  float16 can hold), all float16 of 2 entries.
"""  # END TEST CONFIG
assert scores16.dtype == shifted.dtype == fill_min.dtype == np.float16
assert np.shape(scores16) == np.shape(fill_min) == (2,)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `scores16` or `shifted` do not show what the exercise is about: after the
  fill, look at what float16 made of -1e9, and at the row minus its maximum.
"""  # END TEST CONFIG
assert np.all(np.isneginf(scores16)) and np.all(np.isnan(shifted))

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `fill_min` is not the row filled with a value float16 can hold that keeps
  the row finite after the max-shift: check its entries (is any of them
  infinite, or not the extreme float16 can hold?).
"""  # END TEST CONFIG
assert np.all(fill_min == np.finfo(np.float16).min)
