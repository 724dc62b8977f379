"""A Sphinx extension (`_config.yml`): one line on a page opened from disk.

A page opened as a file (file://, e.g. the index.html that a build leaves) cannot fetch the
explorers' data or load KaTeX's fonts: Chromium refuses both requests from a file:// page.
The site is read served: `make serve` serves the built site on 127.0.0.1 at a free port and
prints the address (`make book` ends by saying so). On a file:// page, a small inline script
puts one line above the article saying this; served, it does nothing.
tests/site/test_served.py checks both.
"""

import json

from sphinx.application import Sphinx

NOTICE = ("Opened from a file, this page cannot draw its interactive charts or load its "
          "math fonts: in the course's folder, run ", "make serve",
          " and open the address it prints.")

SCRIPT = """if (location.protocol === 'file:') {
  document.addEventListener('DOMContentLoaded', () => {
    const [before, command, after] = %s;
    const line = document.createElement('p');
    const code = document.createElement('code');
    code.textContent = command;
    line.append(before, code, after);
    line.id = 'file-notice';
    line.setAttribute('role', 'note');
    line.style.cssText = 'margin:0 0 1rem;padding:.5rem .75rem;border-left:4px solid '
      + 'var(--pst-color-warning);background:var(--pst-color-surface);color:var(--pst-color-text-base)';
    const article = document.querySelector('main article') || document.body;
    article.prepend(line);
  });
}""" % json.dumps(NOTICE)


def add_notice(app: Sphinx, config) -> None:
    # before the builder exists: registered once, for the HTML builders (at builder-inited,
    # Sphinx would also give it to the builder, and every page would get it twice)
    app.add_js_file(None, body=SCRIPT)


def setup(app: Sphinx):
    app.connect("config-inited", add_notice)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
