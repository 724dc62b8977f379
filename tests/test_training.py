"""Tests of lib/training.py: the backward pass of attention and of one head against PyTorch's
autograd (float64, 1e-12; skipped without torch), against finite differences (always),
masks and fully masked rows, bad inputs, and the training loop on the previous-token task."""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import logsumexp

from lib.attention import scaled_dot_product_attention
from lib.training import (attention_backward, cross_entropy, head_attention, head_backward,
                          init_head, previous_token_task, train_head)

TOL = 1e-12  # the issue's bar against PyTorch's autograd, float64


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def random_case(rng, batch=(), L=4, S=5, E=3, Ev=2):
    query = rng.standard_normal(batch + (L, E))
    key = rng.standard_normal(batch + (S, E))
    value = rng.standard_normal(batch + (S, Ev))
    grad_output = rng.standard_normal(batch + (L, Ev))
    return query, key, value, grad_output


def torch_grads(torch, query, key, value, grad_output, attn_mask=None, is_causal=False,
                scale=None):
    """dQ, dK, dV from PyTorch's autograd through its scaled_dot_product_attention."""
    t = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (query, key, value)]
    kwargs = {"is_causal": is_causal, "scale": scale}
    if attn_mask is not None:
        kwargs["attn_mask"] = torch.from_numpy(np.ascontiguousarray(attn_mask))
    out = torch.nn.functional.scaled_dot_product_attention(*t, **kwargs)
    out.backward(torch.from_numpy(np.ascontiguousarray(grad_output)))
    return [x.grad.numpy() for x in t]


def assert_grads_close(ours, theirs, tol=TOL):
    for name, a, b in zip(("query", "key", "value"), ours, theirs):
        assert a.shape == b.shape, name
        assert np.all(np.isfinite(a)), name
        np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=name)


def mask_of(kind, rng, shape):
    """A boolean mask (True = may attend) or an additive float mask of the given kind."""
    if kind == "bool":
        mask = rng.random(shape) < 0.7
        mask[..., 0] = True  # no fully masked row here
        return mask
    if kind == "float":
        mask = rng.standard_normal(shape)
        mask[rng.random(shape) < 0.3] = -np.inf
        mask[..., 0] = 0.0
        return mask
    raise ValueError(kind)


# ----------------------------------------------------------------- against PyTorch's autograd
@pytest.mark.parametrize("seed", range(6))
def test_attention_backward_agrees_with_torch_on_random_cases(torch, seed):
    rng = np.random.default_rng(seed)
    L, S, E, Ev = rng.integers(1, 7, size=4)
    case = random_case(rng, L=L, S=S, E=E, Ev=Ev)
    assert_grads_close(attention_backward(*case), torch_grads(torch, *case))


@pytest.mark.parametrize("batch", [(3,), (2, 3)])
def test_attention_backward_agrees_with_torch_on_batches(torch, batch):
    case = random_case(np.random.default_rng(len(batch)), batch=batch)
    assert_grads_close(attention_backward(*case), torch_grads(torch, *case))


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_attention_backward_agrees_with_torch_with_masks(torch, kind):
    rng = np.random.default_rng(7)
    case = random_case(rng, batch=(2,), L=5, S=6)
    mask = mask_of(kind, rng, (2, 5, 6))
    assert_grads_close(attention_backward(*case, attn_mask=mask),
                       torch_grads(torch, *case, attn_mask=mask))


@pytest.mark.parametrize("kind", ["bool", "float"])
def test_fully_masked_rows_get_zero_gradient_as_in_torch(torch, kind):
    rng = np.random.default_rng(8)
    query, key, value, grad_output = random_case(rng, batch=(2,), L=4, S=5)
    mask = mask_of(kind, rng, (2, 4, 5))
    mask[0, 1] = False if kind == "bool" else -np.inf  # query 1 of sequence 0: no key at all
    mask[1, 3] = False if kind == "bool" else -np.inf
    ours = attention_backward(query, key, value, grad_output, attn_mask=mask)
    assert_grads_close(ours, torch_grads(torch, query, key, value, grad_output, attn_mask=mask))
    assert np.all(ours[0][0, 1] == 0) and np.all(ours[0][1, 3] == 0)


def test_every_row_masked_gives_zero_gradients_as_in_torch(torch):
    case = random_case(np.random.default_rng(9))
    mask = np.zeros((4, 5), dtype=bool)
    ours = attention_backward(*case, attn_mask=mask)
    assert_grads_close(ours, torch_grads(torch, *case, attn_mask=mask))
    assert all(np.all(g == 0) for g in ours)


def test_causal_and_explicit_scale_agree_with_torch(torch):
    case = random_case(np.random.default_rng(10), batch=(2,), L=5, S=5, E=16)
    for scale in (None, 1.0, 0.05):
        assert_grads_close(attention_backward(*case, is_causal=True, scale=scale),
                           torch_grads(torch, *case, is_causal=True, scale=scale))


def test_broadcast_key_and_value_gradients_are_summed_as_in_torch(torch):
    rng = np.random.default_rng(11)
    query = rng.standard_normal((3, 4, 2))
    key, value = rng.standard_normal((1, 5, 2)), rng.standard_normal((5, 3))
    grad_output = rng.standard_normal((3, 4, 3))
    ours = attention_backward(query, key, value, grad_output)
    assert [g.shape for g in ours] == [(3, 4, 2), (1, 5, 2), (5, 3)]
    assert_grads_close(ours, torch_grads(torch, query, key, value, grad_output))


def test_head_backward_agrees_with_torch(torch):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((3, 6, 5))
    w_q, w_k, w_v = (rng.standard_normal((5, w)) for w in (4, 4, 3))
    grad_output = rng.standard_normal((3, 6, 3))
    t = [torch.tensor(a, requires_grad=True) for a in (x, w_q, w_k, w_v)]
    out = torch.nn.functional.scaled_dot_product_attention(
        t[0] @ t[1], t[0] @ t[2], t[0] @ t[3], is_causal=True)
    out.backward(torch.from_numpy(grad_output))
    ours = head_backward(x, w_q, w_k, w_v, grad_output, is_causal=True)
    for a, b in zip(ours, t):
        np.testing.assert_allclose(a, b.grad.numpy(), rtol=0, atol=TOL)


def test_cross_entropy_gradient_agrees_with_torch(torch):
    rng = np.random.default_rng(13)
    logits, target = rng.standard_normal((3, 4, 5)), rng.integers(-1, 5, size=(3, 4))
    t = torch.tensor(logits, requires_grad=True)
    loss_t = torch.nn.functional.cross_entropy(t.reshape(-1, 5), torch.from_numpy(
        target.reshape(-1)), ignore_index=-1)
    loss_t.backward()
    loss, grad = cross_entropy(logits, target)
    assert abs(loss - loss_t.item()) < TOL
    np.testing.assert_allclose(grad, t.grad.numpy(), rtol=0, atol=TOL)


# ------------------------------------------------------------- without PyTorch: the math itself
def finite_difference(f, x, h=1e-6):
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = h
        grad[idx] = (f(x + step) - f(x - step)) / (2 * h)
    return grad


def test_attention_backward_agrees_with_finite_differences_with_a_mask():
    rng = np.random.default_rng(14)
    query, key, value, grad_output = random_case(rng)
    mask = mask_of("bool", rng, (4, 5))

    def loss(q, k, v):
        return np.sum(grad_output * scaled_dot_product_attention(q, k, v, attn_mask=mask))

    dq, dk, dv = attention_backward(query, key, value, grad_output, attn_mask=mask)
    np.testing.assert_allclose(dq, finite_difference(lambda q: loss(q, key, value), query),
                               atol=1e-8)
    np.testing.assert_allclose(dk, finite_difference(lambda k: loss(query, k, value), key),
                               atol=1e-8)
    np.testing.assert_allclose(dv, finite_difference(lambda v: loss(query, key, v), value),
                               atol=1e-8)


def test_a_masked_pair_passes_no_gradient_to_its_key_and_value():
    rng = np.random.default_rng(15)
    query, key, value, grad_output = random_case(rng, L=3, S=4)
    mask = np.ones((3, 4), dtype=bool)
    mask[:, 2] = False  # no query may attend to key 2
    _, dk, dv = attention_backward(query, key, value, grad_output, attn_mask=mask)
    assert np.all(dk[2] == 0) and np.all(dv[2] == 0)
    assert np.all(dk[[0, 1, 3]] != 0)


def test_value_gradient_is_weights_transposed_times_grad_output():
    query, key, value, grad_output = random_case(np.random.default_rng(16))
    _, weights = scaled_dot_product_attention(query, key, value, return_weights=True)
    np.testing.assert_allclose(attention_backward(query, key, value, grad_output)[2],
                               weights.T @ grad_output, rtol=1e-14)


def test_key_gradients_sum_to_zero_because_shifting_every_key_is_ignored():
    # adding the same vector to every key shifts each row of scores by a constant, which
    # the softmax ignores: so the gradients of the keys sum to zero
    query, key, value, grad_output = random_case(np.random.default_rng(17))
    _, dk, _ = attention_backward(query, key, value, grad_output)
    np.testing.assert_allclose(dk.sum(axis=0), 0.0, atol=1e-14)


def test_float32_in_float32_out_and_inputs_not_modified():
    case = [a.astype(np.float32) for a in random_case(np.random.default_rng(18))]
    copies = [a.copy() for a in case]
    grads = attention_backward(*case)
    assert all(g.dtype == np.float32 for g in grads)
    for a, b in zip(case, copies):
        np.testing.assert_array_equal(a, b)
    grads64 = attention_backward(*(a.astype(np.float64) for a in case))
    for g, g64 in zip(grads, grads64):
        np.testing.assert_allclose(g, g64, rtol=1e-4, atol=1e-5)


def test_head_backward_agrees_with_finite_differences():
    rng = np.random.default_rng(19)
    x = rng.standard_normal((2, 4, 3))
    w = [rng.standard_normal((3, 2)) for _ in range(3)]
    grad_output = rng.standard_normal((2, 4, 2))
    grads = head_backward(x, *w, grad_output, is_causal=True)
    for n in range(3):
        def loss(wn, n=n):
            ws = list(w)
            ws[n] = wn
            return np.sum(grad_output * head_attention(x, *ws, is_causal=True))
        np.testing.assert_allclose(grads[n + 1], finite_difference(loss, w[n]), atol=1e-8)
    np.testing.assert_allclose(
        grads[0], finite_difference(
            lambda x_: np.sum(grad_output * head_attention(x_, *w, is_causal=True)), x),
        atol=1e-8)


# ------------------------------------------------------------------------------ bad inputs
def test_grad_output_of_the_wrong_shape_is_rejected_naming_shapes():
    query, key, value, grad_output = random_case(np.random.default_rng(20))
    with pytest.raises(ValueError, match=r"\(4, 2\).*\(2, 4\)"):
        attention_backward(query, key, value, grad_output.T)


def test_forward_errors_are_raised_by_the_backward_pass_too():
    query, key, value, grad_output = random_case(np.random.default_rng(21))
    with pytest.raises(ValueError, match="share E"):
        attention_backward(query, key[:, :2], value, grad_output)
    with pytest.raises(TypeError, match="attn_mask"):
        attention_backward(query, key, value, grad_output, attn_mask=np.ones((4, 5), int))
    with pytest.raises(TypeError, match="grad_output"):
        attention_backward(query, key, value, grad_output.astype(complex))


def test_head_projections_of_the_wrong_shape_are_rejected():
    x = np.ones((4, 3))
    with pytest.raises(ValueError, match="w_k"):
        head_attention(x, np.ones((3, 2)), np.ones((4, 2)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="head width"):
        head_attention(x, np.ones((3, 2)), np.ones((3, 5)), np.ones((3, 2)))


def test_cross_entropy_rejects_bad_targets():
    with pytest.raises(ValueError, match="-1 .. 2"):
        cross_entropy(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="no position counts"):
        cross_entropy(np.zeros((2, 3)), np.array([-1, -1]))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        cross_entropy(np.zeros((2, 3)), np.array([0, 1, 2]))


def test_train_head_rejects_bad_steps_and_lr():
    x, _, target = previous_token_task(2, 3, 2, np.random.default_rng(0))
    w = init_head(5, 2, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="steps"):
        train_head(x, target, *w, steps=0, lr=1.0)
    with pytest.raises(ValueError, match="lr"):
        train_head(x, target, *w, steps=1, lr=0.0)


def torch_cross_entropy(torch, logits, target):
    """PyTorch's mean cross-entropy with ignore_index=-1, and its gradient (float64)."""
    z = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(z.reshape(-1, z.shape[-1]),
                                             torch.tensor(target).reshape(-1), ignore_index=-1)
    loss.backward()
    return loss.item(), z.grad.numpy()


IGNORED_ROW_EDGES = {  # what an ignored position (target -1) may hold
    "-inf in class 0": [-np.inf, 0.0, 1.0],
    "NaN": [np.nan, 0.0, 1.0],
    "all -inf": [-np.inf, -np.inf, -np.inf],
    "+inf": [np.inf, 0.0, 1.0],
    "overflowing": [1e308, -1e308, 0.0],
}


@pytest.mark.parametrize("edge", IGNORED_ROW_EDGES)
def test_cross_entropy_ignores_what_is_ignored_as_torch_does(torch, edge):
    logits = np.array([IGNORED_ROW_EDGES[edge], [0.0, 1.0, 2.0]])
    target = np.array([-1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NaN, no overflow warning from an ignored row
        loss, grad = cross_entropy(logits, target)
    expected_loss, expected_grad = torch_cross_entropy(torch, logits, target)
    assert loss == pytest.approx(expected_loss, rel=1e-14, abs=0)
    # PyTorch's backward multiplies the ignored row's softmax by 0 (NaN from NaN or inf);
    # here it never enters the arithmetic: its gradient is 0, the counted row's is PyTorch's.
    np.testing.assert_allclose(grad[1], expected_grad[1], rtol=1e-14, atol=1e-16)
    assert np.all(grad[0] == 0)


def test_cross_entropy_of_the_issue_is_torchs_0_4076():
    # log(1 + e^-1 + e^-2) for the counted row (0, 1, 2) with target 2
    loss, _ = cross_entropy([[-np.inf, 0, 1], [0, 1, 2]], [-1, 2])
    assert loss == pytest.approx(np.log1p(np.exp(-1.0) + np.exp(-2.0)), rel=1e-15)
    assert round(loss, 4) == 0.4076


@pytest.mark.parametrize("batch", [(), (3,)])
def test_cross_entropy_of_logits_near_the_largest_float_warns_nothing(torch, batch):
    rng = np.random.default_rng(91)
    logits = rng.choice([1e308, -1e308, 0.0, 5.0], size=batch + (4, 5))
    target = rng.integers(-1, 5, size=batch + (4,))
    target[(0,) * len(batch) + (0,)] = int(np.argmax(logits[(0,) * len(batch) + (0,)]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss, grad = cross_entropy(logits, target)
    # the mean of -log p_t = logsumexp(z) - z_t over the counted rows, summed exactly: it
    # is finite here although a sum of the terms overflows (PyTorch's mean gives inf)
    counted = target >= 0
    with np.errstate(over="ignore"):  # SciPy's own shift overflows as ours did
        terms = [Fraction(float(logsumexp(z))) - Fraction(float(z[k]))
                 for z, k in zip(logits[counted], target[counted])]
    assert loss == pytest.approx(float(sum(terms) / len(terms)), rel=1e-14)
    expected_loss, expected_grad = torch_cross_entropy(torch, logits, target)
    assert np.isinf(expected_loss)  # the case the exact sum is for
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("bad", [
    {"steps": 2.0}, {"steps": 0}, {"steps": -3}, {"steps": True}, {"steps": np.nan},
    {"steps": "2"}, {"steps": None},
    {"record_every": 0}, {"record_every": -1}, {"record_every": 1.5}, {"record_every": 2.0},
    {"record_every": np.nan}, {"record_every": False},
    {"lr": np.inf}, {"lr": -np.inf}, {"lr": np.nan}, {"lr": 0.0}, {"lr": -0.1}, {"lr": True},
    {"lr": "0.1"}, {"lr": 10**400}, {"lr": (0.1, 0.1)}, {"lr": (0.1, np.nan, 0.1)},
    {"lr": (0.1, 0.1, np.inf)}, {"lr": [0.1, [0.1], 0.1]}, {"lr": None},
    {"is_causal": "no"}, {"is_causal": None}, {"is_causal": 1},
    {"scale": np.nan}, {"scale": -np.inf}, {"scale": "0.5"}, {"scale": True}, {"scale": 10**400},
])
def test_train_head_names_the_bad_argument(bad):
    x, _, target = previous_token_task(2, 3, 2, np.random.default_rng(0))
    w = init_head(5, 2, 2, np.random.default_rng(0))
    kwargs = {"steps": 2, "lr": 0.5, "record_every": None, "is_causal": True, "scale": None} | bad
    (name,) = bad
    with pytest.raises(ValueError, match=f"^{name} must be"):
        train_head(x, target, *w, **kwargs)


def test_train_head_takes_numpy_integers_and_numbers():
    x, _, target = previous_token_task(2, 3, 2, np.random.default_rng(0))
    w = init_head(5, 2, 2, np.random.default_rng(0))
    run = train_head(x, target, *w, steps=np.int64(4), lr=np.float32(0.5),
                     record_every=np.uint8(2))
    same = train_head(x, target, *w, steps=4, lr=(0.5, 0.5, 0.5), record_every=2)
    assert list(run.recorded) == [0, 2, 4] == list(same.recorded)
    np.testing.assert_array_equal(run.losses, same.losses)


# ------------------------------------------------------------------------------ training
def test_previous_token_task_targets_are_the_shifted_tokens():
    x, tokens, target = previous_token_task(5, 6, 4, np.random.default_rng(22))
    assert x.shape == (5, 6, 10)
    np.testing.assert_array_equal(target[:, 1:], tokens[:, :-1])
    assert np.all(target[:, 0] == -1)
    np.testing.assert_array_equal(x[..., :4].argmax(-1), tokens)
    np.testing.assert_array_equal(x[..., 4:].argmax(-1), np.broadcast_to(np.arange(6), (5, 6)))


def test_training_learns_the_previous_token_head_on_held_out_sequences():
    rng = np.random.default_rng(23)
    x, _, target = previous_token_task(64, 6, 6, rng)
    held_out, _, _ = previous_token_task(200, 6, 6, rng)
    w = init_head(12, 6, 6, rng, std=1 / np.sqrt(2))
    run = train_head(x, target, *w, steps=300, lr=4.0)
    assert run.losses[-1] < 0.05 * run.losses[0]
    _, weights = head_attention(held_out, *run.final, is_causal=True, return_weights=True)
    i = np.arange(1, 6)
    assert weights[:, i, i - 1].min() > 0.8


def test_train_head_does_not_modify_its_starting_weights_and_records_them():
    rng = np.random.default_rng(24)
    x, _, target = previous_token_task(4, 4, 3, rng)
    w = init_head(7, 3, 3, rng)
    copies = [a.copy() for a in w]
    run = train_head(x, target, *w, steps=10, lr=1.0, record_every=5)
    np.testing.assert_array_equal(run.recorded, [0, 5, 10])
    assert len(run.losses) == 11
    for a, b, c in zip(w, copies, run.weights[0]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    assert not np.array_equal(run.final[0], w[0])


def test_the_loss_recorded_is_the_loss_of_the_recorded_weights():
    rng = np.random.default_rng(25)
    x, _, target = previous_token_task(4, 4, 3, rng)
    run = train_head(x, target, *init_head(7, 3, 3, rng), steps=6, lr=1.0, record_every=3)
    for step, weights in zip(run.recorded, run.weights):
        loss, _ = cross_entropy(head_attention(x, *weights, is_causal=True), target)
        assert loss == run.losses[step]
