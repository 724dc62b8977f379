"""The numbers the source-notes appendix (chapters/source_notes.md) states about the notes'
examples, recomputed: the checks that ran on chapter pages before issue 43 moved the
notes off them.
"""

import re
from pathlib import Path

import numpy as np

from lib.attention import causal_mask, scaled_dot_product_attention, softmax
from lib.data import qk_av_example, seed004_printed, seed004_qkv, span_example

APPENDIX = (Path(__file__).resolve().parents[1] / "chapters" / "source_notes.md").read_text()


def _note_004():
    Q, K, V = seed004_qkv()
    scaled = Q @ K.T / np.sqrt(Q.shape[-1])
    new_v, attention = scaled_dot_product_attention(Q, K, V, is_causal=True,
                                                    return_weights=True)
    return scaled, attention, new_v, seed004_printed()


def test_the_kernel_reproduces_every_matrix_note_004_printed_to_its_rounding():
    scaled, attention, new_v, printed = _note_004()
    # 8 printed decimals (half a unit 5e-9), inputs themselves rounded to 8 decimals
    for name, ours in (("scaled", scaled), ("attention", attention), ("new_v", new_v)):
        np.testing.assert_allclose(ours, printed[name], rtol=0, atol=5e-8)
    assert f"{attention[1, 0]:.8f}" in APPENDIX and f"{attention[1, 1]:.8f}" in APPENDIX


def test_the_largest_differences_the_appendix_states_for_note_004():
    scaled, attention, new_v, printed = _note_004()
    for ours, name in ((scaled, "scaled"), (attention, "attention"), (new_v, "new_v")):
        worst = np.abs(ours - printed[name]).max()
        mantissa, exponent = f"{worst:.1e}".split("e")
        assert f"${mantissa} \\times 10^{{{int(exponent)}}}$" in APPENDIX, worst


def test_note_004s_mask_of_ones_adds_1_to_every_kept_score_and_changes_no_weight():
    scaled, attention, _, printed = _note_004()
    L = scaled.shape[0]
    note_mask = np.tril(np.ones((L, L)))
    note_mask[note_mask == 0] = -np.inf
    proper = np.where(causal_mask(L), 0.0, -np.inf)
    change = np.abs(softmax(scaled + note_mask) - softmax(scaled + proper)).max()
    assert change < 1e-15
    assert f"$6 \\times 10^{{-17}}$" in APPENDIX and change < 1e-16
    plus = printed["scaled_plus_mask"] - printed["scaled"]
    np.testing.assert_allclose(plus[causal_mask(L)], 1.0, rtol=0, atol=5e-8)
    for z in (printed["scaled"][0, 0], printed["scaled_plus_mask"][0, 0]):
        assert f"{z:.8f}" in APPENDIX


def test_note_001s_example_is_unchanged_when_keys_and_values_are_reversed():
    Q, K, V = qk_av_example()
    out = scaled_dot_product_attention(Q, K, V)
    reversed_ = scaled_dot_product_attention(Q, K[::-1], V[::-1])
    np.testing.assert_allclose(reversed_, out, rtol=0, atol=1e-15)
    assert not np.allclose(out[0], out[1])  # a permutation of the rows would show
    for row in out:
        assert f"$({row[0]:.4f}, {row[1]:.4f})$" in APPENDIX


def test_note_002s_regression_weights_are_affine_by_chance_and_1_1_is_not():
    X, w = span_example()[:2]
    assert w.sum() == 1 and w.min() < 0
    assert "$\\hat y = ({:g}, {:g}, {:g})$".format(*(X @ w)) in APPENDIX
    other = X @ np.array([1.0, 1.0])
    assert "$({:g}, {:g}, {:g})$".format(*other) in APPENDIX
    # not on the line lam * col0 + (1 - lam) * col1 through the two columns
    lam = np.linalg.lstsq((X[:, 0] - X[:, 1])[:, None], other - X[:, 1], rcond=None)[0]
    assert not np.allclose(X[:, 1] + lam * (X[:, 0] - X[:, 1]), other)
    assert re.search(r"entries always differ by 2", APPENDIX)
