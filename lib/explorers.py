"""Interactive figures ("explorers") for the course's site: Vega-Lite charts whose every
number is computed here, with the kernel, over a grid of the controls' values.

An explorer extends a static figure of its notebook. The reader moves its controls (a
slider, a checkbox, a list) and the chart shows the row of the grid that matches them:
the browser only selects and draws, it computes no softmax. Four are defined, one per
notebook page:

* :func:`temperature_explorer` (chapter 4): one row of softmax weights as E, the division
  by sqrt(E) and a temperature change.
* :func:`mask_explorer` (chapter 3): the weights of a small L x S example under no mask,
  the causal mask, a padding mask or a sliding window.
* :func:`hull_explorer` (chapter 1): the output of one query, a convex combination of
  three value points, as the query turns and grows.
* :func:`online_softmax_explorer` (chapter 7): the running maximum, sum and output of
  the online softmax, block of keys by block.

Each returns an :class:`Explorer`. In a notebook it displays itself (see
:meth:`Explorer._repr_mimebundle_`): as a Vega-Lite chart in front ends that render
Vega-Lite 5 offline (JupyterLab, Notebook 7, VS Code), and otherwise as a one-line note
(the static figure above it shows the same computation). On the site, the Sphinx
extension ``_ext/explorers.py`` serves Vega, Vega-Lite and Vega-Embed (pinned in
``package.json``) from the site's own ``_static/`` on the pages that have an explorer,
and ``_ext/explorers.js`` draws the chart. The specifications are plain dictionaries
(Vega-Lite JSON): no plotting package is needed to build them.

Numbers are written rounded to ``DECIMALS`` decimals, far below what the charts can
show and what the browser tests compare (1e-6).
"""

import html
import json
import math
import os

import numpy as np

from lib.attention import (causal_mask, memory_efficient_attention, padding_mask,
                           scaled_dot_product_attention, softmax)
from lib.data import span_example

__all__ = ["Explorer", "DECIMALS", "temperature_inputs", "temperature_weights",
           "temperature_explorer", "mask_inputs", "explorer_mask", "mask_explorer",
           "hull_inputs", "hull_query", "hull_explorer", "online_inputs",
           "online_softmax_explorer", "VEGA_LITE_SCHEMA", "JUPYTER_VEGA_LITE_SCHEMA"]

DECIMALS = 7
# The site compiles the specifications with Vega-Lite 6 (package.json); the copy shown in
# Jupyter is labelled Vega-Lite 5, the version JupyterLab 4's own renderer bundles. The
# specifications use nothing that differs between the two.
VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
JUPYTER_VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
JUPYTER_MIME = "application/vnd.vegalite.v5+json"
# Set by the site's Sphinx extension (_ext/explorers.py) in the build's environment, which
# the kernels that execute the notebooks inherit: only there does an explorer also write
# the HTML the site draws from. JupyterLab prefers HTML to a Vega-Lite chart, so a notebook
# run in Jupyter gets the chart (and one line of text where no renderer exists, e.g. Colab).
SITE_BUILD_ENV = "COURSE_SITE_BUILD"

# Colours for the light and the dark theme, chosen by the signal `dark` (set by
# _ext/explorers.js from the site's html[data-theme]; false in Jupyter).
FG = "dark ? '#e6e6e6' : '#1f1f1f'"
MUTED = "dark ? '#a6a6a6' : '#595959'"
GRID = "dark ? '#3a3a3a' : '#e0e0e0'"
MARK = "dark ? '#79aee0' : '#2f6496'"
ACCENT = "dark ? '#f2a65a' : '#b4470c'"


def _round(x):
    """Plain Python floats (or lists of them) rounded to DECIMALS, for JSON."""
    a = np.round(np.asarray(x, dtype=np.float64), DECIMALS) + 0.0  # + 0.0: no -0.0
    return a.tolist()


def as_javascript_writes(value):
    """`value` (JSON data) with every whole-number float an int, as JavaScript writes it.

    A notebook stores an output's JSON as Python wrote it (``1.0``); JupyterLab reads it
    into JavaScript, where 1.0 is 1, and would write ``1`` back: the stored notebook would
    change on its first save. Written as ints, the two agree.

    Examples
    --------
    >>> as_javascript_writes({"a": [1.0, 0.5, -2.0], "b": True, "c": "1.0"})
    {'a': [1, 0.5, -2], 'b': True, 'c': '1.0'}
    """
    if isinstance(value, dict):
        return {k: as_javascript_writes(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_javascript_writes(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)   # 2 ** 53: beyond it JavaScript writes 1e+20, not digits
    return value


def _config():
    return {
        "view": {"stroke": None},
        "axis": {"labelColor": {"expr": FG}, "titleColor": {"expr": FG},
                 "domainColor": {"expr": MUTED}, "tickColor": {"expr": MUTED},
                 "gridColor": {"expr": GRID}, "labelFontSize": 12, "titleFontSize": 13,
                 "titleFontWeight": "normal"},
        "legend": {"labelColor": {"expr": FG}, "titleColor": {"expr": FG},
                   "labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
        "title": {"color": {"expr": FG}, "fontSize": 14, "fontWeight": "normal",
                  "anchor": "start"},
        "text": {"color": {"expr": FG}, "fontSize": 13},
        "bar": {"color": {"expr": MARK}},
        "concat": {"spacing": 28},
    }


def _spec(description, params, datasets, body):
    """A complete Vega-Lite specification: the theme, the controls and the data."""
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "description": description,
        "background": {"expr": "dark ? 'transparent' : '#ffffff'"},
        "padding": 8,
        "params": [{"name": "dark", "value": False}] + params,
        "datasets": datasets,
        "config": _config(),
        **body,
    }


def _range(name, label, value, lo, hi, step):
    return {"name": name, "value": value,
            "bind": {"input": "range", "min": lo, "max": hi, "step": step, "name": label}}


class Explorer:
    """An interactive chart: a Vega-Lite specification with its title and text alternative.

    Parameters
    ----------
    name : str
        Short identifier, unique on a page (``"temperature"``); the chart's HTML id is
        ``explorer-<name>``.
    title : str
        What the explorer is called on the page.
    description : str
        The text alternative: what the chart shows, in one or two sentences. It is shown
        above the chart and, as the specification's ``description``, becomes the drawn
        chart's accessible name (Vega sets ``role="graphics-document"`` and ``aria-label``
        on the chart's container; until it draws, the container is an empty ``div``).
    spec : dict
        The Vega-Lite specification (JSON-serialisable), with ``datasets`` holding every
        number the chart can show.
    fallback : str
        The note shown where the chart cannot be drawn (Jupyter without a Vega-Lite
        renderer, print): what shows the same computation instead.

    Examples
    --------
    >>> from lib.explorers import Explorer
    >>> e = Explorer("demo", "Demo", "An empty chart.", {"mark": "point"}, "Nothing.")
    >>> print(repr(e))
    Explorer: Demo (interactive on the course's site and in JupyterLab)
    >>> sorted(e._repr_mimebundle_())  # in Jupyter (on the site's build, also text/html)
    ['application/vnd.vegalite.v5+json', 'text/plain']
    """

    def __init__(self, name, title, description, spec, fallback):
        self.name = name
        self.title = title
        self.description = description
        self.spec = spec
        self.fallback = fallback

    def __repr__(self):
        return f"Explorer: {self.title} (interactive on the course's site and in JupyterLab)"

    def to_json(self):
        """The specification as compact JSON (the site's copy, Vega-Lite 6)."""
        return json.dumps(self.spec, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)

    def data_bytes(self):
        """Size in bytes of the compact JSON of the specification (data included)."""
        return len(self.to_json().encode())

    def to_html(self):
        """The HTML the site embeds: title, text alternative, fallback note and the
        specification in an inert ``<script type="application/json">``, which
        ``_ext/explorers.js`` turns into the chart."""
        ident = f"explorer-{self.name}"
        # "</" must not appear inside a <script> element
        data = self.to_json().replace("</", "<\\/")
        return (
            f'<div class="explorer" id="{ident}" data-explorer="{self.name}" role="group" '
            f'aria-labelledby="{ident}-title" aria-describedby="{ident}-description">\n'
            f'<p class="explorer-title" id="{ident}-title"><strong>Explorer: '
            f'{html.escape(self.title)}</strong></p>\n'
            f'<p class="explorer-description" id="{ident}-description">'
            f'{html.escape(self.description)}</p>\n'
            f'<p class="explorer-fallback">{html.escape(self.fallback)}</p>\n'
            f'<div class="explorer-chart"></div>\n'
            f'<script type="application/json" class="explorer-spec">{data}</script>\n'
            f'</div>'
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        """What Jupyter and the book see: the chart for front ends with an offline
        Vega-Lite renderer, a fixed line of text (what nbval compares, and what a front end
        without a renderer shows), and, only while the site is built (``SITE_BUILD_ENV``),
        the HTML the site draws the chart from."""
        jupyter_spec = as_javascript_writes(
            dict(self.spec, **{"$schema": JUPYTER_VEGA_LITE_SCHEMA}))
        bundle = {"text/plain": repr(self), JUPYTER_MIME: jupyter_spec}
        if os.environ.get(SITE_BUILD_ENV):
            bundle["text/html"] = self.to_html()
        return bundle


# ------------------------------------------------------------------ chapter 4: scaling
TEMPERATURE_SEED = 1706
TEMPERATURE_KEYS = 8
TEMPERATURE_DIMS = tuple(2 ** k for k in range(1, 11))         # E = 2, 4, ..., 1024
TEMPERATURES = tuple(round(t / 10, 1) for t in range(1, 41))   # T = 0.1, 0.2, ..., 4.0


def temperature_inputs(E, n_keys=TEMPERATURE_KEYS):
    """The fixed seeded draw of one query and ``n_keys`` keys of width ``E``.

    Parameters
    ----------
    E : int
        Features per query and key.
    n_keys : int, default 8
        Number of keys S.

    Returns
    -------
    query : ndarray, shape (1, E), float64
    key : ndarray, shape (S, E), float64
        Standard normal entries from ``np.random.default_rng([1706, E])``: the same
        arrays for the same E, on every call.

    Examples
    --------
    >>> from lib.explorers import temperature_inputs
    >>> q, k = temperature_inputs(16)
    >>> q.shape, k.shape
    ((1, 16), (8, 16))
    >>> bool((temperature_inputs(16)[1] == k).all())
    True
    """
    rng = np.random.default_rng([TEMPERATURE_SEED, int(E)])
    query = rng.standard_normal((1, int(E)))
    key = rng.standard_normal((n_keys, int(E)))
    return query, key


def temperature_weights(E, divide, T):
    """The attention weights of the explorer's query at one setting of its controls.

    Parameters
    ----------
    E : int
        Features per query and key (the draw of :func:`temperature_inputs`).
    divide : bool
        Divide the scores by sqrt(E) (the kernel's default scale) or not (scale 1).
    T : float
        Temperature: the scores are also divided by ``T > 0``.

    Returns
    -------
    ndarray, shape (S,), float64
        ``softmax(key @ query / (sqrt(E) if divide else 1) / T)``, computed by
        :func:`lib.attention.scaled_dot_product_attention` with ``scale`` set to that
        factor.

    Raises
    ------
    ValueError
        If ``T`` is not positive.

    Examples
    --------
    >>> from lib.explorers import temperature_weights
    >>> w = temperature_weights(64, True, 1.0)
    >>> w.shape, bool(abs(w.sum() - 1) < 1e-12)
    ((8,), True)
    >>> bool(temperature_weights(64, False, 1.0).max() > w.max())   # saturates
    True
    """
    if not T > 0:
        raise ValueError(f"the temperature must be positive, got {T!r}")
    query, key = temperature_inputs(E)
    scale = (1.0 / math.sqrt(E) if divide else 1.0) / T
    value = np.eye(key.shape[0])  # (S, S): the output is the weights themselves
    _, weights = scaled_dot_product_attention(query, key, value, scale=scale,
                                              return_weights=True)
    return weights[0]


def _entropy(w):
    """Entropy in nats of probability vectors along the last axis (0 log 0 = 0)."""
    w = np.asarray(w)
    logs = np.log(w, out=np.zeros_like(w), where=w > 0)
    return -(w * logs).sum(axis=-1) + 0.0


def temperature_explorer():
    """Chapter 4's explorer: one row of weights as E, the division by sqrt(E) and a
    temperature change.

    The grid holds :func:`temperature_weights` for every E in 2, 4, ..., 1024 (a slider
    over log2 E), with and without the division (a checkbox), and every temperature
    0.1, 0.2, ..., 4.0 (a slider): 800 rows of 8 weights, with each row's largest
    weight and entropy.

    Returns
    -------
    Explorer

    Examples
    --------
    >>> from lib.explorers import temperature_explorer
    >>> e = temperature_explorer()
    >>> rows = e.spec["datasets"]["temperature"]
    >>> len(rows), len(rows[0]["w"])
    (800, 8)
    >>> e.data_bytes() < 200_000
    True
    """
    rows = []
    for k, E in enumerate(TEMPERATURE_DIMS, start=1):
        for divide in (1, 0):
            for t, T in enumerate(TEMPERATURES, start=1):
                w = temperature_weights(E, bool(divide), T)
                rows.append({"k": k, "d": divide, "t": t, "w": _round(w),
                             "max": _round(w.max()), "H": _round(_entropy(w))})
    S = TEMPERATURE_KEYS
    datasets = {"temperature": rows,
                "dims": [{"k": k, "E": E, "sqrtE": _round(math.sqrt(E))}
                         for k, E in enumerate(TEMPERATURE_DIMS, start=1)],
                "temperatures": [{"t": t, "T": T} for t, T in enumerate(TEMPERATURES, start=1)]}
    params = [
        _range("log2E", "log\u2082 E  (E = 2 \u2026 1024)", 6, 1, len(TEMPERATURE_DIMS), 1),
        {"name": "divide", "value": True,
         "bind": {"input": "checkbox", "name": "divide the scores by \u221aE"}},
        _range("T", "temperature T", 1.0, TEMPERATURES[0], TEMPERATURES[-1], 0.1),
    ]
    pick = {"filter": "datum.k == log2E && datum.d == (divide ? 1 : 0) "
                      "&& datum.t == round(T * 10)"}
    bars = {
        "name": "weights",
        "title": f"attention weights of one query over {TEMPERATURE_KEYS} keys",
        "width": 380, "height": 200,
        "data": {"name": "temperature"},
        "transform": [pick, {"flatten": ["w"], "as": ["weight"]},
                      {"window": [{"op": "row_number", "as": "key"}]},
                      {"calculate": "datum.key - 1", "as": "key"}],
        "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "key", "type": "ordinal", "title": "key j",
                  "axis": {"labelAngle": 0}},
            "y": {"field": "weight", "type": "quantitative", "title": "weight",
                  "scale": {"domain": [0, 1]}},
        },
    }
    numbers = {
        "name": "numbers",
        "width": 380, "height": 66,
        "data": {"name": "temperature"},
        "transform": [pick,
                      {"lookup": "k", "from": {"data": {"name": "dims"}, "key": "k",
                                               "fields": ["E", "sqrtE"]}},
                      {"lookup": "t", "from": {"data": {"name": "temperatures"}, "key": "t",
                                               "fields": ["T"]}},
                      {"calculate": "'E = ' + datum.E + (datum.d ? ', scores divided by "
                                    "\u221aE = ' + format(datum.sqrtE, '.4~f') : ', scores "
                                    "not divided') + ', temperature T = ' + "
                                    "format(datum.T, '.1f')", "as": "line0"},
                      {"calculate": "'largest weight ' + format(datum.max, '.4f')",
                       "as": "line1"},
                      {"calculate": "'entropy ' + format(datum.H, '.4f') + ' nats "
                                    f"(uniform weights: ln {S} = {math.log(S):.4f})'",
                       "as": "line2"}],
        "layer": [
            {"mark": {"type": "text", "align": "left", "baseline": "top"},
             "encoding": {"text": {"field": "line0"}, "x": {"value": 0}, "y": {"value": 2}}},
            {"mark": {"type": "text", "align": "left", "baseline": "top"},
             "encoding": {"text": {"field": "line1"}, "x": {"value": 0}, "y": {"value": 24}}},
            {"mark": {"type": "text", "align": "left", "baseline": "top"},
             "encoding": {"text": {"field": "line2"}, "x": {"value": 0}, "y": {"value": 46}}},
        ],
    }
    description = (f"A bar chart of the {S} attention weights of one query over {S} keys "
                   "(a fixed random draw for each E), and below it the row's largest weight "
                   "and its entropy, for the E, division and temperature set by the controls.")
    spec = _spec(description, params, datasets, {"vconcat": [bars, numbers]})
    return Explorer(
        "temperature", "temperature and scale", description, spec,
        "The interactive chart needs the course's site or JupyterLab; the figure above "
        "shows the same effect of E, averaged over many draws.")


# ------------------------------------------------------------------ chapter 3: masking
MASK_SEED = 2017
MASK_L = MASK_S = 6
MASK_E = 4
MASK_MODES = ("none", "causal", "padding", "window")
MASK_MODE_LABELS = ("none", "causal", "padding", "sliding window")


def mask_inputs():
    """The explorer's fixed example: query, key and value, each (6, 4), seeded.

    Returns
    -------
    query, key, value : ndarray, shape (6, 4), float64
        L = S = 6, E = Ev = 4, standard normal from ``np.random.default_rng(2017)``.

    Examples
    --------
    >>> from lib.explorers import mask_inputs
    >>> [a.shape for a in mask_inputs()]
    [(6, 4), (6, 4), (6, 4)]
    """
    rng = np.random.default_rng(MASK_SEED)
    return tuple(rng.standard_normal((3, MASK_L, MASK_E)))


def explorer_mask(mode, p=0):
    """The boolean mask (True = may attend) of one setting of the mask explorer.

    Parameters
    ----------
    mode : {"none", "causal", "padding", "window"}
        No mask, ``causal_mask``, a key padding mask (``padding_mask``) of true length
        ``p``, or a causal sliding window of width ``p``: query ``i`` attends keys
        ``i - p < j <= i``.
    p : int
        The true length (``0 <= p <= S``) for "padding", the width (``1 <= p <= S``) for
        "window"; ignored otherwise.

    Returns
    -------
    ndarray of bool, shape (L, S)

    Raises
    ------
    ValueError
        If ``mode`` is unknown, or ``p`` is out of range (as ``padding_mask`` says).

    Examples
    --------
    >>> from lib.explorers import explorer_mask
    >>> explorer_mask("window", 2)[:3].astype(int)
    array([[1, 0, 0, 0, 0, 0],
           [1, 1, 0, 0, 0, 0],
           [0, 1, 1, 0, 0, 0]])
    >>> explorer_mask("padding", 0).any()
    np.False_
    """
    L, S = MASK_L, MASK_S
    if mode == "none":
        return np.ones((L, S), dtype=bool)
    if mode == "causal":
        return causal_mask(L, S)
    if mode == "padding":
        return np.broadcast_to(padding_mask(np.array([p]), S), (L, S)).copy()
    if mode == "window":
        if not 1 <= p <= S:
            raise ValueError(f"the window width must lie in [1, S={S}], got {p!r}")
        return causal_mask(L, S) & ~np.tri(L, S, -int(p), dtype=bool)
    raise ValueError(f"mode must be one of {MASK_MODES}, got {mode!r}")


def _mask_settings():
    yield "none", 0
    yield "causal", 0
    for n in range(MASK_S + 1):
        yield "padding", n
    for w in range(1, MASK_S + 1):
        yield "window", w


def mask_explorer():
    """Chapter 3's explorer: a mask and the L x S weights it produces.

    The grid holds the mask and the weights (``scaled_dot_product_attention`` with
    ``return_weights=True``) of the fixed example of :func:`mask_inputs` for no mask,
    the causal mask, every true length 0 ... S of a key padding mask and every width
    1 ... S of a sliding window, with each row's sum (0 for a row with nothing to
    attend to, as the kernel returns).

    Returns
    -------
    Explorer

    Examples
    --------
    >>> from lib.explorers import mask_explorer
    >>> cells = mask_explorer().spec["datasets"]["masks"]
    >>> len(cells)                     # (1 + 1 + 7 + 6) settings x 36 cells
    540
    >>> max(c["w"] for c in cells if c["mode"] == "padding" and c["p"] == 0)
    0.0
    """
    query, key, value = mask_inputs()
    cells, sums = [], []
    for mode, p in _mask_settings():
        mask = explorer_mask(mode, p)
        _, w = scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                            return_weights=True)
        for i in range(MASK_L):
            sums.append({"mode": mode, "p": p, "i": i, "sum": _round(w[i].sum())})
            for j in range(MASK_S):
                cells.append({"mode": mode, "p": p, "i": i, "j": j, "m": int(mask[i, j]),
                              "w": _round(w[i, j])})
    params = [
        {"name": "mask", "value": "causal",
         "bind": {"input": "select", "options": list(MASK_MODES),
                  "labels": list(MASK_MODE_LABELS), "name": "mask"}},
        _range("true_length", "true length (padding)", 4, 0, MASK_S, 1),
        _range("window_width", "window width (sliding window)", 3, 1, MASK_S, 1),
    ]
    pick = {"filter": "datum.mode == mask && datum.p == (mask == 'padding' ? true_length "
                      ": mask == 'window' ? window_width : 0)"}
    axes = {"x": {"field": "j", "type": "ordinal", "title": "key j",
                  "axis": {"labelAngle": 0, "orient": "top"}},
            "y": {"field": "i", "type": "ordinal", "title": "query i"}}
    cell = {"type": "rect", "stroke": {"expr": MUTED}, "strokeWidth": 0.5}
    mask_panel = {
        "name": "mask_panel", "title": "mask (1 = may attend)",
        "width": 170, "height": 170,
        "data": {"name": "masks"},
        "transform": [pick],
        "layer": [
            {"mark": cell,
             "encoding": {**axes, "color": {
                 "field": "m", "type": "nominal", "legend": None,
                 "scale": {"domain": [0, 1], "range": ["#ffffff", "#b3b3b3"]}}}},
            {"mark": {"type": "text", "color": "#1f1f1f"},
             "encoding": {**axes, "text": {"field": "m"}}},
        ],
    }
    weights_panel = {
        "name": "weights_panel", "title": "attention weights",
        "width": 170, "height": 170,
        "data": {"name": "masks"},
        "transform": [pick],
        "layer": [
            {"mark": cell,
             "encoding": {**axes, "color": {
                 "field": "w", "type": "quantitative", "legend": None,
                 "scale": {"domain": [0, 1], "scheme": "blues"}}}},
            {"mark": {"type": "text", "fontSize": 11},
             "encoding": {**axes, "text": {"field": "w", "format": ".2f"},
                          "color": {"condition": {"test": "datum.w > 0.55",
                                                  "value": "#ffffff"},
                                    "value": "#1f1f1f"}}},
        ],
    }
    sums_panel = {
        "name": "sums_panel", "title": "row sum",
        "width": 48, "height": 170,
        "data": {"name": "mask_rows"},
        "transform": [pick],
        "mark": {"type": "text"},
        "encoding": {"y": {"field": "i", "type": "ordinal", "title": None},
                     "text": {"field": "sum", "format": ".2f"}},
    }
    description = (f"Two {MASK_L} by {MASK_S} grids for a fixed random example: the mask "
                   "chosen by the controls (1 where query i may attend to key j) and the "
                   "attention weights it produces, with each row's sum, which is 0 for a "
                   "query with no key to attend to.")
    spec = _spec(description, params, {"masks": cells, "mask_rows": sums},
                 {"hconcat": [mask_panel, weights_panel, sums_panel],
                  "resolve": {"scale": {"color": "independent"}}})
    return Explorer(
        "masks", "masks", description, spec,
        "The interactive chart needs the course's site or JupyterLab; the figures above "
        "show the causal and the padding masks.")


# ------------------------------------------------------------ chapter 1: convex hull
HULL_ANGLES = tuple(range(0, 360, 15))                       # degrees
HULL_LENGTHS = tuple(x / 2 for x in range(0, 33))            # 0, 0.5, ..., 16


def hull_inputs():
    """The keys and values of chapter 1's head (``lib.data.span_example``).

    Returns
    -------
    key : ndarray, shape (3, 2)
    value : ndarray, shape (3, 2)
        The value rows v0 = (1, 0), v1 = (0, 2), v2 = (1, 1): the triangle.

    Examples
    --------
    >>> from lib.explorers import hull_inputs
    >>> hull_inputs()[1]
    array([[1., 0.],
           [0., 2.],
           [1., 1.]])
    """
    _, _, _, key, value = span_example()
    return key, value


def hull_query(angle, length):
    """The query of direction ``angle`` (degrees, from the first axis) and norm ``length``.

    Returns
    -------
    ndarray, shape (1, 2), float64

    Examples
    --------
    >>> from lib.explorers import hull_query
    >>> hull_query(90, 2).round(12)
    array([[0., 2.]])
    """
    theta = math.radians(angle)
    return np.array([[length * math.cos(theta), length * math.sin(theta)]])


def hull_explorer():
    """Chapter 1's explorer: the output of one query inside the triangle of the values.

    For every direction 0, 15, ..., 345 degrees and every length 0, 0.5, ..., 16 of the
    query, the grid holds the kernel's output (``scaled_dot_product_attention`` with
    chapter 1's keys and values, default scale) and its weights, which are the output's
    barycentric coordinates in the triangle.

    Returns
    -------
    Explorer

    Examples
    --------
    >>> from lib.explorers import hull_explorer
    >>> rows = hull_explorer().spec["datasets"]["outputs"]
    >>> len(rows)                       # 24 directions x 33 lengths
    792
    >>> rows[0]["w"]                     # length 0: uniform weights
    [0.3333333, 0.3333333, 0.3333333]
    """
    key, value = hull_inputs()
    rows = []
    for angle in HULL_ANGLES:
        for length in HULL_LENGTHS:
            out, w = scaled_dot_product_attention(hull_query(angle, length), key, value,
                                                  return_weights=True)
            rows.append({"a": angle, "r": length, "x": _round(out[0, 0]),
                         "y": _round(out[0, 1]), "w": _round(w[0])})
    corners = [{"v": f"v{i}", "label": f"v{i} ({x:g}, {y:g})", "x": x, "y": y, "o": i}
               for i, (x, y) in enumerate(value.tolist())]
    params = [
        _range("angle", "query direction (degrees)", 0, HULL_ANGLES[0], HULL_ANGLES[-1], 15),
        _range("query_length", "query length \u2016q\u2016", 4, HULL_LENGTHS[0], HULL_LENGTHS[-1],
               0.5),
    ]
    here = {"filter": "datum.a == angle && datum.r == query_length"}
    xs = {"field": "x", "type": "quantitative", "title": "first coordinate",
          "scale": {"domain": [-0.3, 1.5]}}
    ys = {"field": "y", "type": "quantitative", "title": "second coordinate",
          "scale": {"domain": [-0.3, 2.3]}}
    plane = {
        "name": "plane", "title": "output o in the triangle of the values",
        "width": 250, "height": 330,
        "layer": [
            {"data": {"name": "corners"},
             "mark": {"type": "line", "interpolate": "linear-closed",
                      "stroke": {"expr": MUTED}, "fill": {"expr": GRID}},
             "encoding": {"x": xs, "y": ys, "order": {"field": "o"}}},
            {"data": {"name": "corners"},
             "mark": {"type": "point", "filled": True, "size": 50,
                      "color": {"expr": FG}},
             "encoding": {"x": xs, "y": ys}},
            {"data": {"name": "corners"},
             "mark": {"type": "text", "dx": 8, "dy": -8, "align": "left"},
             "encoding": {"x": xs, "y": ys, "text": {"field": "label"}}},
            {"name": "path", "data": {"name": "outputs"},
             "transform": [{"filter": "datum.a == angle"}],
             "mark": {"type": "line", "strokeDash": [4, 3], "color": {"expr": MARK}},
             "encoding": {"x": xs, "y": ys, "order": {"field": "r"}}},
            {"name": "output", "data": {"name": "outputs"},
             "transform": [here],
             "mark": {"type": "point", "shape": "diamond", "filled": True, "size": 160,
                      "color": {"expr": ACCENT}},
             "encoding": {"x": xs, "y": ys}},
        ],
    }
    bars = {
        "name": "barycentric", "title": "weights a = barycentric coordinates of o",
        "width": 210, "height": 200,
        "data": {"name": "outputs"},
        "transform": [here, {"flatten": ["w"], "as": ["weight"]},
                      {"window": [{"op": "row_number", "as": "n"}]},
                      {"calculate": "'a' + (datum.n - 1) + ' (v' + (datum.n - 1) + ')'",
                       "as": "value row"}],
        "layer": [
            {"mark": {"type": "bar"},
             "encoding": {"x": {"field": "value row", "type": "nominal",
                                "axis": {"labelAngle": 0}, "title": None},
                          "y": {"field": "weight", "type": "quantitative",
                                "scale": {"domain": [0, 1]}, "title": "weight"}}},
            {"mark": {"type": "text", "dy": -8},
             "encoding": {"x": {"field": "value row", "type": "nominal"},
                          "y": {"field": "weight", "type": "quantitative"},
                          "text": {"field": "weight", "format": ".3f"}}},
        ],
    }
    coords = {
        "name": "coordinates", "width": 210, "height": 24,
        "data": {"name": "outputs"},
        "transform": [here, {"calculate": "'o = (' + format(datum.x, '.3f') + ', ' + "
                                          "format(datum.y, '.3f') + ')'", "as": "line"}],
        "mark": {"type": "text", "align": "left", "baseline": "top"},
        "encoding": {"text": {"field": "line"}, "x": {"value": 0}, "y": {"value": 4}},
    }
    description = ("The triangle spanned by the value rows v0 = (1, 0), v1 = (0, 2) and "
                   "v2 = (1, 1); the attention output o of one query, of the direction "
                   "and length set by the controls, as a point inside it, with the path "
                   "it takes as the query grows; and the three weights, which are o's "
                   "barycentric coordinates, as bars.")
    spec = _spec(description, params, {"outputs": rows, "corners": corners},
                 {"hconcat": [plane, {"vconcat": [bars, coords]}]})
    return Explorer(
        "hull", "the convex hull", description, spec,
        "The interactive chart needs the course's site or JupyterLab; the figure above "
        "shows the outputs of queries on three circles.")


# -------------------------------------------------- chapter 7: memory-efficient attention
ONLINE_SEED = 2022
ONLINE_S = 12
ONLINE_BLOCK = 3
ONLINE_E = 4
ONLINE_EV = 3


def online_inputs():
    """The explorer's one query, its keys and values, and the key block size.

    Returns
    -------
    query : ndarray, shape (1, 4)
    key : ndarray, shape (12, 4)
    value : ndarray, shape (12, 3)
        Standard normal, from ``np.random.default_rng(2022)``; the keys are multiplied
        by 2 so that the running maximum moves more than once.
    block_size : int
        3: four blocks of keys.

    Examples
    --------
    >>> from lib.explorers import online_inputs
    >>> q, k, v, b = online_inputs()
    >>> q.shape, k.shape, v.shape, b
    ((1, 4), (12, 4), (12, 3), 3)
    """
    rng = np.random.default_rng(ONLINE_SEED)
    query = rng.standard_normal((1, ONLINE_E))
    key = 2.0 * rng.standard_normal((ONLINE_S, ONLINE_E))
    value = rng.standard_normal((ONLINE_S, ONLINE_EV))
    return query, key, value, ONLINE_BLOCK


def online_softmax_explorer():
    """Chapter 7's explorer: the online softmax's state after each block of keys.

    After ``b`` blocks the state of ``memory_efficient_attention`` is that of the same
    call on the first ``b`` blocks alone; the grid holds, for ``b = 1 ... 4``, the
    running maximum ``m`` of the scaled scores, the running sum
    ``ell = exp(lse - m)`` (``lse`` returned by the kernel) and the output
    ``acc / ell`` (the kernel's output on those keys), and the kernel's output on all
    keys, which the last step reaches.

    Returns
    -------
    Explorer

    Examples
    --------
    >>> from lib.explorers import online_softmax_explorer
    >>> data = online_softmax_explorer().spec["datasets"]
    >>> len(data["scores"]), len(data["state"])
    (12, 4)
    >>> data["state"][-1]["o"] == data["final"][0]["o"]
    True
    """
    query, key, value, B = online_inputs()
    E = query.shape[-1]
    z = (query @ key.T)[0] / math.sqrt(E)                      # (S,) the scaled scores
    states = []
    n_blocks = -(-ONLINE_S // B)
    for b in range(1, n_blocks + 1):
        out, lse = memory_efficient_attention(query, key[:b * B], value[:b * B],
                                              block_size=B, return_lse=True)
        m = z[:b * B].max()
        states.append({"b": b, "m": _round(m), "ell": _round(np.exp(lse[0] - m)),
                       "lse": _round(lse[0]), "o": _round(out[0])})
    final = memory_efficient_attention(query, key, value, block_size=B)
    every = np.concatenate([final.ravel()] + [s["o"] for s in states] + [[0.0]])
    out_range = [math.floor(every.min() * 2) / 2, math.ceil(every.max() * 2) / 2]  # fixed axis
    scores = [{"j": j, "z": _round(z[j]), "blk": j // B} for j in range(ONLINE_S)]
    params = [_range("blocks", "key blocks processed", 1, 1, n_blocks, 1)]
    now = {"filter": "datum.b == blocks"}
    status = ("datum.blk < blocks - 1 ? 'earlier blocks' : datum.blk == blocks - 1 "
              "? 'this block' : 'not read yet'")
    score_panel = {
        "name": "scores", "title": f"scaled scores z of one query, in blocks of {B} keys",
        "width": 380, "height": 170,
        "layer": [
            {"data": {"name": "scores"},
             "transform": [{"calculate": status, "as": "key block"}],
             "mark": {"type": "bar"},
             "encoding": {
                 "x": {"field": "j", "type": "ordinal", "title": "key j",
                       "axis": {"labelAngle": 0}},
                 "y": {"field": "z", "type": "quantitative", "title": "score z\u2c7c"},
                 "color": {"field": "key block", "type": "nominal",
                           "scale": {"domain": ["earlier blocks", "this block",
                                               "not read yet"],
                                     "range": ["#4c78a8", "#e8743b", "#9d9d9d"]},
                           "legend": {"orient": "bottom", "title": None}}}},
            {"name": "running_max", "data": {"name": "state"}, "transform": [now],
             "mark": {"type": "rule", "strokeDash": [5, 3], "color": {"expr": ACCENT}},
             "encoding": {"y": {"field": "m", "type": "quantitative"}}},
        ],
    }
    out_panel = {
        "name": "output", "title": "acc / \u2113 (bars) and the kernel's output (ticks)",
        "width": 220, "height": 170,
        "layer": [
            {"data": {"name": "state"},
             "transform": [now, {"flatten": ["o"], "as": ["value"]},
                           {"window": [{"op": "row_number", "as": "n"}]},
                           {"calculate": "datum.n - 1", "as": "feature"}],
             "mark": {"type": "bar", "opacity": 0.85},
             "encoding": {"x": {"field": "feature", "type": "ordinal",
                                "axis": {"labelAngle": 0}, "title": "output feature"},
                          "y": {"field": "value", "type": "quantitative",
                                "title": "value", "scale": {"domain": out_range}}}},
            {"data": {"name": "final"},
             "transform": [{"flatten": ["o"], "as": ["value"]},
                           {"window": [{"op": "row_number", "as": "n"}]},
                           {"calculate": "datum.n - 1", "as": "feature"}],
             "mark": {"type": "tick", "thickness": 3, "color": {"expr": ACCENT}},
             "encoding": {"x": {"field": "feature", "type": "ordinal"},
                          "y": {"field": "value", "type": "quantitative"}}},
        ],
    }
    numbers = {
        "name": "state_numbers", "width": 380, "height": 44,
        "data": {"name": "state"},
        "transform": [now,
                      {"calculate": f"'after block ' + datum.b + ' of {n_blocks}: "
                                    "m = ' + format(datum.m, '.4f') + ',  \u2113 = ' + "
                                    "format(datum.ell, '.4f')", "as": "line1"},
                      {"calculate": "'acc / \u2113 = (' + " + " + ', ' + ".join(
                          f"format(datum.o[{f}], '.4f')" for f in range(ONLINE_EV))
                                    + " + ')'", "as": "line2"}],
        "layer": [
            {"mark": {"type": "text", "align": "left", "baseline": "top"},
             "encoding": {"text": {"field": "line1"}, "x": {"value": 0}, "y": {"value": 2}}},
            {"mark": {"type": "text", "align": "left", "baseline": "top"},
             "encoding": {"text": {"field": "line2"}, "x": {"value": 0}, "y": {"value": 24}}},
        ],
    }
    description = (f"The {ONLINE_S} scaled scores of one query as bars, coloured by whether "
                   "their block of keys has been read, with the running maximum m as a "
                   "dashed line; the running output acc / \u2113 after the number of blocks "
                   "set by the control, against the kernel's output on all keys; and m "
                   "and \u2113 as numbers.")
    spec = _spec(description, params,
                 {"scores": scores, "state": states, "final": [{"o": _round(final[0])}]},
                 {"vconcat": [score_panel, numbers, out_panel],
                  "resolve": {"scale": {"color": "independent"}}})
    return Explorer(
        "online", "the online softmax, block by block", description, spec,
        "The interactive chart needs the course's site or JupyterLab; the cells above "
        "compute the same updates by hand.")


# ------------------------------------------------------------------ chapter 9: training
__all__.extend(["training_grid", "training_explorer"])


def training_grid(run, x_probe, *, is_causal=True, scale=None):
    """Chapter 9's grid: a probe sequence's weights at every recorded step of a run.

    Parameters
    ----------
    run : lib.training.TrainingRun
        What :func:`lib.training.train_head` recorded: the projections at the steps
        ``run.recorded`` and the loss at every step.
    x_probe : array_like, shape (L, D)
        One sequence of token vectors, whose attention weights the chart shows.
    is_causal, scale
        As the run was trained (``head_attention``'s arguments).

    Returns
    -------
    cells : list of dict
        ``{"s": step, "i": query, "j": key, "w": weight}`` for every recorded step and
        every pair, the weights of :func:`lib.training.head_attention`.
    losses : list of dict
        ``{"s": step, "loss": loss}`` for every step of the run.

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import init_head, previous_token_task, train_head
    >>> from lib.explorers import training_grid
    >>> rng = np.random.default_rng(0)
    >>> x, _, target = previous_token_task(4, 3, 2, rng)
    >>> run = train_head(x, target, *init_head(5, 2, 2, rng), steps=4, lr=1.0,
    ...                  record_every=2)
    >>> cells, losses = training_grid(run, x[0])
    >>> len(cells), len(losses)        # 3 recorded steps x 9 pairs; 5 losses
    (27, 5)
    """
    from lib.training import head_attention  # chapter 9's module, imported where used

    x_probe = np.asarray(x_probe, dtype=np.float64)
    if x_probe.ndim != 2:
        raise ValueError(f"x_probe must be one sequence of shape (L, D), got shape "
                         f"{x_probe.shape}")
    cells = []
    for step, weights in zip(run.recorded, run.weights):
        _, w = head_attention(x_probe, *weights, is_causal=is_causal, scale=scale,
                              return_weights=True)  # (L, L)
        L = w.shape[0]
        cells.extend({"s": int(step), "i": i, "j": j, "w": _round(w[i, j])}
                     for i in range(L) for j in range(L))
    losses = [{"s": s, "loss": _round(v)} for s, v in enumerate(run.losses)]
    return cells, losses


def training_explorer(run, x_probe, *, is_causal=True, scale=None):
    """Chapter 9's explorer: scrub through the steps of a training run.

    A slider chooses a recorded step; the chart shows the attention weights of one
    probe sequence at that step (computed with :func:`lib.training.head_attention` from
    the projections recorded then, :func:`training_grid`), and the loss at every step
    with the chosen one marked.

    Parameters
    ----------
    run, x_probe, is_causal, scale
        As for :func:`training_grid`.

    Returns
    -------
    Explorer

    Examples
    --------
    >>> import numpy as np
    >>> from lib.training import init_head, previous_token_task, train_head
    >>> from lib.explorers import training_explorer
    >>> rng = np.random.default_rng(0)
    >>> x, _, target = previous_token_task(4, 3, 2, rng)
    >>> run = train_head(x, target, *init_head(5, 2, 2, rng), steps=4, lr=1.0,
    ...                  record_every=2)
    >>> training_explorer(run, x[0]).spec["params"][1]["bind"]["step"]
    2
    """
    cells, losses = training_grid(run, x_probe, is_causal=is_causal, scale=scale)
    recorded = [int(s) for s in run.recorded]
    every = recorded[1] - recorded[0] if len(recorded) > 1 else 1
    if any(b - a != every for a, b in zip(recorded, recorded[1:])):
        raise ValueError(f"the run must be recorded at evenly spaced steps (a slider's "
                         f"steps), got {recorded}")
    L = int(np.sqrt(len(cells) // len(recorded)))
    params = [_range("step", "gradient step", recorded[0], recorded[0], recorded[-1], every)]
    now = {"filter": "datum.s == step"}
    axes = {"x": {"field": "j", "type": "ordinal", "title": "key j",
                  "axis": {"labelAngle": 0, "orient": "top"}},
            "y": {"field": "i", "type": "ordinal", "title": "query i"}}
    weights_panel = {
        "name": "weights_panel", "title": "attention weights of a held-out sequence",
        "width": 240, "height": 240,
        "data": {"name": "cells"},
        "transform": [now],
        "layer": [
            {"mark": {"type": "rect", "stroke": {"expr": MUTED}, "strokeWidth": 0.5},
             "encoding": {**axes, "color": {
                 "field": "w", "type": "quantitative", "legend": None,
                 "scale": {"domain": [0, 1], "scheme": "blues"}}}},
            {"mark": {"type": "text", "fontSize": 11},
             "encoding": {**axes, "text": {"field": "w", "format": ".1f"},
                          "color": {"condition": {"test": "datum.w > 0.55",
                                                  "value": "#ffffff"},
                                    "value": "#1f1f1f"}}},
        ],
    }
    top = max(v["loss"] for v in losses)
    bottom = min(v["loss"] for v in losses)
    domain = [10 ** math.floor(math.log10(bottom)), 10 ** math.ceil(math.log10(top))]
    loss_panel = {
        "name": "loss_panel", "title": "training loss (nats)",
        "width": 240, "height": 240,
        "layer": [
            {"data": {"name": "losses"},
             "mark": {"type": "line", "color": {"expr": MARK}},
             "encoding": {"x": {"field": "s", "type": "quantitative",
                                "title": "gradient step"},
                          "y": {"field": "loss", "type": "quantitative", "title": "loss",
                                "scale": {"type": "log", "domain": domain}}}},
            {"name": "loss_now", "data": {"name": "losses"}, "transform": [now],
             "mark": {"type": "point", "filled": True, "size": 90,
                      "color": {"expr": ACCENT}},
             "encoding": {"x": {"field": "s", "type": "quantitative"},
                          "y": {"field": "loss", "type": "quantitative"}}},
            {"data": {"name": "losses"}, "transform": [now],
             "mark": {"type": "text", "align": "left", "dx": 8, "dy": -10},
             "encoding": {"x": {"field": "s", "type": "quantitative"},
                          "y": {"field": "loss", "type": "quantitative"},
                          "text": {"field": "loss", "format": ".3f"}}},
        ],
    }
    description = (f"The {L} by {L} attention weights of one held-out sequence at the "
                   "gradient step chosen by the slider (row i is query i, the causal mask "
                   "leaves the upper triangle at 0), and the training loss at every step "
                   "on a logarithmic axis, with the chosen step marked.")
    spec = _spec(description, params, {"cells": cells, "losses": losses},
                 {"hconcat": [weights_panel, loss_panel]})
    return Explorer(
        "training", "a head learning, step by step", description, spec,
        "The interactive chart needs the course's site or JupyterLab; the figures above "
        "show the weights before and after training, and the loss.")
