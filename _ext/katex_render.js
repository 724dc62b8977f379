// The book's math, typeset at build time by KaTeX (the version pinned in package.json),
// for _ext/katex_math.py. One process serves a whole build: each line on stdin is a JSON
// request {"tex": "...", "display": true|false, "macros": {...}}, each line on stdout the
// answer {"html": "...", "speech": "..."} (KaTeX's HTML for the eye and MathML for
// assistive technology), or {"error": "..."}; {"warnings": [...]} lists what KaTeX's strict
// mode noticed.
//
// Spoken math (issue 48): screen readers read KaTeX's presentation MathML token by token
// ("s, o, f, t, m, a, x"). The Speech Rule Engine (pinned in package.json), run here once
// per formula, turns the MathML into English (ClearSpeak rules: "A equals softmax of ...");
// the string goes on the <math> element as its aria-label, the name screen readers speak,
// while KaTeX's HTML stays hidden from them (aria-hidden, as KaTeX writes it).
"use strict";
const readline = require("readline");
const katex = require("katex");
const sre = require("speech-rule-engine");

const ready = sre
  .setupEngine({ locale: "en", domain: "clearspeak", style: "default", modality: "speech" })
  .then(() => sre.engineReady());

const TRANSPOSE = '<mi mathvariant="normal">⊤</mi>';

// KaTeX writes X^\top as <msup>X<mi>⊤</mi></msup>, which ClearSpeak reads "X raised to the
// normal down tack power"; spoken, it is "X transpose". Only the copy given to the engine is
// rewritten: <msup>X ⊤</msup> -> <mrow>X transpose</mrow>, <msubsup>X i ⊤</msubsup> ->
// <mrow><msub>X i</msub> transpose</mrow>.
function transposeSpoken(mathml) {
  for (const closing of ["</msup>", "</msubsup>"]) {
    const name = closing.slice(2, -1);
    let at;
    while ((at = mathml.indexOf(TRANSPOSE + closing)) >= 0) {
      // the element's opening tag: walk back over the tags of the same name
      const tags = [...mathml.slice(0, at).matchAll(new RegExp(`<(/?)${name}\\b[^>]*>`, "g"))];
      let depth = 0, open = null;
      for (let i = tags.length - 1; i >= 0; i--) {
        if (tags[i][1]) depth += 1;
        else if (depth === 0) { open = tags[i]; break; }
        else depth -= 1;
      }
      if (open === null) return mathml;
      const inner = mathml.slice(open.index + open[0].length, at);
      const base = name === "msup" ? inner : `<msub>${inner}</msub>`;
      mathml = mathml.slice(0, open.index) + `<mrow>${base}<mi>transpose</mi></mrow>` +
        mathml.slice(at + TRANSPOSE.length + closing.length);
    }
  }
  return mathml;
}

// KaTeX writes the thin spaces (\!, \,) as <mtext> of spaces and invisible separators, which
// the engine reads as "comma": dropped from its copy.
const BLANK_TEXT = /<mtext>[\s\u00a0\u2000-\u200b\u205f\u2061-\u2064]*<\/mtext>/g;

function spoken(mathml) {
  return sre.toSpeech(transposeSpoken(mathml.replace(BLANK_TEXT, ""))).trim();
}

const MATH = /<math\b[^>]*>[\s\S]*?<\/math>/;

function escapeAttribute(text) {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
}

function answer(line) {
  try {
    const request = JSON.parse(line);
    const warnings = [];
    let html = katex.renderToString(request.tex, {
      displayMode: Boolean(request.display),
      output: "htmlAndMathml",
      throwOnError: true,
      macros: { ...(request.macros || {}) },
      strict: (code, message) => { warnings.push(`${code}: ${message}`); return "ignore"; },
      trust: false,
    });
    const math = html.match(MATH);
    const speech = math ? spoken(math[0]) : "";
    if (math && speech) {
      html = html.replace("<math", `<math aria-label="${escapeAttribute(speech)}"`);
    }
    return { html, speech, warnings };
  } catch (err) {
    return { error: String(err && err.message ? err.message : err) };
  }
}

// lines are answered in order, once the engine's rules are loaded
let queue = ready;
const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  queue = queue.then(() => { process.stdout.write(JSON.stringify(answer(line)) + "\n"); });
});
