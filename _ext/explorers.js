/* Draws the course's explorers (lib/explorers.py) with Vega-Embed, on the pages the
   Sphinx extension _ext/explorers.py adds this script to. Vega, Vega-Lite and Vega-Embed
   are served from the site's own _static/explorers/, next to this file.

   Each <div class="explorer"> names its Vega-Lite specification, every number included,
   in a <script type="application/json" data-src> (the build moves it out of the page into
   _static/explorers/data/; in a page written without the build it is inline); the chart and its controls (labelled native
   inputs, bound to the specification's params) replace the fallback note. The chart's
   colours follow the site's theme through the signal `dark`, set here from
   html[data-theme] and updated when the reader switches themes.

   Nothing is loaded or drawn while the page loads: the three libraries (about 280 KB
   gzip, and the longest task a phone would run on these pages) are fetched, and a chart
   drawn, only when an explorer comes within LOOKAHEAD of the screen, so it is ready by
   the time the reader scrolls to it.

   For the browser tests: window.courseExplorers maps each drawn explorer's name to
   {view, spec}, and window.courseExplorersReady settles once every chart on the page is
   drawn (that is, once the reader has come near each of them). */
(() => {
  "use strict";
  const root = document.documentElement;
  const here = document.currentScript.src;
  const LIBRARIES = ["vega.min.js", "vega-lite.min.js", "vega-embed.min.js"];  // this order
  const LOOKAHEAD = "1500px 0px";      // about two phone screens above and below
  const SECTION = ".bd-article > section > section";
  const registry = (window.courseExplorers = {});
  const isDark = () => root.dataset.theme === "dark";

  let libraries = null;
  function loadLibraries() {   // once; async = false runs them in the order inserted
    libraries ??= Promise.all(LIBRARIES.map((name) => new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = new URL(name, here).href;
      script.async = false;
      script.onload = resolve;
      script.onerror = () => reject(new Error(`could not load ${script.src}`));
      document.head.append(script);
    })));
    return libraries;
  }

  // A phone (issue 28): the chart is laid out for the column it is drawn in rather than
  // scaled down (its text was 6.6 to 8.9 px at 390 px): panels side by side are stacked,
  // and a panel wider than the column is narrowed, so the text keeps its size (at least
  // MIN_FONT px). AXES is the room a panel's axis labels and titles take beside it.
  const AXES = 100;
  const MIN_FONT = 13;
  function fitted(spec, room) {
    const narrow = (node) => {
      if (!node || typeof node !== "object") return;
      if (typeof node.width === "number" && node.width > room - AXES)
        node.width = Math.max(120, room - AXES);
      for (const key of ["hconcat", "vconcat", "layer"]) (node[key] || []).forEach(narrow);
    };
    const wide = (node) => (node.hconcat || []).reduce(
      (sum, n) => sum + (typeof n.width === "number" ? n.width : 200) + AXES, 0);
    if (spec.hconcat && wide(spec) > room) {
      spec.vconcat = spec.hconcat;
      delete spec.hconcat;
    }
    narrow(spec);
    const config = spec.config || (spec.config = {});
    for (const part of ["axis", "legend", "title", "text"]) {
      const c = config[part] || (config[part] = {});
      for (const key of ["fontSize", "labelFontSize", "titleFontSize"])
        if (key in c && c[key] < MIN_FONT) c[key] = MIN_FONT;
    }
    (function marks(node) {
      if (!node || typeof node !== "object") return;
      if (node.mark && typeof node.mark === "object" && node.mark.fontSize < MIN_FONT)
        node.mark.fontSize = MIN_FONT;
      for (const key of ["hconcat", "vconcat", "layer"]) (node[key] || []).forEach(marks);
    })(spec);
    return spec;
  }

  async function draw(box) {
    // the specification, with its data, is a file of its own (_ext/explorers.py), fetched
    // with the libraries; a page written without the build keeps it inline
    const inline = box.querySelector("script.explorer-spec");
    const [, spec] = await Promise.all([loadLibraries(), inline.dataset.src
      ? fetch(new URL(inline.dataset.src, document.baseURI)).then((r) => {
        if (!r.ok) throw new Error(`could not load ${inline.dataset.src}: ${r.status}`);
        return r.json();
      })
      : JSON.parse(inline.textContent)]);
    const target = box.querySelector(".explorer-chart");
    if (target.clientWidth < 560) fitted(spec, target.clientWidth - 2 * (spec.padding || 0));
    const result = await vegaEmbed(target, spec, {
      actions: false,      // no export menu: it would offer to open another site
      renderer: "svg",     // text and ARIA attributes in the DOM
      tooltip: false,
    });
    const view = result.view;
    view.signal("dark", isDark());
    await view.runAsync();
    registry[box.dataset.explorer] = { view, spec };
    speak(box, view, spec);
    box.classList.add("explorer-ready");
  }

  // For a screen reader (issue 28): each control is named by its label alone (the label
  // Vega-Embed writes also holds the live value, so every step renamed the control), says
  // its value in words (aria-valuetext: "E = 64", not "6"), and switches the mask to the
  // kind it sets. The chart is one image named by the explorer's title and described by a
  // live line of text that says what it shows now, read from the view's own data (not its
  // 150 graphics nodes, read as a run of numbers).
  const fixed = (x, n = 2) => Number(x).toFixed(n);
  const VALUE_TEXT = {
    step: (v) => `step ${v}`,
    log2E: (v) => `E = ${2 ** v}`,
    T: (v) => `T = ${fixed(v, 1)}`,
    angle: (v) => `${v} degrees`,
    query_length: (v) => `length ${v}`,
    true_length: (v) => `${v} of 6 keys`,
    window_width: (v) => `${v} keys`,
    blocks: (v) => `${v} blocks`,
  };
  // Moving a slider of the masks explorer chooses the mask it belongs to (it did nothing
  // under the default, causal, and said nothing).
  const SETS_MASK = { true_length: "padding", window_width: "window" };
  const MASK_NAMES = { none: "no mask", causal: "causal mask", padding: "padding mask",
                       window: "sliding window" };
  const SUMMARIES = {
    training: (d, s) => {
      const rows = {};
      for (const c of d.weights_panel_layer_0_marks) (rows[c.i] ??= []).push(c);
      const prev = Object.keys(rows).filter((i) => i > 0).sort((a, b) => a - b)
        .map((i) => fixed(rows[i].find((c) => c.j == i - 1).w));
      const [now] = d.loss_now_marks;
      return `step ${s("step")}: loss ${fixed(now.loss, 3)}; weight of each query on ` +
        `the previous token ${prev.join(", ")}.`;
    },
    temperature: (d, s) => {
      const w = d.weights_marks.sort((a, b) => a.key - b.key).map((x) => fixed(x.weight));
      const [row] = d.numbers_layer_0_marks;
      return `E = ${row.E}, scores ${s("divide") ? "divided" : "not divided"} by √E, ` +
        `T = ${fixed(row.T, 1)}: weights of the ${w.length} keys ${w.join(", ")}; ` +
        `largest ${fixed(row.max)}.`;
    },
    masks: (d, s) => {
      const rows = {};
      for (const c of d.weights_panel_layer_0_marks) (rows[c.i] ??= []).push(c);
      const keys = Object.keys(rows).sort((a, b) => a - b)
        .map((i) => rows[i].filter((c) => c.m).length);
      const sums = d.sums_panel_marks.sort((a, b) => a.i - b.i).map((r) => fixed(r.sum));
      const mask = s("mask");
      const p = mask === "padding" ? `, true length ${s("true_length")}`
        : mask === "window" ? `, width ${s("window_width")}` : "";
      return `${MASK_NAMES[mask]}${p}: keys each query may attend ${keys.join(", ")}; ` +
        `row sums of the weights ${sums.join(", ")}.`;
    },
    hull: (d) => {
      const [o] = d.output_marks;
      const a = d.barycentric_layer_0_marks.sort((x, y) => x.n - y.n).map((x) => fixed(x.weight));
      return `output o = (${fixed(o.x)}, ${fixed(o.y)}); weights a = (${a.join(", ")}).`;
    },
    online: (d) => {
      const [st] = d.state_numbers_layer_0_marks;
      const [m] = d.running_max_marks;
      const out = d.output_layer_0_marks.sort((x, y) => x.feature - y.feature)
        .map((x) => fixed(x.value));
      return `after ${st.b} block${st.b === 1 ? "" : "s"}: running maximum ${fixed(m.m)}, ` +
        `ℓ = ${fixed(st.ell)}, acc / ℓ = (${out.join(", ")}).`;
    },
  };

  function markData(view, spec) {
    const from = {};
    (function walk(ms) {
      for (const m of ms || []) {
        if (m.from && m.from.data) from[m.name] = m.from.data;
        walk(m.marks);
      }
    })(vegaLite.compile(spec).spec.marks);
    const out = {};
    for (const [mark, data] of Object.entries(from))
      out[mark] = view.data(data).map((x) => ({ ...x }));
    return out;
  }

  function speak(box, view, spec) {
    const name = box.dataset.explorer;
    const title = box.querySelector(".explorer-title")?.textContent.trim() || name;
    let live = box.querySelector(".explorer-now");
    if (!live) {
      live = document.createElement("p");
      live.className = "explorer-now";
      live.id = `${box.id}-now`;
      live.setAttribute("aria-live", "polite");
      box.querySelector(".explorer-chart").after(live);
    }
    const inputs = [...box.querySelectorAll(".vega-bind input, .vega-bind select")];
    for (const input of inputs) {
      const bind = input.closest(".vega-bind");
      const label = bind.querySelector(".vega-bind-name")?.textContent.trim();
      if (label) input.setAttribute("aria-label", label);
      bind.querySelector(".vega-bind-value")?.setAttribute("aria-hidden", "true");
    }
    const update = () => {
      for (const input of inputs) {
        const text = VALUE_TEXT[input.name] || String;
        if (input.type === "range") input.setAttribute("aria-valuetext", text(view.signal(input.name)));
      }
      const svg = box.querySelector(".explorer-chart svg");
      const chart = box.querySelector(".explorer-chart [role='graphics-document']") || svg;
      for (const el of [chart, svg]) {
        if (!el) continue;
        el.setAttribute("role", "img");
        el.setAttribute("aria-label", `Chart: ${title.replace(/^Explorer:\s*/, "")}`);
        el.setAttribute("aria-describedby", live.id);
      }
      const summary = SUMMARIES[name];
      if (summary) {
        try { live.textContent = summary(markData(view, spec), (k) => view.signal(k)); }
        catch (err) { console.error(`explorer ${name}: summary: ${err}`); }
      }
    };
    for (const input of inputs) {
      const mode = SETS_MASK[input.name];
      if (mode) input.addEventListener("input", () => {
        if (view.signal("mask") !== mode) view.signal("mask", mode).runAsync();
      });
    }
    for (const input of inputs) input.addEventListener("input", () => view.runAsync().then(update));
    for (const input of inputs) input.addEventListener("change", () => view.runAsync().then(update));
    update();
  }

  const boxes = [...document.querySelectorAll("div.explorer")];
  // Opened from disk (file://), the browser refuses to fetch a chart's data: its note says
  // how to read the page served instead (the page's own line says it too: file_notice.py).
  if (location.protocol === "file:") {
    for (const note of document.querySelectorAll("div.explorer .explorer-fallback")) {
      const code = document.createElement("code");
      code.textContent = "make serve";
      note.replaceChildren("Opened from a file, this page cannot draw the interactive chart: "
        + "in the course's folder, run ", code, " and open the address it prints.");
    }
  }
  const near = new Map(boxes.map((box) => {
    let start;
    const started = new Promise((resolve) => { start = resolve; });
    return [box, { start, drawn: started.then(() => draw(box)).catch((err) => {
      console.error(`explorer ${box.dataset.explorer}: ${err}`);
    }) }];
  }));
  // What is watched is the explorer's section of the article: the site lets the browser
  // skip laying out a section until it nears the screen (_static/site.css,
  // content-visibility), and an element inside a skipped section is not reliably reported
  // when it comes near; the section itself always has its box.
  const watched = new Map();   // section (or explorer) -> the explorers in it
  for (const box of boxes) {
    const target = box.closest(SECTION) ?? box;
    watched.set(target, [...(watched.get(target) ?? []), box]);
  }
  const watcher = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      watcher.unobserve(entry.target);
      for (const box of watched.get(entry.target)) near.get(box).start();
    }
  }, { rootMargin: LOOKAHEAD });
  for (const target of watched.keys()) watcher.observe(target);
  window.courseExplorersReady = Promise.all([...near.values()].map((n) => n.drawn));

  new MutationObserver(() => {
    for (const { view } of Object.values(registry)) view.signal("dark", isDark()).runAsync();
  }).observe(root, { attributes: true, attributeFilter: ["data-theme"] });
})();
