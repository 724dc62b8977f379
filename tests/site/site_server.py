"""A static file server for the browser tests: Python's `http.server`, bound to 127.0.0.1 on
a free port, in a background thread of the test process (so it cannot outlive the tests).

It sends text files gzip-compressed when the browser asks for it, as every static host
the book would be published on does (GitHub Pages, GitLab Pages, Netlify, nginx with
gzip on): the page weights the tests measure are what a reader's browser transfers. The
tests also record each page's uncompressed weight.
"""

import functools
import gzip
import http.server
import io
import os
import threading

COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")


class Handler(http.server.SimpleHTTPRequestHandler):
    _gzipped: dict = {}  # (path, mtime) -> compressed bytes, shared by the server's threads

    def send_head(self):
        path = self.translate_path(self.path)
        if (not os.path.isfile(path)
                or "gzip" not in self.headers.get("Accept-Encoding", "")
                or not self.guess_type(path).startswith(COMPRESSIBLE)):
            return super().send_head()  # directories, 404s, images, fonts: as http.server does
        key = (path, os.stat(path).st_mtime_ns)
        body = self._gzipped.get(key)
        if body is None:
            with open(path, "rb") as f:
                body = self._gzipped[key] = gzip.compress(f.read(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
        pass  # the tests record every request themselves


class SiteServer:
    """`with SiteServer(directory) as origin:` serves `directory` at `origin` until the end."""

    def __init__(self, directory):
        handler = functools.partial(Handler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self.origin

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
