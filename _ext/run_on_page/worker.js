// The run-on-page Web Worker (issue 44; _ext/run_on_page.py): Pyodide and the chapter's
// packages from the site's own _static/pyodide/, the course's lib/ from lib.zip, then one
// cell at a time through driver.py. Messages in: {type: "init", static, packages} and
// {type: "run", id, code}; out: {type: "progress", text}, {type: "ready"},
// {type: "result", id, ...run_cell's dict}, {type: "failed", text}.
"use strict";
let pyodide = null;
let runCell = null;

async function init({ static: base, packages, megabytes }) {
  const indexURL = new URL("../pyodide/", new URL(base + "/", self.location.href)).href;
  postMessage({ type: "progress", text: `loading Python (${megabytes} MB)…` });
  importScripts(indexURL + "pyodide.js");
  pyodide = await loadPyodide({ indexURL });
  postMessage({ type: "progress", text: `loading ${packages.join(", ")}…` });
  await pyodide.loadPackage(packages, { messageCallback: () => {}, checkIntegrity: true });
  const here = new URL(base + "/", self.location.href);
  const lib = await (await fetch(new URL("lib.zip", here))).arrayBuffer();
  pyodide.unpackArchive(lib, "zip", { extractDir: "/home/pyodide" });
  const driver = await (await fetch(new URL("driver.py", here))).text();
  pyodide.FS.writeFile("/home/pyodide/run_on_page_driver.py", driver);
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide')");
  runCell = pyodide.pyimport("run_on_page_driver").run_cell;
}

self.onmessage = async (event) => {
  const message = event.data;
  try {
    if (message.type === "init") {
      await init(message);
      postMessage({ type: "ready" });
    } else if (message.type === "run") {
      const result = runCell(message.code);
      const out = result.toJs({ dict_converter: Object.fromEntries });
      result.destroy();
      postMessage({ type: "result", id: message.id, ...out });
    }
  } catch (error) {
    postMessage({ type: "failed", id: message.id, text: String(error) });
  }
};
