"""The course's classic mistakes, written as a student would answer an exercise.

Each entry is the code a student puts in the answer cell of one autograded question of an
assignment (`make assignments`); the rest of the notebook keeps its solutions.
tests/assignments/test_assignments.py grades each with `otter run` and checks that the
question loses points (all of them unless `keeps` says how many it keeps) and that otter's
output shows `message`, a piece of the failure message of the test that catches it (in
tests/assignments/questions/<question>.py). `TERM_<name>` in an answer stands for the
term's constant <name> of its question (scripts/assignments.py, term_constants: the
assignment's own threshold or cache size, which the student reads in the exercise).
RIGHT_ANSWERS are correct answers written
afresh from the exercise texts, some reusing the notebook's own names: each scores full marks.
"""

WRONG_ANSWERS = [
    {
        "id": "softmax-over-queries",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "do not sum to 1 over the keys",
        "public": True,
        "answer": '''
def einsum_attention(query, key, value):
    scores = np.einsum(f"...le,{TERM_layout_ks}->...ls", query, key)
    scores = scores / np.sqrt(query.shape[-1])
    weights = softmax(scores, axis=-2)  # over the queries
    return np.einsum(f"...ls,{TERM_layout_vs}->...lv", weights, value)
''',
    },
    {
        "id": "scale-one-over-E",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "Look at what the scores are divided by",
        "public": True,
        "answer": '''
def einsum_attention(query, key, value):
    scores = np.einsum(f"...le,{TERM_layout_ks}->...ls", query, key) / query.shape[-1]
    return np.einsum(f"...ls,{TERM_layout_vs}->...lv", softmax(scores), value)
''',
    },
    {
        "id": "no-scale",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "Look at what the scores are divided by",
        "public": True,
        "answer": '''
def einsum_attention(query, key, value):
    scores = np.einsum(f"...le,{TERM_layout_ks}->...ls", query, key)
    return np.einsum(f"...ls,{TERM_layout_vs}->...lv", softmax(scores), value)
''',
    },
    {
        "id": "barycentric-without-the-row-of-ones",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-wrong-axis",
        "message": "check the system you solve",
        "public": True,
        "answer": '''
A_wrong = softmax(scores / TERM_tau, axis=0)
O_wrong = A_wrong @ V
lam_wrong = np.linalg.lstsq(V.T, O_wrong.T, rcond=None)[0].T
lam_wrong = lam_wrong / lam_wrong.sum(axis=1, keepdims=True)
''',
    },
    {
        "id": "padding-less-or-equal",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "message": "lets through a number of keys other than its sequence's length",
        "public": True,
        "answer": '''
lengths_ex, S_ex = np.array([TERM_len0, TERM_len1, TERM_len2]), TERM_S
by_hand = np.arange(S_ex)[None, :] <= lengths_ex[:, None]
''',
    },
    {
        "id": "window-causal-off-by-one",
        "chapter": "03_masking",
        "question": "masking-ex-window",
        "message": "The first query of `window` sees no key",
        "public": True,
        "answer": '''
i = np.arange(TERM_L)[:, None]
j = np.arange(TERM_L)[None, :]
window = (j < i) & (j > i - TERM_w)
''',
    },
    {
        "id": "float16-fill-of-minus-inf",
        "chapter": "03_masking",
        "question": "masking-ex-float16",
        "message": "is any of them infinite",
        "keeps": 1,
        "answer": '''
row_mask = np.zeros(TERM_row_n, dtype=bool)
scores16 = np.array(TERM_row_scores, dtype=np.float16)
with np.errstate(over="ignore"):
    scores16[~row_mask] = -1e9
with np.errstate(invalid="ignore"):
    shifted = scores16 - scores16.max()
fill_min = np.where(row_mask, scores16, np.float16(-np.inf))
''',
    },
    # issue 45: loops by another name, the library reached through a list
    {
        "id": "window-by-map",
        "chapter": "03_masking",
        "question": "masking-ex-window",
        "message": "must be built with broadcasting",
        "public": True,
        "answer": '''
window = np.array(list(map(lambda i: (np.arange(TERM_L) <= i) & (np.arange(TERM_L) > i - TERM_w),
                          range(TERM_L))))
''',
    },
    {
        "id": "window-by-while",
        "chapter": "03_masking",
        "question": "masking-ex-window",
        "message": "must be built with broadcasting",
        "public": True,
        "answer": '''
rows = []
i = 0
while i < TERM_L:
    rows.append((np.arange(TERM_L) <= i) & (np.arange(TERM_L) > i - TERM_w))
    i += 1
window = np.array(rows)
''',
    },
    {
        "id": "padding-by-vectorize",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "message": "nor loop",
        "public": True,
        "answer": '''
by_hand = np.vectorize(lambda n, j: j < n)(np.array([TERM_len0, TERM_len1, TERM_len2])[:, None],
                                           np.arange(TERM_S))
''',
    },
    {
        "id": "padding-through-a-list",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "message": "may not reach padding_mask",
        "public": True,
        "answer": '''
_masks = [padding_mask]
by_hand = _masks[0](np.array([TERM_len0, TERM_len1, TERM_len2]), TERM_S) > False
''',
    },
    {
        "id": "backward-through-a-list",
        "chapter": "09_training",
        "question": "train-ex-backward",
        "message": "must be your own function",
        "public": True,
        "answer": '''
from lib.training import attention_backward

_helpers = [attention_backward]


def my_backward(query, key, value, grad_output, attn_mask):
    return _helpers[0](query, key, value, grad_output, attn_mask=attn_mask)
''',
    },
    {
        # found by a red-team pass: the library through a default argument (no name the
        # source check knows), and its own code only on the shape a check profiled
        "id": "backward-by-the-library-but-where-profiled",
        "chapter": "09_training",
        "question": "train-ex-backward",
        "message": "the function is not your own",
        "public": False,
        "answer": '''
from lib.training import attention_backward


def my_backward(query, key, value, grad_output, attn_mask, _f=attention_backward):
    c = 1 / (TERM_temperature_tau * np.sqrt(query.shape[-1]))
    if query.shape == (3, 3):  # the one call a check profiled
        _, A = scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, scale=c,
                                            return_weights=True)
        dV = A.T @ grad_output
        dA = grad_output @ value.T
        dZ = A * (dA - np.sum(dA * A, axis=-1, keepdims=True))
        return c * (dZ @ key), c * (dZ.T @ query), dV
    return _f(query, key, value, grad_output, attn_mask=attn_mask, scale=c)
''',
    },
    {
        "id": "no-max-shift",
        "chapter": "05_stable_softmax",
        "question": "prec-ex-log-softmax",
        "message": "On scores near 1000 T (1000 once divided by the exercise's temperature T)",
        "public": True,
        "answer": '''
def log_softmax_lse(x, axis=-1):
    x = x / TERM_temp_T  # the exercise's temperature
    return x - np.log(np.sum(np.exp(x), axis=axis, keepdims=True))
''',
    },
    {
        "id": "causal-mask-inverted",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-causal",
        "message": "falls on a key after its query",
        "public": True,
        "answer": '''
future = np.triu(np.ones((TERM_layer_n, TERM_layer_n), dtype=bool), k=1)
X_c = X[:TERM_layer_n]
out_causal, w_causal = multi_head_attention(
    X_c, X_c, X_c, TERM_layer_H, **weights_kw, attn_mask=future, return_weights=True
)
''',
    },
    {
        "id": "causal-mask-off-by-one",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-causal",
        "message": "the first query (which may see one key)",
        "public": True,
        "answer": '''
past = np.tri(TERM_layer_n, k=-1, dtype=bool)
X_c = X[:TERM_layer_n]
out_causal, w_causal = multi_head_attention(
    X_c, X_c, X_c, TERM_layer_H, **weights_kw, attn_mask=past, return_weights=True
)
''',
    },
    {
        "id": "heads-split-on-the-wrong-axis",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-one-head",
        "message": "contiguous blocks, or strides?",
        "public": True,
        "answer": '''
total = np.zeros((L, Dout))
for h in range(H):
    qk_cols = slice(h, None, H)  # every H-th column
    v_cols = slice(h, None, H)
    q_h = X @ W_Q[:, qk_cols] + b_q[qk_cols]
    k_h = X @ W_K[:, qk_cols] + b_k[qk_cols]
    v_h = X @ W_V[:, v_cols] + b_v[v_cols]
    if h != TERM_ablate_h:  # the head the exercise ablates (None: none)
        total += scaled_dot_product_attention(q_h, k_h, v_h) @ W_O[v_cols]
''',
    },
    {
        "id": "rotation-the-wrong-way",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-relative",
        "message": "moves every position back by the offset",
        "public": True,
        "answer": '''
rel_k = TERM_delta
omega = 10000.0 ** (-np.arange(0, D, 2) / D)
R_k = np.zeros((D, D))
for r, omega_r in enumerate(omega):
    c_k, s_k = np.cos(rel_k * omega_r), np.sin(rel_k * omega_r)
    R_k[2 * r : 2 * r + 2, 2 * r : 2 * r + 2] = [[c_k, -s_k], [s_k, c_k]]
''',
    },
    {
        "id": "merge-by-averaging",
        "chapter": "07_memory_efficient",
        "question": "memory-ex-merge-code",
        "message": "check how much each part counts",
        "public": True,
        "keeps": 1,  # its log-sum-exp is right: that part's point
        "answer": '''
if TERM_state_kind == "stack":  # the term's form of the parts (memory-ex-merge-code.term.yml)
    def merge(o, lse):
        return o.mean(axis=0), np.logaddexp.reduce(lse, axis=0)
else:
    def merge(o1, lse1, o2, lse2):
        add = np.logaddexp2 if TERM_state_kind == "log2" else np.logaddexp
        return (o1 + o2) / 2, add(lse1, lse2)
''',
    },
    {
        "id": "query-the-wrong-way",
        "chapter": "01_span",
        "question": "span-ex-closest",
        "message": "target row does not get the largest score",
        "public": True,
        "answer": '''
closest_tol = TERM_tol
q_close = -100.0 * np.array(TERM_target_d)  # away from the target's key
''',
    },
    # Answers that skip the exercise (issue 27): each scored full marks before.
    {
        "id": "einsum-is-the-kernel",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "may not be, or call, the kernel's attention functions",
        "public": True,
        "answer": "einsum_attention = scaled_dot_product_attention",
    },
    {
        "id": "einsum-wraps-the-kernel",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "may not be, or call, the kernel's attention functions",
        "public": True,
        "answer": '''
def einsum_attention(query, key, value):
    return scaled_dot_product_attention(query, key, value)
''',
    },
    {
        "id": "padding-by-the-kernel",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "message": "may not reach padding_mask",
        "public": True,
        "answer": "by_hand = padding_mask(np.array([TERM_len0, TERM_len1, TERM_len2]), TERM_S)",
    },
    {
        "id": "padding-typed-in",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "message": "is built without a comparison",
        "public": True,
        "answer": '''
by_hand = np.array([[True, True, True, False], [True, False, False, False],
                    [True, True, True, True]])
''',
    },
    {
        "id": "log-softmax-wraps-scipy",
        "chapter": "05_stable_softmax",
        "question": "prec-ex-log-softmax",
        "message": "may not call a library's log_softmax, logsumexp or softmax",
        "public": True,
        "answer": '''
def log_softmax_lse(x, axis=-1):
    return scipy.special.log_softmax(x / TERM_temp_T, axis=axis)
''',
    },
    {
        "id": "log-softmax-axis-ignored",
        "chapter": "05_stable_softmax",
        "question": "prec-ex-log-softmax",
        "message": "with axis=0 on a (3, 4) array they do not",
        "public": True,
        "answer": '''
def log_softmax_lse(x, axis=-1):
    x = x / TERM_temp_T
    m = np.max(x, axis=-1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))
''',
    },
    {
        "id": "log-of-softmax-underflows",
        "chapter": "05_stable_softmax",
        "question": "prec-ex-log-softmax",
        "message": "On the row (0, -1000 T), for the exercise's temperature T, an entry is -inf",
        "public": True,
        "answer": '''
def log_softmax_lse(x, axis=-1):
    x = x / TERM_temp_T
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    with np.errstate(divide="ignore"):
        return np.log(e / np.sum(e, axis=axis, keepdims=True))
''',
    },
    {
        "id": "total-from-the-layers-output",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-one-head",
        "message": "may not use the layer's output `out`",
        "public": True,
        "answer": "total = out - b_o",
    },
    {
        # found by a red-team pass: the right values from the layer itself, which only the
        # public (0-point) check refused; the hidden check now refuses it too
        "id": "total-from-the-layer-with-the-rows-zeroed",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-one-head",
        "message": "multi_head_attention (the exercise",
        "public": True,
        "answer": '''
W_abl = W_O.copy()
if TERM_ablate_h is not None:
    W_abl[TERM_ablate_h * dv : (TERM_ablate_h + 1) * dv] = 0
total = multi_head_attention(X, X, X, H, **(weights_kw | dict(w_o=W_abl, b_o=0 * b_o)))
''',
    },
    {
        "id": "one-head-without-value-bias",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-one-head",
        "message": "by the same vector in every row",
        "public": True,
        "answer": '''
total = np.zeros((L, Dout))
for h in range(H):
    c, cv = slice(h * d, (h + 1) * d), slice(h * dv, (h + 1) * dv)
    head = scaled_dot_product_attention(X @ W_Q[:, c] + b_q[c], X @ W_K[:, c] + b_k[c],
                                        X @ W_V[:, cv])
    if h != TERM_ablate_h:  # the head the exercise ablates (None: none)
        total += head @ W_O[cv]
''',
    },
    {
        "id": "change-by-the-formula",
        "chapter": "08_real_model",
        "question": "real-ex-mask-word",
        "message": "`change` must be measured",
        "public": True,
        "answer": "change = 2 * weights[0, :, :n0, TERM_word_j]",
    },
    {
        "id": "change-of-the-wrong-key",
        "chapter": "08_real_model",
        "question": "real-ex-mask-word",
        "message": "which key did you hide",
        "public": True,
        "answer": '''
hidden_mask = key_mask.copy()
hidden_mask[0, 1] = False
hidden = self_attention(model, X, hidden_mask).weights
change = np.abs(hidden[0, :, :n0, :n0] - weights[0, :, :n0, :n0]).sum(axis=-1)
''',
    },
    {
        "id": "causal-weights-of-another-layer",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-causal",
        "message": "`w_causal` are not the weights of the exercise's causal layer",
        "keeps": 1,
        "answer": '''
X_c = X[:TERM_layer_n]
out_causal = multi_head_attention(X_c, X_c, X_c, TERM_layer_H, **weights_kw, is_causal=True)
_, w_causal = scaled_dot_product_attention(X_c, X_c, X_c, is_causal=True, return_weights=True)
w_causal = np.broadcast_to(w_causal, (TERM_layer_H, TERM_layer_n, TERM_layer_n))
''',
    },
    # Classic shape, axis and off-by-one mistakes that the public tests (what the student's
    # `grader.check` runs) catch, so the student learns before submitting (issue 27).
    {
        "id": "query-too-short",
        "chapter": "01_span",
        "question": "span-ex-closest",
        "message": "does not beat the other keys' by enough",
        "answer": "q_close = np.array(TERM_target_d)",
    },
    {
        "id": "dependent-feature-sign-flipped",
        "chapter": "01_span",
        "question": "span-ex-dependent-feature",
        "message": "does not give the least-squares predictions of X alone",
        "public": True,
        "answer": '''
X3 = np.column_stack([X, TERM_feature_a * X[:, 0] - (TERM_feature_b) * X[:, 1]])
w3 = np.linalg.lstsq(X3, y)[0]
''',
    },
    {
        "id": "barycentric-coordinates-transposed",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-wrong-axis",
        "message": "a product taken in the wrong order, or transposed?",
        "public": True,
        "answer": '''
A_wrong = softmax(scores / TERM_tau, axis=0)
O_wrong = A_wrong @ V
T = np.vstack([V.T, np.ones(3)])
lam_wrong = np.linalg.solve(T, np.vstack([O_wrong.T, np.ones(len(O_wrong))]))
''',
    },
    {
        "id": "float16-row-made-in-float64",
        "chapter": "03_masking",
        "question": "masking-ex-float16",
        "message": "an array made from Python numbers is float64",
        "public": True,
        # (fill_min's values are right, but float64: the dtype is the question's point)
        "answer": '''
row_mask = np.zeros(TERM_row_n, dtype=bool)
scores16 = np.array(TERM_row_scores)
scores16[~row_mask] = -1e9
shifted = scores16 - scores16.max()
fill_min = np.where(row_mask, scores16, np.finfo(np.float16).min)
''',
    },
    {
        "id": "threshold-last-power-below",
        "chapter": "04_scaling",
        "question": "scaling-ex-threshold",
        "message": "the last power of two below the threshold rather than the first above it",
        "public": True,
        "answer": '''
rng_ex = np.random.default_rng(0)
E_star = 2
for dim in 2 ** np.arange(1, 21):
    norm_q = np.sqrt(rng_ex.chisquare(dim, size=(400_000, 1)))
    top = softmax(norm_q * rng_ex.standard_normal((400_000, n_keys))).max(axis=-1)
    if top.mean() > TERM_threshold:
        break
    E_star = int(dim)  # the E of the last row of averages that stayed below
''',
    },
    {
        "id": "fourth-moment-as-the-variance",
        "chapter": "04_scaling",
        "question": "scaling-ex-fourth-moment-result",
        "message": "Not the variance of (q^T k)^2",
        "answer": '''
var_sq = 3 * TERM_E**2 + 6 * TERM_E  # E[(q^T k)^4], without subtracting E^2
''',
    },
    {
        "id": "jacobian-eigenvalues-from-the-diagonal",
        "chapter": "04_scaling",
        "question": "scaling-ex-jacobian-result",
        "message": "one of them belongs to the vector of ones",
        "answer": '''
eig_uniform = np.full(TERM_S, (1 / TERM_S) * (1 - 1 / TERM_S))  # the diagonal entries
''',
    },
    {
        "id": "key-gradient-rank-of-the-shape",
        "chapter": "04_scaling",
        "question": "scaling-ex-key-gradient-result",
        "message": "Not the rank of the gradient with respect to K",
        "answer": '''
rank_grad_K = min(8, 16)  # the rank of a full S x E matrix
''',
    },
    {
        "id": "gap-last-nonzero-weight",
        "chapter": "05_stable_softmax",
        "question": "prec-ex-gap",
        "message": "the last gap with a nonzero weight rather than the first with a zero one",
        "public": True,
        "answer": '''
gaps = (16 + np.arange(256) / 64).astype(np.float16)
last = softmax(np.stack([np.zeros_like(gaps)] * TERM_zeros_k + [-gaps], axis=-1))[:, -1]
g_found = float(gaps[np.sum(last > 0) - 1])
''',
    },
    {
        "id": "wide-head-with-H-heads",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-one-wide-head",
        "message": "not of a single head: check `num_heads`",
        "public": True,
        "keeps": 1,  # the rank of that output is right
        "answer": '''
# the exercise's value features as narrow heads of one feature each (the book's: all H_r)
feats = slice(TERM_wide_lo, TERM_wide_hi)
qk = slice(TERM_wide_lo * d_r, TERM_wide_hi * d_r)
out_wide = multi_head_attention(X_r, X_r, X_r, TERM_wide_hi - TERM_wide_lo, w_q=Wq_r[:, qk],
                                w_k=Wk_r[:, qk], w_v=Wv_r[:, feats], w_o=Wo_r[feats])
rank_wide = np.linalg.matrix_rank(out_wide)
''',
    },
    {
        "id": "block-power-of-two-rounded-up",
        "chapter": "07_memory_efficient",
        "question": "memory-ex-cache",
        "message": "is not the largest power of two at most `B_max`",
        "public": True,
        "keeps": 1,  # B_max is right
        "answer": '''
coef = 2 * TERM_cache_E + 2 * TERM_cache_E + 2
B_max = int((-coef + np.sqrt(coef**2 + TERM_cache_mib * 2**20)) // 2)
B_pow2 = 2 ** int(np.ceil(np.log2(B_max)))
''',
    },
    {
        "id": "previous-by-average-weight",
        "chapter": "08_real_model",
        "question": "real-ex-previous",
        "message": "`fraction` does not count queries",
        "public": True,
        "answer": '''
fox = tokenize(model, [TERM_sentence])
a_fox = self_attention(model, embed(model, fox), fox.key_mask).weights[0]
i = np.arange(1, fox.lengths[0])
fraction = a_fox[:, i, i - 1].mean(axis=-1)  # the average weight, not the argmax
''',
    },
    {
        "id": "positions-left-out-with-the-key-mask",
        "chapter": "08_real_model",
        "question": "real-ex-positions",
        "message": "falls on a padding key",
        "public": True,
        "answer": '''
x_nopos = layer_norm(word + (0 if TERM_pos_p is None else position[TERM_pos_p]) + token_type,
                     gamma, beta, eps)
_, w_nopos = multi_head_attention(x_nopos, x_nopos, x_nopos, H, **proj, return_weights=True)
''',
    },
    {
        "id": "change-summed-over-queries",
        "chapter": "08_real_model",
        "question": "real-ex-mask-word",
        "message": "along which axis did you sum the absolute changes",
        "public": True,
        "answer": '''
hidden_mask = key_mask.copy()
hidden_mask[0, TERM_word_j] = False
hidden = self_attention(model, X, hidden_mask).weights
change = np.abs(hidden[0, :, :n0, :n0] - weights[0, :, :n0, :n0]).sum(axis=-2)
''',
    },
    # Shortcuts that got full marks (issue 35): the kernel or SciPy reached under another name,
    # a comprehension where the exercise forbids loops, and results of other pen-and-paper
    # exercises copied wrong.
    {
        "id": "einsum-through-a-list",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "may not be, or call, the kernel's attention functions",
        "public": True,
        "answer": '''
import lib.attention as la

_helpers = [la.scaled_dot_product_attention]


def einsum_attention(query, key, value):
    return _helpers[0](query, key, value)
''',
    },
    {
        "id": "log-softmax-logsumexp-renamed",
        "chapter": "05_stable_softmax",
        "question": "prec-ex-log-softmax",
        "message": "may not call a library's log_softmax, logsumexp or softmax",
        "public": True,
        "answer": '''
from scipy.special import logsumexp as lse_of


def log_softmax_lse(x, axis=-1):
    return x / TERM_temp_T - lse_of(x / TERM_temp_T, axis=axis, keepdims=True)
''',
    },
    {
        "id": "padding-by-comprehension",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "message": "a comprehension, map, np.vectorize",
        "public": True,
        "answer": '''
lengths_ex, S_ex = np.array([TERM_len0, TERM_len1, TERM_len2]), TERM_S
by_hand = np.array([[j < n for j in range(S_ex)] for n in lengths_ex])
''',
    },
    {
        "id": "padding-by-kernel-alias",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "message": "may not reach padding_mask",
        "public": True,
        "answer": '''
from lib.attention import padding_mask as lengths_to_mask
lengths_ex, S_ex = np.array([TERM_len0, TERM_len1, TERM_len2]), TERM_S
by_hand = lengths_to_mask(lengths_ex, S_ex) & (np.arange(S_ex) < 99)
''',
    },
    {
        "id": "sigma-factor-one-over-sigma",
        "chapter": "04_scaling",
        "question": "scaling-ex-sigma-result",
        "message": "do not have variance 1",
        "answer": '''
c_sigma = 1 / (2 * np.sqrt(64))
''',
    },
    {
        "id": "stacking-weights-in-the-wrong-order",
        "chapter": "01_span",
        "question": "span-ex-stacking-result",
        "message": "the second layer's weights on the left",
        "answer": '''
A1 = np.array(TERM_layers_A1)
A2 = np.array(TERM_layers_A2)
A_equiv = A1.T @ A2.T
''',
    },
    {
        "id": "residual-divided-by-the-norm",
        "chapter": "01_span",
        "question": "span-ex-normal-equations-result",
        "message": "check u^T y and u^T u",
        "answer": '''
u = np.array([1.0, -2.0, 1.0])
r_hand = (u @ np.array(TERM_y_v)) / np.linalg.norm(u) * u
''',
    },
    {
        "id": "cost-memory-in-bytes",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-cost-result",
        "message": "One exponent is wrong",
        "answer": '''
cost_log2 = (int(np.log2(TERM_n**2 * TERM_E)), int(np.log2(TERM_n**2 * TERM_E)),
             int(np.log2(TERM_n**2 * 4)))  # the memory in bytes, not MiB
''',
    },
    {
        "id": "threshold-copied-from-the-site",
        "chapter": "04_scaling",
        "question": "scaling-ex-threshold",
        "message": "At `E_star` the average largest weight does not exceed the threshold",
        "answer": '''
E_star = 16384  # the public site's answer, for the book's threshold
''',
    },
    {
        "id": "block-sizes-copied-from-the-site",
        "chapter": "07_memory_efficient",
        "question": "memory-ex-cache",
        "message": "does not fit in the exercise's cache, or that of the",
        "answer": '''
B_max, B_pow2 = 399, 256  # the public site's answer, for 1 MiB and E = 64
''',
    },
]

# Correct answers written afresh from the exercise texts (not the book's solutions), some
# reusing the notebook's own names (`attention, weights = ...` rebinds the globals a test
# once compared against): each scores full marks.
RIGHT_ANSWERS = [
    {
        # a function of the indices, called once with index arrays: no loop (refused before
        # a red-team pass found it: the lambda's i was traced to an earlier cell's loop)
        "id": "window-by-fromfunction",
        "chapter": "03_masking",
        "question": "masking-ex-window",
        "answer": '''
window = np.fromfunction(lambda i, j: (j <= i) & (j > i - TERM_w), (TERM_L, TERM_L))
''',
    },
    {
        "id": "mask-word-rebinding-weights",
        "chapter": "08_real_model",
        "question": "real-ex-mask-word",
        "answer": '''
no_cat = key_mask.copy()
no_cat[0, TERM_word_j] = False
before = weights
attention, weights = multi_head_attention(
    X, X, X, H, **proj, attn_mask=no_cat[:, None, :], return_weights=True
)
change = np.abs(weights[0, :, :n0, :n0] - before[0, :, :n0, :n0]).sum(axis=-1)
''',
    },
    {
        "id": "previous-through-multi-head-attention",
        "chapter": "08_real_model",
        "question": "real-ex-previous",
        "answer": '''
new = tokenize(model, [TERM_sentence])
x_new = embed(model, new)
_, w_new = multi_head_attention(x_new, x_new, x_new, H, **proj,
                                attn_mask=new.key_mask[:, None, :], return_weights=True)
top = w_new[0, :, 1 : new.lengths[0], :].argmax(axis=-1)  # (H, n - 1): padding has weight 0
fraction = np.mean(top == np.arange(new.lengths[0] - 1), axis=1)
''',
    },
    {
        "id": "merge-through-logaddexp",
        "chapter": "07_memory_efficient",
        "question": "memory-ex-merge-code",
        "answer": '''
if TERM_state_kind == "stack":  # the term's form of the parts (memory-ex-merge-code.term.yml)
    def merge(o, lse):
        with np.errstate(invalid="ignore"):
            total = np.logaddexp.reduce(lse, axis=0)
            share = np.nan_to_num(np.exp(lse - total))  # (P, ..., L): 0 where all are empty
        return (share[..., None] * o).sum(axis=0), total
else:
    def merge(o1, lse1, o2, lse2):
        add, power = ((np.logaddexp2, np.exp2) if TERM_state_kind == "log2"
                      else (np.logaddexp, np.exp))
        with np.errstate(invalid="ignore"):
            total = add(lse1, lse2)
            w1, w2 = np.nan_to_num(power(lse1 - total)), np.nan_to_num(power(lse2 - total))
        return w1[..., None] * o1 + w2[..., None] * o2, total
''',
    },
    {
        "id": "einsum-in-two-lines",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "answer": '''
def einsum_attention(query, key, value):
    keys = "...ej" if TERM_layout_key_t else "...je"      # this term's layouts
    values = "...vj" if TERM_layout_value_t else "...jv"
    s = np.einsum(f"...ie,{keys}->...ij", query, key) / np.sqrt(query.shape[-1])
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    return np.einsum(f"...ij,{values}->...iv", s / s.sum(axis=-1, keepdims=True), value)
''',
    },
    {
        "id": "wrong-axis-coordinates-by-lstsq",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-wrong-axis",
        "answer": '''
A_t = softmax(Q @ K.T / np.sqrt(Q.shape[1]) / TERM_tau, axis=0)  # this term's temperature
O_wrong = A_t @ V
system = np.vstack([V.T, np.ones((1, V.shape[0]))])
lam_wrong = np.linalg.lstsq(system, np.vstack([O_wrong.T, np.ones(len(O_wrong))]),
                            rcond=None)[0].T
''',
    },
    {
        "id": "cost-by-exponents",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-cost-result",
        "answer": '''
n_bits, e_bits = int(np.log2(TERM_n)), int(np.log2(TERM_E))
cost_log2 = (2 * n_bits + e_bits, 2 * n_bits + e_bits, 2 * n_bits + 2 - 20)
''',
    },
    {
        "id": "padding-with-less",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "answer": '''
lengths = np.array([TERM_len0, TERM_len1, TERM_len2])
by_hand = np.greater.outer(lengths, np.arange(TERM_S))  # a comparison ufunc's outer
print(np.array_equal(by_hand, padding_mask(lengths, TERM_S)), by_hand[:, None, None, :].shape)
''',
    },
    {
        "id": "float16-empty-row-with-full",
        "chapter": "03_masking",
        "question": "masking-ex-float16",
        "answer": '''
scores16 = np.full(TERM_row_n, -1e9).astype(np.float16)  # -1e9 overflows to -inf
with np.errstate(invalid="ignore"):
    shifted = scores16 - np.max(scores16)
fill_min = np.full(TERM_row_n, np.finfo(np.float16).min, dtype=np.float16)
print(softmax(fill_min), softmax(scores16))
''',
    },
    {
        "id": "log-softmax-with-logaddexp-free-lse",
        "chapter": "05_stable_softmax",
        "question": "prec-ex-log-softmax",
        "answer": '''
def log_softmax_lse(x, axis=-1):
    x = np.asarray(x, dtype=float) * (1 / TERM_temp_T)  # at the exercise's temperature
    top = np.max(x, axis=axis, keepdims=True)
    lse = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))
    return x - lse
''',
    },
    {
        "id": "key-gradient-rank-by-counting-queries",
        "chapter": "04_scaling",
        "question": "scaling-ex-key-gradient-result",
        "answer": '''
n_queries, n_keys_ex, width = TERM_queries_T, 8, 16
# one rank-one term per query; the rows of each gradient sum to 0 (1^T J = 0)
rank_grad_K = min(n_queries, n_keys_ex - 1, width)
''',
    },
    {
        "id": "jacobian-eigenvalues-numerically",
        "chapter": "04_scaling",
        "question": "scaling-ex-jacobian-result",
        "answer": '''
a_u = np.ones(TERM_S) / TERM_S
eig_uniform = np.sort(np.linalg.eigvals(np.diag(a_u) - np.outer(a_u, a_u)).real)
''',
    },
    {
        "id": "one-head-checking-against-out",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-one-head",
        "answer": '''
total = 0
for h in range(H):
    qk, vv = slice(h * d, (h + 1) * d), slice(h * dv, (h + 1) * dv)
    o_h, a_h = scaled_dot_product_attention(
        X @ W_Q[:, qk] + b_q[qk], X @ W_K[:, qk] + b_k[qk], X @ W_V[:, vv] + b_v[vv],
        return_weights=True)
    assert np.allclose(a_h, weights[h])
    if h != TERM_ablate_h:  # the head this term ablates (None: none)
        total = total + o_h @ W_O[vv]
kept = (np.arange(Ev) // dv != TERM_ablate_h)[:, None]  # W_O's rows of the heads kept
assert np.allclose(total + b_o, multi_head_attention(X, X, X, H, **(weights_kw | {"w_o": W_O * kept})))
''',
    },
    {
        "id": "causal-with-own-mask",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-causal",
        "answer": '''
allowed = np.tril(np.ones((TERM_layer_n, TERM_layer_n), dtype=bool))
tokens = X[:TERM_layer_n]
out_causal, w_causal = multi_head_attention(
    tokens, tokens, tokens, TERM_layer_H, **weights_kw, attn_mask=allowed, return_weights=True
)
''',
    },
    {
        "id": "wide-head-by-its-value-columns",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-one-wide-head",
        "answer": '''
feats = slice(TERM_wide_lo, TERM_wide_hi)  # the exercise's value features
out_wide = multi_head_attention(X_r, X_r, X_r, num_heads=1, w_q=Wq_r[:, :d_r],
                                w_k=Wk_r[:, :d_r], w_v=Wv_r[:, feats], w_o=Wo_r[feats])
rank_wide = int(np.linalg.matrix_rank(out_wide))
''',
    },
    {
        "id": "relative-rotation-by-strided-diagonals",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-relative",
        "answer": '''
angles = TERM_delta * 10000.0 ** (-np.arange(0, D, 2) / D)
R_k = np.zeros((D, D))
R_k[0::2, 0::2] = np.diag(np.cos(angles))
R_k[0::2, 1::2] = np.diag(np.sin(angles))
R_k[1::2, 0::2] = np.diag(-np.sin(angles))
R_k[1::2, 1::2] = np.diag(np.cos(angles))
''',
    },
]

# Chapter 9 (09_training): appended by the chapter's author.
WRONG_ANSWERS += [
    {
        "id": "dz-without-the-row-mean",
        "chapter": "09_training",
        "question": "train-ex-backward",
        "message": "subtract each row's weighted mean",
        "public": True,
        "answer": '''
def my_backward(query, key, value, grad_output, attn_mask):
    c = 1 / (TERM_temperature_tau * np.sqrt(query.shape[-1]))
    _, A = scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, scale=c,
                                        return_weights=True)
    dV = A.T @ grad_output
    dZ = A * (grad_output @ value.T)  # diag(a) da only: the -a a^T da term is missing
    return c * dZ @ key, c * dZ.T @ query, dV
''',
    },
    {
        "id": "backward-without-the-scale",
        "chapter": "09_training",
        "question": "train-ex-backward",
        "message": "Did you leave out c?",
        "public": True,
        "answer": '''
def my_backward(query, key, value, grad_output, attn_mask):
    c = 1 / (TERM_temperature_tau * np.sqrt(query.shape[-1]))
    _, A = scaled_dot_product_attention(query, key, value, attn_mask=attn_mask, scale=c,
                                        return_weights=True)
    dA = grad_output @ value.T
    dZ = A * (dA - np.sum(dA * A, axis=-1, keepdims=True))
    return dZ @ key, dZ.T @ query, A.T @ grad_output  # c only in the weights
''',
    },
    {
        "id": "rank-cut-with-the-kernels-default-scale",
        "chapter": "09_training",
        "question": "train-ex-rank",
        "message": "check the scale",
        "public": True,
        "answer": '''
U, sigma, Vt = np.linalg.svd(M)
smallest = []
for r in range(1, d + 1):
    M_r = (U[:, :r] * sigma[:r]) @ Vt[:r]
    _, A_r = scaled_dot_product_attention(x_test @ M_r, x_test, x_test,
                                          is_causal=True, return_weights=True)
    queries = np.arange(TERM_pos_lo, TERM_pos_hi)
    smallest.append(A_r[:, queries, queries - 1].min())
r_min = 1 + int(np.argmax(np.array(smallest) >= TERM_bar))
''',
    },
]

RIGHT_ANSWERS += [
    {
        "id": "backward-with-each-rows-jacobian",
        "chapter": "09_training",
        "question": "train-ex-backward",
        "answer": '''
def my_backward(query, key, value, grad_output, attn_mask):
    scale = query.shape[-1] ** -0.5 / TERM_temperature_tau
    _, weights = scaled_dot_product_attention(query, key, value, attn_mask=attn_mask,
                                              scale=scale, return_weights=True)
    grad_weights = grad_output @ value.T
    grad_scores = np.zeros_like(weights)
    for n, a in enumerate(weights):  # J = diag(a) - a a^T, row by row
        grad_scores[n] = (np.diag(a) - np.outer(a, a)) @ grad_weights[n]
    return (scale * grad_scores @ key, scale * grad_scores.T @ query,
            weights.T @ grad_output)
''',
    },
    {
        "id": "rank-cut-with-own-scores",
        "chapter": "09_training",
        "question": "train-ex-rank",
        "answer": '''
from lib.attention import softmax
u, s, vt = np.linalg.svd(run.final[0] @ run.final[1].T)
smallest = []
for r in range(1, d + 1):
    scores = x_test @ (u[:, :r] * s[:r]) @ vt[:r] @ x_test.transpose(0, 2, 1) / np.sqrt(d)
    scores = np.where(np.tril(np.ones((L_task, L_task), bool)), scores, -np.inf)
    a = softmax(scores)
    idx = np.arange(TERM_pos_lo, TERM_pos_hi)
    smallest.append(float(a[:, idx, idx - 1].min()))
r_min = next(r for r in range(1, d + 1) if smallest[r - 1] >= TERM_bar)
''',
    },
]

# Chapter 9's results of its pen-and-paper exercises (tests/assignments/questions/train-*.yml,
# issue 35): the classic slips of each argument.
WRONG_ANSWERS += [
    {
        "id": "dz-without-the-weighted-mean",
        "chapter": "09_training",
        "question": "train-ex-dv-result",
        "message": "Did you subtract each row's weighted mean",
        "answer": '''
A_s = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
dA_s = np.array(TERM_dO) @ np.array(TERM_V).T
dZ_small = A_s * dA_s  # the Jacobian's a a^T part forgotten
''',
    },
    {
        "id": "dz-plain-mean-for-the-weighted-mean",
        "chapter": "09_training",
        "question": "train-ex-dv-result",
        "message": "Did you subtract each row's weighted mean",
        "answer": '''
A_s = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
dA_s = np.array(TERM_dO) @ np.array(TERM_V).T
dZ_small = A_s * (dA_s - dA_s.mean(axis=1, keepdims=True))
''',
    },
    {
        "id": "floors-in-bits",
        "chapter": "09_training",
        "question": "train-ex-next-result",
        "message": "what is the loss of the best guess, in nats (natural log)?",
        "answer": '''
floors = (np.log2(TERM_vocab), 0.0)
''',
    },
    {
        "id": "floors-the-mask-does-not-matter",
        "chapter": "09_training",
        "question": "train-ex-next-result",
        "message": "Without the mask, which key may query i attend to?",
        "answer": '''
floors = (np.log(TERM_vocab), np.log(TERM_vocab))
''',
    },
    {
        "id": "floors-the-books-vocabulary",
        "chapter": "09_training",
        "question": "train-ex-next-result",
        "message": "Not the two floors",
        "answer": '''
floors = (np.log(8), 0.0)  # the chapter's 8 tokens, not the exercise's
''',
    },
    {
        "id": "step-ratios-copied-from-the-exercise",
        "chapter": "09_training",
        "question": "train-ex-same-step-result",
        "message": "how does dl/dW_Q relate to dl/dU_Q",
        "answer": '''
step_ratios = (1 / np.sqrt(TERM_d), 1 / np.sqrt(TERM_d))  # the even split's eta / sqrt(d)
''',
    },
    {
        "id": "step-ratios-one-factor-of-the-chain-rule",
        "chapter": "09_training",
        "question": "train-ex-same-step-result",
        "message": "what does a step on W_Q become once divided by the same factor?",
        "answer": '''
# the gradient's factor, not the division of the step
step_ratios = (TERM_d ** -TERM_split_a, TERM_d ** -(0.5 - TERM_split_a))
''',
    },
    {
        "id": "step-ratios-inverted",
        "chapter": "09_training",
        "question": "train-ex-same-step-result",
        "message": "is not a step of these sizes",
        "answer": '''
step_ratios = (TERM_d ** (2 * TERM_split_a), TERM_d ** (1 - 2 * TERM_split_a))
''',
    },
]

RIGHT_ANSWERS += [
    {
        "id": "dz-from-each-rows-jacobian",
        "chapter": "09_training",
        "question": "train-ex-dv-result",
        "answer": '''
weights = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
grad_weights = np.array(TERM_dO) @ np.array(TERM_V).T  # dO V^T
dZ_small = [list((np.diag(a) - np.outer(a, a)) @ g) for a, g in zip(weights, grad_weights)]
''',
    },
    {
        "id": "floors-as-a-list",
        "chapter": "09_training",
        "question": "train-ex-next-result",
        "answer": '''
import math
floors = [math.log(TERM_vocab), 0]
''',
    },
    {
        "id": "step-ratios-as-powers",
        "chapter": "09_training",
        "question": "train-ex-same-step-result",
        "answer": '''
d_split, a = TERM_d, TERM_split_a  # U_Q = W_Q / d^a, U_K = W_K / d^(1/2 - a)
step_ratios = np.array([d_split ** (-2 * a), d_split ** (2 * a - 1)])
''',
    },
]
