// Runs a chapter's code cells in Pyodide under Node, as _ext/run_on_page/worker.js runs them in
// the browser: the interpreter and the wheels from `make pyodide`'s verified directory, the
// course's lib/ and _ext/run_on_page/driver.py from this tree. tests/test_run_on_page.py
// calls it with every chapter at once (each chapter in a fresh namespace); it prints
// one JSON object: {chapters: {name: [...run_cell's dict]}, requests: n}.
// usage: node tests/run_on_page_node.mjs PYODIDE_DIR CHAPTER_JSON...
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [pyodideDir, ...chapterJsons] = process.argv.slice(2);
let requests = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = (...args) => { requests += 1; return realFetch(...args); };  // must stay 0

const { loadPyodide } = await import(path.join(path.resolve(pyodideDir), "pyodide.mjs"));
const chapters = chapterJsons.map((file) => [path.basename(file, ".json"),
                                            JSON.parse(readFileSync(file, "utf8"))]);

// An interpreter with a chapter's first packages, the course's lib/ and the driver, as
// worker.js sets one up.
async function boot(packages) {
  const pyodide = await loadPyodide({ indexURL: path.resolve(pyodideDir) + path.sep });
  await pyodide.loadPackage(packages, { messageCallback: () => {} });
  pyodide.FS.mkdirTree("/home/pyodide/lib");
  for (const name of readdirSync(path.join(root, "lib")).filter((n) => n.endsWith(".py"))) {
    pyodide.FS.writeFile(`/home/pyodide/lib/${name}`, readFileSync(path.join(root, "lib", name)));
  }
  pyodide.FS.writeFile("/home/pyodide/run_on_page_driver.py",
                       readFileSync(path.join(root, "_ext", "run_on_page", "driver.py")));
  pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide')");
  return { pyodide, driver: pyodide.pyimport("run_on_page_driver"), grown: false };
}

// One boot for the chapters that load nothing later; a chapter that loads a package before a
// cell (SciPy: the cell's `needs`, found by the build) gets an interpreter that has loaded
// nothing more than its first packages, so that a cell needing what the build did not find
// fails here as it would in the browser.
const done = {};
let python = null;
for (const [name, chapter] of chapters) {
  const loadsLater = chapter.cells.some((cell) => (cell.needs || []).length);
  if (!python || (loadsLater && python.grown)) python = await boot(chapter.packages);
  const start = performance.now();
  python.driver.reset();
  done[name] = [];
  for (const cell of chapter.cells) {
    const wanted = (cell.needs || []).filter((n) => !(n in python.pyodide.loadedPackages));
    if (wanted.length) {
      await python.pyodide.loadPackage(wanted, { messageCallback: () => {} });
      python.grown = true;
    }
    const result = python.driver.run_cell(cell.source);
    const out = result.toJs({ dict_converter: Object.fromEntries });
    result.destroy();
    out.figures = out.figures.length;  // how many; the PNGs themselves are not compared
    done[name].push({ index: cell.index, ...out });
  }
  console.error(`${name}: ${((performance.now() - start) / 1000).toFixed(1)} s`);  // the cost
}
process.stdout.write(JSON.stringify({ chapters: done, requests }));
