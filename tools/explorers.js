/* Draws the course's explorers (lib/explorers.py) with Vega-Embed, on the pages the
   Sphinx extension tools/explorers.py adds this script to (after vega, vega-lite and
   vega-embed, all served from the site's own _static/explorers/).

   Each <div class="explorer"> holds its Vega-Lite specification, every number included,
   in a <script type="application/json">; the chart and its controls (labelled native
   inputs, bound to the specification's params) replace the fallback note. The chart's
   colours follow the site's theme through the signal `dark`, set here from
   html[data-theme] and updated when the reader switches themes.

   For the browser tests: window.courseExplorers maps each explorer's name to
   {view, spec}, and window.courseExplorersReady settles once every chart is drawn. */
(() => {
  "use strict";
  const root = document.documentElement;
  const registry = (window.courseExplorers = {});
  const isDark = () => root.dataset.theme === "dark";

  async function draw(box) {
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
  window.courseExplorersReady = Promise.all(boxes.map((box) => draw(box).catch((err) => {
    console.error(`explorer ${box.dataset.explorer}: ${err}`);
  })));

  new MutationObserver(() => {
    for (const { view } of Object.values(registry)) view.signal("dark", isDark()).runAsync();
  }).observe(root, { attributes: true, attributeFilter: ["data-theme"] });
})();
