"""A Sphinx extension (`_config.yml`): a quiet build log.

Jupyter Book executes the notebooks with jupyter_client, which connects to the kernel over
TCP; ipykernel 7 then logs "Kernel is running over TCP without encryption" once per
notebook. The kernels are on 127.0.0.1 and live for one build, so the build's kernel spec
(`_ext/jupyter/kernels/python3/kernel.json`, found through JUPYTER_PATH) starts ipykernel
with its own log at ERROR; cell output, warnings included, is unaffected.

The same kernel spec draws the site's figures at twice their size in pixels
(`--InlineBackend.figure_formats=retina`: a PNG of 200 dpi that the notebook shows at the
size of a 100 dpi one): sharp on a 2x display (issue 28). `_ext/page_meta.py` gives each such
figure a 1x copy and a `srcset`. The committed .ipynb references (`make notebooks`) are
not affected.
"""

import os
from pathlib import Path

from sphinx.application import Sphinx

HERE = Path(__file__).resolve().parent


def use_kernel_spec(app: Sphinx, config) -> None:
    jupyter = str(HERE / "jupyter")
    paths = os.environ.get("JUPYTER_PATH", "")
    if jupyter not in paths.split(os.pathsep):
        os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (jupyter, paths) if p)


def setup(app: Sphinx):
    app.connect("config-inited", use_kernel_spec)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
