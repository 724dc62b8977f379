/* Draws the course's explorers (lib/explorers.py) with Vega-Embed, on the pages the
   Sphinx extension _ext/explorers.py adds this script to. Vega, Vega-Lite and Vega-Embed
   are served from the site's own _static/explorers/, next to this file.

   Each <div class="explorer"> holds its Vega-Lite specification, every number included,
   in a <script type="application/json">; the chart and its controls (labelled native
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

  async function draw(box) {
    await loadLibraries();
    const spec = JSON.parse(box.querySelector("script.explorer-spec").textContent);
    const target = box.querySelector(".explorer-chart");
    const result = await vegaEmbed(target, spec, {
      actions: false,      // no export menu: it would offer to open another site
      renderer: "svg",     // text and ARIA attributes in the DOM
      tooltip: false,
    });
    const view = result.view;
    view.signal("dark", isDark());
    await view.runAsync();
    registry[box.dataset.explorer] = { view, spec };
    box.classList.add("explorer-ready");
  }

  const boxes = [...document.querySelectorAll("div.explorer")];
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
