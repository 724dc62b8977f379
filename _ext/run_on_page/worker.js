// The run-on-page Web Worker (issue 44; _ext/run_on_page.py): Pyodide and the chapter's
// first packages from the site's own _static/pyodide/, the course's lib/ from lib.zip, then
// one cell at a time through driver.py; a package the site ships but the chapter did not
// start with (SciPy) is loaded just before the first cell that needs it. Messages in:
// {type: "init", static, packages, megabytes, later} and {type: "run", id, code, needs};
// out: {type: "progress", text} (or resume: say again what the page said before),
// {type: "ready"}, {type: "stream", id, text} (printed while the cell runs),
// {type: "result", id, ...run_cell's dict}, {type: "failed", text}.
"use strict";
let pyodide = null;
let runCell = null;
let later = {};   // package name -> megabytes, not loaded at the start

async function init({ static: base, packages, megabytes, later: more }) {
  later = more || {};
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

// What a cell needs that is not loaded yet: what the build found (a call into lib that uses
// SciPy) and what the cell itself imports (an edited cell).
async function loadFor(code, needs) {
  let imports = [];
  try {
    const found = pyodide.pyodide_py.code.find_imports(code);
    imports = found.toJs();
    found.destroy();
  } catch (error) {
    // a cell that does not parse: running it reports the SyntaxError
  }
  const wanted = Object.keys(later).filter((name) => !(name in pyodide.loadedPackages)
    && ((needs || []).includes(name) || imports.includes(name)));
  if (!wanted.length) return;
  const megabytes = wanted.reduce((sum, name) => sum + later[name], 0);
  postMessage({ type: "progress", text: `loading ${wanted.join(", ")} (${megabytes} MB)…` });
  await pyodide.loadPackage(wanted, { messageCallback: () => {}, checkIntegrity: true });
  postMessage({ type: "progress", resume: true });
}

self.onmessage = async (event) => {
  const message = event.data;
  try {
    if (message.type === "init") {
      await init(message);
      postMessage({ type: "ready" });
    } else if (message.type === "run") {
      await loadFor(message.code, message.needs);
      const stream = (text) => postMessage({ type: "stream", id: message.id, text });
      const result = runCell(message.code, stream);
      const out = result.toJs({ dict_converter: Object.fromEntries });
      result.destroy();
      postMessage({ type: "result", id: message.id, ...out });
    }
  } catch (error) {
    postMessage({ type: "failed", id: message.id, text: String(error) });
  }
};
