"""The explorers' data (lib/explorers.py): every number a chart can show is what the kernel
computes for that setting of the controls, the data stay small, and the specifications are
valid Vega-Lite that compute nothing themselves. The charts in a browser: tests/site/."""

import gzip
import html
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from lib import explorers as ex
from lib.attention import (causal_mask, memory_efficient_attention, padding_mask,
                           scaled_dot_product_attention, softmax)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "node_modules" / "vega-lite" / "build" / "vega-lite-schema.json"
ATOL = 1e-6   # what the browser tests allow; the data are rounded to 1e-7
BUILDERS = {"temperature": ex.temperature_explorer, "masks": ex.mask_explorer,
            "hull": ex.hull_explorer, "online": ex.online_softmax_explorer}


@pytest.fixture(scope="module")
def explorers():
    return {name: build() for name, build in BUILDERS.items()}


def expressions(node):
    """Every Vega expression string in a specification (filters, calculates, ExprRefs)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("expr", "filter", "calculate", "test") and isinstance(v, str):
                yield v
            else:
                yield from expressions(v)
    elif isinstance(node, list):
        for v in node:
            yield from expressions(v)


def test_temperature_grid_is_the_kernels_softmax(explorers):
    rows = explorers["temperature"].spec["datasets"]["temperature"]
    assert len(rows) == len(ex.TEMPERATURE_DIMS) * 2 * len(ex.TEMPERATURES)
    seen = set()
    for row in rows:
        E = 2 ** row["k"]
        T = row["t"] / 10
        query, key = ex.temperature_inputs(E)
        scale = (1 / math.sqrt(E) if row["d"] else 1.0) / T
        expected = softmax((key @ query[0]) * scale)
        np.testing.assert_allclose(row["w"], expected, atol=ATOL, rtol=0)
        assert row["max"] == pytest.approx(expected.max(), abs=ATOL)
        nz = expected[expected > 0]
        assert row["H"] == pytest.approx(-(nz * np.log(nz)).sum(), abs=ATOL)
        seen.add((row["k"], row["d"], row["t"]))
    assert len(seen) == len(rows)
    # the point of the chapter, visible in the grid: without the division, E = 1024 saturates
    top = {(r["k"], r["d"], r["t"]): r["max"] for r in rows}
    assert top[(10, 0, 10)] > 0.99 and top[(10, 1, 10)] < 0.9


def test_temperature_draw_is_fixed_and_depends_on_E():
    q1, k1 = ex.temperature_inputs(8)
    q2, k2 = ex.temperature_inputs(8)
    assert np.array_equal(q1, q2) and np.array_equal(k1, k2)
    assert not np.array_equal(ex.temperature_inputs(16)[0][:, :8], q1)
    with pytest.raises(ValueError, match="temperature"):
        ex.temperature_weights(8, True, 0.0)


def reference_mask(mode, p, L, S):
    if mode == "none":
        return np.ones((L, S), dtype=bool)
    if mode == "causal":
        return causal_mask(L, S)
    if mode == "padding":
        return np.repeat(padding_mask(np.array([p]), S), L, axis=0)
    i, j = np.indices((L, S))
    return (j <= i) & (j > i - p)


def test_mask_grid_is_the_kernels_weights(explorers):
    data = explorers["masks"].spec["datasets"]
    query, key, value = ex.mask_inputs()
    L, S = ex.MASK_L, ex.MASK_S
    settings = {(c["mode"], c["p"]) for c in data["masks"]}
    assert settings == set(ex._mask_settings())
    for mode, p in settings:
        cells = [c for c in data["masks"] if c["mode"] == mode and c["p"] == p]
        assert len(cells) == L * S
        mask = np.zeros((L, S), dtype=bool)
        weights = np.full((L, S), np.nan)
        for c in cells:
            mask[c["i"], c["j"]] = c["m"]
            weights[c["i"], c["j"]] = c["w"]
        assert np.array_equal(mask, reference_mask(mode, p, L, S)), (mode, p)
        _, expected = scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                                   return_weights=True)
        np.testing.assert_allclose(weights, expected, atol=ATOL, rtol=0)
        assert np.all(weights[~mask] == 0)
        sums = {r["i"]: r["sum"] for r in data["mask_rows"] if r["mode"] == mode and r["p"] == p}
        expected_sums = np.where(mask.any(axis=1), 1.0, 0.0)   # an empty row: zeros
        np.testing.assert_allclose([sums[i] for i in range(L)], expected_sums, atol=ATOL)
    assert ("padding", 0) in settings   # the fully masked case is on the grid


def test_explorer_mask_rejects_bad_settings():
    with pytest.raises(ValueError, match="mode"):
        ex.explorer_mask("diagonal")
    with pytest.raises(ValueError, match="width"):
        ex.explorer_mask("window", 0)
    with pytest.raises(ValueError):
        ex.explorer_mask("padding", ex.MASK_S + 1)


def test_hull_grid_is_the_kernels_output(explorers):
    data = explorers["hull"].spec["datasets"]
    key, value = ex.hull_inputs()
    assert [(c["x"], c["y"]) for c in data["corners"]] == [tuple(v) for v in value]
    rows = data["outputs"]
    assert len(rows) == len(ex.HULL_ANGLES) * len(ex.HULL_LENGTHS)
    for row in rows:
        theta = math.radians(row["a"])
        query = row["r"] * np.array([[math.cos(theta), math.sin(theta)]])
        out, w = scaled_dot_product_attention(query, key, value, return_weights=True)
        np.testing.assert_allclose([row["x"], row["y"]], out[0], atol=ATOL, rtol=0)
        np.testing.assert_allclose(row["w"], w[0], atol=ATOL, rtol=0)
        # the weights are the output's barycentric coordinates: inside the triangle
        np.testing.assert_allclose(np.array(row["w"]) @ value, out[0], atol=ATOL)
        assert min(row["w"]) >= 0


def test_online_steps_end_at_the_kernels_output(explorers):
    data = explorers["online"].spec["datasets"]
    query, key, value, B = ex.online_inputs()
    z = (query @ key.T)[0] / math.sqrt(query.shape[1])
    np.testing.assert_allclose([s["z"] for s in data["scores"]], z, atol=ATOL)
    assert [s["blk"] for s in data["scores"]] == [j // B for j in range(len(z))]
    states = data["state"]
    assert [s["b"] for s in states] == list(range(1, len(z) // B + 1))
    for s in states:
        n = s["b"] * B
        assert s["m"] == pytest.approx(z[:n].max(), abs=ATOL)
        # acc / ell after b blocks is attention over the keys read so far ...
        np.testing.assert_allclose(
            s["o"], scaled_dot_product_attention(query, key[:n], value[:n])[0], atol=ATOL)
        # ... and ell = sum_j exp(z_j - m) over them
        assert s["ell"] == pytest.approx(np.exp(z[:n] - z[:n].max()).sum(), abs=ATOL)
    assert np.all(np.diff([s["m"] for s in states]) >= 0)
    assert len({s["m"] for s in states}) >= 2, "the running maximum should move"
    full = scaled_dot_product_attention(query, key, value)[0]
    np.testing.assert_allclose(data["final"][0]["o"], full, atol=ATOL)
    np.testing.assert_allclose(states[-1]["o"], full, atol=ATOL)
    np.testing.assert_allclose(
        data["final"][0]["o"], memory_efficient_attention(query, key, value, block_size=B)[0],
        atol=ATOL)


@pytest.mark.parametrize("name", BUILDERS)
def test_data_are_small(explorers, name):
    """The page's weight: the JavaScript is about 280 KB gzipped; the data must stay
    well below the remaining 120 KB of the README's budget of 400 KB per page."""
    body = explorers[name].to_json().encode()
    assert len(body) < 150_000
    assert len(gzip.compress(body, 6)) < 60_000


@pytest.mark.parametrize("name", BUILDERS)
def test_the_browser_only_selects(explorers, name):
    """No softmax in the specification: no exponential, logarithm or sum in any Vega
    expression, and no aggregation; the data hold every number."""
    spec = explorers[name].spec
    for expr in expressions(spec):
        assert not re.search(r"\b(exp|log|pow\s*\(\s*E\b|sum)\s*\(", expr), expr
    text = json.dumps(spec)
    assert '"aggregate"' not in text and '"joinaggregate"' not in text


@pytest.mark.parametrize("name", BUILDERS)
def test_controls_are_labelled_native_inputs(explorers, name):
    spec = explorers[name].spec
    params = {p["name"]: p for p in spec["params"]}
    assert params.pop("dark") == {"name": "dark", "value": False}
    assert params, "an explorer has controls"
    for p in params.values():
        assert p["bind"]["input"] in ("range", "checkbox", "select")
        assert p["bind"]["name"].strip(), f"{p['name']} has no label"
    assert len(spec["description"]) > 60   # the chart's text alternative


@pytest.mark.parametrize("name", BUILDERS)
def test_jupyter_gets_the_chart_without_the_html_it_would_prefer(explorers, name, monkeypatch):
    monkeypatch.delenv(ex.SITE_BUILD_ENV, raising=False)
    assert sorted(explorers[name]._repr_mimebundle_()) == [ex.JUPYTER_MIME, "text/plain"]


@pytest.mark.parametrize("name", BUILDERS)
def test_display_in_jupyter_and_on_the_site(explorers, name, monkeypatch):
    e = explorers[name]
    monkeypatch.setenv(ex.SITE_BUILD_ENV, "1")  # as _ext/explorers.py sets it for the build
    bundle = e._repr_mimebundle_()
    # nbval compares a fixed line of text
    assert bundle["text/plain"] == repr(e) and "\n" not in bundle["text/plain"]
    # JupyterLab's own renderer (Vega-Lite 5) gets the same chart
    jl = bundle[ex.JUPYTER_MIME]
    assert jl["$schema"] == ex.JUPYTER_VEGA_LITE_SCHEMA
    assert {k: v for k, v in jl.items() if k != "$schema"} == {
        k: v for k, v in e.spec.items() if k != "$schema"}
    # the site's HTML: a fallback note, and the specification in an inert script
    page = bundle["text/html"]
    assert page.startswith(f'<div class="explorer" id="explorer-{name}"')
    assert 'class="explorer-fallback"' in page
    inner = re.search(r'<script type="application/json" class="explorer-spec">(.*?)</script>',
                      page, re.S)[1]
    assert json.loads(inner) == e.spec
    assert html.escape(e.description) in page
    # an ARIA name only where there is a role: the chart's container gets both from Vega
    # when it draws (the description above is the specification's), not before
    for tag in re.findall(r"<[a-z][^>]*>", page):
        if "aria-label=" in tag or "aria-labelledby=" in tag:
            assert "role=" in tag, tag


@pytest.mark.skipif(not SCHEMA.exists(), reason="node_modules/ not installed (npm ci)")
@pytest.mark.parametrize("name", BUILDERS)
def test_specification_is_valid_vega_lite(explorers, name):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = [e.message[:200] for e in validator.iter_errors(explorers[name].spec)]
    assert not errors, errors


def test_the_site_build_sets_the_variable_the_explorers_read():
    # _ext/explorers.py cannot import lib (Sphinx loads it alone): the name is written twice
    source = (Path(__file__).resolve().parents[1] / "_ext" / "explorers.py").read_text()
    assert f'os.environ["{ex.SITE_BUILD_ENV}"] = "1"' in source


# ------------------------------------------------------------------ chapter 9: training
def _training_run():
    """A small run of chapter 9's task, recorded every 5 steps, and a probe sequence."""
    from lib.training import init_head, previous_token_task, train_head
    rng = np.random.default_rng(909)
    x, _, target = previous_token_task(16, 5, 4, rng)
    probe, _, _ = previous_token_task(1, 5, 4, rng)
    w = init_head(9, 4, 4, rng, std=1 / np.sqrt(2))
    return train_head(x, target, *w, steps=60, lr=4.0, record_every=5), probe[0]


@pytest.fixture(scope="module")
def training():
    run, probe = _training_run()
    return run, probe, ex.training_explorer(run, probe)


def test_training_grid_is_the_heads_weights_at_every_recorded_step(training):
    from lib.training import head_attention
    run, probe, explorer = training
    cells = explorer.spec["datasets"]["cells"]
    assert len(cells) == len(run.recorded) * 5 * 5
    by_step = {}
    for c in cells:
        by_step.setdefault(c["s"], np.zeros((5, 5)))[c["i"], c["j"]] = c["w"]
    assert sorted(by_step) == list(run.recorded)
    for step, weights in zip(run.recorded, run.weights):
        _, expected = head_attention(probe, *weights, is_causal=True, return_weights=True)
        np.testing.assert_allclose(by_step[step], expected, atol=ATOL, rtol=0)
    # the point of the chapter, visible in the grid: the previous-token pattern appears
    i = np.arange(1, 5)
    assert by_step[run.recorded[-1]][i, i - 1].min() > by_step[0][i, i - 1].max()


def test_training_losses_are_the_runs_at_every_step(training):
    run, _, explorer = training
    losses = explorer.spec["datasets"]["losses"]
    assert [row["s"] for row in losses] == list(range(len(run.losses)))
    np.testing.assert_allclose([row["loss"] for row in losses], run.losses, atol=ATOL)


def test_training_slider_walks_the_recorded_steps(training):
    run, _, explorer = training
    bind = {p["name"]: p for p in explorer.spec["params"]}["step"]["bind"]
    assert (bind["min"], bind["max"], bind["step"]) == (0, run.recorded[-1], 5)
    assert bind["input"] == "range" and bind["name"].strip()


def test_training_explorer_rejects_uneven_records_and_a_batch_probe():
    from lib.training import TrainingRun
    run, probe = _training_run()
    uneven = TrainingRun(run.losses, run.weights[:3], np.array([0, 5, 15]))
    with pytest.raises(ValueError, match="evenly spaced"):
        ex.training_explorer(uneven, probe)
    with pytest.raises(ValueError, match=r"\(L, D\)"):
        ex.training_explorer(run, probe[None])


def test_training_explorer_is_small_selects_only_and_valid(training, monkeypatch):
    explorer = training[2]
    body = explorer.to_json().encode()
    assert len(body) < 150_000 and len(gzip.compress(body, 6)) < 60_000
    for expr in expressions(explorer.spec):
        assert not re.search(r"\b(exp|log|pow\s*\(\s*E\b|sum)\s*\(", expr), expr
    assert '"aggregate"' not in json.dumps(explorer.spec)
    assert len(explorer.spec["description"]) > 60
    monkeypatch.setenv(ex.SITE_BUILD_ENV, "1")
    page = explorer._repr_mimebundle_()["text/html"]
    assert page.startswith('<div class="explorer" id="explorer-training"')
    if SCHEMA.exists():
        jsonschema = pytest.importorskip("jsonschema")
        schema = json.loads(SCHEMA.read_text())
        validator = jsonschema.validators.validator_for(schema)(schema)
        errors = [e.message[:200] for e in validator.iter_errors(explorer.spec)]
        assert not errors, errors
