"""Tests of real-ex-previous: `fraction`, per head, the fraction of a new sentence's real
queries i >= 1 whose largest weight is on key i - 1. The previous-token head is recomputed
here from `model` and `batch` (lib.pretrained), never read from the notebook's `h_prev`,
which a student may rebind; and `fraction` must be fractions of one number of queries.

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `fraction` has one number per head, each between 0 and 1.
"""  # END TEST CONFIG
assert np.shape(fraction) == (H,)
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
  The head where `fraction` is largest is not the previous-token head, or
  `fraction` does not count queries (see the test above): check which
  queries you count (real tokens only, from the second on) and which key you
  compare each row's argmax with.
"""  # END TEST CONFIG
from lib.pretrained import embed as _t_embed, self_attention as _t_self

_t_a = _t_self(model, _t_embed(model, batch), batch.key_mask).weights
_t_prev = np.mean(np.concatenate(
    [_t_a[_t_s, :, np.arange(1, _t_n), np.arange(_t_n - 1)].T
     for _t_s, _t_n in enumerate(batch.lengths)], axis=1), axis=1)
_t_f = np.asarray(fraction, dtype=float)
assert int(np.argmax(_t_f)) == int(np.argmax(_t_prev))
assert any(
    np.allclose(_t_f * _t_m, np.round(_t_f * _t_m), rtol=0, atol=1e-9)
    for _t_m in range(1, 513)
)
