"""Every figure a notebook draws is legible on a phone (issue 28, item 3).

A notebook shows a figure at its natural size, 100 CSS px per inch of the PNG that the
inline backend saves (``bbox_inches="tight"``: cropped to what is drawn; the build's 2x
PNG is shown at the same size, _ext/page_meta.py), shrunk to the article's column when it
is wider (``max-width: 100%``): 342 CSS px on a phone 390 px wide. Each figure here is
drawn by its lib/figures.py helper with the notebook's own literal keyword arguments (read
from notebooks/*.md) and data of the notebook's shapes and labels; its natural width is
read from the PNG it saves, and every text it draws (tick labels, axis labels, titles,
legends, notes in cells) must be at least 9 CSS px high there.
"""

import ast
import io
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.text import Text
from PIL import Image

from lib import figures

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PHONE_PX, LAPTOP_PX, MIN_PX = 342, 672, 9
rng = np.random.default_rng(28)


COMPUTED = object()   # a keyword argument that the notebook computes


def _calls(notebook, name):
    """The keyword arguments of each call of ``name`` in a notebook's source, by value when
    literal, else COMPUTED (the builder supplies a value of the notebook's shape)."""
    for node in (n for source in _code_cells(notebook) for n in ast.walk(ast.parse(source))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name:
            kwargs = {}
            for k in node.keywords:
                try:
                    kwargs[k.arg] = ast.literal_eval(k.value)
                except ValueError:
                    kwargs[k.arg] = COMPUTED
            yield kwargs


def _code_cells(notebook):
    """The code cells of a notebook that call a plotting function (none is a magic)."""
    import jupytext
    cells = jupytext.read(NOTEBOOKS / f"{notebook}.md").cells
    return [c.source for c in cells if c.cell_type == "code" and "plot_" in c.source]


def _rows(dims, low, high):
    return {label: [rng.uniform(low, high, 50) for _ in dims]
            for label in ("no scaling", "scaled by 1/sqrt(E)")}


TOKENS = ["[CLS]", "attention", "lets", "every", "word", "in", "a", "sentence", "look",
          "at", "every", "other", "word", "'.'", "[SEP]"]
DIMS = 2 ** np.arange(1, 11)
N_MEM = 2 ** np.arange(8, 15)

# notebook -> helper -> a function of the notebook's literal keyword arguments that draws it
BUILDERS = {
    "01_span": {"plot_convex_hull": lambda kw: figures.plot_convex_hull(
        [[1, 0], [0, 2], [1, 1]], [rng.uniform(0, 1, (60, 2)) for _ in range(3)],
        **{"point_labels": [f"queries at radius {r:g}" for r in (0.5, 2, 8)],
           "highlight": [0.7, 0.8], "highlight_label": "output $o$ of the query $(1, 0)$",
           **_literal(kw)})},
    "02_qk_av": {
        "plot_attention_pipeline": lambda kw: figures.plot_attention_pipeline(**_literal(kw)),
        "plot_attention_heatmap": lambda kw: figures.plot_attention_heatmap(
            np.full((2, 3), 1 / 3), **{"title": r"$A = \mathrm{softmax}(QK^\top/\sqrt{E})$",
                                       **_literal(kw)})},
    "03_masking": {"plot_mask_and_weights": lambda kw: figures.plot_mask_and_weights(
        np.tril(np.ones((2, 4, 4), bool)), np.tril(np.full((2, 4, 4), 0.25)),
        **{"item_titles": ["length 4", "length 2"], **_literal(kw)})},
    "04_scaling": {
        "plot_score_variance": lambda kw: figures.plot_score_variance(
            DIMS, DIMS * 1.0, np.ones(DIMS.size), **_literal(kw)),
        "plot_softmax_saturation": lambda kw: figures.plot_softmax_saturation(
            DIMS, _rows(DIMS, 0.05, 1), _rows(DIMS, 0.01, 2.7), _rows(DIMS, 1e-9, 0.3),
            _rows(DIMS, 1e-9, 30), **{"n_keys": 16, **_literal(kw)})},
    "05_stable_softmax": {"plot_softmax_error": lambda kw: figures.plot_softmax_error(
        np.logspace(-1, 3, 25),
        {"kernel (shifted)": np.logspace(-7, -4, 25), "naive": np.logspace(-7, -4, 25)},
        **{"eps": 1.2e-7, "overflow": 88.7, "bound_S": 16,
           "overflow_label": "naive: exp overflows, weights NaN", **_literal(kw)})},
    "06_multi_head": {
        "plot_multi_head_flow": lambda kw: figures.plot_multi_head_flow(2, **_literal(kw)),
        "plot_head_weights": lambda kw: figures.plot_head_weights(
            np.full((2, 5, 5), 0.2), [f"$x_{i}$" for i in range(5)],
            [f"$x_{i}$" for i in range(5)], **_literal(kw))},
    "07_memory_efficient": {"plot_cost_against_length": lambda kw: figures.plot_cost_against_length(
        {"plain path (return_weights=True)": (N_MEM[:5], N_MEM[:5] ** 2 / 2.0**18),
         "default call": (N_MEM, N_MEM ** 2 / 2.0**20),
         "memory_efficient_attention": (N_MEM, 0.01 * N_MEM)},
        **{"ylabel": "peak memory beyond the output (MiB)",
           "reference": (N_MEM, N_MEM ** 2 / 2.0**18),
           "reference_label": "one $n \\times n$ float32 matrix", **_literal(kw)})},
    "08_real_model": {"plot_attention_heads": lambda kw: figures.plot_attention_heads(
        np.full((12, 15, 15), 1 / 15), TOKENS,
        **{"heads": [0, 3, 7], "titles": ["head 0: previous token", "head 3: most on [CLS]",
                                          "head 7: most on [SEP]"]} if "heads" in kw else {},
        **_literal(kw, "heads", "titles"))},
    "09_training": {
        "plot_training_curves": lambda kw: figures.plot_training_curves(
            {"scaled by 1/sqrt(d)": np.logspace(0.4, -2.4, 401),
             "no division": np.logspace(0.4, -0.2, 401)}, **_literal(kw)),
        "plot_attention_heads": lambda kw: figures.plot_attention_heads(
            np.tril(np.full((2, 8, 8), 0.125)), [str(p) for p in range(8)],
            **_literal(kw)),
        "plot_bilinear_form": lambda kw: figures.plot_bilinear_form(
            rng.standard_normal((16, 16)),
            [f"t{t}" for t in range(8)] + [f"p{p}" for p in range(8)],
            [f"t{t}" for t in range(8)] + [f"p{p}" for p in range(8)], **_literal(kw))},
}


def _literal(kwargs, *supplied):
    return {k: v for k, v in kwargs.items() if v is not COMPUTED and k not in supplied}


def _figure_calls():
    return list(_each_figure_call())


def _each_figure_call():
    for notebook, helpers in BUILDERS.items():
        for name, build in helpers.items():
            for i, kwargs in enumerate(_calls(notebook, name)):
                yield pytest.param(build, kwargs, id=f"{notebook}-{name}-{i}")


def _natural_width_in(fig):
    """Width in inches of the PNG the inline backend shows (cropped to its content)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return Image.open(buf).size[0] / 100


def _texts(fig):
    """Every drawn, nonempty text of the figure (tick labels exist once it is drawn)."""
    return [t for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip()
            and (t.axes is None or t.axes.get_visible())]


def test_every_figure_a_notebook_draws_has_a_builder_here():
    drawn = set()
    for path in sorted(NOTEBOOKS.glob("[0-9]*.md")):
        for source in _code_cells(path.stem):
            for node in ast.walk(ast.parse(source)):
                name = getattr(getattr(node, "func", None), "id", "")
                if isinstance(node, ast.Call) and name.startswith("plot_") \
                        and hasattr(figures, name):
                    drawn.add((path.stem, name))
    built = {(nb, name) for nb, helpers in BUILDERS.items() for name in helpers}
    assert drawn == built


@pytest.mark.parametrize("build, kwargs", _figure_calls())
def test_every_text_is_at_least_9_css_px_on_a_phone(build, kwargs):
    fig = build(kwargs)
    width = _natural_width_in(fig)   # draws the figure: its tick labels now exist
    texts = _texts(fig)
    assert texts
    smallest = min(texts, key=lambda t: t.get_fontsize())
    px = figures.shown_text_px(smallest.get_fontsize(), width, column_px=PHONE_PX)
    assert px >= MIN_PX, (f"{smallest.get_text()!r}: {smallest.get_fontsize()} pt on a "
                          f"figure {width:.2f} in wide is {px:.1f} px at {PHONE_PX} px")
    plt.close(fig)


@pytest.mark.parametrize("build, kwargs", _figure_calls())
def test_no_tick_label_is_a_power_with_a_small_exponent(build, kwargs):
    # mathtext draws an exponent at 70 % of its label's size: 10^{-7} at 12 pt has an
    # exponent of 6 px on a phone (the issue measured 4.1 px), so numbers are plain text
    fig = build(kwargs)
    fig.canvas.draw()
    for ax in fig.axes:
        for label in ax.get_xticklabels() + ax.get_yticklabels():
            assert "^" not in label.get_text(), label.get_text()
    plt.close(fig)


@pytest.mark.parametrize("build, kwargs", _figure_calls())
def test_no_text_is_larger_than_the_body_text_on_a_laptop(build, kwargs):
    # legible on a phone by large type, not by a figure that shouts on a laptop: at the
    # 672 px column the largest text stays within 1.5 times the body's 16 px
    fig = build(kwargs)
    width = _natural_width_in(fig)
    largest = max(t.get_fontsize() for t in _texts(fig))
    assert figures.shown_text_px(largest, width, column_px=LAPTOP_PX) <= 24
    plt.close(fig)


def test_shown_text_px_shrinks_text_with_a_figure_wider_than_the_column():
    assert figures.shown_text_px(12, 3.0) == pytest.approx(12 / 72 * 100)
    assert figures.shown_text_px(12, 6.84) == pytest.approx(12 / 72 * 100 / 2)
    assert figures.shown_text_px(12, 6.84, column_px=684) == pytest.approx(12 / 72 * 100)
