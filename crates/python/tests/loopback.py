"""Loopback HTTP servers for the crawl tests: each serves what `get(path)` returns for a GET (404 for
None), on an address of 127.0.0.0/8 and a port the OS picks, in a thread of its own."""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional
from urllib.parse import urlsplit


class Servers:
    """Servers started with `start`, all stopped by `close`."""

    def __init__(self) -> None:
        self.servers: list[ThreadingHTTPServer] = []
        self.threads: list[threading.Thread] = []

    def start(self, get: Callable[[str], Optional[bytes]], address: str, *, gzip_when_asked: bool = False) -> str:
        """Serves `get(path)` (the query string left out) on `address`; returns its base URL. With
        `gzip_when_asked`, a body is compressed when the request accepts gzip, as real sites do."""

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                body = get(urlsplit(self.path).path)
                if body is None:
                    self.send_error(404)
                    return
                compressed = gzip_when_asked and "gzip" in self.headers.get("Accept-Encoding", "")
                if compressed:
                    body = gzip.compress(body, mtime=0)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                if compressed:
                    self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        httpd = ThreadingHTTPServer((address, 0), Handler)
        httpd.daemon_threads = True
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        self.servers.append(httpd)
        self.threads.append(thread)
        return f"http://{address}:{httpd.server_address[1]}"

    def close(self) -> None:
        for httpd in self.servers:
            httpd.shutdown()
            httpd.server_close()
        for thread in self.threads:
            thread.join()


# Scrapy settings for crawling these servers in a test: no delay, robots,
# telnet, cookies or retries.
SCRAPY_SETTINGS: dict = {
    "DOWNLOAD_DELAY": 0,
    "ROBOTSTXT_OBEY": False,
    "TELNETCONSOLE_ENABLED": False,
    "COOKIES_ENABLED": False,
    "RETRY_ENABLED": False,
    "LOG_LEVEL": "WARNING",
}
