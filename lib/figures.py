"""Figure helpers shared by the notebooks: one function per kind of picture.

Every helper draws with matplotlib on an opaque white background (the inline backend's
default is transparent, which turns black axes invisible in a dark-mode page), returns
the ``Figure``, and leaves showing it to the notebook. Alt text belongs to the notebook
cell that displays the figure (``mystnb: image: alt:`` in the cell's metadata).
"""

import sys

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, NullFormatter

if sys.platform != "emscripten":  # in the browser (Pyodide), only a hull loads SciPy
    from scipy.spatial import ConvexHull  # noqa: F401  (its OpenBLAS loads with the module)

__all__ = ["new_figure", "FONT_SIZE", "shown_text_px"]

BACKGROUND = "white"

# Legibility on a phone (issue 28). A notebook shows a figure at 100 CSS px per inch
# (matplotlib's figure.dpi; the inline backend crops it to its drawn content,
# bbox_inches="tight", and the build's 2x PNG keeps that size) and the page shrinks it to
# fit the article's column, 342 CSS px on a phone 390 px wide. Text of s points is then
# s * 100/72 * min(1, 342 / (100 w)) px high on a figure w inches wide (shown_text_px):
# FONT_SIZE points give at least MIN_TEXT_PX = 9 px up to w = 6.33 in, so every helper
# draws at most about 6.2 in wide and writes all its text at FONT_SIZE or more.
FONT_SIZE = 12
FIGURE_DPI = 100
PHONE_COLUMN_PX = 342
MIN_TEXT_PX = 9


def shown_text_px(fontsize, width_in, *, column_px=PHONE_COLUMN_PX, dpi=FIGURE_DPI):
    """Height in CSS px of text of ``fontsize`` points on a figure shown in a page's column.

    A notebook's figure ``width_in`` inches wide is shown ``dpi * width_in`` CSS px wide,
    or shrunk to the column's width ``column_px`` when it is wider.

    Parameters
    ----------
    fontsize : float
        Size of the text, in points (1/72 in).
    width_in : float
        Width of the figure as drawn (after cropping to its content), in inches.
    column_px : float, default 342
        Width of the page's column in CSS px (342 on a 390 px phone, 672 on a laptop).
    dpi : float, default 100
        CSS px per inch of the figure at its natural size.

    Returns
    -------
    float

    Examples
    --------
    >>> round(shown_text_px(12, 6.11), 2)     # a 611 px figure on a phone
    9.33
    >>> round(shown_text_px(12, 3.0), 2)      # narrower than the column: natural size
    16.67
    """
    return fontsize / 72 * dpi * min(1.0, column_px / (dpi * width_in))


def _plain_log_label(x, pos=None):
    """A log axis' tick label in plain text, "1000", "0.01" or "1e-07", not a power.

    Matplotlib writes a log axis' ticks as powers (``10^{-7}``, ``2^{10}``) whose
    exponent is drawn at 70 % of the label's size, too small on a phone.
    """
    if x <= 0:
        return ""
    if 1e-3 <= x < 1e5:
        return f"{x:g}"
    return f"{x:.0e}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")


def _plain_log_ticks(ax):
    """Label the log-scaled axes of ``ax`` with plain numbers (no exponents, no minor labels)."""
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "log":
            axis.set_major_formatter(FuncFormatter(_plain_log_label))
            axis.set_minor_formatter(NullFormatter())


def _legible(fig, size=FONT_SIZE):
    """Raise every text of ``fig`` (ticks, labels, titles, legends, notes) to ``size`` points.

    Tick labels are made when the figure is drawn, so their size is set on each axes'
    tick parameters; every other text is one of the figure's Text artists. Larger
    texts keep their size.
    """
    for ax in fig.axes:
        for axis, which in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            labels = axis.get_ticklabels()
            current = labels[0].get_fontsize() if labels else 0
            if current < size:
                ax.tick_params(axis=which, which="both", labelsize=size)
    for text in fig.findobj(Text):
        if text.get_fontsize() < size:
            text.set_fontsize(size)
    return fig


def new_figure(ncols=1, *, width=4.5, height=3.5, **subplots_kw):
    """Create a figure with an opaque white background and ``ncols`` side-by-side axes.

    Parameters
    ----------
    ncols : int, default 1
        Number of axes in one row.
    width, height : float
        Size of each axes' panel, in inches.
    **subplots_kw
        Passed on to ``matplotlib.pyplot.subplots``.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : matplotlib.axes.Axes, or ndarray of them when ``ncols > 1``

    Examples
    --------
    >>> fig, ax = new_figure()
    >>> fig.get_facecolor()
    (1.0, 1.0, 1.0, 1.0)
    >>> plt.close(fig)
    """
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height),
                             facecolor=BACKGROUND, layout="constrained", **subplots_kw)
    for ax in np.atleast_1d(axes):
        ax.set_facecolor(BACKGROUND)
    return fig, axes


# --- span notebook (01) -------------------------------------------------------------
__all__.extend(["convex_hull_2d", "plot_convex_hull"])


def convex_hull_2d(points):
    """Vertices of the convex hull of points in the plane, in counter-clockwise order.

    SciPy's :class:`scipy.spatial.ConvexHull` (Qhull [1]_) finds the hull; in the plane
    it lists the vertices counter-clockwise. Points on an edge of the hull (collinear
    with two vertices) are not vertices and are dropped. The list starts from the
    lowest-leftmost point, so that the same points always give the same array.

    Parameters
    ----------
    points : array_like, shape (P, 2)
        Points in the plane, one per row; ``P >= 1``.

    Returns
    -------
    ndarray, shape (H, 2)
        The hull's vertices, counter-clockwise, starting from the lowest-leftmost
        point (``H <= P``; ``H`` is 1 or 2 when the points are all equal or collinear,
        where Qhull has no two-dimensional hull to give).

    Raises
    ------
    ValueError
        If ``points`` does not have shape (P, 2) with ``P >= 1``.

    References
    ----------
    .. [1] C. B. Barber, D. P. Dobkin and H. Huhdanpaa, "The Quickhull algorithm for
           convex hulls", ACM Transactions on Mathematical Software 22(4), 1996.

    Examples
    --------
    >>> convex_hull_2d([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5], [0.5, 0]])
    array([[0., 0.],
           [1., 0.],
           [1., 1.],
           [0., 1.]])
    """
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or points.shape[1] != 2 or points.shape[0] < 1:
        raise ValueError(f"points must have shape (P, 2) with P >= 1, got shape {points.shape}")
    pts = np.unique(points, axis=0)  # sorted by x, then y; duplicates removed
    centred = pts - pts[0]
    if len(pts) < 3 or np.linalg.matrix_rank(centred) < 2:
        return pts[[0, -1]] if len(pts) > 1 else pts  # equal or collinear: the two ends
    from scipy.spatial import ConvexHull  # imported above, except in the browser

    vertices = pts[ConvexHull(pts).vertices]  # (H, 2), counter-clockwise
    first = np.lexsort((vertices[:, 1], vertices[:, 0]))[0]  # lowest x, then lowest y
    return np.roll(vertices, -first, axis=0)


def plot_convex_hull(values, points=(), *, labels=None, point_labels=None, highlight=None,
                     highlight_label=None, ax=None, title=None):
    """Draw value rows in the plane, their filled convex hull, and points to compare with it.

    Made for attention with two-dimensional values (Ev = 2): every output
    ``o = sum_i a_i v_i`` with weights ``a_i >= 0`` summing to 1 lies in the convex
    hull of the value rows ``v_i``, the filled polygon.

    Parameters
    ----------
    values : array_like, shape (S, 2)
        The value rows, drawn as labelled black dots; their convex hull is filled.
    points : array_like of shape (P, 2), or sequence of them, optional
        Groups of points (for example the outputs of many queries), each drawn as small
        dots in its own colour.
    labels : sequence of str, length S, optional
        Labels written next to the value rows; default ``$v_{0}$, ..., $v_{S-1}$``
        (indices from 0, as in NumPy: ``$v_{0}$`` is ``values[0]``).
    point_labels : sequence of str, optional
        Legend entries of the point groups, one per group.
    highlight : array_like, shape (2,), optional
        One point drawn large (a star), for example the output of one query.
    highlight_label : str, optional
        Legend entry of ``highlight``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into. By default a new figure with an opaque white background is
        made with :func:`new_figure`.
    title : str, optional
        Title of the axes.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes (``ax.figure`` when ``ax`` is given).

    Raises
    ------
    ValueError
        If ``values`` or a point group is not of shape (n, 2), ``highlight`` is not of
        shape (2,), or a label list has the wrong length.

    Examples
    --------
    >>> import numpy as np
    >>> V = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> fig = plot_convex_hull(V, [V.mean(axis=0, keepdims=True)], point_labels=["mean"])
    >>> ax = fig.axes[0]
    >>> sorted(ax.patches[0].get_xy()[:-1].tolist())     # the filled triangle
    [[0.0, 2.0], [1.0, 0.0], [1.0, 1.0]]
    >>> [t.get_text() for t in ax.texts]
    ['$v_{0}$', '$v_{1}$', '$v_{2}$']
    >>> plt.close(fig)
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2 or values.shape[1] != 2 or values.shape[0] < 1:
        raise ValueError(f"values must have shape (S, 2) with S >= 1, got shape {values.shape}")
    S = values.shape[0]
    labels = [f"$v_{{{i}}}$" for i in range(S)] if labels is None else list(labels)
    if len(labels) != S:
        raise ValueError(f"need {S} labels for values of shape {values.shape}, got {len(labels)}")
    if isinstance(points, np.ndarray) and points.ndim == 2:
        points = [points]
    groups = [np.asarray(p, dtype=float) for p in points]
    for g in groups:
        if g.ndim != 2 or g.shape[1] != 2:
            raise ValueError(f"each group of points must have shape (P, 2), got shape {g.shape}")
    if point_labels is not None and len(point_labels) != len(groups):
        raise ValueError(f"need {len(groups)} point labels, one per group, got {len(point_labels)}")
    if highlight is not None:
        highlight = np.asarray(highlight, dtype=float)
        if highlight.shape != (2,):
            raise ValueError(f"highlight must have shape (2,), got shape {highlight.shape}")

    if ax is None:
        fig, ax = new_figure(width=6.0, height=6.0)
        own = True
    else:
        fig, own = ax.figure, False

    hull = convex_hull_2d(values)
    ax.fill(hull[:, 0], hull[:, 1], facecolor="#c6dbef", edgecolor="#2171b5", linewidth=1.5,
            label="convex hull of the values", zorder=1)
    tab10 = plt.get_cmap("tab10").colors
    colors = [tab10[i] for i in (1, 2, 4, 6, 8, 9)]  # blue is the hull's, red the highlight's
    for k, g in enumerate(groups):
        label = None if point_labels is None else point_labels[k]
        ax.scatter(g[:, 0], g[:, 1], s=6, color=colors[k % len(colors)], label=label, zorder=2)
    if highlight is not None:
        ax.scatter(*highlight, s=160, marker="*", color="#d62728", edgecolor="black",
                   linewidth=0.6, label=highlight_label, zorder=4)
    ax.scatter(values[:, 0], values[:, 1], s=36, color="black", zorder=3)
    span = np.ptp(values, axis=0).max() if S > 1 else 1.0
    offset = 0.04 * (span if span > 0 else 1.0)
    for (x, y), text in zip(values, labels):
        ax.text(x + offset, y + offset, text, fontsize=FONT_SIZE + 2, zorder=5)

    ax.set_aspect("equal", adjustable="datalim")
    ax.margins(0.15)
    ax.set_xlabel("first coordinate")
    ax.set_ylabel("second coordinate")
    ax.grid(color="0.9", linewidth=0.8, zorder=0)
    ax.set_axisbelow(True)
    if title is not None:
        ax.set_title(title)
    if point_labels is not None or highlight_label is not None:
        if own:   # under the axes, so that the figure stays narrow enough for a phone
            fig.legend(loc="outside lower center", fontsize=FONT_SIZE, framealpha=1.0)
        else:
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), framealpha=1.0)
    return _legible(fig) if own else fig



# --- QK^T -> AV notebook (02) -------------------------------------------------------
__all__.append("plot_attention_heatmap")


def plot_attention_heatmap(weights, query_labels=None, key_labels=None, ax=None, title=None,
                           *, fmt=".2f", cmap="Blues", colorbar=True):
    """Draw an L x S attention-weight matrix as an annotated heatmap.

    Rows are queries and columns are keys, as in ``A = softmax(Q K^T / sqrt(E))``.
    Every cell shows its value; the colour scale is fixed to [0, 1] (the range of an
    attention weight), so pictures of different matrices can be compared. An entry
    that is exactly zero (a masked key, for example) is written as ``0`` rather
    than ``0.00``, which tells it apart from a weight that only rounds to zero.

    Parameters
    ----------
    weights : array_like, shape (L, S)
        Attention weights, one row per query and one column per key. Values should
        lie in [0, 1]; values outside are drawn with the end colours of the scale.
    query_labels : sequence of str, length L, optional
        Tick labels of the rows; default ``q0, q1, ...``.
    key_labels : sequence of str, length S, optional
        Tick labels of the columns; default ``k0, k1, ...``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into (for a panel of a larger figure). By default a new figure
        with an opaque white background is made with :func:`new_figure`.
    title : str, optional
        Title of the axes.
    fmt : str, default ".2f"
        Format specification of the numbers written in the cells.
    cmap : str or matplotlib.colors.Colormap, default "Blues"
        Colour map, from 0 (light) to 1 (dark).
    colorbar : bool, default True
        Draw a colour bar labelled "attention weight" beside the axes.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes (``ax.figure`` when ``ax`` is given).

    Raises
    ------
    ValueError
        If ``weights`` is not two-dimensional, or a label list has the wrong length.

    Examples
    --------
    >>> import numpy as np
    >>> fig = plot_attention_heatmap(np.array([[0.25, 0.75], [1.0, 0.0]]),
    ...                              key_labels=["a", "b"])
    >>> ax = fig.axes[0]
    >>> [t.get_text() for t in ax.texts]
    ['0.25', '0.75', '1.00', '0']
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['a', 'b']
    >>> plt.close(fig)
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2:
        raise ValueError(f"weights must have shape (L, S), got shape {weights.shape}")
    L, S = weights.shape
    query_labels = [f"q{i}" for i in range(L)] if query_labels is None else list(query_labels)
    key_labels = [f"k{j}" for j in range(S)] if key_labels is None else list(key_labels)
    if len(query_labels) != L:
        raise ValueError(f"need {L} query labels for weights of shape {weights.shape}, "
                         f"got {len(query_labels)}")
    if len(key_labels) != S:
        raise ValueError(f"need {S} key labels for weights of shape {weights.shape}, "
                         f"got {len(key_labels)}")

    if ax is None:
        fig, ax = new_figure(width=max(3.0, 0.9 * S + 1.8), height=max(2.2, 0.7 * L + 1.2))
        own = True
    else:
        fig, own = ax.figure, False
    cmap = plt.get_cmap(cmap)
    image = ax.imshow(weights, cmap=cmap, vmin=0.0, vmax=1.0, aspect="equal")

    for i in range(L):
        for j in range(S):
            w = weights[i, j]
            text = "0" if w == 0 else format(w, fmt)
            # dark text on light cells, white text on dark ones (by the cell's luminance)
            r, g, b, _ = cmap(float(np.clip(w, 0.0, 1.0)))
            color = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
            ax.text(j, i, text, ha="center", va="center", color=color, fontsize=FONT_SIZE)

    ax.set_xticks(range(S), key_labels)
    ax.set_yticks(range(L), query_labels)
    # thin grey lines between the cells, so that two near-white cells stay apart
    ax.set_xticks(np.arange(S + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(L + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="0.75", linewidth=0.8)
    ax.tick_params(which="minor", length=0)
    ax.set_xlabel("key $j$")
    ax.set_ylabel("query $i$")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    if title is not None:
        ax.set_title(title)
    if colorbar:
        fig.colorbar(image, ax=ax, label="attention weight", shrink=0.9)
    return _legible(fig) if own else fig



__all__.append("plot_attention_pipeline")

# The boxes of plot_attention_pipeline: (text, x0, x1, row from the top), and its arrows:
# (x at the start, row it starts at, x at the end, row it ends at, step written on it,
# x of the step's centre).
_PIPELINE_BOXES = [
    ("queries $Q$\n" r"$L \times E$", 0.01, 0.31, 0),
    ("keys $K$\n" r"$S \times E$", 0.35, 0.65, 0),
    ("values $V$\n" r"$S \times E_v$", 0.69, 0.99, 0),
    ("scores $Z$\n" r"$L \times S$", 0.01, 0.65, 1),
    ("weights $A$\n" r"$L \times S$", 0.01, 0.65, 2),
    ("output $O$\n" r"$L \times E_v$", 0.01, 0.99, 3),
]
_PIPELINE_STEPS = [
    (0.16, 0, 0.16, 1, None, None),
    (0.50, 0, 0.50, 1, r"$QK^\top/\sqrt{E}$", 0.33),
    (0.06, 1, 0.06, 2, "softmax of each row", 0.31),
    (0.06, 2, 0.06, 3, "$AV$", 0.15),
    (0.84, 0, 0.84, 3, None, None),
]


def plot_attention_pipeline(*, width=4.4, fontsize=12):
    """Draw scaled dot-product attention as a pipeline: Q, K, V -> scores -> weights -> output.

    One box per array, with its shape: the queries, keys and values at the top, the
    scores ``Z = Q K^T / sqrt(E)``, the weights ``A = softmax(Z)`` (a softmax along each
    row, the key axis) and the output ``O = A V`` at the bottom. The arrows from the
    queries and the keys meet in the scores; the arrow from the values joins the weights
    in the output.

    Parameters
    ----------
    width : float, default 4.4
        Width of the figure, in inches; the height follows from it.
    fontsize : float, default 12
        Size of every label, in points.

    Returns
    -------
    matplotlib.figure.Figure
        One axes without ticks, holding the boxes, the arrows and their labels.

    Raises
    ------
    ValueError
        If ``width`` or ``fontsize`` is not positive.

    Examples
    --------
    >>> fig = plot_attention_pipeline()
    >>> [t.get_text().split("\\n")[0] for t in fig.axes[0].texts][:6]
    ['queries $Q$', 'keys $K$', 'values $V$', 'scores $Z$', 'weights $A$', 'output $O$']
    >>> fig.axes[0].texts[-1].get_text()
    '$AV$'
    >>> plt.close(fig)
    """
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    if not (width > 0 and fontsize > 0):
        raise ValueError(f"width and fontsize must be positive, got {width} and {fontsize}")
    rows = 1 + max(row for *_, row in _PIPELINE_BOXES)
    fig, ax = new_figure(width=width, height=width * 0.95)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.55, 2 * (rows - 1) + 0.55)
    ax.axis("off")

    def y_of(row):  # row 0 at the top
        return 2 * (rows - 1 - row)

    for text, x0, x1, row in _PIPELINE_BOXES:
        y = y_of(row)
        colour = "#dbe9f6" if row in (0, rows - 1) else "#eeeeee"
        ax.add_patch(FancyBboxPatch((x0, y - 0.45), x1 - x0, 0.9, facecolor=colour,
                                    boxstyle="round,pad=0.01", linewidth=1.2,
                                    edgecolor="0.25"))
        ax.text((x0 + x1) / 2, y, text, ha="center", va="center", fontsize=fontsize,
                linespacing=1.4)
    for x_start, row_start, x_end, row_end, *_ in _PIPELINE_STEPS:
        ax.add_patch(FancyArrowPatch((x_start, y_of(row_start) - 0.5),
                                     (x_end, y_of(row_end) + 0.5),
                                     arrowstyle="-|>", mutation_scale=16,
                                     linewidth=1.4, color="0.25"))
    for _, row_start, _, row_end, step, x_step in _PIPELINE_STEPS:
        if step is not None:
            y = (y_of(row_start) + y_of(row_end)) / 2
            ax.text(x_step, y, step, ha="center", va="center", fontsize=fontsize,
                    backgroundcolor=BACKGROUND)
    return _legible(fig, min(fontsize, FONT_SIZE))



# --- masking notebook (03) ----------------------------------------------------------
__all__.append("plot_mask_and_weights")

#: Colours of a mask panel: white where a pair is masked out, grey where it may attend.
MASK_COLORS = ("white", "#b3b3b3")


def plot_mask_and_weights(mask, weights, *, item_titles=None, query_labels=None,
                          key_labels=None, panel_size=3.0):
    """Draw boolean attention masks beside the attention weights they produce.

    For each item (one matrix, or each matrix of a batch) two panels are drawn side
    by side in one row: the mask, with 1 (grey) where query ``i`` may attend to key
    ``j`` (True) and 0 (white) where it may not, and the attention weights, drawn with
    :func:`plot_attention_heatmap`. A masked pair should show ``0`` in both panels.

    Parameters
    ----------
    mask : array_like of bool, shape (L, S) or (N, L, S)
        Attention mask, True = may attend. A batch of N masks gives 2N panels.
    weights : array_like, shape (L, S) or (N, L, S)
        Attention weights, the same shape as ``mask``.
    item_titles : sequence of str, length N, optional
        A name for each item, put in both of its panels' titles
        (e.g. ``"sequence 0"``). By default the titles are just "mask" and
        "weights" (with the item index when N > 1).
    query_labels, key_labels : sequence of str, optional
        Tick labels of the rows (length L) and columns (length S); defaults as in
        :func:`plot_attention_heatmap`.
    panel_size : float, default 3.0
        Width and height of each panel, in inches.

    Returns
    -------
    matplotlib.figure.Figure
        One row of 2N axes (mask, weights, mask, weights, ...) and one colour bar
        for the weights, beside the last panel.

    Raises
    ------
    TypeError
        If ``mask`` is not boolean.
    ValueError
        If ``mask`` is not two- or three-dimensional, ``weights`` has a different
        shape, or ``item_titles`` does not have one title per item.

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.tri(2, dtype=bool)
    >>> fig = plot_mask_and_weights(mask, np.array([[1.0, 0.0], [0.4, 0.6]]))
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['mask', 'weights']
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['1', '0', '1', '1']
    >>> plt.close(fig)
    """
    mask = np.asarray(mask)
    weights = np.asarray(weights, dtype=float)
    if mask.dtype != np.bool_:
        raise TypeError(f"mask must be boolean (True = may attend), got dtype {mask.dtype}")
    if mask.ndim not in (2, 3):
        raise ValueError(f"mask must have shape (L, S) or (N, L, S), got shape {mask.shape}")
    if weights.shape != mask.shape:
        raise ValueError(f"weights must have the mask's shape {mask.shape}, "
                         f"got shape {weights.shape}")
    batched = mask.ndim == 3
    masks = mask if batched else mask[None]  # (N, L, S)
    weights = weights if batched else weights[None]  # (N, L, S)
    N = masks.shape[0]
    if item_titles is None:
        item_titles = [str(n) for n in range(N)] if batched else [None]
    elif len(item_titles) != N:
        raise ValueError(f"need {N} item titles, got {len(item_titles)}")

    from matplotlib.colors import ListedColormap

    mask_cmap = ListedColormap(MASK_COLORS)
    # one row per item (mask, weights), so a batch stays readable in a page's column
    fig, grid = plt.subplots(N, 2, figsize=(2 * panel_size, N * panel_size), squeeze=False,
                             facecolor=BACKGROUND, layout="constrained")
    axes = grid.ravel()  # (2 N,) mask and weights of item n at 2 n and 2 n + 1
    for ax in axes:
        ax.set_facecolor(BACKGROUND)
    for n in range(N):
        suffix = "" if item_titles[n] is None else f" ({item_titles[n]})"
        plot_attention_heatmap(masks[n].astype(float), query_labels, key_labels,
                               ax=axes[2 * n], title="mask" + suffix, fmt=".0f",
                               cmap=mask_cmap, colorbar=False)
        plot_attention_heatmap(weights[n], query_labels, key_labels, ax=axes[2 * n + 1],
                               title="weights" + suffix, colorbar=True)
    return _legible(fig)


# --- variance scaling notebook (04) -------------------------------------------------
__all__.extend(["plot_score_variance", "plot_softmax_saturation"])


def _curve(values, n, name):
    """Return ``values`` as a 1-D float array of length ``n``, or raise ValueError."""
    values = np.asarray(values, dtype=float)
    if values.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one value per E, "
                         f"got shape {values.shape}")
    return values


def _dims(dims):
    """Return the E values as a 1-D float array of positive numbers, or raise ValueError."""
    dims = np.asarray(dims, dtype=float)
    if dims.ndim != 1 or dims.size == 0 or np.any(dims <= 0):
        raise ValueError(f"dims must be a nonempty 1-D array of positive E values, got {dims!r}")
    return dims


def plot_score_variance(dims, var_unscaled, var_scaled):
    """Draw the measured variance of a score against E, before and after the 1/sqrt(E) scale.

    Both axes are logarithmic with base 2. The measurements are drawn with markers
    and the two theoretical values, ``Var(q . k) = E`` and ``Var(q . k / sqrt(E)) = 1``
    for independent zero-mean unit-variance entries, as grey reference lines.

    Parameters
    ----------
    dims : array_like, shape (n,)
        The numbers of features E at which the variance was measured (positive).
    var_unscaled : array_like, shape (n,)
        Measured variance of ``q . k`` at each E.
    var_scaled : array_like, shape (n,)
        Measured variance of ``q . k / sqrt(E)`` at each E.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; its first two lines are the measurements (unscaled, then scaled),
        the next two the theoretical values.

    Raises
    ------
    ValueError
        If ``dims`` is not a nonempty 1-D array of positive numbers, or a variance
        array does not have one value per E.

    Examples
    --------
    >>> fig = plot_score_variance([2, 4, 8], [2.1, 3.9, 8.2], [1.05, 0.98, 1.02])
    >>> ax = fig.axes[0]
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    >>> ax.lines[1].get_ydata().tolist()
    [1.05, 0.98, 1.02]
    >>> plt.close(fig)
    """
    dims = _dims(dims)
    var_unscaled = _curve(var_unscaled, dims.size, "var_unscaled")
    var_scaled = _curve(var_scaled, dims.size, "var_scaled")

    fig, ax = new_figure(width=5.5, height=4.0)
    ax.plot(dims, var_unscaled, "o-", color="C3", label=r"measured $\mathrm{Var}(q^\top k)$")
    ax.plot(dims, var_scaled, "s-", color="C0",
            label=r"measured $\mathrm{Var}(q^\top k/\sqrt{E})$")
    # theory drawn wide and light, underneath, so that it shows around the measurements
    ax.plot(dims, dims, "--", color="0.6", linewidth=3, zorder=0, label=r"theory: $E$")
    ax.plot(dims, np.ones_like(dims), ":", color="0.6", linewidth=3, zorder=0,
            label="theory: 1")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("$E$ (features per query and key)")
    ax.set_ylabel("measured variance")
    ax.grid(True, which="major", color="0.9")
    ax.legend(loc="upper left", frameon=False)
    _plain_log_ticks(ax)
    return _legible(fig)


def _rows(values, n, name):
    """Return per-row ``values`` as a 2-D float array of shape (n, R), or raise ValueError."""
    try:
        values = np.asarray(values, dtype=float)
    except ValueError:  # a ragged list of rows
        raise ValueError(f"{name} must have shape ({n}, R), R values per E, "
                         f"got rows of different lengths") from None
    if values.ndim != 2 or values.shape[0] != n or values.shape[1] == 0:
        raise ValueError(f"{name} must have shape ({n}, R), R values per E, "
                         f"got shape {values.shape}")
    return values


def plot_softmax_saturation(dims, max_weight, entropy, jac_norm, query_factor, *, n_keys):
    """Draw four per-row measures of softmax saturation against E: median and quartiles.

    Each measure is given row by row (R rows at every E); each panel draws, for every
    entry of the mappings (for example "no scaling" and "scaled by 1/sqrt(E)"), the
    median over the rows as a line with markers and the band between the first and
    third quartiles, with the same colour and marker in every panel. Panels, in
    reading order: the largest attention weight of a row and the entropy of a row in
    nats (linear axes), the spectral norm of the row's softmax Jacobian
    ``diag(p) - p p^T``, and the largest factor from the gradient at the weights to
    the gradient at the query, ``||c K^T J||_2`` (logarithmic axes, base 10, since the
    medians of saturated rows span many orders of magnitude). Grey lines mark a
    uniform row (every weight ``1 / n_keys``) and a one-hot row, where the axis can
    show them. The x axes are logarithmic with base 2.

    Parameters
    ----------
    dims : array_like, shape (n,)
        The numbers of features E at which the rows were sampled (positive).
    max_weight, entropy, jac_norm, query_factor : mapping of str to array_like, shape (n, R)
        Legend label -> the measure of each of R rows at each E (a list of n arrays of
        shape (R,) will do). The four mappings must have the same labels in the same
        order; R may differ between labels.
    n_keys : int
        Number of keys S in a row, which fixes the reference lines:
        largest weight ``1/S`` (uniform) and 1 (one-hot); entropy ``log S``
        (uniform) and 0 (one-hot); Jacobian norm ``1/S`` (uniform; the one-hot
        value 0 is off a logarithmic axis). The query factor has none: it depends on
        the keys.

    Returns
    -------
    matplotlib.figure.Figure
        Four axes in a 2 x 2 grid. In each, the first lines are the medians in the
        order of the mapping (the bands are the collections in the same order),
        followed by the reference lines.

    Raises
    ------
    ValueError
        If ``dims`` is not a nonempty 1-D array of positive numbers, ``n_keys`` is
        not an integer of at least 2, the mappings' labels differ, or a measure does
        not have shape (n, R) with R >= 1.

    Notes
    -----
    A median with a quartile band, not a mean, because the rows do not saturate
    together: at large E without scaling most rows are nearly one-hot and a minority
    are not, and a mean over the rows lies between the two groups, describing
    neither. Values at or below 0 are not drawn on the logarithmic axes.

    Examples
    --------
    >>> rows = {"a": [[0.2, 0.3, 0.4], [0.5, 0.6, 0.7]]}  # n = 2 values of E, R = 3 rows
    >>> fig = plot_softmax_saturation([2, 4], rows, rows, rows, rows, n_keys=16)
    >>> len(fig.axes), fig.axes[2].lines[0].get_ydata().tolist()  # the medians
    (4, [0.3, 0.6])
    >>> fig.axes[2].get_yscale(), fig.axes[0].get_yscale()
    ('log', 'linear')
    >>> plt.close(fig)
    """
    dims = _dims(dims)
    if isinstance(n_keys, (bool, np.bool_)) or not isinstance(n_keys, (int, np.integer)) \
            or n_keys < 2:
        raise ValueError(f"n_keys must be an integer >= 2, got {n_keys!r}")
    labels = list(max_weight)
    if any(list(m) != labels for m in (entropy, jac_norm, query_factor)):
        raise ValueError(f"max_weight, entropy, jac_norm and query_factor must have the same "
                         f"labels in the same order, got {labels}, {list(entropy)}, "
                         f"{list(jac_norm)} and {list(query_factor)}")

    panels = [  # (measure, y label, log y axis, reference lines)
        (max_weight, "largest weight of a row", False,
         [(1.0, "one-hot: 1"), (1.0 / n_keys, f"uniform: 1/{n_keys}")]),
        (entropy, "entropy of a row (nats)", False,
         [(np.log(n_keys), f"uniform: log {n_keys}"), (0.0, "one-hot: 0")]),
        (jac_norm, r"$\|J\|_2$ (weights $\to$ scores)", True,
         [(1.0 / n_keys, f"uniform: 1/{n_keys}")]),
        (query_factor, r"$\|c\,K^\top J\|_2$ (weights $\to$ query)", True, []),
    ]
    # one column of four panels: two side by side would be too narrow on a phone
    fig, axes = plt.subplots(4, 1, figsize=(6.0, 14.0), facecolor=BACKGROUND,
                             layout="constrained")
    for ax, (measure, ylabel, log_y, references) in zip(axes.flat, panels):
        ax.set_facecolor(BACKGROUND)
        for i, label in enumerate(labels):
            values = _rows(measure[label], dims.size, f"the measure {label!r}")
            q1, median, q3 = np.percentile(values, [25, 50, 75], axis=1)  # each (n,)
            color = f"C{(3, 0, 2, 1)[i % 4]}"
            ax.plot(dims, median, ["o-", "s-", "^-", "D-"][i % 4], color=color,
                    label=f"{label} (median)")
            ax.fill_between(dims, q1, q3, color=color, alpha=0.2, linewidth=0)
        for (y, ref_label), style in zip(references, ["--", ":"]):
            ax.axhline(y, linestyle=style, color="0.45", zorder=0, label=ref_label)
        ax.set_xscale("log", base=2)
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("$E$")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", color="0.9")
        ax.legend(frameon=False)
        _plain_log_ticks(ax)
    return _legible(fig)


# --- stable softmax notebook (05) ---------------------------------------------------
__all__.append("plot_softmax_error")


def plot_softmax_error(scales, errors, *, eps, overflow=None, overflow_label=None,
                       bound_S=None):
    """Draw the largest relative error of softmax computations against the logit scale.

    Both axes are logarithmic. Each entry of ``errors`` is drawn as a line with
    markers; a NaN entry (a computation that failed at that scale, for example one
    whose weights were NaN) is left out, so the line stops there. A grey dashed line
    draws, for comparison, the first-order bound ``(3 * scales + bound_S) * eps`` on the
    relative error of a weight of a row of ``bound_S`` logits (notebook 05 derives it),
    or, without ``bound_S``, ``eps * scales``, the size of the rounding error of the
    largest logit. If ``overflow`` is given, the scales from it onwards are shaded and
    a vertical dotted line marks it (for example the logit above which ``exp``
    overflows).

    Parameters
    ----------
    scales : array_like, shape (n,)
        The logit scales at which the errors were measured (positive): the largest
        logit ``s`` of the rows measured at that scale.
    errors : mapping of str to array_like, shape (n,)
        Legend label -> largest relative error of a weight measured at each scale
        (NaN where the computation failed). At least one entry.
    eps : float
        Machine epsilon of the precision being measured (positive), for the
        reference line.
    overflow : float, optional
        Scale from which a computation overflows; the region ``x >= overflow`` is
        shaded.
    overflow_label : str, optional
        Legend entry of the shaded region; default ``"overflow"``.
    bound_S : int, optional
        Number of logits per row (positive): the reference line is then the first-order
        bound ``(3 s + S) eps`` instead of ``eps * s``.

    Returns
    -------
    matplotlib.figure.Figure
        One axes. Its lines are the curves in the order of ``errors``, then the
        reference line, then (when ``overflow`` is given) the vertical line, and
        its only patch is the shaded region.

    Raises
    ------
    ValueError
        If ``scales`` is not a nonempty 1-D array of positive numbers, ``errors`` is
        empty, a curve does not have one value per scale, ``eps`` is not positive,
        ``overflow`` is not positive, or ``bound_S`` is not a positive integer.

    Examples
    --------
    >>> fig = plot_softmax_error([1.0, 10.0, 100.0],
    ...                          {"stable": [2e-7, 2e-6, 2e-5], "naive": [2e-7, 2e-6, np.nan]},
    ...                          eps=1.2e-7, overflow=88.7)
    >>> ax = fig.axes[0]
    >>> ax.get_xscale(), ax.get_yscale(), len(ax.lines), len(ax.patches)
    ('log', 'log', 4, 1)
    >>> plt.close(fig)
    """
    scales = np.asarray(scales, dtype=float)
    if scales.ndim != 1 or scales.size == 0 or not np.all(scales > 0):
        raise ValueError(f"scales must be a nonempty 1-D array of positive numbers, "
                         f"got {scales!r}")
    if not errors:
        raise ValueError("errors must hold at least one curve")
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a positive number, got {eps!r}")
    if overflow is not None and not (np.isfinite(overflow) and overflow > 0):
        raise ValueError(f"overflow must be a positive number, got {overflow!r}")
    if bound_S is not None and not (float(bound_S).is_integer() and bound_S > 0):
        raise ValueError(f"bound_S must be a positive integer, got {bound_S!r}")
    curves = {}
    for label, values in errors.items():
        values = np.asarray(values, dtype=float)
        if values.shape != scales.shape:
            raise ValueError(f"the curve {label!r} must have shape {scales.shape}, one "
                             f"value per scale, got shape {values.shape}")
        curves[label] = values

    fig, ax = new_figure(width=6.0, height=4.0)
    styles = [("o-", "C0"), ("s--", "C3"), ("^-", "C2"), ("D-", "C1")]
    for i, (label, values) in enumerate(curves.items()):
        marker, color = styles[i % len(styles)]
        ax.plot(scales, values, marker, color=color, markersize=4, label=label)
    if bound_S is None:
        ax.plot(scales, eps * scales, "--", color="0.6", linewidth=2, zorder=0,
                label=r"$\varepsilon \cdot s$")
    else:
        ax.plot(scales, (3 * scales + bound_S) * eps, "--", color="0.6", linewidth=2,
                zorder=0, label=rf"first-order bound $(3s + {int(bound_S)})\,\varepsilon$")
    if overflow is not None:
        ax.axvspan(overflow, scales.max() * 1.5, color="0.92", zorder=-1,
                   label=overflow_label or "overflow")
        ax.axvline(overflow, linestyle=":", color="0.4", zorder=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(scales.min() / 1.5, scales.max() * 1.5)
    ax.set_xlabel("largest logit of the row, $s$")
    ax.set_ylabel("largest relative error of a weight")
    ax.grid(True, which="major", color="0.9")
    ax.legend(loc="upper left", frameon=False)
    _plain_log_ticks(ax)
    return _legible(fig)


# --- multi-head notebook (06) -------------------------------------------------------
__all__.append("plot_head_weights")


def plot_head_weights(weights, query_labels=None, key_labels=None, *, titles=None,
                      fmt=".2f", panel_size=3.0):
    """Draw the attention weights of H heads as H heatmaps side by side.

    Multi-head attention computes one L x S weight matrix per head, from the same
    queries and keys but with each head's own projections. Each matrix is drawn with
    :func:`plot_attention_heatmap` in its own panel, all on the same [0, 1] colour
    scale, with one colour bar beside the last panel, so the heads can be compared.

    Parameters
    ----------
    weights : array_like, shape (H, L, S)
        Attention weights of each head, as returned by
        ``multi_head_attention(..., return_weights=True)`` for one sequence.
    query_labels, key_labels : sequence of str, optional
        Tick labels of the rows (length L) and columns (length S); defaults as in
        :func:`plot_attention_heatmap`.
    titles : sequence of str, length H, optional
        Titles of the panels; default ``head 0``, ..., ``head H-1`` (from 0, as the
        index of ``weights``).
    fmt : str, default ".2f"
        Format specification of the numbers written in the cells.
    panel_size : float, default 3.0
        Width and height of each panel, in inches.

    Returns
    -------
    matplotlib.figure.Figure
        One row of H axes and one colour bar.

    Raises
    ------
    ValueError
        If ``weights`` is not three-dimensional, or ``titles`` does not have one
        title per head (label lists are checked by :func:`plot_attention_heatmap`).

    Examples
    --------
    >>> import numpy as np
    >>> weights = np.array([[[1.0, 0.0], [0.5, 0.5]], [[0.25, 0.75], [0.0, 1.0]]])
    >>> fig = plot_head_weights(weights)              # H = 2 heads, L = S = 2
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['head 0', 'head 1']
    >>> [t.get_text() for t in fig.axes[1].texts]
    ['0.25', '0.75', '0', '1.00']
    >>> plt.close(fig)
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 3:
        raise ValueError(f"weights must have shape (H, L, S), got shape {weights.shape}")
    H = weights.shape[0]
    titles = [f"head {h}" for h in range(H)] if titles is None else list(titles)
    if len(titles) != H:
        raise ValueError(f"need {H} titles, one per head, got {len(titles)}")

    fig, axes = new_figure(H, width=panel_size, height=panel_size)
    for h, ax in enumerate(np.atleast_1d(axes)):
        plot_attention_heatmap(weights[h], query_labels, key_labels, ax=ax, title=titles[h],
                               fmt=fmt, colorbar=h == H - 1)
    return _legible(fig)


__all__.append("plot_multi_head_flow")

# The stages of plot_multi_head_flow, top to bottom: the text of its box ("{h}" for one
# box per head), and the step from it to the next stage, written on the arrow.
_FLOW = [
    ("tokens $X$\n" r"$L \times D$", r"project: $XW_Q$, $XW_K$, $XW_V$"),
    ("$Q$, $K$, $V$\n" r"$L \times E$, $S \times E$, $S \times E_v$",
     r"split: $L \times E \to H \times L \times d$"),
    ("head {h}:\n" r"$Q_{h}$, $K_{h}$, $V_{h}$",
     r"attend: $\mathrm{softmax}(Q_h K_h^\top/\sqrt{d})\,V_h$"),
    ("head {h}:\n" r"$L \times d_v$",
     r"concatenate: $H \times L \times d_v \to L \times E_v$"),
    ("concatenation\n" r"$L \times E_v$",
     r"project: $\times W_O$, $L \times E_v \to L \times D_\mathrm{out}$"),
    ("output\n" r"$L \times D_\mathrm{out}$", None),
]


def plot_multi_head_flow(num_heads=2, *, width=4.4, fontsize=12):
    """Draw the data flow of multi-head attention: project, split, attend, concatenate,
    project.

    One box per stage, from the input tokens at the top to the output at the bottom,
    with the shape of its array; the two stages inside the heads have one box per
    head. Each arrow is labelled with its step and the shape it turns into which, as
    ``multi_head_attention`` (``lib/attention.py``) computes them.

    Parameters
    ----------
    num_heads : int, default 2
        Number of head boxes drawn side by side, H (1 to 4, so that they fit).
    width : float, default 4.4
        Width of the figure, in inches; the height follows from it. A phone shows the
        figure about 358 CSS pixels wide, so a label of ``fontsize`` points is
        ``fontsize * 358 / (72 * width)`` pixels high there (14.9 for the defaults).
    fontsize : float, default 12
        Size of every label, in points.

    Returns
    -------
    matplotlib.figure.Figure
        One axes without ticks, holding the boxes, the arrows and their labels.

    Raises
    ------
    ValueError
        If ``num_heads`` is not an integer from 1 to 4, or ``width`` or ``fontsize``
        is not positive.

    Examples
    --------
    >>> fig = plot_multi_head_flow(3)
    >>> texts = [t.get_text() for t in fig.axes[0].texts]
    >>> sum(t.startswith("head 2:") for t in texts)  # two stages, one box per head
    2
    >>> [t.split(":")[0] for t in texts if t[0].islower() and ":" in t[:12]][-2:]
    ['concatenate', 'project']
    >>> plt.close(fig)
    """
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    if not (isinstance(num_heads, (int, np.integer)) and 1 <= num_heads <= 4):
        raise ValueError(f"num_heads must be an integer from 1 to 4, got {num_heads!r}")
    if not (width > 0 and fontsize > 0):
        raise ValueError(f"width and fontsize must be positive, got {width} and {fontsize}")
    n = len(_FLOW)
    fig, ax = new_figure(width=width, height=width * 1.45)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.55, 2 * (n - 1) + 0.55)
    ax.axis("off")

    def draw_box(x0, x1, y, text, colour):
        ax.add_patch(FancyBboxPatch((x0, y - 0.45), x1 - x0, 0.9, facecolor=colour,
                                    boxstyle="round,pad=0.01", linewidth=1.2,
                                    edgecolor="0.25"))
        ax.text((x0 + x1) / 2, y, text, ha="center", va="center", fontsize=fontsize,
                linespacing=1.4)

    for k, (text, step) in enumerate(_FLOW):
        y = 2 * (n - 1 - k)  # stage k, from the top
        if "{h}" in text:  # one box per head, side by side
            gap = 0.04
            w = (0.98 - gap * (num_heads - 1)) / num_heads
            for h in range(num_heads):
                x0 = 0.01 + h * (w + gap)
                draw_box(x0, x0 + w, y, text.replace("{h}", str(h)), "#fde2c8")
        else:
            draw_box(0.01, 0.99, y, text, "#dbe9f6" if k in (0, n - 1) else "#eeeeee")
        if step is not None:
            ax.add_patch(FancyArrowPatch((0.06, y - 0.5), (0.06, y - 1.5),
                                         arrowstyle="-|>", mutation_scale=16,
                                         linewidth=1.4, color="0.25"))
            ax.text(0.1, y - 1.0, step, ha="left", va="center", fontsize=fontsize)
    return _legible(fig, min(fontsize, FONT_SIZE))


# --- memory-efficient notebook (07) -------------------------------------------------
__all__.append("plot_cost_against_length")


def _positive_curve(lengths, values, name):
    """Return ``lengths`` and ``values`` as equal-length 1-D arrays of positive floats."""
    lengths = np.asarray(lengths, dtype=float)
    values = np.asarray(values, dtype=float)
    if lengths.ndim != 1 or lengths.size == 0 or values.shape != lengths.shape:
        raise ValueError(f"{name} must be two nonempty 1-D arrays of the same length, "
                         f"got shapes {lengths.shape} and {values.shape}")
    if np.any(~(lengths > 0)) or np.any(~(values > 0)):
        raise ValueError(f"{name} must hold positive numbers only (the axes are "
                         f"logarithmic), got lengths {lengths} and values {values}")
    return lengths, values


def plot_cost_against_length(curves, *, ylabel, reference=None, reference_label=None,
                             title=None, ax=None):
    """Draw a cost (memory, time) of several computations against the sequence length n.

    Both axes are logarithmic with base 2, so a cost proportional to :math:`n^p` is a
    straight line of slope ``p``: a quadratic cost climbs two grid lines for every one
    to the right, a constant cost is flat. Each curve is drawn with markers, in the
    order of the mapping; an optional reference (for example the size of one
    :math:`n \\times n` matrix) is drawn underneath as a grey dashed line.

    Parameters
    ----------
    curves : mapping of str to (array_like, array_like)
        Legend label -> ``(lengths, values)``, two 1-D arrays of the same length
        holding positive numbers. Curves may be measured at different lengths (for
        example a computation too expensive to run at the largest n).
    ylabel : str
        Label of the y axis, with its unit.
    reference : (array_like, array_like), optional
        ``(lengths, values)`` of the reference line, positive numbers.
    reference_label : str, optional
        Legend entry of the reference line.
    title : str, optional
        Title of the axes.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into. By default a new figure with an opaque white background is
        made with :func:`new_figure`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes (``ax.figure`` when ``ax`` is given). The axes'
        lines are the curves in the order of the mapping, then the reference.

    Raises
    ------
    ValueError
        If ``curves`` is empty, or a curve or the reference is not two nonempty 1-D
        arrays of the same length holding positive numbers.

    Examples
    --------
    >>> n = np.array([256, 512, 1024])
    >>> fig = plot_cost_against_length({"plain": (n, 3 * n**2), "blocked": (n, [5, 9, 9])},
    ...                                ylabel="bytes", reference=(n, n**2),
    ...                                reference_label="$n^2$")
    >>> ax = fig.axes[0]
    >>> [line.get_label() for line in ax.lines]
    ['plain', 'blocked', '$n^2$']
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    >>> plt.close(fig)
    """
    if not curves:
        raise ValueError("curves must hold at least one (lengths, values) pair")
    checked = {label: _positive_curve(*pair, f"the curve {label!r}")
               for label, pair in curves.items()}
    if reference is not None:
        reference = _positive_curve(*reference, "reference")

    if ax is None:
        fig, ax = new_figure(width=6.0, height=4.0)
        own = True
    else:
        fig, own = ax.figure, False
    markers = ["o-", "s-", "^-", "D-", "v-"]
    for i, (label, (lengths, values)) in enumerate(checked.items()):
        ax.plot(lengths, values, markers[i % len(markers)], color=f"C{(3, 0, 2, 1, 4)[i % 5]}",
                label=label, zorder=2)
    if reference is not None:
        ax.plot(*reference, "--", color="0.6", linewidth=2, zorder=1,
                label=reference_label if reference_label is not None else "reference")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")   # decades: plain labels 0.01, 0.1, 1, ... read on a phone
    ax.set_xlabel("sequence length $n$ ($L = S = n$)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", color="0.9")
    ax.legend(loc="upper left", frameon=False)
    if title is not None:
        ax.set_title(title)
    _plain_log_ticks(ax)
    return _legible(fig) if own else fig



# --- real model notebook (08) -------------------------------------------------------
__all__.append("plot_attention_heads")


def plot_attention_heads(weights, tokens, *, heads=None, titles=None, ncols=2,
                         panel_size=2.5, key_tokens=None, fontsize=FONT_SIZE):
    """Draw the attention weights of several heads as a grid of heatmaps with token labels.

    One panel per head: rows are queries and columns are keys, labelled with the
    tokens, on one colour scale fixed to [0, 1] with one shared colour bar. Unlike
    :func:`plot_attention_heatmap` the cells carry no numbers, so that a dozen heads of
    a real sentence fit on one figure.

    Parameters
    ----------
    weights : array_like, shape (H, L, S)
        Attention weights of H heads for one sequence.
    tokens : sequence of str, length L
        Labels of the queries (and of the keys when ``key_tokens`` is not given).
    heads : sequence of int, optional
        Which heads to draw, in this order; default all H.
    titles : sequence of str, optional
        One title per drawn panel; default ``"head h"``.
    ncols : int, default 2
        Panels per row; the number of rows follows. The query tokens label the rows of
        the first column's panels only, the key tokens the columns of the top row's.
    panel_size : float, default 2.5
        Width and height of each panel, in inches. The defaults draw a figure about
        6.1 in wide, which a phone shows with labels at least 9 px high.
    key_tokens : sequence of str, length S, optional
        Labels of the keys; default ``tokens``.
    fontsize : float, default 12
        Size of the token labels and titles in points. A figure shown scaled to a page's
        column shrinks its labels with it: see :func:`shown_text_px`.

    Returns
    -------
    matplotlib.figure.Figure
        The grid's axes in row order (the drawn panels first, then any unused ones,
        hidden), and last a colour bar under them labelled "attention weight".

    Raises
    ------
    ValueError
        If ``weights`` is not three-dimensional, a label list or ``titles`` has the
        wrong length, a head index is out of range, or ``ncols`` is not positive.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.full((3, 2, 2), 0.5)
    >>> fig = plot_attention_heads(w, ["a", "b"], heads=[2, 0], ncols=2)
    >>> [ax.get_title() for ax in fig.axes[:2]]
    ['head 2', 'head 0']
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['a', 'b']
    >>> [t.get_text() for t in fig.axes[1].get_yticklabels()]  # labelled in the first column
    ['', '']
    >>> plt.close(fig)
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 3:
        raise ValueError(f"weights must have shape (H, L, S), got shape {weights.shape}")
    H, L, S = weights.shape
    tokens = list(tokens)
    key_tokens = tokens if key_tokens is None else list(key_tokens)
    if len(tokens) != L:
        raise ValueError(f"need {L} tokens for weights of shape {weights.shape}, got {len(tokens)}")
    if len(key_tokens) != S:
        raise ValueError(f"need {S} key tokens for weights of shape {weights.shape}, "
                         f"got {len(key_tokens)}")
    heads = list(range(H)) if heads is None else [int(h) for h in heads]
    if not heads or any(not 0 <= h < H for h in heads):
        raise ValueError(f"heads must be a nonempty list of indices in [0, {H - 1}], got {heads}")
    titles = [f"head {h}" for h in heads] if titles is None else list(titles)
    if len(titles) != len(heads):
        raise ValueError(f"need {len(heads)} titles, one per head, got {len(titles)}")
    if isinstance(ncols, (bool, np.bool_)) or not isinstance(ncols, (int, np.integer)) or ncols < 1:
        raise ValueError(f"ncols must be a positive integer, got {ncols!r}")

    ncols = min(ncols, len(heads))
    nrows = -(-len(heads) // ncols)
    # beside the panels a column of token labels (about 1 in); above them the key tokens
    # (about 1 in) and a title per row (0.35 in); under them the colour bar (0.8 in)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size * ncols + 1.0,
                                                    (panel_size + 0.35) * nrows + 1.8),
                             facecolor=BACKGROUND, layout="constrained", squeeze=False)
    for ax in axes.flat[len(heads):]:
        ax.set_visible(False)
    for k, (ax, h, title) in enumerate(zip(axes.flat, heads, titles)):
        ax.set_facecolor(BACKGROUND)
        image = ax.imshow(weights[h], cmap="Blues", vmin=0.0, vmax=1.0, aspect="equal")
        # every panel has the same tokens: label the grid's top row and first column
        ax.set_xticks(range(S), key_tokens if k < ncols else [], rotation=90,
                      fontsize=fontsize)
        ax.set_yticks(range(L), tokens if k % ncols == 0 else [], fontsize=fontsize)
        ax.xaxis.tick_top()
        ax.tick_params(length=0)
        ax.set_title(title, fontsize=fontsize)
    bar = fig.colorbar(image, ax=axes.ravel().tolist(), location="bottom", shrink=0.6,
                       aspect=30)
    bar.set_label("attention weight", fontsize=fontsize)
    bar.ax.tick_params(labelsize=fontsize)
    return fig


# --- training notebook (09) ---------------------------------------------------------
__all__.extend(["plot_training_curves", "plot_bilinear_form"])


def plot_training_curves(curves, *, ylabel="training loss (nats)", log=True, ax=None):
    """Draw one or more curves against the gradient step: a loss, or a share of queries.

    Parameters
    ----------
    curves : dict of str to array_like
        Label -> values at steps 0, 1, 2, ... (one value per step; the curves may differ
        in length).
    ylabel : str
        The vertical axis' label.
    log : bool, default True
        A logarithmic vertical axis (labelled in plain numbers), for a loss that falls by
        orders of magnitude.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; by default a new figure 5.5 x 3.6 in.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``curves`` is empty, a curve is not 1-D and nonempty, or (with ``log``) not
        positive.

    Examples
    --------
    >>> fig = plot_training_curves({"loss": [2.0, 1.0, 0.5]})
    >>> fig.axes[0].lines[0].get_ydata().tolist(), fig.axes[0].get_yscale()
    ([2.0, 1.0, 0.5], 'log')
    >>> plt.close(fig)
    """
    if not curves:
        raise ValueError("curves is empty: give at least one label -> values")
    if ax is None:
        fig, ax = new_figure(width=5.5, height=3.6)
    else:
        fig = ax.figure
    styles = ["-", "--", ":", "-."]
    for n, (label, values) in enumerate(curves.items()):
        values = np.asarray(values, dtype=float)
        if values.ndim != 1 or values.size == 0 or (log and np.any(values <= 0)):
            raise ValueError(f"curve {label!r} must be a nonempty 1-D array"
                             f"{' of positive values' if log else ''}, got shape "
                             f"{values.shape}")
        ax.plot(np.arange(values.size), values, styles[n % 4], color=f"C{n}",
                linewidth=2, label=label)
    if log:
        ax.set_yscale("log")
        _plain_log_ticks(ax)
    ax.set_xlabel("gradient step")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", color="0.9")
    ax.legend(frameon=False)
    return _legible(fig)


def plot_bilinear_form(matrix, row_labels, col_labels, *, shown=None, title=None,
                       width=5.6):
    """Draw a matrix such as W_Q W_K^T as a heatmap on a colour scale centred at 0.

    Red is positive, blue negative, white 0; the scale is symmetric about 0 and set by
    the largest absolute entry shown. Entries left out by ``shown`` (for example the
    pairs a mask forbids, which never reach a score) are drawn in grey and do not set
    the scale.

    Parameters
    ----------
    matrix : array_like, shape (m, n)
    row_labels, col_labels : sequence of str, lengths m and n
        Tick labels (rows: the query's features, columns: the key's).
    shown : array_like of bool, shape (m, n), optional
        True where an entry is coloured; False entries are grey and left out of the
        colour scale. Default: every entry.
    title : str, optional
    width : float, default 5.6
        Width of the figure in inches (the height follows the matrix's shape).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If ``matrix`` is not 2-D, the labels do not match its shape, ``shown`` does
        not have its shape, or ``shown`` shows no entry.

    Examples
    --------
    >>> fig = plot_bilinear_form(np.eye(2), ["a", "b"], ["c", "d"])
    >>> fig.axes[0].images[0].get_clim()
    (-1.0, 1.0)
    >>> plt.close(fig)

    A hidden entry, however large, does not set the scale:

    >>> fig = plot_bilinear_form([[1.0, 9.0], [0.5, -2.0]], ["a", "b"], ["c", "d"],
    ...                          shown=[[True, False], [True, True]])
    >>> fig.axes[0].images[0].get_clim()
    (-2.0, 2.0)
    >>> plt.close(fig)
    """
    matrix = np.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape != (len(row_labels), len(col_labels)):
        raise ValueError(f"matrix of shape {matrix.shape} needs {matrix.shape[0]} row "
                         f"labels and {matrix.shape[-1]} column labels, got "
                         f"{len(row_labels)} and {len(col_labels)}")
    m, n = matrix.shape
    if shown is None:
        shown = np.ones(matrix.shape, dtype=bool)
    shown = np.asarray(shown, dtype=bool)
    if shown.shape != matrix.shape:
        raise ValueError(f"shown has shape {shown.shape}, the matrix {matrix.shape}")
    if not shown.any():
        raise ValueError("shown leaves out every entry of the matrix")
    fig, ax = new_figure(width=width, height=width * m / n * 0.92)
    top = float(np.abs(matrix[shown]).max()) or 1.0
    cmap = plt.get_cmap("RdBu_r").with_extremes(bad="0.8")  # left out: grey
    image = ax.imshow(np.ma.masked_array(matrix, mask=~shown), cmap=cmap, vmin=-top,
                      vmax=top)
    ax.set_xticks(range(n), col_labels, rotation=90)
    ax.set_yticks(range(m), row_labels)
    ax.set_xlabel("key feature")
    ax.set_ylabel("query feature")
    if title:
        ax.set_title(title)
    fig.colorbar(image, ax=ax, shrink=0.8)
    return _legible(fig)
