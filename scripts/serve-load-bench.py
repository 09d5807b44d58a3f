#!/usr/bin/env python3
"""Load benchmark for `webdup serve` (Python standard library only).

Starts a release `webdup serve` on a fresh index in a temporary directory,
then CLIENTS threads send real pages (the WCXB development split's HTML, see
../shared/data/README.md) for SECONDS: each client alternates an insert
(POST /v1/pages) and a check (POST /v1/check) of the next page, over one
keep-alive connection. Prints requests/s, p50 and p99 latency (overall and
per endpoint), errors, the server's CPU use and the machine's load.

    cargo build --release
    scripts/serve-load-bench.py                      # default extractor (blocks)
    scripts/serve-load-bench.py --extractor auto
    scripts/serve-load-bench.py --extractor fast
"""

import argparse
import gzip
import http.client
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))
    return sorted_values[i]


def cpu_seconds(pid):
    """utime + stime of a process, from /proc (Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


def load_pages(folder, limit):
    pages = []
    for path in sorted(pathlib.Path(folder).glob("*.html*"))[:limit]:
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        pages.append((path.name.split(".")[0], raw.decode("utf-8", errors="replace")))
    if not pages:
        sys.exit(f"no .html or .html.gz files in {folder}")
    return pages


def main():
    here = pathlib.Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=str(here / "target" / "release" / "webdup"))
    ap.add_argument("--data", default=str(here.parent / "shared" / "data" / "wcxb-dev" / "html"))
    ap.add_argument("--pages", type=int, default=400, help="pages read from --data (default 400)")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--extractor", default="blocks")
    args = ap.parse_args()

    pages = load_pages(args.data, args.pages)
    bodies = [
        (json.dumps({"url": f"https://wcxb.test/{name}", "html": html}).encode(), f"https://wcxb.test/{name}")
        for name, html in pages
    ]
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [args.binary, "serve", "--bind", "127.0.0.1:0", "--index", os.path.join(tmp, "bench.db"),
             "--extractor", args.extractor],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        try:
            line = server.stderr.readline()
            m = re.search(r":(\d+)\s*$", line)
            if not m:
                sys.exit(f"webdup serve did not start: {line!r}")
            port = int(m.group(1))
            threading.Thread(target=server.stderr.read, daemon=True).start()
            results = run(port, bodies, args, server.pid)
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
    report(results, args, len(pages))


def run(port, bodies, args, pid):
    latencies = {"insert": [], "check": []}
    errors = []
    lock = threading.Lock()
    deadline = time.monotonic() + args.seconds

    def client(k):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        i = k
        own = {"insert": [], "check": []}
        bad = []
        while time.monotonic() < deadline:
            body, _url = bodies[i % len(bodies)]
            for kind, path in (("insert", "/v1/pages"), ("check", "/v1/check")):
                t0 = time.monotonic()
                try:
                    conn.request("POST", path, body, {"content-type": "application/json"})
                    resp = conn.getresponse()
                    data = resp.read()
                    status = resp.status
                except (OSError, http.client.HTTPException) as e:
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    bad.append(f"{kind}: {e!r}")
                    continue
                elapsed = time.monotonic() - t0
                if status in (200, 201):
                    own[kind].append(elapsed)
                elif status == 422:
                    # A page with no text to fingerprint: a fair answer, counted apart.
                    own[kind].append(elapsed)
                    bad.append(f"{kind}: 422 {data[:100]!r}")
                else:
                    bad.append(f"{kind}: {status} {data[:200]!r}")
            i += args.clients
        conn.close()
        with lock:
            for kind in own:
                latencies[kind].extend(own[kind])
            errors.extend(bad)

    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    cpu = cpu_seconds(pid) - cpu0
    return latencies, errors, wall, cpu, os.getloadavg()


def report(results, args, npages):
    latencies, errors, wall, cpu, load = results
    everything = sorted(latencies["insert"] + latencies["check"])
    print(f"webdup serve --extractor {args.extractor}: {args.clients} clients, {wall:.1f} s, "
          f"{npages} WCXB pages (insert + check of each)")
    print(f"  all:    {len(everything)} requests, {len(everything) / wall:.1f} req/s, "
          f"p50 {percentile(everything, 50) * 1000:.0f} ms, p99 {percentile(everything, 99) * 1000:.0f} ms")
    for kind in ("insert", "check"):
        v = sorted(latencies[kind])
        print(f"  {kind}: {len(v)} requests, {len(v) / wall:.1f} req/s, "
              f"p50 {percentile(v, 50) * 1000:.0f} ms, p99 {percentile(v, 99) * 1000:.0f} ms")
    unprocessable = sum(1 for e in errors if " 422 " in e)
    print(f"  errors: {len(errors) - unprocessable} (and {unprocessable} pages answered 422: no text)")
    for e in errors[:5]:
        if " 422 " not in e:
            print(f"    {e}")
    print(f"  server CPU: {cpu:.1f} s in {wall:.1f} s ({cpu / wall:.2f} cores of {os.cpu_count()}); "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
