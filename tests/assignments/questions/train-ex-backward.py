"""Tests of train-ex-backward: my_backward(query, key, value, grad_output, attn_mask), the
student's own backward pass (it may not call lib.training's), against
lib.training.attention_backward, which tests/test_training.py checks against PyTorch's
autograd: random 2-D cases with a causal mask, a fully masked row and a mask of holes. The
scale is this term's, c = 1/(tau sqrt(E)) (train-ex-backward.term.yml; the book's: tau = 1).

points: 3
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  With query (5, 4), key (6, 4), value (6, 3) and grad_output (5, 3),
  `my_backward` must return three arrays (dQ, dK, dV) of the shapes of query,
  key and value.
"""  # END TEST CONFIG
_t_rng = np.random.default_rng(36)
_t_q, _t_k = _t_rng.standard_normal((5, 4)), _t_rng.standard_normal((6, 4))
_t_v, _t_g = _t_rng.standard_normal((6, 3)), _t_rng.standard_normal((5, 3))
_t_out = my_backward(_t_q, _t_k, _t_v, _t_g, np.ones((5, 6), dtype=bool))
assert len(_t_out) == 3
assert [np.shape(_t_x) for _t_x in _t_out] == [(5, 4), (6, 4), (6, 3)]

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `my_backward` must be your own function: it may not be, or call, the
  library's backward pass (the exercise is to write the five products).
"""  # END TEST CONFIG
_t_why = _t_own_function(my_backward, ["attention_backward", "head_backward"])
assert _t_why is None, _t_why
_t_used = _t_library_calls(
    lambda: my_backward(*np.random.default_rng(7).standard_normal((4, 3, 3)),
                        np.tril(np.ones((3, 3), dtype=bool))),
    {"attention_backward", "head_backward"},
)
assert not _t_used, "my_backward calls " + ", ".join(sorted(_t_used))

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  dV = A^T dO is not what attention_backward returns with the exercise's
  scale: are your weights A those of that scale (the kernel's `scale=`)
  and of the mask?
"""  # END TEST CONFIG
from lib.training import attention_backward as _t_backward

_t_rng = np.random.default_rng(37)
_t_q, _t_k = _t_rng.standard_normal((4, 3)), _t_rng.standard_normal((5, 3))
_t_v, _t_g = _t_rng.standard_normal((5, 2)), _t_rng.standard_normal((4, 2))
_t_m = np.ones((4, 5), dtype=bool)
_t_mine = my_backward(_t_q, _t_k, _t_v, _t_g, _t_m)
_t_c = 1 / (_t_term["temperature"]["tau"] * np.sqrt(3))  # the exercise's scale, E = 3
_t_ref = _t_backward(_t_q, _t_k, _t_v, _t_g, attn_mask=_t_m, scale=_t_c)
np.testing.assert_allclose(_t_mine[2], _t_ref[2], atol=1e-10)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  dQ or dK is not right: the rows of dZ should each sum to 0 (the
  softmax ignores a shift of a whole row of scores). Did you subtract each
  row's weighted mean, rowsum(dA * A), before multiplying by A?
"""  # END TEST CONFIG
_t_rng = np.random.default_rng(37)
_t_q, _t_k = _t_rng.standard_normal((4, 3)), _t_rng.standard_normal((5, 3))
_t_v, _t_g = _t_rng.standard_normal((5, 2)), _t_rng.standard_normal((4, 2))
_t_mine = my_backward(_t_q, _t_k, _t_v, _t_g, np.ones((4, 5), dtype=bool))
# dK = c dZ^T Q: its rows sum over the keys to c Q^T (row sums of dZ) = 0, whatever c
np.testing.assert_allclose(np.sum(_t_mine[1], axis=0), 0.0, atol=1e-10)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  dQ and dK are off by a constant factor: the scores are c Q K^T with
  c the exercise's scale, so dQ = c dZ K and dK = c dZ^T Q. Did you leave
  out c?
"""  # END TEST CONFIG
from lib.training import attention_backward as _t_backward

_t_rng = np.random.default_rng(38)
_t_q, _t_k = _t_rng.standard_normal((4, 9)), _t_rng.standard_normal((5, 9))
_t_v, _t_g = _t_rng.standard_normal((5, 2)), _t_rng.standard_normal((4, 2))
_t_m = np.ones((4, 5), dtype=bool)
_t_mine = my_backward(_t_q, _t_k, _t_v, _t_g, _t_m)
_t_c = 1 / (_t_term["temperature"]["tau"] * np.sqrt(9))  # the exercise's scale, E = 9
_t_ref = _t_backward(_t_q, _t_k, _t_v, _t_g, attn_mask=_t_m, scale=_t_c)
for _t_a, _t_b in zip(_t_mine[:2], _t_ref[:2]):
    _t_ratio = np.sum(_t_a * _t_b) / np.sum(_t_b * _t_b)
    assert abs(_t_ratio - 1) < 1e-6, f"off by a factor {_t_ratio:.3f}"

# %%
""" # BEGIN TEST CONFIG
points: 3
hidden: true
failure_message: >-
  The gradients differ from the backward pass of attention with the
  exercise's scale on random cases with a causal mask, a fully masked row and a mask with holes (a fully
  masked row has zero weights, so its rows of dQ and dZ are zero); or the
  function is not your own (see the test above).
"""  # END TEST CONFIG
from lib.attention import causal_mask as _t_causal
from lib.training import attention_backward as _t_backward

_t_rng = np.random.default_rng(39)
for _t_L, _t_S, _t_E, _t_Ev in [(5, 6, 4, 3), (3, 3, 8, 1), (6, 4, 2, 5)]:
    _t_q = 2 * _t_rng.standard_normal((_t_L, _t_E))
    _t_k = _t_rng.standard_normal((_t_S, _t_E))
    _t_v = _t_rng.standard_normal((_t_S, _t_Ev))
    _t_g = _t_rng.standard_normal((_t_L, _t_Ev))
    for _t_m in (_t_causal(_t_L, _t_S), _t_rng.random((_t_L, _t_S)) < 0.6):
        _t_m = _t_m.copy()
        _t_m[1] = False
        # the values compared are those of the profiled call itself
        _t_mine, _t_used = _t_profiled(lambda: my_backward(_t_q, _t_k, _t_v, _t_g, _t_m),
                                       {"attention_backward", "head_backward"})
        assert not _t_used
        _t_c = 1 / (_t_term["temperature"]["tau"] * np.sqrt(_t_E))  # the exercise's
        _t_ref = _t_backward(_t_q, _t_k, _t_v, _t_g, attn_mask=_t_m, scale=_t_c)
        for _t_a, _t_b in zip(_t_mine, _t_ref, strict=True):
            np.testing.assert_allclose(_t_a, _t_b, rtol=1e-9, atol=1e-12)
assert _t_own_function(my_backward, ["attention_backward", "head_backward"]) is None
