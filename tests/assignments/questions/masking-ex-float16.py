"""Tests of masking-ex-float16 (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points. The row's length is
the term's (masking-ex-float16.term.yml: `row`, every key of it masked).

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `scores16`, `shifted` and `fill_min` must each be a float16 row as long as
  the exercise's row: one of them is not (an array made from Python numbers is
  float64 unless you ask for float16, and float64 hides what the exercise is
  about).
"""  # END TEST CONFIG
assert np.asarray(scores16).dtype == np.asarray(shifted).dtype == np.float16
assert np.asarray(fill_min).dtype == np.float16
assert np.shape(scores16) == np.shape(shifted) == np.shape(fill_min) == (_t_term["row"]["n"],)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `fill_min` has an entry that is not finite: the fill of (b) is a number
  float16 can hold.
"""  # END TEST CONFIG
assert np.all(np.isfinite(fill_min))

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `scores16` or `shifted` do not show what the exercise is about: is each the
  exercise's row, of its length? After the fill, look at what float16 made of
  -1e9, and at the row minus its maximum.
"""  # END TEST CONFIG
assert np.shape(scores16) == np.shape(shifted) == (_t_term["row"]["n"],)
assert np.all(np.isneginf(scores16)) and np.all(np.isnan(shifted))

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `fill_min` is not the float16 row filled with a value float16 can hold that
  keeps the row finite after the max-shift: check its dtype (float16?), its
  length (the exercise's row's?) and its entries (is any of them infinite, or
  not the extreme float16 can hold?).
"""  # END TEST CONFIG
assert np.asarray(fill_min).dtype == np.float16
assert np.shape(fill_min) == (_t_term["row"]["n"],)
assert np.all(fill_min == np.finfo(np.float16).min)
