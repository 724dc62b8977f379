"""Tests of prec-ex-gap (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `g_found` is one of the float16 gaps in [16, 20).
"""  # END TEST CONFIG
assert 16 <= g_found < 20

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `g_found` is not the smallest float16 gap whose second weight is exactly
  0: compare the weight at `g_found` with the weight at the float16 gap just
  below it.
"""  # END TEST CONFIG
_t_g = np.float16(g_found)
_t_prev = np.nextafter(_t_g, np.float16(0))
assert softmax(np.array([0, -_t_g], dtype=np.float16))[1] == 0
assert softmax(np.array([0, -_t_prev], dtype=np.float16))[1] > 0
