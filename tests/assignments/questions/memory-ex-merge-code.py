"""Tests of memory-ex-merge-code: `merge`, graded on its two results (the output and the
log-sum-exp) and on parts where a query sees no key, with random masked inputs and batch axes.
The form of the parts changes with the term (memory-ex-merge-code.term.yml): two parts with
natural log-sum-exps, `merge(o1, lse1, o2, lse2)` (the public site's); the same with
log-sum-exps in base 2; or P parts stacked, `merge(o, lse)`. Each test calls the answer in the
term's form (`_t_merge`) and expects the term's log-sum-exp (natural or base 2).

points: 4
"""

# %% setup
# every test calls the answer through _t_merge, in this term's form; the hidden tests
# compare it on one case split into parts (_t_split_case)
def _t_merge(_t_parts):
    """The answer's merge of parts [(o, lse)] as memory_efficient_attention returns them,
    called in the form this term's exercise asks (base-2 log-sum-exps, or the parts stacked)."""
    if _t_term["state"]["kind"] == "stack":
        return merge(np.stack([_t_p[0] for _t_p in _t_parts]),
                     np.stack([_t_p[1] for _t_p in _t_parts]))
    (_t_o1, _t_l1), (_t_o2, _t_l2) = _t_parts
    return merge(_t_o1, _t_l1 / _t_base, _t_o2, _t_l2 / _t_base)


_t_base = np.log(2) if _t_term["state"]["kind"] == "log2" else 1.0  # the exercise's log
_t_cuts = (0, 5, 8, 12) if _t_term["state"]["kind"] == "stack" else (0, 5, 12)
_t_slices = [slice(_t_a, _t_b) for _t_a, _t_b in zip(_t_cuts[:-1], _t_cuts[1:])]  # the parts


def _t_split_case():
    """Attention over 12 masked keys of a batch of 3 (the full result, with its
    log-sum-exp) and the answer's merge of the same keys split into this term's parts."""
    from lib.attention import memory_efficient_attention as _t_mea

    _t_rng = np.random.default_rng(19)
    _t_q = _t_rng.standard_normal((3, 5, 4))
    _t_k = _t_rng.standard_normal((3, 12, 4))
    _t_v = _t_rng.standard_normal((3, 12, 2))
    _t_m = _t_rng.random((3, 5, 12)) < 0.7
    _t_m[:, :, 0] = True
    _t_full = _t_mea(_t_q, _t_k, _t_v, attn_mask=_t_m, return_lse=True)
    _t_parts = [_t_mea(_t_q, _t_k[:, _t_s], _t_v[:, _t_s], attn_mask=_t_m[:, :, _t_s],
                       return_lse=True)
                for _t_s in _t_slices]
    with np.errstate(all="ignore"):
        return _t_full, _t_merge(_t_parts)


# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `merge` must return two arrays, the output with the shape of one part's
  output and the log-sum-exp with the shape of one part's log-sum-exp: on
  two parts of (2, 3) outputs and (2,) log-sum-exps it does not.
"""  # END TEST CONFIG
_t_z, _t_one = np.zeros((2, 3)), np.ones((2, 3))
_t_o, _t_lse = _t_merge([(_t_z, np.zeros(2)), (_t_one, np.zeros(2))])
assert np.shape(_t_o) == (2, 3) and np.shape(_t_lse) == (2,)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  When the first part's log-sum-exp is 50 larger than the second's, the
  merged output is not (close to) the first part's output: check how much
  each part counts in the merge.
"""  # END TEST CONFIG

_t_o, _t_lse = _t_merge([(np.ones((1, 2)), np.array([50.0]) * _t_base),
                         (np.zeros((1, 2)), np.array([0.0]))])
np.testing.assert_allclose(_t_o, np.ones((1, 2)), atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  The merged output differs from attention over all the keys, on random
  inputs split into parts of different sizes, with masks and a batch axis:
  are the parts taken in the form the exercise gives them?
"""  # END TEST CONFIG
_t_full, (_t_o, _t_lse) = _t_split_case()
np.testing.assert_allclose(_t_o, _t_full[0], atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  The merged log-sum-exp differs from the log-sum-exp over all the keys, in
  the form the exercise asks for.
"""  # END TEST CONFIG
_t_full, (_t_o, _t_lse) = _t_split_case()
np.testing.assert_allclose(_t_lse, _t_full[1] / _t_base, atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  A query that sees no key in one part, or in any, gets NaN or a wrong
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
_t_parts = [_t_mea(_t_q, _t_k[_t_s], _t_v[_t_s], attn_mask=_t_m[:, _t_s], return_lse=True)
            for _t_s in _t_slices]
with np.errstate(all="ignore"):
    _t_o, _t_lse = _t_merge(_t_parts)
assert np.all(np.isfinite(_t_o))
np.testing.assert_allclose(_t_o, _t_full[0], atol=1e-12)
np.testing.assert_allclose(_t_lse, _t_full[1] / _t_base, atol=1e-12)
