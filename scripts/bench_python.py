#!/usr/bin/env python3
"""The Python package against datasketch, side by side in one run (issue 19).

On the pages of a corpus directory (PAGES, every *.html under it, in path
order), one process, one page after another as a crawler sees them:

  webdup check_and_insert     Index.check_and_insert(url, html=...) per page
  webdup Arrow batches        Index.check_and_insert_batch(table) per 1,000 pages
  webdup 2 threads            check_and_insert per page from 2 threads (the GIL
                              is released: extraction runs in parallel)
  trafilatura + datasketch    trafilatura.extract(html), lowercase word
                              5-shingles, MinHash(128, seed 42), then
                              MinHashLSH(threshold 0.8).query and .insert

Prints pages/s and how many pages each found already seen (exactly or
nearly; datasketch's are LSH candidates, unverified).

    usage: bench_python.py PAGES
"""

import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

import webdup


def pages(root: Path) -> list[tuple[str, str]]:
    files = sorted(root.rglob("*.html"))
    return [(f"https://bench.test/{p.relative_to(root)}", p.read_text(errors="replace")) for p in files]


def timed(name: str, n: int, f) -> tuple[str, float, int]:
    start = time.perf_counter()
    seen = f()
    s = time.perf_counter() - start
    print(f"{name:<28} {s:8.2f} s {n / s:9.0f} pages/s   {seen:5d} seen", flush=True)
    return name, s, seen


def per_page(docs) -> int:
    with tempfile.TemporaryDirectory() as d:
        index = webdup.Index(f"{d}/i.db")
        return sum(index.check_and_insert(url, html=html).seen for url, html in docs)


def batches(docs, size: int = 1000) -> int:
    with tempfile.TemporaryDirectory() as d:
        index = webdup.Index(f"{d}/i.db")
        seen = 0
        for i in range(0, len(docs), size):
            chunk = docs[i:i + size]
            table = pa.table({"url": [u for u, _ in chunk], "html": [h for _, h in chunk]})
            out = index.check_and_insert_batch(table)
            seen += sum(not n for n in out.column("new").to_pylist())
        return seen


def threads(docs, n: int = 2) -> int:
    with tempfile.TemporaryDirectory() as d:
        index = webdup.Index(f"{d}/i.db")
        with ThreadPoolExecutor(n) as pool:
            return sum(r.seen for r in pool.map(lambda p: index.check_and_insert(p[0], html=p[1]), docs))


def shingles(text: str, k: int = 5) -> set[bytes]:
    words = text.lower().split()
    return {" ".join(words[i:i + k]).encode() for i in range(max(1, len(words) - k + 1))}


def datasketch_pipeline(docs) -> int:
    import trafilatura
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    seen = 0
    for url, html in docs:
        text = trafilatura.extract(html) or ""
        m = MinHash(num_perm=128, seed=42)
        m.update_batch(list(shingles(text)))
        seen += bool(lsh.query(m))
        lsh.insert(url, m)
    return seen


def main() -> None:
    docs = pages(Path(sys.argv[1]))
    print(f"{len(docs)} pages, {sum(len(h) for _, h in docs) / 1e6:.1f} MB of HTML; webdup {webdup.__version__}")
    # The extractors' one-time set-up is not what a crawler waits for per page.
    webdup.extract(docs[0][1])
    rows = [
        timed("webdup check_and_insert", len(docs), lambda: per_page(docs)),
        timed("webdup Arrow batches", len(docs), lambda: batches(docs)),
        timed("webdup 2 threads", len(docs), lambda: threads(docs)),
        timed("trafilatura + datasketch", len(docs), lambda: datasketch_pipeline(docs)),
    ]
    peer = rows[-1][1]
    for name, s, _ in rows[:-1]:
        print(f"{name}: {peer / s:.1f}x trafilatura + datasketch")


if __name__ == "__main__":
    main()
