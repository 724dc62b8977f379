"""Tests of train-ex-rank: `smallest`, for r = 1 ... d, the smallest weight a held-out query
of the exercise's positions i (this term's `pos`, from lo to hi - 1; the book's: every
i >= 1) puts on key i - 1 when W_Q W_K^T is cut to its best rank-r approximation, and
`r_min`, the smallest r whose weight is at least the term's `bar` (the book's: 0.9).
Recomputed here from the notebook's trained run (`run.final`), its held-out sequences
`x_test` and its width (the shape of `run.final`: the notebook's `d` is not read).

points: 2
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `smallest` must hold one weight per rank r = 1 ... d (d = 8 here), each
  between 0 and 1, and `r_min` must be one of those ranks.
"""  # END TEST CONFIG
_t_d = run.final[0].shape[1]  # the trained head's width d
_t_s = np.asarray(smallest, dtype=float)
assert _t_s.shape == (_t_d,)
assert np.all((0 <= _t_s) & (_t_s <= 1))
assert int(r_min) == r_min and 1 <= r_min <= _t_d

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  With r = d, M_r is M itself, so the last entry of `smallest` must be the
  trained head's smallest weight on key i - 1 over the exercise's held-out
  queries. It is not: check the scale (the head's c = 1/sqrt(d), not
  1/sqrt(D)), the causal mask, and which weights you take (the exercise's
  queries i only, column i - 1).
"""  # END TEST CONFIG
from lib.training import head_attention as _t_head

_, _t_a = _t_head(x_test, *run.final, is_causal=True, return_weights=True)
_t_i = np.arange(_t_term["pos"]["lo"], _t_term["pos"]["hi"])  # the exercise's queries
np.testing.assert_allclose(
    np.asarray(smallest, dtype=float)[-1], _t_a[:, _t_i, _t_i - 1].min(), rtol=1e-6
)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `r_min` does not match `smallest`: it is the first rank whose smallest
  weight is at least the exercise's bar.
"""  # END TEST CONFIG
_t_s = np.asarray(smallest, dtype=float)
_t_bar = _t_term["bar"]
assert _t_s[int(r_min) - 1] >= _t_bar and np.all(_t_s[: int(r_min) - 1] < _t_bar)

# %%
""" # BEGIN TEST CONFIG
points: 2
hidden: true
failure_message: >-
  The weights differ from those of the best rank-r approximations of
  W_Q W_K^T (the r largest singular values and their vectors) at the
  exercise's queries, or `r_min` is not the first rank that passes the
  exercise's bar.
"""  # END TEST CONFIG
from lib.attention import scaled_dot_product_attention as _t_sdpa

_t_M = run.final[0] @ run.final[1].T
_t_u, _t_sv, _t_vt = np.linalg.svd(_t_M)
_t_i = np.arange(_t_term["pos"]["lo"], _t_term["pos"]["hi"])  # the exercise's queries
_t_want = []
for _t_r in range(1, run.final[0].shape[1] + 1):
    _t_Mr = (_t_u[:, :_t_r] * _t_sv[:_t_r]) @ _t_vt[:_t_r]
    _, _t_a = _t_sdpa(x_test @ _t_Mr, x_test, x_test, is_causal=True,
                      scale=1 / np.sqrt(run.final[0].shape[1]), return_weights=True)
    _t_want.append(_t_a[:, _t_i, _t_i - 1].min())
np.testing.assert_allclose(np.asarray(smallest, dtype=float), _t_want, rtol=1e-6)
assert int(r_min) == 1 + int(np.argmax(np.array(_t_want) >= _t_term["bar"]))
