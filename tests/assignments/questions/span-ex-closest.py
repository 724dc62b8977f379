"""Tests of span-ex-closest: `q_close`, one query whose output is within the term's tolerance
of the term's target value row (span-ex-closest.term.yml: the book's v_1 within 1e-3). The
keys and values are the chapter's (lib.data.span_example, never the notebook's K, V or
closest_tol, which a student may rebind).

points: 1
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `q_close` is one query, a vector of 2 numbers (E = 2).
"""  # END TEST CONFIG
assert np.shape(q_close) == (2,)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  With `q_close`, the key of the exercise's target row does not get the largest
  score, so the output is pulled towards another value row: check the query's
  direction against the three keys.
"""  # END TEST CONFIG
from lib.data import span_example as _t_span

_t_K = _t_span()[3]
assert int(np.argmax(_t_K @ np.reshape(q_close, (2,)))) == _t_term["target"]["j"]

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  The output for `q_close` is not within the exercise's tolerance of its target
  row: the target's key does not beat the other keys' by enough. Check the
  query's direction against the three keys, and its length.
"""  # END TEST CONFIG
from lib.attention import scaled_dot_product_attention as _t_sdpa
from lib.data import span_example as _t_span

_t_X, _t_w, _t_Q, _t_K, _t_V = _t_span()
_t_out = _t_sdpa(np.reshape(np.asarray(q_close, dtype=float), (1, 2)), _t_K, _t_V)
assert np.linalg.norm(_t_out[0] - _t_V[_t_term["target"]["j"]]) < _t_term["tol"]
