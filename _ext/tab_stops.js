/* Tab stops on the blocks that scroll: every page of the site (_ext/tab_stops.py).

   A code block, a cell's output or a table that is wider (or taller) than its box scrolls,
   and a keyboard can scroll it only if it can take the focus (axe: scrollable-region-
   focusable); one that does not scroll should not be a tab stop. pydata-sphinx-theme does
   this by measuring every such block when the page has loaded; on a notebook page that
   lays out the whole page at once, including the sections the browser would otherwise lay
   out only when they near the screen (_static/site.css: content-visibility), and it was
   the longest task a phone ran there. _ext/tab_stops.py leaves the theme's pass out, and
   this script applies the theme's rule, to the theme's list of blocks, lazily:

   - every block gets a tab stop at once (no measuring: cheap, and right for any block a
     keyboard reaches before it is measured);
   - once the browser lays a block out (as its section nears the screen, or a folded
     solution opens), it is measured, and again whenever its size changes (a narrower
     window, a chart drawn inside it): a tab stop if it scrolls, none if it does not. */
(() => {
  "use strict";
  const BLOCKS = [           // the theme's list (addTabStopsToScrollableElements)
    "pre", ".nboutput > .output_area", ".cell_output > .output",
    ".jp-RenderedHTMLCommon", ".pst-scrollable-table-container"].join(", ");

  const scrolls = (el) => el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight;
  // A ResizeObserver reports a block once it is laid out (a block in a section that the
  // browser has not laid out yet, or in a folded solution, has no size to report), then
  // whenever its size changes; observing forces no layout.
  const sizes = new ResizeObserver((entries) => {
    for (const { target } of entries) target.tabIndex = scrolls(target) ? 0 : -1;
  });
  for (const block of document.querySelectorAll(BLOCKS)) {
    block.tabIndex = 0;
    sizes.observe(block);
  }
})();
