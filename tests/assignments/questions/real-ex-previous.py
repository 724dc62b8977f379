"""Tests of real-ex-previous (otter's test format; scripts/assignments.py puts them in the
assignment). Public tests (points 0) teach; hidden tests hold the points.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `fraction` has one number per head, each between 0 and 1.
"""  # END TEST CONFIG
assert np.shape(fraction) == (H,)
assert np.all((0 <= fraction) & (fraction <= 1))

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  The head where `fraction` is largest is not the previous-token head: check
  which queries you count (real tokens only, from the second on) and which
  key you compare each row's argmax with.
"""  # END TEST CONFIG
assert int(np.argmax(fraction)) == h_prev
