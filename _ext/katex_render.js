// The book's math, typeset at build time by KaTeX (the version pinned in package.json),
// for _ext/katex_math.py. One process serves a whole build: each line on stdin is a JSON
// request {"tex": "...", "display": true|false, "macros": {...}}, each line on stdout the
// answer {"html": "..."} (KaTeX's HTML for the eye and MathML for assistive technology),
// or {"error": "..."}; {"warnings": [...]} lists what KaTeX's strict mode noticed.
"use strict";
const readline = require("readline");
const katex = require("katex");

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  let answer;
  try {
    const request = JSON.parse(line);
    const warnings = [];
    const html = katex.renderToString(request.tex, {
      displayMode: Boolean(request.display),
      output: "htmlAndMathml",
      throwOnError: true,
      macros: { ...(request.macros || {}) },
      strict: (code, message) => { warnings.push(`${code}: ${message}`); return "ignore"; },
      trust: false,
    });
    answer = { html, warnings };
  } catch (err) {
    answer = { error: String(err && err.message ? err.message : err) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
