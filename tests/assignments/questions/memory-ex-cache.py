"""Tests of memory-ex-cache (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `B_max` and `B_pow2` are block sizes: positive whole numbers, `B_pow2` a
  power of two.
"""  # END TEST CONFIG
assert int(B_max) == B_max > 0 and int(B_pow2) == B_pow2 > 0
assert int(B_pow2) & (int(B_pow2) - 1) == 0

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `B_pow2` is not the largest power of two at most `B_max`: it is larger
  than `B_max` (a block that does not fit), or twice it is still at most
  `B_max` (was the logarithm rounded the wrong way?).
"""  # END TEST CONFIG
assert B_pow2 <= B_max < 2 * B_pow2

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  The tile of `B_max` does not fit in the exercise's cache, or that of the
  next block size still does: recount the float32 arrays one tile holds (with
  the exercise's E = Ev).
"""  # END TEST CONFIG


def _t_tile(B_t, E_t=_t_term["cache_E"]):
    return 4 * (2 * B_t * E_t + 2 * B_t * E_t + B_t * B_t + 2 * B_t)


assert _t_tile(B_max) <= _t_term["cache_mib"] * 2**20 < _t_tile(B_max + 1)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `B_pow2` is not the largest power of two whose tile fits in the exercise's
  cache.
"""  # END TEST CONFIG


def _t_tile(B_t, E_t=_t_term["cache_E"]):
    return 4 * (2 * B_t * E_t + 2 * B_t * E_t + B_t * B_t + 2 * B_t)


assert _t_tile(B_pow2) <= _t_term["cache_mib"] * 2**20 < _t_tile(2 * B_pow2)
