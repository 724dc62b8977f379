"""Tests of span-ex-dependent-feature: `w3`, the weights lstsq returns for X with the term's
dependent column a x_0 + b x_1 appended (span-ex-dependent-feature.term.yml: the book's
3 x_0 - 2 x_1), fit to y = (1, 2, 4). X and y are the chapter's (lib.data and the
exercise), never the notebook's globals.

points: 1
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `w3` holds one weight per column of X3: 3 numbers.
"""  # END TEST CONFIG
assert np.shape(w3) == (3,)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  With the exercise's appended column, `w3` does not give the least-squares
  predictions of X alone (a dependent column changes the weights, not the
  predictions): check the column you appended, its signs and factors.
"""  # END TEST CONFIG
from lib.data import span_example as _t_span

_t_X = _t_span()[0]
_t_y = np.array([1.0, 2.0, 4.0])
_t_X3 = np.column_stack([_t_X, _t_term["feature"]["a"] * _t_X[:, 0]
                         + _t_term["feature"]["b"] * _t_X[:, 1]])
_t_pred = _t_X @ np.linalg.lstsq(_t_X, _t_y, rcond=None)[0]
np.testing.assert_allclose(_t_X3 @ np.asarray(w3, dtype=float), _t_pred, atol=1e-9)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `w3` are not the weights lstsq returns for X3 with the exercise's appended
  column: with a dependent column many weights fit equally well, and lstsq
  returns one particular choice. Did you change its weights, or fit another
  matrix?
"""  # END TEST CONFIG
from lib.data import span_example as _t_span

_t_X = _t_span()[0]
_t_X3 = np.column_stack([_t_X, _t_term["feature"]["a"] * _t_X[:, 0]
                         + _t_term["feature"]["b"] * _t_X[:, 1]])
np.testing.assert_allclose(w3, np.linalg.pinv(_t_X3) @ np.array([1.0, 2.0, 4.0]),
                           atol=1e-10)
