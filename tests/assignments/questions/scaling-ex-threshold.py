"""Tests of scaling-ex-threshold: `E_star`, the smallest power of two E at which the average
largest weight of unscaled rows of S = 16 keys exceeds the threshold (0.99 in the book, the
term's own in an assignment: scaling-ex-threshold.term.yml, `_t_term`). The tests measure with the
exercise's shortcut on their own seeded draws, with the exercise's S and threshold (never the
notebook's `n_keys`, `one_hot` or `softmax`, which a student may rebind).

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `E_star` is a power of two, as an int.
"""  # END TEST CONFIG
assert int(E_star) == E_star and E_star >= 2
assert int(E_star) & (int(E_star) - 1) == 0

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  At `E_star` the average largest weight does not exceed the threshold (measured here
  with the shortcut on 400,000 rows): is `E_star` the last power of two
  below the threshold rather than the first above it, or were the rows
  scaled?
"""  # END TEST CONFIG
from lib.attention import softmax as _t_softmax

_t_rng = np.random.default_rng(23)
_t_norm = np.sqrt(_t_rng.chisquare(int(E_star), size=(400_000, 1)))
_t_top = _t_softmax(_t_norm * _t_rng.standard_normal((400_000, 16))).max(axis=-1)
assert _t_top.mean() > _t_term["threshold"]

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  At `E_star` the average largest weight does not exceed the threshold, or
  at E_star / 2 it already does: check the shortcut's sampling against the
  exercise, and use enough rows.
"""  # END TEST CONFIG
from lib.attention import softmax as _t_softmax

_t_rng = np.random.default_rng(19)


def _t_mean_top(E_t, n_t=400_000):
    norm_t = np.sqrt(_t_rng.chisquare(E_t, size=(n_t, 1)))
    z_t = norm_t * _t_rng.standard_normal((n_t, 16))
    return _t_softmax(z_t).max(axis=-1).mean()


assert int(E_star) == E_star > 1 and int(E_star) & (int(E_star) - 1) == 0  # a power of two
assert _t_mean_top(int(E_star)) > _t_term["threshold"] > _t_mean_top(int(E_star) // 2)
