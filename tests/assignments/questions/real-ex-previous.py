"""Tests of real-ex-previous: `fraction`, per head, the fraction of the exercise's sentence's
real queries i >= 1 whose largest weight is on key i - 1. The sentence changes with the term
(real-ex-previous.term.yml; the public site's is "The quick brown fox jumps over the lazy
dog."): the hidden test recomputes the fractions on the term's sentence from `model`
(lib.pretrained), never from the notebook's `h_prev`, which a student may rebind.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `fraction` has one number per head, each between 0 and 1.
"""  # END TEST CONFIG
assert np.shape(fraction) == (model.num_heads,)
assert np.all((0 <= np.asarray(fraction)) & (np.asarray(fraction) <= 1))

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `fraction` does not count queries: each head's entry should be a number of
  queries divided by the sentence's number of real queries from the second
  on (the same for every head). Is it an average of weights instead, or
  divided by a count that includes the padding?
"""  # END TEST CONFIG
_t_f = np.asarray(fraction, dtype=float)
assert any(
    np.allclose(_t_f * _t_m, np.round(_t_f * _t_m), rtol=0, atol=1e-9)
    for _t_m in range(1, 513)
)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  `fraction` is not, per head, the share of the exercise's sentence's real
  queries from the second on whose largest weight is on the previous key:
  check the sentence, which queries you count (real tokens only, from the
  second on) and which key you compare each row's argmax with.
"""  # END TEST CONFIG
from lib.pretrained import embed as _t_embed, self_attention as _t_self, tokenize as _t_tok

_t_b = _t_tok(model, [_t_term["sentence"]])
_t_a = _t_self(model, _t_embed(model, _t_b), _t_b.key_mask).weights[0]  # (H, L, S)
_t_n = _t_b.lengths[0]
_t_i = np.arange(1, _t_n)
_t_want = (_t_a[:, _t_i, :_t_n].argmax(axis=-1) == _t_i - 1).mean(axis=1)  # (H,)
np.testing.assert_allclose(np.asarray(fraction, dtype=float), _t_want, rtol=0, atol=1e-9)
