"""Tests of scaling-ex-threshold (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

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
points: 2
hidden: true
failure_message: >-
  At `E_star` the average largest weight does not exceed the threshold, or
  at E_star / 2 it already does: check the shortcut's sampling against the
  exercise, and use enough rows.
"""  # END TEST CONFIG
_t_rng = np.random.default_rng(19)


def _t_mean_top(E_t, n_t=400_000):
    norm_t = np.sqrt(_t_rng.chisquare(E_t, size=(n_t, 1)))
    z_t = norm_t * _t_rng.standard_normal((n_t, n_keys))
    return softmax(z_t).max(axis=-1).mean()


assert _t_mean_top(int(E_star)) > one_hot > _t_mean_top(int(E_star) // 2)
