"""Tests of masking-ex-padding: `by_hand`, the padding mask of this term's lengths (the book's
3, 1, 4) padded to this term's S (the book's 4: masking-ex-padding.term.yml), built by hand (a broadcast comparison, not a call to `padding_mask`).

points: 1
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `by_hand` must be a boolean table with one row per sequence and one column
  per key position: here its shape or dtype is not that.
"""  # END TEST CONFIG
assert np.shape(by_hand) == (3, _t_term["S"]) and np.asarray(by_hand).dtype == bool

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  A row of `by_hand` lets through a number of keys other than its sequence's
  length: count the True entries of each row (off by one?), and check that
  they come first.
"""  # END TEST CONFIG
_t_b = np.asarray(by_hand)
_t_lens = [_t_term["len0"], _t_term["len1"], _t_term["len2"]]
assert list(_t_b.sum(axis=1)) == _t_lens
assert all(np.all(_t_b[n, :k]) for n, k in enumerate(_t_lens))

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `by_hand` must be built by hand: the statement that stores it may not reach
  padding_mask (under any name, through a list, getattr or a function of your
  own: the exercise is to write what it computes), nor loop (`for`, `while`, a
  comprehension, map, np.vectorize, functools.reduce or recursion).
"""  # END TEST CONFIG
_t_value, _t_cell = _t_assignment("by_hand")
assert _t_value
assert not _t_reached(_t_feeding("by_hand"), {"padding_mask", "causal_mask"})
assert not _t_library_calls(lambda: [eval(compile(_t_ast.Expression(_t_v), "<by_hand>", "eval"),
                                          globals()) for _t_v in _t_value],
                            {"padding_mask", "causal_mask"})

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `by_hand` is built without a comparison: compare the key positions with the
  lengths (`<` or `>` between a row and a column, or np.less, np.greater and
  their `.outer`), and let broadcasting make the table.
"""  # END TEST CONFIG
_t_value, _t_cell = _t_assignment("by_hand")
assert _t_compares(_t_value)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `by_hand` is not the padding mask of the exercise's lengths: an entry is
  True exactly at a real (not padded) key of its sequence; or it is not built
  by hand (see the checks above).
"""  # END TEST CONFIG
_t_pos = np.arange(_t_term["S"])
np.testing.assert_array_equal(
    by_hand,
    np.array([[p < n for p in _t_pos]
              for n in (_t_term["len0"], _t_term["len1"], _t_term["len2"])]),
)
_t_value, _t_cell = _t_assignment("by_hand")
assert _t_value and _t_compares(_t_value)
assert not _t_reached(_t_feeding("by_hand"), {"padding_mask", "causal_mask"})
assert not _t_library_calls(lambda: [eval(compile(_t_ast.Expression(_t_v), "<by_hand>", "eval"),
                                          globals()) for _t_v in _t_value],
                            {"padding_mask", "causal_mask"})
