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
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
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
    titles = [ax.get_title() for ax in fig.axes[:4]]
    assert titles == ["mask (a)", "weights (a)", "mask (b)", "weights (b)"]
    assert len(fig.axes) == 5  # four panels and one colour bar


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
def _saturation_figure():
    dims = [2, 4, 8]
    return figures.plot_softmax_saturation(
        dims,
        {"no scaling": [0.3, 0.6, 0.9], "scaled": [0.2, 0.2, 0.2]},
        {"no scaling": [2.0, 1.0, 0.3], "scaled": [2.4, 2.4, 2.4]},
        {"no scaling": [0.25, 0.2, 0.05], "scaled": [0.2, 0.2, 0.2]},
        n_keys=16,
    )


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


def test_plot_softmax_saturation_draws_three_log2_panels_on_white():
    fig = _saturation_figure()
    assert fig.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
    assert len(fig.axes) == 3
    for ax in fig.axes:
        assert ax.get_facecolor() == (1.0, 1.0, 1.0, 1.0)
        assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
        assert ax.get_xlabel() and ax.get_ylabel()


def test_plot_softmax_saturation_draws_each_curve_in_its_panel_in_mapping_order():
    axes = _saturation_figure().axes
    np.testing.assert_array_equal(axes[0].lines[0].get_ydata(), [0.3, 0.6, 0.9])
    np.testing.assert_array_equal(axes[1].lines[1].get_ydata(), [2.4, 2.4, 2.4])
    np.testing.assert_array_equal(axes[2].lines[0].get_ydata(), [0.25, 0.2, 0.05])
    for ax in axes:
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend[:2] == ["no scaling", "scaled"]
        assert ax.lines[0].get_color() != ax.lines[1].get_color()


def test_plot_softmax_saturation_draws_uniform_and_one_hot_references():
    axes = _saturation_figure().axes
    assert axes[0].lines[2].get_ydata()[0] == 1.0
    assert axes[0].lines[3].get_ydata()[0] == 1 / 16
    assert axes[1].lines[2].get_ydata()[0] == pytest.approx(np.log(16))
    assert axes[2].lines[2].get_ydata()[0] == 1 / 16


def test_plot_softmax_saturation_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="same labels"):
        figures.plot_softmax_saturation([2], {"a": [1.0]}, {"b": [1.0]}, {"a": [1.0]},
                                        n_keys=4)


def test_plot_softmax_saturation_rejects_a_curve_of_the_wrong_length():
    with pytest.raises(ValueError, match=r"'a' must have shape \(2,\)"):
        figures.plot_softmax_saturation([2, 4], {"a": [1.0]}, {"a": [1.0, 1.0]},
                                        {"a": [1.0, 1.0]}, n_keys=4)


@pytest.mark.parametrize("n_keys", [1, 2.5, True])
def test_plot_softmax_saturation_rejects_bad_number_of_keys(n_keys):
    with pytest.raises(ValueError, match="n_keys"):
        figures.plot_softmax_saturation([2], {"a": [1.0]}, {"a": [1.0]}, {"a": [1.0]},
                                        n_keys=n_keys)


# --- stable softmax notebook (05) ---------------------------------------------------


# --- multi-head notebook (06) -------------------------------------------------------


# --- memory-efficient notebook (07) -------------------------------------------------


# --- real model notebook (08) -------------------------------------------------------
