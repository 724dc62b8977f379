// Lighthouse over pages of the built site, one after the other, in one headless Chromium
// (scripts/audit.py runs AUDIT_JOBS of these at once, each on its share of the pages):
//   node scripts/audit.mjs ORIGIN OUTDIR PAGE...
// For each PAGE (a path relative to the site's root) writes OUTDIR/<page>.json, Lighthouse's
// report (its "lhr") less the screenshots, and prints one line with its four scores.
// Lighthouse's mobile settings: a phone's screen, simulated Slow 4G, and its CPU slowdown,
// 4x unless CPU_SLOWDOWN gives another (scripts/audit.py calibrates it to the machine).
// scripts/audit.py (`make audit`) serves the site, runs this, and checks the bars.
import fs from "node:fs";
import path from "node:path";
import lighthouse from "lighthouse";
import * as constants from "lighthouse/core/config/constants.js";
import * as chromeLauncher from "chrome-launcher";

const [origin, outdir, ...pages] = process.argv.slice(2);
if (!origin || !outdir || pages.length === 0) {
  console.error("usage: node scripts/audit.mjs ORIGIN OUTDIR PAGE...");
  process.exit(2);
}
const CATEGORIES = ["performance", "accessibility", "best-practices", "seo"];
const SLOWDOWN = Number(process.env.CPU_SLOWDOWN || 4);
const THROTTLING = { ...constants.throttling.mobileSlow4G, cpuSlowdownMultiplier: SLOWDOWN };
// Pictures nobody reads here, and no score uses: not taken at all (the full page's lays a
// long chapter out and paints it once more; chapters 4 and 7 took 0.7 and 2.2 s less each).
const BULKY = ["screenshot-thumbnails", "final-screenshot", "full-page-screenshot"];

const FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run"];
const launch = () => chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || "/usr/bin/chromium", chromeFlags: FLAGS,
});

// One page's report. A busy machine can make Chromium miss one of Lighthouse's protocol
// timeouts (a runtimeError), and Lighthouse can throw, or lose Chromium altogether: the page
// is tried once more, in a Chromium started afresh after a throw. Returns the lhr or null.
async function audit(page) {
  let lhr = null;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const result = await lighthouse(`${origin}/${page}`, {
        port: chrome.port, output: "json", logLevel: "error", onlyCategories: CATEGORIES,
        throttling: THROTTLING, skipAudits: BULKY, disableFullPageScreenshot: true,
      });
      lhr = result && result.lhr;
      if (lhr && !lhr.runtimeError) return lhr;
      console.error(`${page}: Lighthouse: ${lhr ? lhr.runtimeError.message : "no report"}`);
    } catch (error) {
      console.error(`${page}: Lighthouse threw: ${error && error.stack || error}`);
      try { await chrome.kill(); } catch { /* already gone */ }
      chrome = await launch();
    }
  }
  return null;
}

let chrome = await launch();
let failed = 0;
try {
  fs.mkdirSync(outdir, { recursive: true });
  for (const page of pages) {
    const started = Date.now();
    const lhr = await audit(page);
    if (!lhr) {
      failed += 1;
      console.error(`${page}: Lighthouse failed twice; no report`);
      continue;
    }
    for (const id of BULKY) delete lhr.audits[id];
    delete lhr.fullPageScreenshot;
    lhr.i18n = undefined;
    const file = path.join(outdir, page.replace(/\.html$/, "").replaceAll("/", "__") + ".json");
    fs.writeFileSync(file, JSON.stringify(lhr));
    const scores = CATEGORIES.map((c) => Math.round(100 * lhr.categories[c].score)).join(" ");
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const index = lhr.environment.benchmarkIndex;
    console.log(`${page}: ${scores} (${seconds} s; CPU ${SLOWDOWN}x, benchmark index ${index})`);
  }
} finally {
  await chrome.kill();
}
process.exit(failed ? 1 : 0);
