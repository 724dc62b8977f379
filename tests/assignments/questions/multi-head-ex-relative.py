"""Tests of multi-head-ex-relative: `R_k`, the D x D matrix (D = 10) with
PE_(i+Delta) = R_k PE_i for every position i (column vectors), Delta this term's offset
(`_t_term["delta"]`, 3 in the book). The position vectors are recomputed here by the
formula of Vaswani et al. (never the notebook's `sinusoidal_positions` or `D`, which a
student may rebind), on more positions than the exercise checks.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `R_k` is a D x D matrix (D = 10, the notebook's width).
"""  # END TEST CONFIG
assert np.shape(R_k) == (10, 10)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `R_k` moves every position back by the offset instead of forward: it maps
  PE_(i+Delta) to PE_i. Check the signs of the sines against the
  angle-addition formulas, and which of R_k and its transpose acts on the
  rows of PE.
"""  # END TEST CONFIG
_t_k, _t_n = _t_term["delta"], _t_term["rel_n"]
_t_i = np.arange(_t_n + _t_k)[:, None]
_t_f = 10000.0 ** (-np.arange(0, 10, 2) / 10)
_t_pe = np.empty((_t_n + _t_k, 10))
_t_pe[:, 0::2], _t_pe[:, 1::2] = np.sin(_t_i * _t_f), np.cos(_t_i * _t_f)
assert not np.allclose(_t_pe[_t_k:] @ np.transpose(R_k), _t_pe[:_t_n], atol=1e-9)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  R_k PE_i is not PE_(i+Delta) for the exercise's offset: your R_k turns the
  (sine, cosine) pairs by another angle or the wrong way. Check the offset,
  its signs against the angle-addition formulas, and which of R_k and its
  transpose acts on the rows.
"""  # END TEST CONFIG
_t_k = _t_term["delta"]
_t_i = np.arange(200 + _t_k)[:, None]
_t_f = 10000.0 ** (-np.arange(0, 10, 2) / 10)
_t_pe = np.empty((200 + _t_k, 10))
_t_pe[:, 0::2], _t_pe[:, 1::2] = np.sin(_t_i * _t_f), np.cos(_t_i * _t_f)
np.testing.assert_allclose(_t_pe[_t_k:], _t_pe[:200] @ np.transpose(R_k), atol=1e-10)
