"""Tests of masking-ex-padding: `by_hand`, the padding mask of lengths (3, 1, 4) padded to
S = 4, built by hand (a broadcast comparison, not a call to `padding_mask`).

points: 1
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `by_hand` must be a boolean table with one row per sequence and one column
  per key position: here its shape or dtype is not that.
"""  # END TEST CONFIG
assert np.shape(by_hand) == (3, 4) and np.asarray(by_hand).dtype == bool

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  A row of `by_hand` lets through a number of keys other than its sequence's
  length: count the True entries of each row (off by one?), and check that
  they come first.
"""  # END TEST CONFIG
_t_b = np.asarray(by_hand)
assert list(_t_b.sum(axis=1)) == [3, 1, 4]
assert all(np.all(_t_b[n, :k]) for n, k in enumerate([3, 1, 4]))

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `by_hand` must be built by hand, with a comparison broadcast over positions
  and lengths: the statement that stores it may not call padding_mask, under
  any name or through getattr (the exercise is to write what it computes), nor
  loop (a comprehension is a loop).
"""  # END TEST CONFIG
_t_value, _t_cell = _t_assignment("by_hand")
assert _t_value
assert not _t_calls(_t_value) & {"padding_mask", "causal_mask"}
_t_why = _t_reached(_t_value, {"padding_mask", "causal_mask"})
assert not _t_why, "by_hand reaches " + ", ".join(sorted(_t_why))
assert any(
    isinstance(_t_n, _t_ast.Compare)
    or (isinstance(_t_n, _t_ast.Call)
        and getattr(_t_n.func, "attr", "") in ("less", "greater", "less_equal"))
    for _t_v in _t_value for _t_n in _t_ast.walk(_t_v)
)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `by_hand` is not the padding mask of the exercise's lengths: an entry is
  True exactly at a real (not padded) key of its sequence; or it is not built
  by hand (see the test above).
"""  # END TEST CONFIG
_t_pos = np.arange(4)
np.testing.assert_array_equal(
    by_hand,
    np.array([[p < n for p in _t_pos] for n in (3, 1, 4)]),
)
_t_value, _t_cell = _t_assignment("by_hand")
assert not _t_calls(_t_value) & {"padding_mask", "causal_mask"}
assert not _t_reached(_t_value, {"padding_mask", "causal_mask"})
assert any(
    isinstance(_t_n, _t_ast.Compare)
    or (isinstance(_t_n, _t_ast.Call)
        and getattr(_t_n.func, "attr", "") in ("less", "greater", "less_equal"))
    for _t_v in _t_value for _t_n in _t_ast.walk(_t_v)
)
