"""Tests of real-ex-positions: `w_nopos`, layer 0's weights of the notebook's batch without
position information: the word and token-type embeddings, plus the term's position p's
embedding for every token (real-ex-positions.term.yml; the public site's leaves the positions
out), then LayerNorm, the key mask kept. The reference is recomputed here from `model` and
`batch` (lib.pretrained), never from the notebook's `word`, `weights` or `proj`, which a
student may rebind.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `w_nopos` must hold one (L, L) table of weights per sentence and per head:
  its shape is not that.
"""  # END TEST CONFIG
_t_N, _t_L = np.shape(batch.input_ids)
assert np.shape(w_nopos) == (_t_N, model.num_heads, _t_L, _t_L)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  Some weight of `w_nopos` falls on a padding key (a key beyond its
  sentence's end): the key mask must keep hiding the padding when the
  positions are left out.
"""  # END TEST CONFIG
_t_w = np.asarray(w_nopos)
for _t_s, _t_n in enumerate(batch.lengths):
    assert np.all(_t_w[_t_s, :, :, _t_n:] == 0)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  In `w_nopos` some query gives keys 1 and 5 of the first sentence (the two
  tokens 'the') different weights: the inputs still carry their positions.
"""  # END TEST CONFIG
np.testing.assert_allclose(
    np.asarray(w_nopos)[0, :, :, 1], np.asarray(w_nopos)[0, :, :, 5], rtol=0, atol=1e-6
)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `w_nopos` are not the weights of layer 0 on the token vectors the exercise
  describes (the same LayerNorm, the same key mask): check what is left out
  or replaced, and what is kept.
"""  # END TEST CONFIG
from lib.pretrained import layer_norm as _t_ln, self_attention as _t_self

_t_p = model.weights
_t_x = _t_ln(
    _t_p["embeddings.word_embeddings.weight"][batch.input_ids]
    + _t_p["embeddings.token_type_embeddings.weight"][0]
    + (0 if _t_term["pos"]["p"] is None
       else _t_p["embeddings.position_embeddings.weight"][_t_term["pos"]["p"]]),
    _t_p["embeddings.LayerNorm.weight"], _t_p["embeddings.LayerNorm.bias"],
    model.layer_norm_eps,
)
_t_want = _t_self(model, _t_x, batch.key_mask).weights
np.testing.assert_allclose(w_nopos, _t_want, rtol=0, atol=1e-5)
