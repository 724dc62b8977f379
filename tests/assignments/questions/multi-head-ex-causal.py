"""Tests of multi-head-ex-causal: `out_causal` and `w_causal`, the causal layer's output and
weights, each graded on its own, against a reference recomputed here from X, H and
weights_kw (never from the notebook's `out`, `L` or `Dout`).

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `w_causal` must hold one (L, L) table of weights per head, and
  `out_causal` one output row per token: a shape is not that.
"""  # END TEST CONFIG
_t_L = np.shape(X)[0]
assert np.shape(w_causal) == (H, _t_L, _t_L)
assert np.shape(out_causal) == (_t_L, np.shape(weights_kw["w_o"])[1])

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  Some weight of `w_causal` falls on a key after its query, or a row does not
  sum to 1, or the first query (which may see one key) does not put all its
  weight there: check which side of the diagonal the mask allows, and the
  diagonal itself.
"""  # END TEST CONFIG
_t_w = np.asarray(w_causal)
assert np.all(np.triu(_t_w, k=1) == 0)
np.testing.assert_allclose(_t_w.sum(axis=-1), 1.0)
np.testing.assert_allclose(_t_w[:, 0, 0], 1.0)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `w_causal` are not the weights of the causal layer (query i may attend to
  the keys up to and including its own position).
"""  # END TEST CONFIG
from lib.attention import multi_head_attention as _t_mha

_t_out, _t_w = _t_mha(
    X, X, X, H, **weights_kw, is_causal=True, return_weights=True
)
np.testing.assert_allclose(w_causal, _t_w, rtol=1e-10, atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `out_causal` is not the output of the causal layer on X.
"""  # END TEST CONFIG
from lib.attention import multi_head_attention as _t_mha

_t_out, _t_w = _t_mha(
    X, X, X, H, **weights_kw, is_causal=True, return_weights=True
)
np.testing.assert_allclose(out_causal, _t_out, rtol=1e-10, atol=1e-12)
