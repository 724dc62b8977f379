"""The course's classic mistakes, written as a student would answer an exercise.

Each entry is the code a student puts in the answer cell of one autograded question of an
assignment (`make assignments`); the rest of the notebook keeps its solutions.
tests/assignments/test_assignments.py grades each with `otter run` and checks that the
question loses all its points and that otter's output shows `message`, a piece of the
failure message of the test that catches it (in notebooks/<chapter>.md, beside the exercise).
"""

WRONG_ANSWERS = [
    {
        "id": "softmax-over-queries",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "softmax along the last axis, not the queries'",
        "answer": '''
def einsum_attention(query, key, value):
    scores = np.einsum("...le,...se->...ls", query, key)
    scores = scores / np.sqrt(query.shape[-1])
    weights = softmax(scores, axis=-2)  # over the queries
    return np.einsum("...ls,...sv->...lv", weights, value)
''',
    },
    {
        "id": "scale-one-over-E",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "divided by sqrt(E), not E",
        "answer": '''
def einsum_attention(query, key, value):
    scores = np.einsum("...le,...se->...ls", query, key) / query.shape[-1]
    return np.einsum("...ls,...sv->...lv", softmax(scores), value)
''',
    },
    {
        "id": "no-scale",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-einsum",
        "message": "not left unscaled",
        "answer": '''
def einsum_attention(query, key, value):
    scores = np.einsum("...le,...se->...ls", query, key)
    return np.einsum("...ls,...sv->...lv", softmax(scores), value)
''',
    },
    {
        "id": "barycentric-without-the-row-of-ones",
        "chapter": "02_qk_av",
        "question": "qk-av-ex-wrong-axis",
        "message": "solve [V^T; 1^T] lam = [o; 1]",
        "answer": '''
O_wrong = A_wrong @ V
lam_wrong = np.linalg.lstsq(V.T, O_wrong.T, rcond=None)[0].T
lam_wrong = lam_wrong / lam_wrong.sum(axis=1, keepdims=True)
''',
    },
    {
        "id": "padding-less-or-equal",
        "chapter": "03_masking",
        "question": "masking-ex-padding",
        "message": "j < length, strictly",
        "answer": '''
lengths_ex, S_ex = np.array([3, 1, 4]), 4
by_hand = np.arange(S_ex)[None, :] <= lengths_ex[:, None]
''',
    },
    {
        "id": "window-causal-off-by-one",
        "chapter": "03_masking",
        "question": "masking-ex-window",
        "message": "j <= i, not j < i",
        "answer": '''
i = np.arange(6)[:, None]
j = np.arange(6)[None, :]
window = (j < i) & (j > i - 3)
''',
    },
    {
        "id": "float16-fill-of-minus-inf",
        "chapter": "03_masking",
        "question": "masking-ex-float16",
        "message": "a float16 fill of -inf brings the NaN back",
        "answer": '''
row_mask = np.array([False, False])
scores16 = np.array([0.5, -0.25], dtype=np.float16)
with np.errstate(over="ignore"):
    scores16[~row_mask] = -1e9
with np.errstate(invalid="ignore"):
    shifted = scores16 - scores16.max()
fill_min = np.where(row_mask, scores16, np.float16(-np.inf))
''',
    },
    {
        "id": "no-max-shift",
        "chapter": "05_stable_softmax",
        "question": "prec-ex-log-softmax",
        "message": "without the max-shift, exp(1000) overflows",
        "answer": '''
def log_softmax_lse(x, axis=-1):
    return x - np.log(np.sum(np.exp(x), axis=axis, keepdims=True))
''',
    },
    {
        "id": "causal-mask-inverted",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-causal",
        "message": "not the inverted mask",
        "answer": '''
future = np.triu(np.ones((L, L), dtype=bool), k=1)
out_causal, w_causal = multi_head_attention(
    X, X, X, H, **weights_kw, attn_mask=future, return_weights=True
)
''',
    },
    {
        "id": "causal-mask-off-by-one",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-causal",
        "message": "not j < i (off by one)",
        "answer": '''
past = np.tri(L, k=-1, dtype=bool)
out_causal, w_causal = multi_head_attention(
    X, X, X, H, **weights_kw, attn_mask=past, return_weights=True
)
''',
    },
    {
        "id": "heads-split-on-the-wrong-axis",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-one-head",
        "message": "heads split on the wrong axis",
        "answer": '''
total = np.zeros((L, Dout))
for h in range(H):
    qk_cols = slice(h, None, H)  # every H-th column
    v_cols = slice(h, None, H)
    q_h = X @ W_Q[:, qk_cols] + b_q[qk_cols]
    k_h = X @ W_K[:, qk_cols] + b_k[qk_cols]
    v_h = X @ W_V[:, v_cols] + b_v[v_cols]
    total += scaled_dot_product_attention(q_h, k_h, v_h) @ W_O[v_cols]
''',
    },
    {
        "id": "rotation-the-wrong-way",
        "chapter": "06_multi_head",
        "question": "multi-head-ex-relative",
        "message": "rotates the wrong way",
        "answer": '''
rel_k = 3
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
        "message": "not half each",
        "answer": '''
def merge(o1, lse1, o2, lse2):
    return (o1 + o2) / 2, np.logaddexp(lse1, lse2)
''',
    },
    {
        "id": "query-the-wrong-way",
        "chapter": "01_span",
        "question": "span-ex-closest",
        "message": "the query points along (-1, 1)",
        "answer": '''
closest_tol = 1e-3
q_close = 100.0 * np.array([1.0, -1.0])
''',
    },
]
