"""Tests of multi-head-ex-causal: `out_causal` and `w_causal`, the causal layer's output and
weights, each graded on its own, against a reference recomputed here from X, weights_kw and
this term's layer (`_t_term["layer"]`: H heads on the first n tokens X[:n]; the book's
H = 2 on all 5), never from the notebook's `out`, `H`, `L` or `Dout`.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `w_causal` must hold one (n, n) table of weights per head of this
  assignment's layer (n: its number of tokens), and `out_causal` one output
  row per token: a shape is not that. Check the number of heads and which
  tokens the exercise names.
"""  # END TEST CONFIG
_t_H, _t_n = _t_term["layer"]["H"], _t_term["layer"]["n"]
assert np.shape(w_causal) == (_t_H, _t_n, _t_n)
assert np.shape(out_causal) == (_t_n, np.shape(weights_kw["w_o"])[1])

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
np.testing.assert_allclose(_t_w[..., 0, 0], 1.0)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `w_causal` are not the weights of the exercise's causal layer (its heads,
  its tokens; query i may attend to the keys up to and including its own
  position).
"""  # END TEST CONFIG
from lib.attention import multi_head_attention as _t_mha

_t_X = np.asarray(X)[: _t_term["layer"]["n"]]
_t_out, _t_w = _t_mha(
    _t_X, _t_X, _t_X, _t_term["layer"]["H"], **weights_kw, is_causal=True,
    return_weights=True,
)
assert np.shape(w_causal) == np.shape(_t_w)
np.testing.assert_allclose(w_causal, _t_w, rtol=1e-10, atol=1e-12)

# %%
""" # BEGIN TEST CONFIG
points: 1
hidden: true
failure_message: >-
  `out_causal` is not the output of the exercise's causal layer (its heads,
  its tokens).
"""  # END TEST CONFIG
from lib.attention import multi_head_attention as _t_mha

_t_X = np.asarray(X)[: _t_term["layer"]["n"]]
_t_out, _t_w = _t_mha(
    _t_X, _t_X, _t_X, _t_term["layer"]["H"], **weights_kw, is_causal=True,
    return_weights=True,
)
assert np.shape(out_causal) == np.shape(_t_out)
np.testing.assert_allclose(out_causal, _t_out, rtol=1e-10, atol=1e-12)
