// The site's stylesheet bundle without the rules no page can use, for
// _ext/stylesheet_bundle.py: PurgeCSS (pinned in package.json) keeps a rule only when a word
// of its selector appears in a built page or in one of the site's scripts, which add classes
// and attributes as the reader acts (Bootstrap's `show`, the theme's `data-theme`).
//
//     node _ext/purge_bundle.js OUTDIR BUNDLE
//
// reads OUTDIR/_static/BUNDLE and writes it back purged; prints one JSON line, the sizes
// before and after and the selectors it removed. The bundle was 492 KB, 76 KB gzip, and two
// thirds of it were rules no page uses (most of them Bootstrap's, for forms, tables, cards
// and the like): a phone downloads and matches it before it paints anything.
"use strict";
const fs = require("fs");
const path = require("path");
const { PurgeCSS } = require("purgecss");

// Attributes the scripts set or change (the colour mode, a menu's state, Popper's placement,
// an opened <details>): selectors on them are kept whatever their value.
const DYNAMIC_ATTRIBUTES = [
  "data-theme", "data-mode", "data-bs-popper", "data-popper-placement", "aria-expanded",
  "aria-selected", "aria-current", "aria-hidden", "aria-pressed", "open", "hidden", "disabled",
];
// Classes a script builds from pieces, so that no script holds the whole word: Bootstrap's
// tooltips are `bs-tooltip-${placement}` (bootstrap.js: `bs-${this.constructor.NAME}-auto`).
const SAFELIST = { standard: [/^bs-tooltip-/], greedy: [/bs-tooltip-/] };

async function main() {
  const [outdir, bundle] = process.argv.slice(2);
  const file = path.join(outdir, "_static", bundle);
  const before = fs.readFileSync(file, "utf8");
  // Forward slashes: PurgeCSS's globs (fast-glob) do not read backslashes as separators.
  const root = outdir.split(path.sep).join("/");
  const [result] = await new PurgeCSS().purge({
    content: [`${root}/**/*.html`, `${root}/_static/**/*.js`],
    // Vega's 840 KB of scripts draw SVG into the explorers and style it themselves, and the
    // theme's fontawesome.js is never loaded (_ext/icons.py): their words would only keep
    // unused rules alive.
    skippedContentGlobs: [`${root}/_static/explorers/vega*.js`, `${root}/_static/scripts/fontawesome.js`],
    css: [{ raw: before, name: bundle }],
    dynamicAttributes: DYNAMIC_ATTRIBUTES,
    safelist: SAFELIST,
    // @font-face and @keyframes go when no kept rule uses them; custom properties stay
    // (explorers.css and icons.css, outside the bundle, use the theme's).
    fontFace: true,
    keyframes: true,
    variables: false,
    rejected: true,
  });
  fs.writeFileSync(file, result.css);
  process.stdout.write(JSON.stringify({
    before: Buffer.byteLength(before), after: Buffer.byteLength(result.css),
    rejected: result.rejected || [],
  }) + "\n");
}

main().catch((err) => {
  process.stderr.write(`_ext/purge_bundle.js: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
