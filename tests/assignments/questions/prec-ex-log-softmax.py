"""Tests of prec-ex-log-softmax: log_softmax_lse(x, axis=-1), the student's own function (no
library log-softmax, log-sum-exp or softmax), at the term's temperature T (log softmax(x / T);
the book's T = 1, prec-ex-log-softmax.term.yml), on scores far apart, -inf entries and other
axes. The tests' scores are T times the book's, so that x / T is the book's rows exactly.

points: 3
"""

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `log_softmax_lse(x)` must return an array of the shape of x: on a (3, 4)
  array it does not (check keepdims).
"""  # END TEST CONFIG
assert np.shape(log_softmax_lse(np.zeros((3, 4)))) == (3, 4)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  The exponentials of a log-softmax sum to 1 along the axis it is taken
  over: with axis=0 on a (3, 4) array they do not (is `axis` passed to every
  reduction?).
"""  # END TEST CONFIG
_t_x = np.arange(12.0).reshape(3, 4) / 7
np.testing.assert_allclose(np.exp(log_softmax_lse(_t_x, axis=0)).sum(axis=0), 1.0)
np.testing.assert_allclose(np.exp(log_softmax_lse(_t_x)).sum(axis=-1), 1.0)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  On the row (0, T ln 3), for the exercise's temperature T, the weights (the
  exponentials of the result) are not (1/4, 3/4): the log-softmax at
  temperature T is that of the scores divided by T.
"""  # END TEST CONFIG
_t_T = _t_term["temp"]["T"]
np.testing.assert_allclose(
    np.exp(log_softmax_lse(np.array([0.0, _t_T * np.log(3.0)]))), [0.25, 0.75]
)

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  On scores near 1000 T (1000 once divided by the exercise's temperature T)
  the result is not finite: exp of such a score overflows. The exercise's
  identity keeps every exponent at most 0.
"""  # END TEST CONFIG
with np.errstate(all="ignore"):
    _t_got = log_softmax_lse(_t_term["temp"]["T"] * np.array([1000.0, 999.0, 990.0]))
assert np.all(np.isfinite(_t_got))

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  On the row (0, -1000 T), for the exercise's temperature T, an entry is -inf
  or NaN: the second weight underflows to 0, but its logarithm, near -1000, is
  a number float64 holds. Is a weight formed before its log is taken?
"""  # END TEST CONFIG
with np.errstate(all="ignore"):
    _t_got = log_softmax_lse(_t_term["temp"]["T"] * np.array([0.0, -1000.0]))
assert np.all(np.isfinite(_t_got))

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: >-
  `log_softmax_lse` must be your own function: it may not call a library's
  log_softmax, logsumexp or softmax, under any name (the exercise is to write
  what they compute).
"""  # END TEST CONFIG
_t_why = _t_own_function(log_softmax_lse, ["log_softmax", "logsumexp", "softmax",
                                           "logaddexp", "logaddexp2"])
assert _t_why is None, _t_why
_t_used = _t_library_calls(lambda: log_softmax_lse(np.arange(6.0).reshape(2, 3)),
                           {"log_softmax", "logsumexp", "softmax", "logaddexp", "logaddexp2"})
assert not _t_used, "log_softmax_lse runs " + ", ".join(sorted(_t_used))

# %%
""" # BEGIN TEST CONFIG
points: 3
hidden: true
failure_message: >-
  Wrong values at the exercise's temperature on rows with scores far apart (a
  gap of 1000 T between entries, whose weight underflows but whose log does
  not), an entry -inf, a 3-d array or axis=0; or the function is not your own
  (see the test above).
"""  # END TEST CONFIG
_t_T = _t_term["temp"]["T"]
# T times the book's rows: divided by T (exactly: T is a power of two) they are the book's
_t_x = _t_T * np.array([[1000.0, 999.0, -np.inf, 0.0],
                        [-1000.0, -1001.0, -1002.0, -1010.0],
                        [0.0, -1000.0, -2000.0, 3.0]])
with np.errstate(all="ignore"):
    for _t_in, _t_axis in ((_t_x, -1), (_t_x.T, 0), (np.stack([_t_x, _t_x[::-1] + 5]), -1)):
        _t_s = _t_in / _t_T  # the scores at the temperature T
        _t_m = np.max(_t_s, axis=_t_axis, keepdims=True)
        _t_want = (_t_s - _t_m) - np.log(
            np.sum(np.exp(_t_s - _t_m), axis=_t_axis, keepdims=True)
        )
        # the values compared are those of the profiled call itself
        _t_got, _t_used = _t_profiled(lambda: log_softmax_lse(_t_in, axis=_t_axis),
                                      {"log_softmax", "logsumexp", "softmax", "logaddexp",
                                       "logaddexp2"})
        assert not _t_used
        np.testing.assert_allclose(_t_got, _t_want, rtol=1e-12)
assert _t_own_function(log_softmax_lse, ["log_softmax", "logsumexp", "softmax", "logaddexp",
                                         "logaddexp2"]) is None
