// Runs a chapter's code cells in Pyodide under Node, as _ext/run_on_page/worker.js runs them in
// the browser: the interpreter and the wheels from `make pyodide`'s verified directory, the
// course's lib/ and _ext/run_on_page/driver.py from this tree. tests/test_run_on_page.py
// calls it with every chapter at once (one boot; each chapter in a fresh namespace); it prints
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
const pyodide = await loadPyodide({ indexURL: path.resolve(pyodideDir) + path.sep });
const chapters = chapterJsons.map((file) => [path.basename(file, ".json"),
                                            JSON.parse(readFileSync(file, "utf8"))]);
const packages = [...new Set(chapters.flatMap(([, chapter]) => chapter.packages))];
await pyodide.loadPackage(packages, { messageCallback: () => {} });
pyodide.FS.mkdirTree("/home/pyodide/lib");
for (const name of readdirSync(path.join(root, "lib")).filter((n) => n.endsWith(".py"))) {
  pyodide.FS.writeFile(`/home/pyodide/lib/${name}`, readFileSync(path.join(root, "lib", name)));
}
pyodide.FS.writeFile("/home/pyodide/run_on_page_driver.py",
                     readFileSync(path.join(root, "_ext", "run_on_page", "driver.py")));
pyodide.runPython("import sys; sys.path.insert(0, '/home/pyodide')");
const driver = pyodide.pyimport("run_on_page_driver");
const done = {};
for (const [name, chapter] of chapters) {
  const start = performance.now();
  driver.reset();
  done[name] = [];
  for (const cell of chapter.cells) {
    const result = driver.run_cell(cell.source);
    const out = result.toJs({ dict_converter: Object.fromEntries });
    result.destroy();
    out.figures = out.figures.length;  // how many; the PNGs themselves are not compared
    done[name].push({ index: cell.index, ...out });
  }
  console.error(`${name}: ${((performance.now() - start) / 1000).toFixed(1)} s`);  // the cost
}
process.stdout.write(JSON.stringify({ chapters: done, requests }));
