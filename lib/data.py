"""The source notes' toy matrices, in one place so every notebook uses the same numbers.

Each function returns fresh arrays (float64), so a notebook may modify what it gets.
"""

import numpy as np

__all__ = ["span_example", "qk_av_example", "seed004_qkv", "seed004_printed"]


def span_example():
    """Source note 003 (example 66): regression data and a one-query attention head.

    Returns
    -------
    X : ndarray, shape (3, 2)
        Data matrix, rows are examples (n = 3, d = 2).
    w : ndarray, shape (2,)
        Weights of the linear predictor.
    Q : ndarray, shape (1, 2)
        One query (L = 1, E = 2).
    K : ndarray, shape (3, 2)
        Three keys (S = 3).
    V : ndarray, shape (3, 2)
        Three value rows (Ev = 2).

    Examples
    --------
    >>> X, w, Q, K, V = span_example()
    >>> X @ w
    array([0., 2., 4.])
    """
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    w = np.array([2.0, -1.0])
    Q = np.array([[1.0, 0.0]])
    K = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    V = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    return X, w, Q, K, V


def qk_av_example():
    """Source note 001 (example 48): two queries, three keys and three values.

    Returns
    -------
    Q : ndarray, shape (2, 2)
        L = 2 queries of E = 2 features.
    K : ndarray, shape (3, 2)
        S = 3 keys.
    V : ndarray, shape (3, 2)
        S = 3 value rows of Ev = 2 features.

    Examples
    --------
    >>> Q, K, V = qk_av_example()
    >>> (Q @ K.T).shape
    (2, 3)
    """
    Q = np.array([[1.0, 0.0], [0.0, 1.0]])
    K = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    V = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    return Q, K, V


def seed004_qkv():
    """Source note 004's random Q, K, V (L = 4, d_k = d_v = 8), as printed there to 8 decimals.

    The note drew them from an unseeded ``np.random.randn``; these are its printed
    values, so its printed scores and attention weights can be reproduced (to the
    printed precision). New random examples in the book use a seeded generator.

    Returns
    -------
    q, k, v : ndarray, each of shape (4, 8)

    Examples
    --------
    >>> q, k, v = seed004_qkv()
    >>> (q @ k.T).round(4)[0]
    array([ 1.2024, -0.4431,  1.4791, -0.8053])
    """
    q = np.array([
        [1.16797418, -0.73724956, 0.75041732, -0.1220419, 1.70315355, 0.31347885, 0.34485802, 0.4460984],
        [3.30107262, 0.52084263, -0.30178335, 1.6757843, -0.5155369, -2.57282086, 0.7492196, -0.1116739],
        [1.79346332, 1.43356091, 1.04335097, -0.17879843, 0.64886601, -1.36614847, 0.23380491, 0.87536806],
        [1.47103375, -1.58489204, -0.45911092, 0.28391595, 0.21250504, -1.61590866, -1.29484902, 0.00475083],
    ])
    k = np.array([
        [-0.27718816, -1.65065268, 0.65895024, -0.30877976, 0.08718337, -1.25869869, -0.189555, 0.19835477],
        [0.34020432, 0.52734301, 0.70054018, 0.02666352, -0.47575991, 0.27451574, 0.31178952, -0.80116187],
        [-0.32764932, -0.14549352, -0.40258405, 0.75537362, 1.05953459, -1.34530308, 1.99241804, 0.17674986],
        [-1.40543092, 0.43389184, -0.07028518, 0.10003431, 1.26343057, -2.0707861, 0.51659185, -1.03069964],
    ])
    v = np.array([
        [-1.20455614, -0.78141984, -0.60550966, -0.49607676, 0.05358656, 0.31648808, 1.97222775, 0.97455048],
        [-0.22988732, -2.3585375, 0.49206019, -0.74539263, -0.530485, -0.23619713, 0.80175571, 0.96790588],
        [-1.20769139, -1.33242785, -1.59215534, 2.60984511, 0.33729297, 0.46552584, 1.51418349, 0.72913429],
        [0.5936924, -0.6305729, -0.95026899, 0.87634056, -1.56283632, 0.3099347, -0.36928654, 1.2784266],
    ])
    return q, k, v


def seed004_printed():
    """What source note 004 printed from `seed004_qkv`'s matrices, to 8 decimals.

    Its scaled scores ``q @ k.T / sqrt(d_k)``, those scores plus its mask (which keeps
    a +1 on every allowed entry), its causal attention weights, its output ``new_v`` and
    four variances, typed in as printed, so that a notebook can compare them with the
    kernel.

    Returns
    -------
    dict of str to ndarray
        ``"scaled"``, ``"scaled_plus_mask"`` and ``"attention"``, each of shape (4, 4)
        (``-inf`` where the note's mask forbids), ``"new_v"``, of shape (4, 8), and
        ``"variances"``, shape (4,): the variances of all entries of ``q``, ``k``,
        ``q @ k.T`` and ``q @ k.T / sqrt(d_k)`` that the note printed.

    Examples
    --------
    >>> printed = seed004_printed()
    >>> printed["attention"][1, :2]
    array([0.45111887, 0.54888113])
    >>> (printed["scaled_plus_mask"][0, 0] - printed["scaled"][0, 0]).round(8)
    np.float64(1.0)
    """
    inf = np.inf
    return {
        "scaled": np.array([
            [0.42511031, -0.15665998, 0.52292703, -0.28472334],
            [0.19029433, 0.38644534, 1.63270176, 0.337278],
            [-0.07610522, 0.27581297, 0.63450144, 0.31025797],
            [1.45558315, -0.56625303, -0.01134759, 0.0871309],
        ]),
        "scaled_plus_mask": np.array([
            [1.42511031, -inf, -inf, -inf],
            [1.19029433, 1.38644534, -inf, -inf],
            [0.92389478, 1.27581297, 1.63450144, -inf],
            [2.45558315, 0.43374697, 0.98865241, 1.0871309],
        ]),
        "attention": np.array([
            [1.0, 0.0, 0.0, 0.0],
            [0.45111887, 0.54888113, 0.0, 0.0],
            [0.22436527, 0.31900079, 0.45663394, 0.0],
            [0.61822085, 0.08185993, 0.14258168, 0.15733755],
        ]),
        "new_v": np.array([
            [-1.20455614, -0.78141984, -0.60550966, -0.49607676,
             0.05358656, 0.31648808, 1.97222775, 0.97455048],
            [-0.66957881, -1.64706996, -0.00307428, -0.63292153,
             -0.2669993, 0.0131296, 1.32977774, 0.97090339],
            [-0.89506767, -1.53613058, -0.70591991, 0.84266061,
             -0.00318276, 0.20823676, 1.38968769, 0.86036549],
            [-0.84228483, -0.96535234, -0.71058386, 0.14229459,
             -0.20809817, 0.29146427, 1.44269616, 0.98682583],
        ]),
        # the variances it printed: q.var(), k.var(), (q @ k.T).var() and the scaled one
        "variances": np.array(
            [1.3772888688135403, 0.7481376289021062, 2.443300481459231, 0.30541256018240387]
        ),
    }
