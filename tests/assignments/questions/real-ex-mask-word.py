"""Tests of real-ex-mask-word: `change`, per head and query of the first sentence, the sum of
absolute changes of the row of weights when the exercise's key is hidden (it changes with the
term, real-ex-mask-word.term.yml; the public site's is key 2, "cat"). The reference is
recomputed here from `model` and `batch` (never from the notebook's `weights`, which a
correct answer may rebind), and `change` must be measured, not written as the formula the
previous exercise derives.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `change` must hold one number per head and per query of the first sentence
  (its real tokens only, not the padding): its shape is not that.
"""  # END TEST CONFIG
assert np.shape(change) == (model.num_heads, batch.lengths[0])

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `change` must be measured: the statement that stores it should take the
  absolute differences between the rows of weights with and without the
  word and sum them, not use a formula for the result.
"""  # END TEST CONFIG
_t_values, _t_cell = _t_assignment("change")
assert _t_values and _t_calls(_t_values) & {"abs", "absolute", "norm", "fabs"}

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `change` does not agree with the previous exercise's result for hiding the
  exercise's key: which key did you hide (key 0 is [CLS]), and along which
  axis did you sum the absolute changes (a row of weights is one query's)?
"""  # END TEST CONFIG
from lib.pretrained import embed as _t_embed, self_attention as _t_self

_t_a = _t_self(model, _t_embed(model, batch), batch.key_mask).weights
_t_n = batch.lengths[0]
_t_j = _t_term["word"]["j"]
np.testing.assert_allclose(change, 2 * _t_a[0, :, :_t_n, _t_j], rtol=0, atol=1e-5)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `change` is not the sum of absolute changes of each row of the first
  sentence's weights when no query may attend to the exercise's key; or it
  is not measured (see the test above).
"""  # END TEST CONFIG
from lib.pretrained import embed as _t_embed, self_attention as _t_self

_t_X = _t_embed(model, batch)
_t_mask = np.array(batch.key_mask, copy=True)
_t_before = _t_self(model, _t_X, _t_mask).weights
_t_mask[0, _t_term["word"]["j"]] = False
_t_after = _t_self(model, _t_X, _t_mask).weights
_t_n = batch.lengths[0]
_t_want = np.abs(_t_after[0, :, :_t_n, :_t_n] - _t_before[0, :, :_t_n, :_t_n]).sum(-1)
np.testing.assert_allclose(change, _t_want, rtol=0, atol=1e-5)
_t_values, _t_cell = _t_assignment("change")
assert _t_calls(_t_values) & {"abs", "absolute", "norm", "fabs"}
