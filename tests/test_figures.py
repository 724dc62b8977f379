"""Tests of lib/figures.py: each helper returns a figure with an opaque background and
draws what its notebook says it draws."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from lib import figures


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_no_helper_is_defined_twice():
    # The sections of lib/figures.py are written by different chapters; a second function
    # with the same name would silently replace the first.
    import ast
    from pathlib import Path

    tree = ast.parse(Path(figures.__file__).read_text())
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert sorted(names) == sorted(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_new_figure_has_opaque_white_background():
    fig, axes = figures.new_figure(2)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert all(ax.get_facecolor() == (1.0, 1.0, 1.0, 1.0) for ax in axes)


# --- span notebook (01) -------------------------------------------------------------
SPAN_V = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])


def test_convex_hull_2d_drops_interior_and_edge_points_and_runs_counter_clockwise():
    square = [[0, 0], [1, 0], [1, 1], [0, 1]]
    hull = figures.convex_hull_2d(square + [[0.5, 0.5], [0.5, 0.0], [1, 1]])
    np.testing.assert_array_equal(hull, np.array(square, dtype=float))


def test_convex_hull_2d_keeps_every_vertex_of_a_triangle():
    hull = figures.convex_hull_2d(SPAN_V)
    assert sorted(map(tuple, hull)) == sorted(map(tuple, SPAN_V))
    x, y = hull[:, 0], hull[:, 1]
    assert 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) > 0  # counter-clockwise


def test_convex_hull_2d_contains_every_point_and_keeps_only_extreme_ones():
    # an independent check of SciPy's answer: every point is on the inner side of every
    # edge (counter-clockwise), and every vertex is an input point outside the hull of
    # the others
    rng = np.random.default_rng(0)
    for _ in range(20):
        points = rng.standard_normal((rng.integers(3, 30), 2))
        hull = figures.convex_hull_2d(points)
        edges = np.roll(hull, -1, axis=0) - hull  # (H, 2)
        to_points = points[None, :, :] - hull[:, None, :]  # (H, P, 2)
        cross = edges[:, None, 0] * to_points[..., 1] - edges[:, None, 1] * to_points[..., 0]
        assert np.all(cross >= -1e-12)
        assert all(any(np.array_equal(v, p) for p in points) for v in hull)
        for i in range(len(hull)):
            others = figures.convex_hull_2d(np.delete(hull, i, axis=0)) if len(hull) > 3 else None
            if others is not None:
                assert len(others) == len(hull) - 1


def test_convex_hull_2d_of_collinear_points_is_their_two_ends():
    hull = figures.convex_hull_2d([[0, 0], [2, 2], [1, 1]])
    np.testing.assert_array_equal(hull, [[0.0, 0.0], [2.0, 2.0]])


@pytest.mark.parametrize("shape", [(3,), (3, 3), (0, 2)])
def test_convex_hull_2d_rejects_points_not_of_shape_p_by_2(shape):
    with pytest.raises(ValueError, match=r"shape \(P, 2\)"):
        figures.convex_hull_2d(np.zeros(shape))


def test_plot_convex_hull_returns_figure_with_opaque_background():
    fig = figures.plot_convex_hull(SPAN_V)
    assert isinstance(fig, plt.Figure)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert fig.axes[0].get_facecolor() == (1.0, 1.0, 1.0, 1.0)


def test_plot_convex_hull_fills_the_hull_of_the_values():
    V = np.vstack([SPAN_V, SPAN_V.mean(axis=0)])  # an interior row is not a vertex
    ax = figures.plot_convex_hull(V).axes[0]
    assert len(ax.patches) == 1
    corners = ax.patches[0].get_xy()[:-1]  # the polygon repeats its first corner
    assert sorted(map(tuple, corners)) == sorted(map(tuple, SPAN_V))


def test_plot_convex_hull_labels_value_rows_from_zero_or_as_given():
    ax = figures.plot_convex_hull(SPAN_V).axes[0]
    assert [t.get_text() for t in ax.texts] == ["$v_{0}$", "$v_{1}$", "$v_{2}$"]
    ax = figures.plot_convex_hull(SPAN_V, labels=["a", "b", "c"]).axes[0]
    assert [t.get_text() for t in ax.texts] == ["a", "b", "c"]


def test_plot_convex_hull_draws_each_point_group_and_the_highlight():
    groups = [np.zeros((5, 2)), np.ones((7, 2))]
    ax = figures.plot_convex_hull(SPAN_V, groups, point_labels=["r=1", "r=4"],
                                  highlight=[0.5, 0.5], highlight_label="$o$").axes[0]
    sizes = [len(c.get_offsets()) for c in ax.collections]
    assert sizes == [5, 7, 1, 3]  # two groups, the highlight, the value rows
    np.testing.assert_array_equal(ax.collections[2].get_offsets(), [[0.5, 0.5]])
    legend = [t.get_text() for t in ax.figure.legends[0].get_texts()]  # under the axes
    assert legend == ["convex hull of the values", "r=1", "r=4", "$o$"]


def test_plot_convex_hull_accepts_one_array_as_one_group():
    ax = figures.plot_convex_hull(SPAN_V, np.zeros((4, 2))).axes[0]
    assert [len(c.get_offsets()) for c in ax.collections] == [4, 3]
    assert ax.get_legend() is None


def test_plot_convex_hull_draws_into_given_axes():
    fig, axes = figures.new_figure(2)
    returned = figures.plot_convex_hull(SPAN_V, ax=axes[0], title="left")
    assert returned is fig
    assert axes[0].get_title() == "left"
    assert len(axes[0].patches) == 1 and len(axes[1].patches) == 0


def test_plot_convex_hull_rejects_bad_shapes_and_label_counts():
    with pytest.raises(ValueError, match=r"shape \(S, 2\)"):
        figures.plot_convex_hull(np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"shape \(P, 2\)"):
        figures.plot_convex_hull(SPAN_V, [np.zeros(4)])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        figures.plot_convex_hull(SPAN_V, highlight=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="need 3 labels"):
        figures.plot_convex_hull(SPAN_V, labels=["a"])
    with pytest.raises(ValueError, match="need 1 point labels"):
        figures.plot_convex_hull(SPAN_V, [np.zeros((2, 2))], point_labels=["a", "b"])



# --- QK^T -> AV notebook (02) -------------------------------------------------------
def test_plot_attention_heatmap_returns_figure_with_opaque_background():
    fig = figures.plot_attention_heatmap(np.full((2, 3), 1 / 3))
    assert isinstance(fig, plt.Figure)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)


def test_plot_attention_heatmap_writes_every_value_row_by_row():
    weights = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    ax = figures.plot_attention_heatmap(weights).axes[0]
    assert [t.get_text() for t in ax.texts] == ["0.10", "0.20", "0.70", "0.50", "0.25", "0.25"]


def test_plot_attention_heatmap_marks_exact_zeros_apart_from_tiny_weights():
    ax = figures.plot_attention_heatmap(np.array([[0.0, 1e-9, 1.0 - 1e-9]])).axes[0]
    assert [t.get_text() for t in ax.texts] == ["0", "0.00", "1.00"]


def test_plot_attention_heatmap_fixes_colour_scale_to_unit_interval():
    ax = figures.plot_attention_heatmap(np.array([[0.4, 0.6]])).axes[0]
    assert ax.images[0].get_clim() == (0.0, 1.0)


def test_plot_attention_heatmap_puts_queries_on_rows_and_keys_on_columns():
    ax = figures.plot_attention_heatmap(np.eye(2, 3), query_labels=["a", "b"],
                                        key_labels=["x", "y", "z"]).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert ax.images[0].get_array().shape == (2, 3)


def test_plot_attention_heatmap_draws_into_given_axes_with_colorbar():
    fig, axes = figures.new_figure(2)
    returned = figures.plot_attention_heatmap(np.eye(2), ax=axes[1], title="right")
    assert returned is fig
    assert axes[1].get_title() == "right"
    assert len(axes[1].images) == 1 and len(axes[0].images) == 0
    assert len(fig.axes) == 3  # two panels and one colour bar


def test_plot_attention_heatmap_can_omit_colorbar():
    fig = figures.plot_attention_heatmap(np.eye(2), colorbar=False)
    assert len(fig.axes) == 1


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2)])
def test_plot_attention_heatmap_rejects_non_matrix_weights(shape):
    with pytest.raises(ValueError, match=r"shape \(L, S\)"):
        figures.plot_attention_heatmap(np.zeros(shape))


def test_plot_attention_heatmap_rejects_wrong_number_of_labels():
    with pytest.raises(ValueError, match="need 3 key labels"):
        figures.plot_attention_heatmap(np.zeros((2, 3)), key_labels=["a", "b"])
    with pytest.raises(ValueError, match="need 2 query labels"):
        figures.plot_attention_heatmap(np.zeros((2, 3)), query_labels=["a"])



# --- masking notebook (03) ----------------------------------------------------------
def test_plot_mask_and_weights_draws_mask_then_weights_per_item():
    mask = np.tri(3, dtype=bool)
    fig = figures.plot_mask_and_weights(mask, np.where(mask, 1 / np.arange(1, 4)[:, None], 0.0))
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    mask_ax, weights_ax = fig.axes[:2]
    assert [t.get_text() for t in mask_ax.texts] == ["1", "0", "0", "1", "1", "0", "1", "1", "1"]
    assert weights_ax.texts[1].get_text() == "0"  # a masked pair is an exact zero
    assert len(fig.axes) == 3  # two panels and one colour bar


def test_plot_mask_and_weights_colours_allowed_pairs_grey_and_masked_white():
    from matplotlib.colors import to_rgba

    fig = figures.plot_mask_and_weights(np.eye(2, dtype=bool), np.eye(2))
    image = fig.axes[0].images[0]
    assert image.cmap(image.norm(1.0)) == to_rgba(figures.MASK_COLORS[1])
    assert image.cmap(image.norm(0.0)) == to_rgba(figures.MASK_COLORS[0])


def test_plot_mask_and_weights_lays_out_two_panels_per_batch_item():
    mask = np.ones((2, 2, 3), dtype=bool)
    fig = figures.plot_mask_and_weights(mask, np.full((2, 2, 3), 1 / 3),
                                        item_titles=["a", "b"])
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["mask (a)", "weights (a)", "mask (b)",
                                                  "weights (b)"]
    assert len(fig.axes) == 6  # four panels and a colour bar beside each weights panel
    fig.canvas.draw()
    box = {ax.get_title(): ax.get_position() for ax in panels}
    # one row per item: mask left of its weights, item b below item a
    assert box["mask (a)"].x1 < box["weights (a)"].x0
    assert box["mask (b)"].y1 < box["mask (a)"].y0
    assert abs(box["mask (b)"].x0 - box["mask (a)"].x0) < 1e-6
    plt.close(fig)


def test_plot_mask_and_weights_rejects_non_boolean_mask():
    with pytest.raises(TypeError, match="boolean"):
        figures.plot_mask_and_weights(np.ones((2, 2)), np.ones((2, 2)))


def test_plot_mask_and_weights_rejects_weights_of_another_shape():
    with pytest.raises(ValueError, match=r"mask's shape \(2, 2\)"):
        figures.plot_mask_and_weights(np.ones((2, 2), dtype=bool), np.ones((2, 3)))


def test_plot_mask_and_weights_rejects_wrong_number_of_titles():
    with pytest.raises(ValueError, match="need 2 item titles"):
        figures.plot_mask_and_weights(np.ones((2, 2, 2), dtype=bool), np.ones((2, 2, 2)),
                                      item_titles=["only one"])


# --- variance scaling notebook (04) -------------------------------------------------
SATURATION_DIMS = [2, 4, 8]
# R = 5 rows per E; the rows of "no scaling" are deliberately not sorted
SATURATION_ROWS = {
    "no scaling": [[0.1, 0.5, 0.3, 0.2, 0.4], [0.9, 0.6, 0.2, 0.7, 0.8], [1.0, 0.99, 0.1, 0.95, 0.9]],
    "scaled": [[0.2] * 5, [0.2, 0.1, 0.3, 0.2, 0.2], [0.25, 0.2, 0.2, 0.15, 0.2]],
}


def _saturation_figure(**measures):
    rows = {name: measures.get(name, SATURATION_ROWS)
            for name in ("max_weight", "entropy", "jac_norm", "query_factor")}
    return figures.plot_softmax_saturation(SATURATION_DIMS, **rows, n_keys=16)


def test_plot_score_variance_returns_figure_with_opaque_background():
    fig = figures.plot_score_variance([2, 4], [2.0, 4.0], [1.0, 1.0])
    assert isinstance(fig, plt.Figure)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert fig.axes[0].get_facecolor() == (1.0, 1.0, 1.0, 1.0)


def test_plot_score_variance_draws_measurements_then_theory_on_log2_axes():
    dims, unscaled, scaled = [2, 8, 32], [2.2, 7.5, 33.0], [1.1, 0.94, 1.03]
    ax = figures.plot_score_variance(dims, unscaled, scaled).axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.xaxis.get_transform().base == 2
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), dims)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), unscaled)
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), scaled)
    np.testing.assert_array_equal(ax.lines[2].get_ydata(), dims)  # Var(q.k) = E
    np.testing.assert_array_equal(ax.lines[3].get_ydata(), [1.0, 1.0, 1.0])


def test_plot_score_variance_labels_axes_and_legend():
    ax = figures.plot_score_variance([2, 4], [2.0, 4.0], [1.0, 1.0]).axes[0]
    assert "E" in ax.get_xlabel() and ax.get_ylabel()
    assert len(ax.get_legend().get_texts()) == 4


def test_plot_score_variance_rejects_a_curve_of_the_wrong_length():
    with pytest.raises(ValueError, match=r"var_scaled must have shape \(2,\)"):
        figures.plot_score_variance([2, 4], [2.0, 4.0], [1.0, 1.0, 1.0])


@pytest.mark.parametrize("dims", [[], [0, 2], [[2, 4]]])
def test_plot_score_variance_rejects_bad_dims(dims):
    with pytest.raises(ValueError, match="dims must be"):
        figures.plot_score_variance(dims, [1.0, 1.0], [1.0, 1.0])


def test_plot_softmax_saturation_draws_four_log2_panels_on_white():
    fig = _saturation_figure()
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert len(fig.axes) == 4
    for ax in fig.axes:
        assert ax.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
        assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
        assert ax.get_xlabel() and ax.get_ylabel()


def test_plot_softmax_saturation_puts_the_gradient_factors_on_log_axes():
    axes = _saturation_figure().axes
    assert [ax.get_yscale() for ax in axes] == ["linear", "linear", "log", "log"]


def test_plot_softmax_saturation_draws_the_median_of_the_rows_not_the_mean():
    skewed = {"no scaling": [[0.0, 0.0, 0.0, 0.0, 1.0]] * 3, "scaled": [[0.2] * 5] * 3}
    axes = _saturation_figure(max_weight=skewed).axes
    np.testing.assert_array_equal(axes[0].lines[0].get_xdata(), SATURATION_DIMS)
    np.testing.assert_array_equal(axes[0].lines[0].get_ydata(), [0.0, 0.0, 0.0])  # mean 0.2
    np.testing.assert_array_equal(axes[2].lines[0].get_ydata(), [0.3, 0.7, 0.95])
    np.testing.assert_array_equal(axes[3].lines[1].get_ydata(), [0.2, 0.2, 0.2])


def test_plot_softmax_saturation_shades_the_quartiles_of_each_curve():
    axes = _saturation_figure().axes
    for ax in axes:
        assert len(ax.collections) == 2  # one band per label
    band = axes[0].collections[0].get_paths()[0].vertices  # the polygon q1 -> q3
    rows = np.array(SATURATION_ROWS["no scaling"])
    q1, q3 = np.percentile(rows, [25, 75], axis=1)
    for y in np.concatenate([q1, q3]):
        assert np.any(np.isclose(band[:, 1], y))
    assert not np.any(np.isclose(band[:, 1], rows.max(axis=1)[0]))  # not min to max


def test_plot_softmax_saturation_keeps_each_label_in_one_style_in_mapping_order():
    for ax in _saturation_figure().axes:
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend[0].startswith("no scaling") and legend[1].startswith("scaled")
        assert ax.lines[0].get_color() != ax.lines[1].get_color()
    colors = {ax.lines[0].get_color() for ax in _saturation_figure().axes}
    assert len(colors) == 1


def test_plot_softmax_saturation_draws_uniform_and_one_hot_references():
    axes = _saturation_figure().axes
    assert axes[0].lines[2].get_ydata()[0] == 1.0
    assert axes[0].lines[3].get_ydata()[0] == 1 / 16
    assert axes[1].lines[2].get_ydata()[0] == pytest.approx(np.log(16))
    assert axes[1].lines[3].get_ydata()[0] == 0.0
    assert axes[2].lines[2].get_ydata()[0] == 1 / 16
    assert len(axes[2].lines) == 3 and len(axes[3].lines) == 2  # no 0 on a log axis


def test_plot_softmax_saturation_rejects_mismatched_labels():
    one = {"a": [[1.0]]}
    with pytest.raises(ValueError, match="same labels"):
        figures.plot_softmax_saturation([2], one, one, one, {"b": [[1.0]]}, n_keys=4)


@pytest.mark.parametrize("rows, found", [
    ([1.0, 1.0], r"got shape \(2,\)"),  # one value per E, not one per row
    ([[1.0, 2.0]], r"got shape \(1, 2\)"),  # rows for one E only
    ([[1.0, 2.0], [1.0]], "different lengths"),
    (np.ones((2, 0)), r"got shape \(2, 0\)"),
])
def test_plot_softmax_saturation_rejects_a_measure_of_the_wrong_shape(rows, found):
    good = {"a": [[1.0], [1.0]]}
    with pytest.raises(ValueError, match=r"'a' must have shape \(2, R\)") as info:
        figures.plot_softmax_saturation([2, 4], good, good, {"a": rows}, good, n_keys=4)
    assert info.match(found)


@pytest.mark.parametrize("n_keys", [1, 2.5, True])
def test_plot_softmax_saturation_rejects_bad_number_of_keys(n_keys):
    one = {"a": [[1.0]]}
    with pytest.raises(ValueError, match="n_keys"):
        figures.plot_softmax_saturation([2], one, one, one, one, n_keys=n_keys)


# --- stable softmax notebook (05) ---------------------------------------------------
def _error_figure(**kw):
    return figures.plot_softmax_error([1.0, 10.0, 100.0],
                                      {"kernel": [2e-7, 2e-6, 2e-5],
                                       "naive": [3e-7, 1e-6, np.nan]},
                                      eps=1e-7, **kw)


def test_plot_softmax_error_returns_figure_with_opaque_background():
    fig = _error_figure()
    assert isinstance(fig, plt.Figure)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert fig.axes[0].get_facecolor() == (1.0, 1.0, 1.0, 1.0)


def test_plot_softmax_error_draws_curves_in_mapping_order_on_log_axes():
    ax = _error_figure().axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [1.0, 10.0, 100.0])
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), [2e-7, 2e-6, 2e-5])
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), [3e-7, 1e-6, np.nan])
    assert ax.lines[0].get_color() != ax.lines[1].get_color()
    assert ax.get_xlabel() and ax.get_ylabel()


def test_plot_softmax_error_draws_eps_times_scale_as_reference():
    ax = _error_figure().axes[0]
    np.testing.assert_allclose(ax.lines[2].get_ydata(), [1e-7, 1e-6, 1e-5])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["kernel", "naive", r"$\varepsilon \cdot s$"]


def test_plot_softmax_error_draws_the_first_order_bound_when_given_S():
    fig = figures.plot_softmax_error([1.0, 10.0, 100.0], {"a": [1e-7, 1e-6, 1e-5]},
                                     eps=1e-7, bound_S=64)
    reference = fig.axes[0].lines[1]
    np.testing.assert_allclose(reference.get_ydata(), (3 * np.array([1.0, 10.0, 100.0]) + 64) * 1e-7)
    assert "(3s + 64)" in reference.get_label()
    plt.close(fig)


@pytest.mark.parametrize("bound_S", [0, -3, 2.5])
def test_plot_softmax_error_rejects_a_bad_bound_S(bound_S):
    with pytest.raises(ValueError, match="bound_S"):
        figures.plot_softmax_error([1.0], {"a": [1.0]}, eps=1e-7, bound_S=bound_S)


def test_plot_softmax_error_shades_from_overflow_onwards():
    ax = _error_figure(overflow=50.0, overflow_label="naive is NaN").axes[0]
    assert len(ax.patches) == 1 and len(ax.lines) == 4
    np.testing.assert_array_equal(ax.lines[3].get_xdata(), [50.0, 50.0])
    x0, x1 = ax.patches[0].get_x(), ax.patches[0].get_x() + ax.patches[0].get_width()
    assert x0 == 50.0 and x1 >= 100.0
    assert [t.get_text() for t in ax.get_legend().get_texts()][-1] == "naive is NaN"


def test_plot_softmax_error_without_overflow_shades_nothing():
    ax = _error_figure().axes[0]
    assert len(ax.patches) == 0 and len(ax.lines) == 3


def test_plot_softmax_error_rejects_a_curve_of_the_wrong_length():
    with pytest.raises(ValueError, match=r"'a' must have shape \(2,\)"):
        figures.plot_softmax_error([1.0, 2.0], {"a": [1.0]}, eps=1e-7)


@pytest.mark.parametrize("scales", [[], [0.0, 1.0], [[1.0, 2.0]]])
def test_plot_softmax_error_rejects_bad_scales(scales):
    with pytest.raises(ValueError, match="scales must be"):
        figures.plot_softmax_error(scales, {"a": [1.0, 1.0]}, eps=1e-7)


def test_plot_softmax_error_rejects_no_curves_and_bad_eps_or_overflow():
    with pytest.raises(ValueError, match="at least one curve"):
        figures.plot_softmax_error([1.0], {}, eps=1e-7)
    with pytest.raises(ValueError, match="eps must be"):
        figures.plot_softmax_error([1.0], {"a": [1.0]}, eps=0.0)
    with pytest.raises(ValueError, match="overflow must be"):
        figures.plot_softmax_error([1.0], {"a": [1.0]}, eps=1e-7, overflow=-1.0)


# --- multi-head notebook (06) -------------------------------------------------------
HEAD_WEIGHTS = np.array([[[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]],
                         [[1.0, 0.0, 0.0], [0.1, 0.1, 0.8]]])  # H = 2, L = 2, S = 3


def test_plot_head_weights_returns_figure_with_opaque_background():
    fig = figures.plot_head_weights(HEAD_WEIGHTS)
    assert isinstance(fig, plt.Figure)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert all(ax.get_facecolor() == (1.0, 1.0, 1.0, 1.0) for ax in fig.axes[:2])


def test_plot_head_weights_draws_one_panel_per_head_and_one_colorbar():
    fig = figures.plot_head_weights(HEAD_WEIGHTS)
    assert len(fig.axes) == 3  # two heads and one colour bar
    for h, ax in enumerate(fig.axes[:2]):
        np.testing.assert_array_equal(ax.images[0].get_array(), HEAD_WEIGHTS[h])
        assert ax.images[0].get_clim() == (0.0, 1.0)


def test_plot_head_weights_writes_each_heads_values_in_its_panel():
    fig = figures.plot_head_weights(HEAD_WEIGHTS)
    assert [t.get_text() for t in fig.axes[1].texts] == ["1.00", "0", "0", "0.10", "0.10", "0.80"]


def test_plot_head_weights_titles_heads_from_zero_or_as_given():
    fig = figures.plot_head_weights(HEAD_WEIGHTS)
    assert [ax.get_title() for ax in fig.axes[:2]] == ["head 0", "head 1"]
    fig = figures.plot_head_weights(HEAD_WEIGHTS, titles=["a", "b"])
    assert [ax.get_title() for ax in fig.axes[:2]] == ["a", "b"]


def test_plot_head_weights_passes_labels_to_every_panel():
    fig = figures.plot_head_weights(HEAD_WEIGHTS, query_labels=["x", "y"], key_labels=list("abc"))
    for ax in fig.axes[:2]:
        assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "y"]
        assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]


def test_plot_head_weights_draws_a_single_head():
    fig = figures.plot_head_weights(HEAD_WEIGHTS[:1])
    assert len(fig.axes) == 2  # one head and its colour bar
    assert fig.axes[0].get_title() == "head 0"


@pytest.mark.parametrize("shape", [(2, 3), (1, 2, 2, 3)])
def test_plot_head_weights_rejects_weights_not_of_shape_h_l_s(shape):
    with pytest.raises(ValueError, match=r"shape \(H, L, S\)"):
        figures.plot_head_weights(np.zeros(shape))


def test_plot_head_weights_rejects_wrong_number_of_titles():
    with pytest.raises(ValueError, match="need 2 titles"):
        figures.plot_head_weights(HEAD_WEIGHTS, titles=["only one"])


def _flow_texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def test_plot_multi_head_flow_is_narrow_white_and_legible_on_a_phone():
    fig = figures.plot_multi_head_flow(2)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    width = fig.get_size_inches()[0]
    assert width <= 6.5
    smallest = min(t.get_fontsize() for t in fig.axes[0].texts)
    assert smallest >= 12
    # shown 358 CSS px wide on a 390 px phone: the smallest text is >= 9 px high
    assert smallest * 358 / (72 * width) >= 9


def test_plot_multi_head_flow_draws_the_five_steps_in_order_with_shapes():
    texts = _flow_texts(figures.plot_multi_head_flow(2))
    steps = [t.split(":")[0] for t in texts if "\n" not in t]
    assert steps == ["project", "split", "attend", "concatenate", "project"]
    assert texts[0] == "tokens $X$\n$L \\times D$"
    assert texts[-1] == "output\n$L \\times D_\\mathrm{out}$"
    assert "$L \\times E \\to H \\times L \\times d$" in texts[3]


@pytest.mark.parametrize("num_heads", [1, 2, 3, 4])
def test_plot_multi_head_flow_draws_one_box_per_head_in_both_head_stages(num_heads):
    texts = _flow_texts(figures.plot_multi_head_flow(num_heads))
    for h in range(num_heads):
        assert f"head {h}:\n$Q_{h}$, $K_{h}$, $V_{h}$" in texts
        assert f"head {h}:\n$L \\times d_v$" in texts
    assert sum(t.startswith("head ") for t in texts) == 2 * num_heads


@pytest.mark.parametrize("kw", [dict(num_heads=0), dict(num_heads=5), dict(num_heads=2.0),
                                dict(width=0), dict(fontsize=-1)])
def test_plot_multi_head_flow_rejects_bad_arguments(kw):
    with pytest.raises(ValueError, match="num_heads|positive"):
        figures.plot_multi_head_flow(**kw)


def test_the_multi_head_flow_is_shown_with_alt_text_naming_every_step():
    import jupytext

    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "notebooks" / "06_multi_head.md"
    cells = [c for c in jupytext.read(path).cells
             if c.cell_type == "code" and "plot_multi_head_flow(" in c.source]
    assert len(cells) == 1
    mystnb = cells[0].metadata["mystnb"]
    alt = mystnb["image"]["alt"]
    assert mystnb["figure"]["caption"] and mystnb["figure"]["name"]
    for step in ("project", "split", "attend", "concatenate", "output"):
        assert step in alt


# --- the pipeline of chapter 2 --------------------------------------------------------
def test_plot_attention_pipeline_is_narrow_white_and_legible_on_a_phone():
    fig = figures.plot_attention_pipeline()
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    width = fig.get_size_inches()[0]
    smallest = min(t.get_fontsize() for t in fig.axes[0].texts)
    assert smallest >= figures.FONT_SIZE
    assert figures.shown_text_px(smallest, width) >= 9
    plt.close(fig)


def test_plot_attention_pipeline_labels_every_array_with_its_shape_in_order():
    fig = figures.plot_attention_pipeline()
    boxes = [t.get_text() for t in fig.axes[0].texts if "\n" in t.get_text()]
    assert boxes == ["queries $Q$\n$L \\times E$", "keys $K$\n$S \\times E$",
                     "values $V$\n$S \\times E_v$", "scores $Z$\n$L \\times S$",
                     "weights $A$\n$L \\times S$", "output $O$\n$L \\times E_v$"]
    plt.close(fig)


def test_plot_attention_pipeline_names_the_three_steps_on_its_arrows():
    fig = figures.plot_attention_pipeline()
    steps = [t.get_text() for t in fig.axes[0].texts if "\n" not in t.get_text()]
    assert steps == ["$QK^\\top/\\sqrt{E}$", "softmax of each row", "$AV$"]
    # five arrows: Q and K into the scores, scores -> weights -> output, V into the output
    from matplotlib.patches import FancyArrowPatch
    assert sum(isinstance(p, FancyArrowPatch) for p in fig.axes[0].patches) == 5
    plt.close(fig)


@pytest.mark.parametrize("kw", [dict(width=0), dict(fontsize=-1)])
def test_plot_attention_pipeline_rejects_bad_arguments(kw):
    with pytest.raises(ValueError, match="positive"):
        figures.plot_attention_pipeline(**kw)


def test_the_pipeline_is_shown_in_chapter_2_with_alt_text_naming_every_shape():
    import jupytext

    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "notebooks" / "02_qk_av.md"
    cells = jupytext.read(path).cells
    at = [i for i, c in enumerate(cells)
          if c.cell_type == "code" and "plot_attention_pipeline(" in c.source]
    assert len(at) == 1
    mystnb = cells[at[0]].metadata["mystnb"]
    alt = mystnb["image"]["alt"]
    assert mystnb["figure"]["caption"] and mystnb["figure"]["name"]
    for shape in ("L by E", "S by E", "S by E_v", "L by S", "L by E_v"):
        assert shape in alt
    # shown before the first cell that computes the scores
    first_scores = min(i for i, c in enumerate(cells)
                       if c.cell_type == "code" and "scores = " in c.source)
    assert at[0] < first_scores


# --- memory-efficient notebook (07) -------------------------------------------------
MEM_N = np.array([256, 512, 1024, 2048])


def _cost_figure(**kw):
    curves = {"plain": (MEM_N, 3.0 * MEM_N**2), "blocked": (MEM_N[1:], [5.0, 9.0, 9.0])}
    return figures.plot_cost_against_length(curves, ylabel="bytes", **kw)


def test_plot_cost_against_length_returns_figure_with_opaque_background():
    fig = _cost_figure()
    assert isinstance(fig, plt.Figure)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert fig.axes[0].get_facecolor() == (1.0, 1.0, 1.0, 1.0)


def test_plot_cost_against_length_uses_log_axes_and_labels_them():
    ax = _cost_figure(title="memory").axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    # lengths in powers of two, costs in decades (plain labels 0.1, 1, 10: issue 28)
    assert ax.xaxis.get_transform().base == 2 and ax.yaxis.get_transform().base == 10
    assert "n" in ax.get_xlabel() and ax.get_ylabel() == "bytes"
    assert ax.get_title() == "memory"


def test_plot_cost_against_length_draws_each_curve_at_its_own_lengths_in_order():
    ax = _cost_figure().axes[0]
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), MEM_N)
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), 3.0 * MEM_N**2)
    np.testing.assert_array_equal(ax.lines[1].get_xdata(), MEM_N[1:])
    assert ax.lines[0].get_color() != ax.lines[1].get_color()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["plain", "blocked"]


def test_plot_cost_against_length_draws_the_reference_last_dashed_grey():
    from matplotlib.colors import to_rgba

    ax = _cost_figure(reference=(MEM_N, MEM_N**2), reference_label="$n^2$").axes[0]
    assert len(ax.lines) == 3
    ref = ax.lines[2]
    np.testing.assert_array_equal(ref.get_ydata(), MEM_N**2)
    assert ref.get_linestyle() == "--" and to_rgba(ref.get_color()) == to_rgba("0.6")
    assert ax.get_legend().get_texts()[2].get_text() == "$n^2$"


def test_plot_cost_against_length_draws_into_given_axes():
    fig, axes = figures.new_figure(2)
    returned = figures.plot_cost_against_length({"a": ([1, 2], [1, 4])}, ylabel="s",
                                                ax=axes[1])
    assert returned is fig
    assert len(axes[1].lines) == 1 and len(axes[0].lines) == 0


def test_plot_cost_against_length_rejects_no_curves():
    with pytest.raises(ValueError, match="at least one"):
        figures.plot_cost_against_length({}, ylabel="bytes")


@pytest.mark.parametrize("pair", [([1, 2], [1.0]), ([], []), ([[1, 2]], [[1, 2]])])
def test_plot_cost_against_length_rejects_curves_of_mismatched_shapes(pair):
    with pytest.raises(ValueError, match="same length"):
        figures.plot_cost_against_length({"a": pair}, ylabel="bytes")


@pytest.mark.parametrize("pair", [([0, 2], [1.0, 2.0]), ([1, 2], [1.0, -2.0]),
                                  ([1, 2], [1.0, np.nan])])
def test_plot_cost_against_length_rejects_values_a_log_axis_cannot_show(pair):
    with pytest.raises(ValueError, match="positive"):
        figures.plot_cost_against_length({"a": pair}, ylabel="bytes")
    with pytest.raises(ValueError, match="reference must hold positive"):
        figures.plot_cost_against_length({"a": ([1, 2], [1, 2])}, ylabel="bytes",
                                         reference=pair)



# --- real model notebook (08) -------------------------------------------------------
def _heads_weights(H=5, L=3, S=4):
    rng = np.random.default_rng(8)
    w = rng.random((H, L, S))
    return w / w.sum(axis=-1, keepdims=True)


def test_plot_attention_heads_returns_figure_with_opaque_background():
    fig = figures.plot_attention_heads(_heads_weights(), ["a", "b", "c"],
                                       key_tokens=list("wxyz"))
    assert isinstance(fig, plt.Figure)
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert all(ax.get_facecolor() == (1.0, 1.0, 1.0, 1.0) for ax in fig.axes[:5])


def test_plot_attention_heads_draws_one_panel_per_head_in_a_grid():
    weights = _heads_weights()  # 5 heads in rows of 2: a 3 x 2 grid, 1 panel unused
    fig = figures.plot_attention_heads(weights, ["a", "b", "c"], key_tokens=list("wxyz"))
    panels, colorbar = fig.axes[:6], fig.axes[6]
    assert len(fig.axes) == 7
    assert [ax.get_visible() for ax in panels] == [True] * 5 + [False]
    assert [ax.get_title() for ax in panels[:5]] == [f"head {h}" for h in range(5)]
    for h, ax in enumerate(panels[:5]):
        image = ax.images[0]
        np.testing.assert_array_equal(image.get_array(), weights[h])
        assert image.get_clim() == (0.0, 1.0)
    assert colorbar.get_xlabel() == "attention weight"


def test_plot_attention_heads_labels_queries_and_keys_with_tokens():
    ax = figures.plot_attention_heads(_heads_weights(), ["a", "b", "c"],
                                      key_tokens=list("wxyz")).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_xticklabels()] == list("wxyz")
    square = figures.plot_attention_heads(_heads_weights(S=3), ["a", "b", "c"]).axes[0]
    assert [t.get_text() for t in square.get_xticklabels()] == ["a", "b", "c"]


def test_plot_attention_heads_draws_the_chosen_heads_with_their_titles():
    weights = _heads_weights()
    fig = figures.plot_attention_heads(weights, ["a", "b", "c"], key_tokens=list("wxyz"),
                                       heads=[4, 1], titles=["four", "one"], ncols=3)
    assert len(fig.axes) == 3  # two panels (ncols shrinks to the number of heads), colour bar
    assert [ax.get_title() for ax in fig.axes[:2]] == ["four", "one"]
    np.testing.assert_array_equal(fig.axes[0].images[0].get_array(), weights[4])


@pytest.mark.parametrize("kwargs, match", [
    (dict(weights=np.zeros((3, 3))), r"shape \(H, L, S\)"),
    (dict(tokens=["a", "b"]), "need 3 tokens"),
    (dict(key_tokens=["a"]), "need 4 key tokens"),
    (dict(heads=[5]), r"indices in \[0, 4\]"),
    (dict(heads=[]), "nonempty"),
    (dict(heads=[0, 1], titles=["x"]), "need 2 titles"),
    (dict(ncols=0), "ncols"),
])
def test_plot_attention_heads_rejects_bad_arguments(kwargs, match):
    args = dict(weights=_heads_weights(), tokens=["a", "b", "c"], key_tokens=list("wxyz"))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        figures.plot_attention_heads(args.pop("weights"), args.pop("tokens"), **args)


def test_plot_attention_heads_fontsize_sizes_the_token_labels_titles_and_colour_bar():
    fig = figures.plot_attention_heads(_heads_weights(), ["a", "b", "c"],
                                       key_tokens=list("wxyz"), fontsize=13)
    ax, colorbar = fig.axes[0], fig.axes[-1]
    sizes = {t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()}
    assert sizes == {13} and ax.title.get_fontsize() == 13
    assert colorbar.xaxis.label.get_fontsize() == 13


# Figs. 8.1-8.2 at page width (issue 18): at 1280 x 800 a figure is shown 672 px wide
# (tests/site measure the column), so a label of s points on a figure w inches wide is
# s * 672 / (72 w) px high; the body's small text is 14 px (0.875 rem).
FIGURE_PX, SMALL_TEXT_PX = 672, 14


def _notebook_calls(path, name):
    import ast
    import jupytext
    for cell in jupytext.read(path).cells:
        if cell.cell_type == "code" and name in cell.source:
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name:
                    yield {k.arg: ast.literal_eval(k.value) for k in node.keywords
                           if isinstance(k.value, ast.Constant)}


def test_the_real_model_figures_have_token_labels_readable_at_page_width():
    from pathlib import Path
    calls = list(_notebook_calls(Path(__file__).resolve().parents[1]
                                 / "notebooks" / "08_real_model.md", "plot_attention_heads"))
    assert len(calls) == 2, calls
    tokens = [f"t{i}" for i in range(15)]
    for kwargs, n_heads in zip(calls, (12, 3)):
        w = np.full((12, 15, 15), 1 / 15)
        kwargs = {k: v for k, v in kwargs.items() if k in ("ncols", "panel_size", "fontsize")}
        fig = figures.plot_attention_heads(w, tokens, heads=list(range(n_heads)), **kwargs)
        label_pt = fig.axes[0].get_yticklabels()[0].get_fontsize()
        shown_px = label_pt * FIGURE_PX / (72 * fig.get_size_inches()[0])
        assert shown_px >= SMALL_TEXT_PX, (kwargs, round(shown_px, 1))
        plt.close(fig)


def test_plot_bilinear_form_leaves_hidden_entries_out_of_the_scale_and_greys_them():
    matrix = np.array([[1.0, -7.0], [0.5, 2.0]])
    fig = figures.plot_bilinear_form(matrix, ["a", "b"], ["c", "d"],
                                     shown=[[True, False], [True, True]])
    image = fig.axes[0].images[0]
    assert image.get_clim() == (-2.0, 2.0)        # set by the shown entries only
    data = image.get_array()
    assert data.mask[0, 1] and not data.mask[0, 0]  # the hidden entry is masked out
    assert tuple(image.get_cmap().get_bad()[:3]) != (1.0, 1.0, 1.0)  # grey, not white
    plt.close(fig)


def test_plot_bilinear_form_rejects_a_shown_of_another_shape_or_showing_nothing():
    with pytest.raises(ValueError, match="shape"):
        figures.plot_bilinear_form(np.eye(2), ["a", "b"], ["c", "d"], shown=np.ones(3, bool))
    with pytest.raises(ValueError, match="every entry"):
        figures.plot_bilinear_form(np.eye(2), ["a", "b"], ["c", "d"],
                                   shown=np.zeros((2, 2), bool))
