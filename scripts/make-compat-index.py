#!/usr/bin/env python3
"""Writes an index file with a given webdup binary, for the format
compatibility tests (tests/store_compat.rs).

    scripts/make-compat-index.py WEBDUP OUT.db

Serves tests/data/compat-site/ on 127.0.0.1 (a port the OS picks) so that
`webdup index add` fills every column the schema has: a main text of more
than 2 KB (stored deflated since schema v5), a `Link` header canonical, a
page's own canonical reached through a 301, robots noindex from both the
meta tag and `X-Robots-Tag`, a description, an h1, and a 404. Run it with the
binary of the release whose format is to be kept, once; the file is checked
in under tests/data/.
"""
import http.server
import os
import subprocess
import sys
import threading

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "compat-site")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        base = f"http://{self.headers['Host']}"
        routes = {
            "/article": ("article.html", {"Link": f'<{base}/ferries>; rel="canonical"'}),
            "/moved": ("moved.html", {}),
            "/private": ("private.html", {"X-Robots-Tag": "noindex"}),
        }
        if self.path == "/old":
            self.send_response(301)
            self.send_header("Location", "/moved")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path not in routes:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        name, headers = routes[self.path]
        body = open(os.path.join(SITE, name), "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    webdup, out = sys.argv[1], sys.argv[2]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    urls = [f"{base}/{p}" for p in ("article", "old", "private", "gone")]
    done = subprocess.run([webdup, "index", "add", "--crawl", "compat", "--index", out, "-q",
                           # As the files were written: one rule, no cross-site threshold.
                           "--cross-site-threshold", "0.8", *urls])
    server.shutdown()
    # 1: some pages failed (the 404, on purpose).
    if done.returncode not in (0, 1):
        sys.exit(f"webdup index add failed with {done.returncode}")


if __name__ == "__main__":
    main()
