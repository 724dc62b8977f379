"""Tests of memory-ex-merge-code: merge(o1, lse1, o2, lse2), graded on its two results (the
output and the log-sum-exp) and on parts where a query sees no key, with random masked
inputs and batch axes.

points: 4
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `merge(o1, lse1, o2, lse2)` must return two arrays, the output with the
  shape of o1 and the log-sum-exp with the shape of lse1: on (2, 3) outputs
  and (2,) log-sum-exps it does not.
"""  # END TEST CONFIG
_t_z, _t_one = np.zeros((2, 3)), np.ones((2, 3))
_t_o, _t_lse = merge(_t_z, np.zeros(2), _t_one, np.zeros(2))
assert np.shape(_t_o) == (2, 3) and np.shape(_t_lse) == (2,)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  When the first part's log-sum-exp is 50 larger than the second's, the
  merged output is not (close to) the first part's output: check how much
  each part counts in the merge.
"""  # END TEST CONFIG
_t_o, _t_lse = merge(np.ones((1, 2)), np.array([50.0]), np.zeros((1, 2)), np.array([0.0]))
np.testing.assert_allclose(_t_o, np.ones((1, 2)), atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  The merged output differs from attention over all the keys, on random
  inputs split into two parts of different sizes, with masks and a batch
  axis.
"""  # END TEST CONFIG
from lib.attention import memory_efficient_attention as _t_mea

_t_rng = np.random.default_rng(19)
_t_q = _t_rng.standard_normal((3, 5, 4))
_t_k = _t_rng.standard_normal((3, 12, 4))
_t_v = _t_rng.standard_normal((3, 12, 2))
_t_m = _t_rng.random((3, 5, 12)) < 0.7
_t_m[:, :, 0] = True
_t_full = _t_mea(_t_q, _t_k, _t_v, attn_mask=_t_m, return_lse=True)
_t_parts = [_t_mea(_t_q, _t_k[:, s], _t_v[:, s], attn_mask=_t_m[:, :, s],
                                       return_lse=True)
            for s in (slice(0, 5), slice(5, 12))]
with np.errstate(all="ignore"):
    _t_o, _t_lse = merge(*_t_parts[0], *_t_parts[1])
np.testing.assert_allclose(_t_o, _t_full[0], atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  The merged log-sum-exp differs from the log-sum-exp over all the keys.
"""  # END TEST CONFIG
from lib.attention import memory_efficient_attention as _t_mea

_t_rng = np.random.default_rng(19)
_t_q = _t_rng.standard_normal((3, 5, 4))
_t_k = _t_rng.standard_normal((3, 12, 4))
_t_v = _t_rng.standard_normal((3, 12, 2))
_t_m = _t_rng.random((3, 5, 12)) < 0.7
_t_m[:, :, 0] = True
_t_full = _t_mea(_t_q, _t_k, _t_v, attn_mask=_t_m, return_lse=True)
_t_parts = [_t_mea(_t_q, _t_k[:, s], _t_v[:, s], attn_mask=_t_m[:, :, s],
                                       return_lse=True)
            for s in (slice(0, 5), slice(5, 12))]
with np.errstate(all="ignore"):
    _t_o, _t_lse = merge(*_t_parts[0], *_t_parts[1])
np.testing.assert_allclose(_t_lse, _t_full[1], atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  A query that sees no key in one part, or in both, gets NaN or a wrong
  output: a part with no visible key has log-sum-exp -inf.
"""  # END TEST CONFIG
from lib.attention import memory_efficient_attention as _t_mea

_t_rng = np.random.default_rng(7)
_t_q, _t_k = _t_rng.standard_normal((2, 5, 4))
_t_k = np.vstack([_t_k, _t_rng.standard_normal((7, 4))])
_t_v = _t_rng.standard_normal((12, 3))
_t_m = _t_rng.random((5, 12)) < 0.7
_t_m[0, :5], _t_m[1] = False, False
_t_m[2, 5:] = False
_t_full = _t_mea(_t_q, _t_k, _t_v, attn_mask=_t_m, return_lse=True)
_t_parts = [_t_mea(_t_q, _t_k[s], _t_v[s], attn_mask=_t_m[:, s],
                                       return_lse=True)
            for s in (slice(0, 5), slice(5, 12))]
with np.errstate(all="ignore"):
    _t_o, _t_lse = merge(*_t_parts[0], *_t_parts[1])
assert np.all(np.isfinite(_t_o))
np.testing.assert_allclose(_t_o, _t_full[0], atol=1e-12)
np.testing.assert_allclose(_t_lse, _t_full[1], atol=1e-12)
