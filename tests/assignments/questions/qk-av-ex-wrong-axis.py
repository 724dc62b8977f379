"""Tests of qk-av-ex-wrong-axis: `O_wrong`, the output of the weights normalised over the
wrong axis, and `lam_wrong`, the barycentric coordinates of its rows. The reference is
recomputed from the chapter's Q, K, V (lib.data.qk_av_example) and the term's temperature
`tau` (qk-av-ex-wrong-axis.term.yml: the weights are softmax(scores / tau, axis=0)), never
from the notebook's `A_wrong` or `V`, which a student may rebind.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `O_wrong` must have one row per query and the width of a value row, and
  `lam_wrong` one row per row of `O_wrong` with one coordinate per value
  row: a shape is not that (is a product taken in the wrong order, or
  transposed?).
"""  # END TEST CONFIG
assert np.shape(O_wrong) == (2, 2) and np.shape(lam_wrong) == (2, 3)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  A row of `lam_wrong` does not sum to 1: barycentric coordinates do (the
  last equation of the system).
"""  # END TEST CONFIG
np.testing.assert_allclose(np.sum(lam_wrong, axis=1), 1.0)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  A row of `lam_wrong`, used as weights on v_0, v_1, v_2, does not give back
  its row of `O_wrong`: check the system you solve, chapter 1's, including
  its last equation.
"""  # END TEST CONFIG
from lib.data import qk_av_example as _t_example

np.testing.assert_allclose(
    np.asarray(lam_wrong) @ _t_example()[2], O_wrong, atol=1e-10
)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `O_wrong` is not the output of the weights normalised over the wrong axis
  at this assignment's temperature (section "The wrong axis" and the note
  under the exercise), or `lam_wrong` is not the barycentric coordinates of
  its rows.
"""  # END TEST CONFIG
from lib.attention import softmax as _t_softmax
from lib.data import qk_av_example as _t_example

_t_Q, _t_K, _t_V = _t_example()
_t_A = _t_softmax(_t_Q @ _t_K.T / np.sqrt(2) / _t_term["tau"], axis=0)
_t_O = _t_A @ _t_V
_t_T = np.vstack([_t_V.T, np.ones(3)])
np.testing.assert_allclose(O_wrong, _t_O, atol=1e-12)
np.testing.assert_allclose(
    lam_wrong, [np.linalg.solve(_t_T, np.append(_t_o, 1.0)) for _t_o in _t_O], atol=1e-10
)
