"""Tests of prec-ex-gap: `g_found`, the smallest float16 gap g in [16, 20) for which the
second weight of softmax((0, -g)) in float16 is exactly 0. The weights are computed here with
the kernel's softmax (lib.attention, not the notebook's name).

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `g_found` is one of the float16 gaps in [16, 20), which are 1/64 apart.
"""  # END TEST CONFIG
assert 16 <= g_found < 20 and float(g_found) * 64 == int(float(g_found) * 64)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  At `g_found` the second weight of the float16 row (0, -g) is not exactly 0:
  is `g_found` the last gap with a nonzero weight rather than the first with
  a zero one, or were the weights computed in another dtype than float16?
"""  # END TEST CONFIG
from lib.attention import softmax as _t_softmax

assert _t_softmax(np.array([0, -float(g_found)], dtype=np.float16))[1] == 0

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `g_found` is not the smallest float16 gap whose second weight is exactly
  0: compare the weight at `g_found` with the weight at the float16 gap just
  below it.
"""  # END TEST CONFIG
from lib.attention import softmax as _t_softmax

_t_g = np.float16(g_found)
_t_prev = np.nextafter(_t_g, np.float16(0))
assert float(_t_g) == float(g_found)
assert _t_softmax(np.array([0, -_t_g], dtype=np.float16))[1] == 0
assert _t_softmax(np.array([0, -_t_prev], dtype=np.float16))[1] > 0
