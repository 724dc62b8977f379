// The Run control of a chapter page (_ext/run_on_page.py, issue 44). Nothing is loaded until
// the button is pressed; then worker.js loads Pyodide from the site's own files and runs the
// chapter's code cells in order, each visible cell's new output replacing the build's (what
// a cell prints is shown as it is printed, as Jupyter shows it), and
// every visible code cell becomes editable with a Run button of its own (in the student
// edition, each exercise gains an answer cell).
"use strict";
(() => {
  const control = document.querySelector(".run-on-page[data-chapter]");
  if (!control) return;
  const button = control.querySelector(".run-on-page-button");
  const status = control.querySelector(".run-on-page-status");
  const base = control.dataset.static;
  let worker = null;
  let nextId = 0;
  const waiting = new Map();

  let saying = "";
  const say = (text) => { saying = text; status.textContent = text; };

  const cellOf = new Map();   // a run's id -> the cell's div, which shows what it prints

  function call(message, cellDiv) {
    return new Promise((resolve) => {
      const id = ++nextId;
      waiting.set(id, (data) => { cellOf.delete(id); resolve(data); });
      if (cellDiv) cellOf.set(id, cellDiv);
      worker.postMessage({ ...message, id });
    });
  }

  // What a cell prints while it runs, shown at once (as Jupyter shows it) in place of the
  // build's output; the cell's whole result replaces it when the cell ends.
  function streamed(cellDiv, text) {
    if (!cellDiv || !cellDiv.querySelector(".cell_input")) return;
    let pre = cellDiv.querySelector(":scope > .run-on-page-output.running > pre");
    if (!pre) {
      cellDiv.querySelectorAll(":scope > .cell_output").forEach((node) => { node.hidden = true; });
      const box = document.createElement("div");
      box.className = "cell_output docutils container run-on-page-output running";
      pre = document.createElement("pre");
      box.append(pre);
      cellDiv.append(box);
    }
    pre.textContent += text;
  }

  function startWorker(chapter) {
    return new Promise((resolve, reject) => {
      worker = new Worker(`${base}/worker.js`);
      worker.onmessage = ({ data }) => {
        // a package loaded before a cell ran: back to what was said before it
        if (data.type === "progress") status.textContent = data.resume ? saying : data.text;
        else if (data.type === "ready") resolve();
        else if (data.type === "stream") streamed(cellOf.get(data.id), data.text);
        else if (data.type === "failed" && !waiting.has(data.id)) reject(new Error(data.text));
        else if (waiting.has(data.id)) { waiting.get(data.id)(data); waiting.delete(data.id); }
      };
      worker.onerror = (event) => reject(new Error(event.message));
      worker.postMessage({ type: "init", static: new URL(base, location.href).href,
                           packages: chapter.packages, megabytes: chapter.megabytes,
                           later: chapter.later });
    });
  }

  function outputOf(result) {
    const box = document.createElement("div");
    box.className = "cell_output docutils container run-on-page-output";
    const text = (result.text || "") + (result.result != null ? result.result + "\n" : "");
    if (text) {
      const pre = document.createElement("pre");
      pre.textContent = text;
      box.append(pre);
    }
    for (const png of result.figures || []) {
      const img = document.createElement("img");
      img.src = `data:image/png;base64,${png}`;
      img.alt = "The figure this cell drew in your browser.";
      box.append(img);
    }
    if (result.error || result.type === "failed") {
      const pre = document.createElement("pre");
      pre.className = "run-on-page-error";
      pre.textContent = result.error || result.text;
      box.append(pre);
    }
    return box;
  }

  // A cell shows its new output in place of the build's; a cell whose value has a display of
  // its own (a question, an explorer) and a cell without input keep the build's.
  function show(cellDiv, result) {
    if (!cellDiv) return;
    if (result.rich) {   // the build's display stays (with what was printed, as it was)
      cellDiv.querySelectorAll(":scope > .run-on-page-output.running").forEach((n) => n.remove());
      cellDiv.querySelectorAll(":scope > .cell_output").forEach((node) => { node.hidden = false; });
      return;
    }
    if (!cellDiv.querySelector(".cell_input") && !result.error) return;
    cellDiv.querySelectorAll(":scope > .cell_output").forEach((node) => node.remove());
    const box = outputOf(result);
    if (box.childNodes.length) cellDiv.append(box);
  }

  function editable(cellDiv, source) {
    const input = cellDiv.querySelector(".cell_input");
    if (!input || input.querySelector("textarea")) return;
    const area = document.createElement("textarea");
    area.className = "run-on-page-editor";
    area.value = source;
    area.rows = Math.min(30, source.split("\n").length + 1);
    area.spellcheck = false;
    area.setAttribute("aria-label", "This cell's code, editable");
    const run = document.createElement("button");
    run.type = "button";
    run.className = "run-on-page-cell-run";
    run.textContent = "Run this cell";
    run.addEventListener("click", async () => {
      run.disabled = true;
      show(cellDiv, await call({ type: "run", code: area.value }, cellDiv));
      run.disabled = false;
    });
    input.replaceChildren(area, run);
  }

  function answerCells() {
    document.querySelectorAll("div.exercise").forEach((exercise, n) => {
      const holder = document.createElement("div");
      holder.className = "cell docutils container run-on-page-answer";
      const input = document.createElement("div");
      input.className = "cell_input docutils container";
      holder.append(input);
      exercise.after(holder);
      editable(holder, `# your answer to this exercise\n`);
    });
  }

  button.addEventListener("click", async () => {
    button.disabled = true;
    const style = document.createElement("link");
    style.rel = "stylesheet";
    style.href = `${base}/run_on_page.css`;
    document.head.append(style);
    try {
      const chapter = await (await fetch(`${base}/cells/${control.dataset.chapter}.json`)).json();
      await startWorker(chapter);
      const cells = chapter.cells;
      let errors = 0;
      for (const [n, cell] of cells.entries()) {
        say(`running cell ${n + 1} of ${cells.length}`);
        const cellDiv = document.querySelector(`div.run-cell-${cell.index}`);
        const result = await call({ type: "run", code: cell.source, needs: cell.needs }, cellDiv);
        if (result.error || result.type === "failed") errors += 1;
        show(cellDiv, result);
      }
      for (const cell of cells) {
        const div = document.querySelector(`div.run-cell-${cell.index}`);
        if (div) editable(div, cell.source);
      }
      if (control.dataset.student === "1") answerCells();
      say(`ran ${cells.length} cells in your browser` +
          (errors ? `, ${errors} with an error` : "") + ": edit any cell and run it again.");
    } catch (error) {
      say(`could not run the code here: ${error.message}`);
      button.disabled = false;
    }
  });
})();
