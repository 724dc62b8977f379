r"""Attention learns: the backward pass of scaled dot-product attention, and a training loop.

The file reads top to bottom like chapter 9 of the course: the gradients of
``scaled_dot_product_attention`` (``lib/attention.py``) with respect to its query, key and
value, derived from the softmax Jacobian of chapter 4; one head of self-attention with
its projections and their gradients; a cross-entropy loss; a small task whose right
attention pattern is known (the target at position ``i`` is the token at ``i - 1``); and
plain gradient descent on it.

With :math:`A` the weights, :math:`c` the scale, :math:`Z = c\,QK^\top + M` the scores
and :math:`dO` the gradient of a loss with respect to the output :math:`O = AV`, the
backward pass is five matrix products [1]_ [2]_:

.. math::

    dV = A^\top dO, \qquad dA = dO\,V^\top, \qquad
    dZ = A \odot \big(dA - \operatorname{rowsum}(dA \odot A)\big), \qquad
    dQ = c\,dZ\,K, \qquad dK = c\,dZ^\top Q .

The third is the softmax Jacobian :math:`J = \operatorname{diag}(a) - aa^\top` applied to
each row, :math:`J\,da = a \odot (da - a^\top da)`, without forming :math:`J`. The same
products are the backward pass of FlashAttention [3]_ (its Appendix B, which recomputes
:math:`A` block by block instead of storing it, and writes the row sum as
:math:`\operatorname{rowsum}(dO \odot O)`, the same number), and what PyTorch's autograd computes for
its ``scaled_dot_product_attention`` [4]_ (``tests/test_training.py`` checks them against
it in float64). Names and conventions are those of ``lib/attention.py``: ``query``
(..., L, E), ``key`` (..., S, E), ``value`` (..., S, Ev); a boolean ``attn_mask`` means
True = may attend; rows of arrays are vectors.

References
----------
.. [1] A. Vaswani et al., "Attention is all you need", NeurIPS 2017, Eq. (1).
       https://arxiv.org/abs/1706.03762
.. [2] I. Goodfellow, Y. Bengio and A. Courville, "Deep Learning", MIT Press 2016,
       Sec. 6.5 (back-propagation) and Sec. 6.2.2.3 (the softmax and its gradient).
       https://www.deeplearningbook.org
.. [3] T. Dao et al., "FlashAttention: fast and memory-efficient exact attention with
       IO-awareness", NeurIPS 2022, Appendix B (the backward pass).
       https://arxiv.org/abs/2205.14135
.. [4] PyTorch documentation, ``torch.nn.functional.scaled_dot_product_attention``.
       https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np

from lib._checks import check_attention
from lib.attention import scaled_dot_product_attention

__all__ = ["attention_backward", "head_attention", "head_backward", "cross_entropy",
           "previous_token_task", "init_head", "TrainingRun", "train_head"]


# ------------------------------------------------------------- the backward pass of SDPA
def _sum_to_shape(grad, shape):
    """Sum ``grad`` over the axes that broadcasting added or stretched, to ``shape``."""
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra > 0 else grad
    stretched = tuple(n for n, size in enumerate(shape) if size == 1 and grad.shape[n] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def attention_backward(query, key, value, grad_output, attn_mask=None, *, is_causal=False,
                       scale=None):
    r"""Gradients of :func:`lib.attention.scaled_dot_product_attention` for query, key, value.

    Given :math:`dO`, the gradient of a scalar loss with respect to the output
    :math:`O = \operatorname{softmax}(c\,QK^\top + M)\,V`, returns :math:`dQ`, :math:`dK`
    and :math:`dV`, the gradients of the same loss with respect to the inputs.

    Parameters
    ----------
    query : array_like, shape (..., L, E)
    key : array_like, shape (..., S, E)
    value : array_like, shape (..., S, Ev)
        As for :func:`lib.attention.scaled_dot_product_attention`; leading axes broadcast.
    grad_output : array_like, shape (..., L, Ev)
        The gradient of the loss with respect to the output, of the output's shape
        (the broadcast leading axes of the three inputs).
    attn_mask : array_like, optional, shape broadcastable to (..., L, S)
        Boolean (True = may attend) or floating (added to the scaled scores), as in the
        forward pass. A pair the mask forbids gets weight 0 and passes no gradient; a
        query that may attend to no key (a fully masked row) has zero weights and output,
        and gets zero gradient, as do the keys and values through it.
    is_causal : bool, default False
        Query ``i`` attends keys ``j <= i`` only.
    scale : float, optional
        The factor :math:`c` on ``query @ key.T``; defaults to ``1 / sqrt(E)``.

    Returns
    -------
    grad_query : ndarray, shape of ``query``
    grad_key : ndarray, shape of ``key``
    grad_value : ndarray, shape of ``value``
        Each gradient has its input's shape: where an input was broadcast over leading
        axes, its gradient is summed over them. Float64 input gives float64 gradients,
        float32 gives float32 (float16 is computed in float32 and returned as float16).

    Raises
    ------
    ValueError
        For the forward pass's bad shapes (see
        :func:`lib.attention.scaled_dot_product_attention`), or if ``grad_output`` does
        not have the output's shape (..., L, Ev); the message names the shapes.
    TypeError
        For the forward pass's bad dtypes, or a ``grad_output`` that is not a real number
        array.

    Notes
    -----
    The weights are recomputed with the kernel's plain path, then, with
    :math:`Z` the scores and :math:`dZ` the gradient with respect to them,

    .. math::

        dV = A^\top dO, \quad dA = dO\,V^\top, \quad
        dZ_{ij} = A_{ij}\Big(dA_{ij} - \sum_{j'} A_{ij'}\, dA_{ij'}\Big), \quad
        dQ = c\,dZ\,K, \quad dK = c\,dZ^\top Q .

    The line for :math:`dZ` is row :math:`i` of :math:`dA` multiplied by the softmax
    Jacobian :math:`J_i = \operatorname{diag}(a_i) - a_i a_i^\top` of chapter 4
    (symmetric, so no transpose is needed). A forbidden pair has :math:`A_{ij} = 0`, so
    :math:`dZ_{ij} = 0`: nothing reaches its key or value through it. A fully masked
    row has :math:`a_i = 0`, so its whole row of :math:`dZ` and its contribution to
    :math:`dV` are zero. PyTorch (2.13, float64, CPU) gives the same numbers to 1e-12,
    fully masked rows included (``tests/test_training.py``).

    References
    ----------
    .. [1] T. Dao et al., "FlashAttention", NeurIPS 2022, Appendix B.
    .. [2] I. Goodfellow, Y. Bengio and A. Courville, "Deep Learning", 2016, Sec. 6.5.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import attention_backward
    >>> query = np.array([[1.0, 0.0]])                        # L=1, E=2
    >>> key = np.array([[1.0, 0.0], [0.0, 1.0]])              # S=2
    >>> value = np.array([[1.0], [3.0]])                      # Ev=1
    >>> grad_query, grad_key, grad_value = attention_backward(
    ...     query, key, value, grad_output=np.ones((1, 1)))
    >>> grad_value.round(4)                                   # A^T dO: the weights
    array([[0.6698],
           [0.3302]])
    >>> grad_query.round(4)          # away from key 0 (value 1), towards key 1 (value 3)
    array([[-0.3128,  0.3128]])
    >>> attention_backward(query, key, value, np.ones((1, 1)),
    ...                    attn_mask=np.array([[False, False]]))[2]   # fully masked
    array([[0.],
           [0.]])
    """
    q_in, k_in, v_in = (np.asarray(x) for x in (query, key, value))
    query, key, value, attn_mask, scale, out_dtype = check_attention(
        query, key, value, attn_mask, is_causal, scale)
    grad_output = np.asarray(grad_output)
    if grad_output.dtype.kind not in "fiu":
        raise TypeError(f"grad_output must be a real number array, got dtype "
                        f"{grad_output.dtype} with shape {grad_output.shape}")
    L, Ev = query.shape[-2], value.shape[-1]
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    if grad_output.shape != batch + (L, Ev):
        raise ValueError(
            f"grad_output must have the output's shape (..., L, Ev) = {batch + (L, Ev)}, got "
            f"{grad_output.shape} (query {query.shape}, key {key.shape}, value {value.shape})")
    grad_output = grad_output.astype(query.dtype, copy=False)

    _, weights = scaled_dot_product_attention(query, key, value, attn_mask,
                                              is_causal=is_causal, scale=scale,
                                              return_weights=True)  # (..., L, S): A
    grad_value = np.swapaxes(weights, -1, -2) @ grad_output  # (..., S, Ev): dV = A^T dO
    grad_weights = grad_output @ np.swapaxes(value, -1, -2)  # (..., L, S): dA = dO V^T
    row_dot = np.sum(grad_weights * weights, axis=-1, keepdims=True)  # (..., L, 1)
    grad_scores = weights * (grad_weights - row_dot)  # (..., L, S): dZ = J dA, row by row
    grad_query = scale * (grad_scores @ key)  # (..., L, E): dQ = c dZ K
    grad_key = scale * (np.swapaxes(grad_scores, -1, -2) @ query)  # (..., S, E): dK = c dZ^T Q

    return tuple(_sum_to_shape(g, x.shape).astype(out_dtype, copy=False)
                 for g, x in ((grad_query, q_in), (grad_key, k_in), (grad_value, v_in)))


# --------------------------------------------------------------- one head and its gradient
def _check_head(x, w_q, w_k, w_v):
    x, w_q, w_k, w_v = (np.asarray(a, dtype=np.float64) if np.asarray(a).dtype.kind in "iu"
                        else np.asarray(a) for a in (x, w_q, w_k, w_v))
    for name, a in (("x", x), ("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if a.dtype.kind != "f":
            raise TypeError(f"{name} must be a real floating array, got dtype {a.dtype}")
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., L, D), got shape {x.shape}")
    D = x.shape[-1]
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.ndim != 2 or w.shape[0] != D:
            raise ValueError(f"{name} must have shape (D={D}, ...) for x of shape {x.shape}, "
                             f"got shape {w.shape}")
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(f"w_q (D, d) and w_k (D, d) must share the head width d: got "
                         f"{w_q.shape} and {w_k.shape}")
    return x, w_q, w_k, w_v


def head_attention(x, w_q, w_k, w_v, attn_mask=None, *, is_causal=False, scale=None,
                   return_weights=False):
    r"""One head of self-attention: ``scaled_dot_product_attention(x w_q, x w_k, x w_v)``.

    Parameters
    ----------
    x : array_like, shape (..., L, D)
        L tokens of D features each (the keys are the same tokens, S = L).
    w_q, w_k : array_like, shape (D, d)
        The query and key projections (on the right, as in chapter 6).
    w_v : array_like, shape (D, dv)
        The value projection.
    attn_mask, is_causal, scale
        As for :func:`lib.attention.scaled_dot_product_attention`; ``scale`` defaults to
        ``1 / sqrt(d)``.
    return_weights : bool, default False
        Also return the (..., L, L) attention weights.

    Returns
    -------
    output : ndarray, shape (..., L, dv)
    weights : ndarray, shape (..., L, L)
        Only if ``return_weights``.

    Raises
    ------
    ValueError
        If x has fewer than 2 axes, a projection does not have D rows, or ``w_q`` and
        ``w_k`` differ in width; and as the kernel raises for the mask and the scale.
    TypeError
        If an input is not a real number array.

    Notes
    -----
    The scores are :math:`c\,(XW_Q)(XW_K)^\top = c\,X\,(W_QW_K^\top)\,X^\top`: the head
    compares tokens through one :math:`D \times D` bilinear form of rank at most
    :math:`d` [1]_.

    References
    ----------
    .. [1] A. Vaswani et al., "Attention is all you need", NeurIPS 2017, Sec. 3.2.2.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import head_attention
    >>> x = np.eye(3)                                        # L=3 tokens, D=3
    >>> out = head_attention(x, np.eye(3), np.eye(3), np.eye(3)[:, :1], is_causal=True)
    >>> out.shape, out[0, 0]                                 # query 0 sees only itself
    ((3, 1), np.float64(1.0))
    """
    x, w_q, w_k, w_v = _check_head(x, w_q, w_k, w_v)
    query, key, value = x @ w_q, x @ w_k, x @ w_v  # (..., L, d), (..., L, d), (..., L, dv)
    return scaled_dot_product_attention(query, key, value, attn_mask, is_causal=is_causal,
                                        scale=scale, return_weights=return_weights)


def head_backward(x, w_q, w_k, w_v, grad_output, attn_mask=None, *, is_causal=False,
                  scale=None):
    r"""Gradients of :func:`head_attention` with respect to its input and its projections.

    Parameters
    ----------
    x, w_q, w_k, w_v, attn_mask, is_causal, scale
        As for :func:`head_attention`.
    grad_output : array_like, shape (..., L, dv)
        The gradient of a scalar loss with respect to the head's output.

    Returns
    -------
    grad_x : ndarray, shape of ``x``
    grad_w_q, grad_w_k : ndarray, shape (D, d)
    grad_w_v : ndarray, shape (D, dv)
        The projections' gradients are summed over the leading (batch) axes of ``x``.

    Raises
    ------
    ValueError, TypeError
        As :func:`head_attention` and :func:`attention_backward`.

    Notes
    -----
    With :math:`Q = XW_Q`, :math:`K = XW_K`, :math:`V = XW_V` and :math:`dQ, dK, dV`
    from :func:`attention_backward`, the chain rule through a product on the right gives

    .. math::

        dW_Q = X^\top dQ, \quad dW_K = X^\top dK, \quad dW_V = X^\top dV, \quad
        dX = dQ\,W_Q^\top + dK\,W_K^\top + dV\,W_V^\top,

    each summed over the batch [1]_.

    References
    ----------
    .. [1] I. Goodfellow, Y. Bengio and A. Courville, "Deep Learning", 2016, Sec. 6.5.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import head_backward
    >>> x = np.eye(3)
    >>> grads = head_backward(x, np.eye(3), np.eye(3), np.eye(3), np.ones((3, 3)),
    ...                       is_causal=True)
    >>> [g.shape for g in grads]
    [(3, 3), (3, 3), (3, 3), (3, 3)]
    """
    x, w_q, w_k, w_v = _check_head(x, w_q, w_k, w_v)
    query, key, value = x @ w_q, x @ w_k, x @ w_v  # (..., L, d), (..., L, d), (..., L, dv)
    grad_query, grad_key, grad_value = attention_backward(
        query, key, value, grad_output, attn_mask, is_causal=is_causal, scale=scale)
    x_t = np.swapaxes(x, -1, -2)  # (..., D, L)
    grad_w_q = (x_t @ grad_query).reshape(-1, *w_q.shape).sum(axis=0)  # (D, d)
    grad_w_k = (x_t @ grad_key).reshape(-1, *w_k.shape).sum(axis=0)  # (D, d)
    grad_w_v = (x_t @ grad_value).reshape(-1, *w_v.shape).sum(axis=0)  # (D, dv)
    grad_x = grad_query @ w_q.T + grad_key @ w_k.T + grad_value @ w_v.T  # (..., L, D)
    return grad_x, grad_w_q, grad_w_k, grad_w_v


# ------------------------------------------------------------------------------ the loss
def cross_entropy(logits, target):
    r"""Mean cross-entropy of ``softmax(logits)`` against integer targets, and its gradient.

    Parameters
    ----------
    logits : array_like, shape (..., C)
        One row of C class scores per position.
    target : array_like of int, shape (...)
        The right class of each position, in ``0 .. C - 1``, or ``-1`` for a position
        that does not count (e.g. the first token, which has no previous token).

    Returns
    -------
    loss : float
        :math:`-\frac{1}{n}\sum \log p_{t}`, the mean over the ``n`` positions that count,
        in nats.
    grad_logits : ndarray, shape (..., C)
        Its gradient: :math:`(p - e_t)/n` at a counted position, 0 elsewhere.

    Raises
    ------
    ValueError
        If ``target`` does not have the shape of ``logits`` without its last axis, holds a
        class outside ``-1 .. C - 1``, or no position counts.

    Notes
    -----
    :math:`-\log p_t = -z_t + \log\sum_c e^{z_c}`, whose gradient with respect to
    :math:`z` is :math:`\operatorname{softmax}(z) - e_t` [1]_; it is computed with the
    maximum subtracted, as the kernel's softmax is. Only the rows that count enter the
    arithmetic: an ignored row (target ``-1``) may hold anything, -inf, NaN or overflowing
    values, and contributes exactly 0 to the loss and its gradient, as PyTorch's
    ``cross_entropy(..., ignore_index=-1)`` does.

    References
    ----------
    .. [1] I. Goodfellow, Y. Bengio and A. Courville, "Deep Learning", 2016, Sec. 6.2.2.3.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import cross_entropy
    >>> loss, grad = cross_entropy(np.zeros((2, 4)), np.array([1, -1]))
    >>> round(loss, 4), grad[0]                       # log 4; (1/4 - e_1) / 1
    (1.3863, array([ 0.25, -0.75,  0.25,  0.25]))
    """
    logits = np.asarray(logits, dtype=np.float64)
    target = np.asarray(target)
    C = logits.shape[-1]
    if target.shape != logits.shape[:-1] or target.dtype.kind not in "iu":
        raise ValueError(f"target must be integers of shape {logits.shape[:-1]} (logits "
                         f"{logits.shape} without the class axis), got {target.dtype} "
                         f"{target.shape}")
    if target.size and (target.min() < -1 or target.max() >= C):
        raise ValueError(f"target classes must lie in -1 .. {C - 1}, got "
                         f"{target.min()} .. {target.max()}")
    counted = target >= 0  # (...)
    n = int(counted.sum())
    if n == 0:
        raise ValueError("no position counts: every target is -1")
    z, t, rows = logits[counted], target[counted], np.arange(n)  # (n, C), (n,): counted only
    # z - max <= 0 can overflow only towards -inf (e.g. -1e308 - 1e308), where the exact
    # exp underflows to 0 anyway: exp(-inf) = 0 leaves the loss and the gradient exact.
    m = z.max(axis=-1)  # (n,)
    with np.errstate(over="ignore"):
        shifted = z - m[:, None]  # (n, C), <= 0
    log_sum = np.log(np.exp(shifted).sum(axis=-1))  # (n,), in [0, log C]
    # -log p_t = m - z_t + log_sum, each part divided by n first: the mean is finite
    # whenever it is representable, even where m - z_t (or a sum of the terms) is not
    loss = np.sum(m / n - z[rows, t] / n + log_sum / n)
    p_minus_e = np.exp(shifted - log_sum[:, None])  # (n, C): p
    p_minus_e[rows, t] -= 1  # p - e_t
    grad = np.zeros_like(logits)  # (..., C): 0 where nothing counts
    grad[counted] = p_minus_e / n
    return float(loss), grad


# ------------------------------------------------------------------------------ the task
def previous_token_task(n_seq, L, n_tokens, rng):
    r"""Random sequences whose target at position ``i`` is the token at ``i - 1``.

    Each token is the concatenation of a one-hot vector of its token (``n_tokens``
    features) and a one-hot vector of its position (``L`` features), so D = n_tokens + L.

    Parameters
    ----------
    n_seq, L, n_tokens : int
        Number of sequences, their length, the size of the vocabulary (all at least 1;
        L at least 2).
    rng : numpy.random.Generator
        The source of the tokens (seed it).

    Returns
    -------
    x : ndarray, shape (n_seq, L, n_tokens + L), float64
        The token vectors.
    tokens : ndarray, shape (n_seq, L), int
        The tokens, uniform on ``0 .. n_tokens - 1``.
    target : ndarray, shape (n_seq, L), int
        ``tokens`` shifted right by one; ``-1`` at position 0, which has no previous token.

    Raises
    ------
    ValueError
        If a size is too small.

    Notes
    -----
    The right attention pattern is known in advance: query ``i >= 1`` should put its
    weight on key ``i - 1``, the previous-token head of chapter 8, found there in a
    trained model [1]_.

    References
    ----------
    .. [1] C. Olsson et al., "In-context learning and induction heads", 2022.
           https://arxiv.org/abs/2209.11895

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import previous_token_task
    >>> x, tokens, target = previous_token_task(1, 4, 3, np.random.default_rng(0))
    >>> x.shape, tokens[0], target[0]
    ((1, 4, 7), array([2, 1, 1, 0]), array([-1,  2,  1,  1]))
    """
    if n_seq < 1 or n_tokens < 1 or L < 2:
        raise ValueError(f"need n_seq >= 1, L >= 2, n_tokens >= 1; got n_seq={n_seq}, "
                         f"L={L}, n_tokens={n_tokens}")
    tokens = rng.integers(0, n_tokens, size=(n_seq, L))  # (N, L)
    x = np.concatenate([np.eye(n_tokens)[tokens],  # (N, L, n_tokens): which token
                        np.broadcast_to(np.eye(L), (n_seq, L, L))], axis=-1)  # where
    target = np.concatenate([np.full((n_seq, 1), -1), tokens[:, :-1]], axis=1)  # (N, L)
    return x, tokens, target


def init_head(D, d, dv, rng, std=1.0):
    r"""Random projections of one head: ``w_q``, ``w_k`` (D, d) and ``w_v`` (D, dv).

    Entries are independent normal with mean 0 and standard deviation ``std``. For the
    one-hot-plus-position tokens of :func:`previous_token_task` (two ones per token),
    ``std = 1 / sqrt(2)`` gives queries and keys whose entries have mean 0 and variance
    1: chapter 4's assumptions, under which the scores have variance d before the
    division by sqrt(d) and 1 after it.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import init_head
    >>> [w.shape for w in init_head(5, 3, 2, np.random.default_rng(0))]
    [(5, 3), (5, 3), (5, 2)]
    """
    return tuple(std * rng.standard_normal((D, width)) for width in (d, d, dv))


@dataclass
class TrainingRun:
    """What :func:`train_head` recorded.

    Attributes
    ----------
    losses : ndarray, shape (steps + 1,)
        The training loss before each step, and after the last.
    weights : list of tuple of ndarray
        ``(w_q, w_k, w_v)`` at each recorded step (copies).
    recorded : ndarray of int
        The steps at which ``weights`` were recorded (0 and the last included).
    """

    losses: np.ndarray
    weights: list
    recorded: np.ndarray

    @property
    def final(self):
        """The projections ``(w_q, w_k, w_v)`` after the last step."""
        return self.weights[-1]


def _is_positive_integer(n):
    return isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)) and n >= 1


def _is_real(r):
    return isinstance(r, numbers.Real) and not isinstance(r, (bool, np.bool_))


def _is_step_size(r):
    if isinstance(r, np.ndarray) and r.ndim == 0:
        r = r.item()
    if not _is_real(r):
        return False
    try:
        return math.isfinite(float(r)) and float(r) > 0  # as the float the step uses
    except OverflowError:  # an int or Fraction beyond every float
        return False


def _check_training(steps, lr, record_every, is_causal, scale):
    """``(steps, lrs, every)`` for :func:`train_head`: Python ints and 3 floats, or the
    documented ValueError naming the argument."""
    if not isinstance(is_causal, (bool, np.bool_)):
        raise ValueError(f"is_causal must be True or False, got {is_causal!r}")
    if scale is not None and not (_is_real(scale) and (scale == 0 or _is_step_size(abs(scale)))):
        raise ValueError(f"scale must be None or a finite real number, got {scale!r}")
    if not _is_positive_integer(steps):
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    if record_every is not None and not _is_positive_integer(record_every):
        raise ValueError(f"record_every must be a positive integer or None, got "
                         f"{record_every!r}")
    try:
        lrs = tuple(lr) if np.ndim(lr) else (lr,) * 3
    except (TypeError, ValueError):  # e.g. a ragged list
        lrs = ()
    if len(lrs) != 3 or not all(_is_step_size(r) for r in lrs):
        raise ValueError(f"lr must be a finite positive number, or 3 of them, got {lr!r}")
    steps = int(steps)
    return steps, tuple(float(np.asarray(r).item()) for r in lrs), steps if record_every is None else int(record_every)


def train_head(x, target, w_q, w_k, w_v, *, steps, lr, is_causal=True, scale=None,
               record_every=None):
    r"""Plain gradient descent on one head: ``logits = head_attention(x, ...)``, cross-entropy.

    Each step computes the loss of :func:`cross_entropy` on the head's output (its
    ``dv`` columns are the logits of ``dv`` classes), its gradient with respect to the
    output, :func:`head_backward`, and moves every projection against its gradient:
    :math:`W \leftarrow W - \eta\,dW`. Nothing is random: the run depends only on its
    inputs.

    Parameters
    ----------
    x : array_like, shape (N, L, D)
    target : array_like of int, shape (N, L)
        As :func:`previous_token_task` returns (``-1`` where nothing counts).
    w_q, w_k, w_v : array_like
        The starting projections (not modified).
    steps : int
        Number of gradient steps (at least 1): a Python or NumPy integer.
    lr : float or tuple of 3 floats
        The step size :math:`\eta` (finite and positive), or one for each of ``w_q``,
        ``w_k``, ``w_v``.
    is_causal : bool, default True
    scale : float, optional
        Defaults to ``1 / sqrt(d)``; ``scale=1.0`` trains without the division.
    record_every : int, optional
        Record the projections every this many steps (a positive integer; default: at
        the start and end only).

    Returns
    -------
    TrainingRun

    Raises
    ------
    ValueError
        If ``steps`` or ``record_every`` is not a positive integer (a Python or NumPy
        integer, not a bool or a float such as ``2.0``), ``lr`` is not a finite
        positive real number or three of them (NaN, inf, 0, negative, a bool or a
        string), ``is_causal`` is not a bool, or ``scale`` is not None or a finite real
        number, naming the argument; and as :func:`head_attention` and
        :func:`cross_entropy` raise.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import init_head, previous_token_task, train_head
    >>> rng = np.random.default_rng(0)
    >>> x, _, target = previous_token_task(8, 4, 3, rng)
    >>> run = train_head(x, target, *init_head(7, 4, 3, rng, std=0.7), steps=50, lr=1.0)
    >>> bool(run.losses[-1] < run.losses[0])
    True
    """
    steps, lrs, every = _check_training(steps, lr, record_every, is_causal, scale)
    weights = [np.array(w, dtype=np.float64) for w in (w_q, w_k, w_v)]  # copies
    losses, snapshots, recorded = [], [], []
    for step in range(steps + 1):
        output = head_attention(x, *weights, is_causal=is_causal, scale=scale)  # (N, L, dv)
        loss, grad_output = cross_entropy(output, target)
        losses.append(loss)
        if step % every == 0 or step == steps:
            snapshots.append(tuple(w.copy() for w in weights))
            recorded.append(step)
        if step == steps:
            break
        grads = head_backward(x, *weights, grad_output, is_causal=is_causal, scale=scale)
        for w, g, rate in zip(weights, grads[1:], lrs):
            w -= rate * g  # W <- W - lr dW
    return TrainingRun(np.array(losses), snapshots, np.array(recorded))
