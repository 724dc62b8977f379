"""Runs one notebook cell in Pyodide, as Jupyter would (the run-on-page driver, issue 44).

Loaded once into the interpreter by _ext/run_on_page/worker.js (in the browser) and by
tests/run_on_page_node.mjs (in Node). ``run_cell(source, stream)`` passes each piece of
printed text to ``stream`` as it is printed (the browser shows it at once) and returns a
dict: the printed text (stdout and stderr, in order), the last expression's ``repr`` (as
Jupyter's execute_result), whether that value has a rich display of its own (kept from the build),
every open Matplotlib figure as PNG (base64; then closed, as the inline backend does),
and the error's traceback, if any.
"""

import base64
import io
import sys
import traceback
import types

import matplotlib

matplotlib.use("agg")
_quiet, sys.stderr = sys.stderr, io.StringIO()
try:  # the first import builds the font cache and says so on stderr: not a cell's output
    import matplotlib.pyplot
finally:
    sys.stderr = _quiet

from pyodide.code import eval_code

# myst_nb's glue records a value for the page's prose; the page is already written.
_myst_nb = types.ModuleType("myst_nb")
_myst_nb.glue = lambda *args, **kwargs: None
sys.modules["myst_nb"] = _myst_nb

NAMESPACE = {"__name__": "__main__"}


class _Capture(io.StringIO):
    def __init__(self, parts, stream=None):
        super().__init__()
        self.parts = parts
        self.stream = stream

    def write(self, text):
        self.parts.append(text)
        if self.stream is not None and text:
            self.stream(text)   # shown at once, as Jupyter shows a long cell's prints
        return len(text)


def _figures():
    if "matplotlib.pyplot" not in sys.modules:
        return []
    plt = sys.modules["matplotlib.pyplot"]
    pngs = []
    for number in plt.get_fignums():
        buffer = io.BytesIO()
        # the inline backend's defaults: a tight box, the figure's own dpi
        plt.figure(number).savefig(buffer, format="png", bbox_inches="tight")
        pngs.append(base64.b64encode(buffer.getvalue()).decode())
    plt.close("all")
    return pngs


def reset():
    """A fresh namespace, as a new kernel has (the tests run chapters one after another)."""
    NAMESPACE.clear()
    NAMESPACE["__name__"] = "__main__"
    _figures()


def run_cell(source, stream=None):
    """Run one cell; `stream(text)`, if given, is called with each piece of printed text as
    it is printed (the page shows it while the cell is still running)."""
    parts = []
    out = {"text": "", "result": None, "rich": False, "figures": [], "error": None}
    old = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = _Capture(parts, stream)
    try:
        value = eval_code(source, NAMESPACE, return_mode="last_expr")
        if value is not None:
            rich = any(hasattr(value, name) for name in
                       ("_repr_html_", "_repr_markdown_", "_repr_mimebundle_", "_repr_png_"))
            figure = type(value).__module__.startswith("matplotlib")
            if rich:
                out["rich"] = True
            elif not figure:
                out["result"] = repr(value)
    except BaseException:  # noqa: BLE001 - shown to the reader, as Jupyter shows it
        kind, error, tb = sys.exc_info()
        frames = [f for f in traceback.extract_tb(tb) if f.filename == "<exec>"]
        out["error"] = "".join(traceback.format_list(frames)
                               + traceback.format_exception_only(kind, error))
    finally:
        sys.stdout, sys.stderr = old
    out["text"] = "".join(parts)
    out["figures"] = _figures()
    return out
