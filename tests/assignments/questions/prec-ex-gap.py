"""Tests of prec-ex-gap: `g_found`, the smallest float16 gap g in [16, 20) for which the
last weight of the exercise's float16 row (k zeros, then -g; the book's: (0, -g)) is exactly
0. The weights are computed here with the kernel's softmax (lib.attention, not the
notebook's name), on the term's row (prec-ex-gap.term.yml).

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
  At `g_found` the last weight of the exercise's float16 row is not exactly
  0: is `g_found` the last gap with a nonzero weight rather than the first with
  a zero one, or were the weights computed in another dtype than float16?
"""  # END TEST CONFIG
from lib.attention import softmax as _t_softmax

_t_row = np.array([0.0] * _t_term["zeros"]["k"] + [-float(g_found)], dtype=np.float16)
assert _t_softmax(_t_row)[-1] == 0

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `g_found` is not the smallest float16 gap whose last weight is exactly 0
  for the exercise's row: compare the weight at `g_found` with the weight at
  the float16 gap just below it.
"""  # END TEST CONFIG
from lib.attention import softmax as _t_softmax

# every float16 gap of [16, 20), each in the term's row (k zeros, then -g)
_t_gaps = (16 + np.arange(256) / 64).astype(np.float16)
_t_rows = np.concatenate(
    [np.zeros((256, _t_term["zeros"]["k"]), dtype=np.float16), -_t_gaps[:, None]], axis=1
)
_t_last = _t_softmax(_t_rows)[:, -1]
assert np.any(_t_last == 0)
assert float(g_found) == float(_t_gaps[np.argmax(_t_last == 0)])
