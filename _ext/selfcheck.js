/* Answers back to the course's self-check questions (lib/selfcheck.py), in the browser,
   with no server, on the pages the Sphinx extension _ext/selfcheck.py adds this script to.

   Each <div class="selfcheck"> holds its question and options (typeset at build time), a
   form, a live region (role="status") for the verdict, the explanations and the answer,
   hidden, and its data in an inert <script type="application/json">: the expected answer
   (and tolerance), the keys of the classic wrong answers in the order of their
   explanations, and for a choice the right options. On "Check" (or Enter) the reader's
   answer is read as lib/selfcheck.py's parse_number and parse_shape read it, and the
   verdict, with the explanation that matches (the right one says why it is right; a
   classic wrong answer its own; any other the hint), is written into the live region, so
   a screen reader announces it. After a first try, "Show the answer" unfolds the answer.

   Predict, then see (issue 47): when the cell right after a question's cell is tagged
   `predict` (myst-nb gives it the class tag_predict), its output is folded until the
   question is answered right, its answer shown, or "Skip, show the output" pressed. The
   folding is done here, so without JavaScript the output simply shows.

   Progress: each question's state (answered right, answer shown, output skipped) is kept
   in the browser's localStorage, per page, and restored on coming back; at the page's end
   a status line says "answered 4 of 6" (right or shown), with a button that resets them. */
(() => {
  "use strict";
  const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

  function parseNumber(text) {   // as lib.selfcheck.parse_number
    const parts = text.trim().replace(/\u2212/g, "-").replace(/ /g, "").split("/");
    if (parts.length > 2 || !parts.every((p) => NUMBER.test(p))) return null;
    const values = parts.map(Number);
    if (values.length === 2) return values[1] === 0 ? null : values[0] / values[1];
    return values[0];
  }

  function parseShape(text) {    // as lib.selfcheck.parse_shape
    let t = text.trim();
    if ("([".includes(t[0] || "-") && ")]".includes(t[t.length - 1] || "-"))
      t = t.slice(1, -1).trim();
    t = t.replace(/,+$/, "").trim();
    if (!t) return null;
    const parts = t.split(/\s*(?:,|x|\u00d7|\*|\s)\s*/i);
    if (!parts.every((p) => /^\d+$/.test(p))) return null;
    return parts.map(Number);
  }

  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

  // The verdict: "correct", "wrong" or "unreadable", and the keys of the explanations.
  function grade(data, box) {
    if (data.kind === "number" || data.kind === "shape") {
      const text = box.querySelector(".selfcheck-input").value;
      if (data.kind === "number") {
        const x = parseNumber(text);
        if (x === null) return ["unreadable", [], "Type a number, such as 0.25 or 1/4."];
        if (Math.abs(x - data.answer) <= data.tol * (1 + 1e-9)) return ["correct", ["right"]];
        let best = -1;
        data.wrong.forEach((w, i) => {
          const d = Math.abs(x - w);
          if (d <= data.tol * (1 + 1e-9) && (best < 0 || d < Math.abs(x - data.wrong[best])))
            best = i;
        });
        return ["wrong", best >= 0 ? [`w${best}`] : data.hint ? ["hint"] : []];
      }
      const s = parseShape(text);
      if (s === null) return ["unreadable", [], "Type a shape, such as (2, 4, 3)."];
      if (same(s, data.answer)) return ["correct", ["right"]];
      const i = data.wrong.findIndex((w) => same(s, w));
      return ["wrong", i >= 0 ? [`w${i}`] : data.hint ? ["hint"] : []];
    }
    const chosen = [...box.querySelectorAll(".selfcheck-option input:checked")]
      .map((input) => Number(input.value)).sort((a, b) => a - b);
    if (!chosen.length) return ["unreadable", [], "Choose an option first."];
    if (same(chosen, data.correct)) return ["correct", ["right"]];
    const keys = data.wrong.map((w, i) => (chosen.includes(w) ? `w${i}` : null)).filter(Boolean);
    if (!keys.length && data.hint) keys.push("hint");
    const missing = data.correct.some((c) => !chosen.includes(c));
    return ["wrong", keys, keys.length ? "" : missing && data.correct.length > 1
      ? "Some right options are not chosen." : ""];
  }

  // ---- progress, kept in the browser (no server) --------------------------------------
  const STORE = `course-selfcheck:${globalThis.location ? location.pathname : ""}`;
  function loadStates() {
    try { return JSON.parse(localStorage.getItem(STORE) || "{}") || {}; } catch { return {}; }
  }
  let states = loadStates();
  function saveState(id, state) {
    if (state === "skipped" && states[id]) return;          // an answer outranks a skip
    states[id] = state;
    try { localStorage.setItem(STORE, JSON.stringify(states)); } catch { /* private mode */ }
    updateProgress();
  }
  const boxes = [];
  let progress = null;
  const answered = (id) => states[id] === "correct" || states[id] === "revealed";
  function updateProgress() {
    if (!progress) return;
    const done = boxes.filter((b) => answered(b.box.id)).length;
    progress.querySelector(".selfcheck-progress-count").textContent =
      `Self-checks on this page: answered ${done} of ${boxes.length}.`;
    progress.querySelector("button").hidden = !Object.keys(states).length;
  }

  // ---- predict, then see ---------------------------------------------------------------
  function predictOutput(box) {
    const cell = box.closest("div.cell");
    const next = cell && cell.nextElementSibling;
    if (!next || !next.matches("div.cell.tag_predict")) return null;
    return next.querySelector(":scope > div.cell_output");
  }

  function fold(entry) {
    const { box, output } = entry;
    if (!output || output.hidden) return;
    output.hidden = true;
    output.classList.add("selfcheck-folded");
    const note = document.createElement("div");
    note.className = "selfcheck-fold";
    const text = document.createElement("p");
    text.textContent = "The output of the next cell is folded: answer the question above " +
      "first, then see it.";
    const skip = document.createElement("button");
    skip.type = "button";
    skip.className = "selfcheck-skip";
    skip.textContent = "Skip, show the output";
    skip.setAttribute("aria-describedby", `${box.id}-label`);
    skip.addEventListener("click", () => {
      saveState(box.id, "skipped");
      unfold(entry, true);
    });
    note.append(text, skip);
    output.before(note);
    entry.note = note;
  }

  function unfold(entry, focus) {
    const { output } = entry;
    if (!output || !output.hidden) return;
    output.hidden = false;
    if (entry.note) entry.note.remove();
    entry.note = null;
    if (focus) {
      output.tabIndex = -1;
      output.focus();
    }
  }

  function setUp(box) {
    const data = JSON.parse(box.querySelector("script.selfcheck-data").textContent);
    const form = box.querySelector("form.selfcheck-form");
    const verdict = box.querySelector(".selfcheck-verdict");
    const reveal = box.querySelector(".selfcheck-reveal");
    const answer = box.querySelector(".selfcheck-answer");
    answer.tabIndex = -1;
    // a button another script adds inside the form (a copy button) never submits it and
    // is no Tab stop before Check
    for (const button of form.querySelectorAll("button:not(.selfcheck-check):not(.selfcheck-reveal)")) {
      button.type = "button";
      button.tabIndex = -1;
    }
    const entry = { box, form, verdict, reveal, answer, output: predictOutput(box), note: null };
    boxes.push(entry);
    fold(entry);

    form.addEventListener("submit", (event) => {
      event.preventDefault();
      // only Check (or Enter, whose submitter is Check) grades
      if (event.submitter && !event.submitter.matches(".selfcheck-check")) return;
      const [result, keys, note] = grade(data, box);
      const line = document.createElement("p");
      line.className = "selfcheck-verdict-line";
      const strong = document.createElement("strong");
      strong.textContent = { correct: "Correct.", wrong: "Not quite.",
                             unreadable: "Not an answer yet." }[result];
      line.append(strong);
      if (note) line.append(` ${note}`);
      else if (result === "wrong" && !keys.length)
        line.append(" Try again, or show the answer.");
      const parts = [line];
      for (const key of keys) {
        const source = box.querySelector(`.selfcheck-feedback[data-key="${key}"]`);
        const copy = document.createElement("div");
        copy.className = "selfcheck-explanation";
        copy.innerHTML = source.innerHTML;
        parts.push(copy);
      }
      verdict.replaceChildren(...parts);
      box.dataset.verdict = result;
      if (result === "wrong" && answer.hidden) reveal.hidden = false;
      if (result === "correct") {
        reveal.hidden = true;
        if (states[box.id] !== "revealed") saveState(box.id, "correct");
        unfold(entry, false);
      }
    });

    reveal.addEventListener("click", () => {
      answer.hidden = false;
      reveal.hidden = true;
      saveState(box.id, "revealed");
      unfold(entry, false);
      answer.focus();
    });
    restore(entry);
  }

  function restore(entry) {
    const state = states[entry.box.id];
    if (state === "correct") {
      const line = document.createElement("p");
      line.className = "selfcheck-verdict-line";
      const strong = document.createElement("strong");
      strong.textContent = "Answered right earlier.";
      line.append(strong);
      entry.verdict.replaceChildren(line);
      entry.box.dataset.verdict = "correct";
    } else if (state === "revealed") {
      entry.answer.hidden = false;
    }
    if (state) unfold(entry, false);
  }

  function reset() {
    states = {};
    try { localStorage.removeItem(STORE); } catch { /* private mode */ }
    for (const entry of boxes) {
      entry.form.reset();
      entry.verdict.replaceChildren();
      delete entry.box.dataset.verdict;
      entry.answer.hidden = true;
      entry.reveal.hidden = true;
      fold(entry);
    }
    updateProgress();
  }

  // At the page's end: how many of its questions are answered, and a reset.
  function addProgress() {
    if (!boxes.length) return;
    progress = document.createElement("div");
    progress.className = "selfcheck-progress";
    const count = document.createElement("p");
    count.className = "selfcheck-progress-count";
    count.setAttribute("role", "status");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = "Reset my answers on this page";
    button.addEventListener("click", () => { reset(); count.focus(); });
    count.tabIndex = -1;
    progress.append(count, button);
    const article = document.querySelector("article.bd-article") || document.querySelector("main")
      || document.body;
    article.append(progress);
    updateProgress();
  }

  // For the tests (tests/test_selfcheck.py runs the parsers in Node).
  window.courseSelfcheck = { parseNumber, parseShape };

  function start() {
    for (const box of document.querySelectorAll("div.selfcheck")) {
      try { setUp(box); } catch (error) { console.error("selfcheck", box.id, error); }
    }
    addProgress();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
