#!/usr/bin/env python3
"""Peer near-duplicate pipeline for side-by-side benchmarks with webdup (issue 13).

trafilatura.extract (default options) -> lowercase word 5-shingles -> rensa
RMinHash(128, seed 42) -> RMinHashLSH(threshold 0.8, 16 bands) -> union-find
over the LSH candidates. With no --verify, candidates are merged unverified,
as this pipeline is usually run; --verify J keeps only candidate pairs whose
exact shingle Jaccard is at least J.

Writes the clusters as JSON in the shape `webdup eval cluster` reads: member
ids are paths relative to the current directory, like webdup's.

    usage: peer_trafilatura_rensa.py PAGES_DIR [-o OUT.json] [--jobs N] [--verify J]

Needs trafilatura 2.3, rensa 0.5 and lxml_html_clean (scripts/bench-near-dup.sh
installs them in a venv). Stage and total wall times go to stderr.
"""

import time

T_START = time.perf_counter()  # before the heavy imports: they are part of the run

import argparse
import json
import os
import re
import resource
import sys
from multiprocessing import Pool

import trafilatura
from rensa import RMinHash, RMinHashLSH

SHINGLE = 5
NUM_PERM = 128
SEED = 42
THRESHOLD = 0.8
BANDS = 16
WORD = re.compile(r"\w+")


def extract(path):
    """Reads one page and returns its main text ("" when trafilatura finds none or fails)."""
    with open(path, "rb") as f:
        html = f.read()
    try:
        # Raw bytes: trafilatura detects the encoding itself, as when it fetches.
        return trafilatura.extract(html) or "", False
    except Exception:  # a page trafilatura chokes on counts as empty, like None
        return "", True


def process(job):
    """One page, in a pool worker: extract, shingle, MinHash.

    Returns (failed, minhash or None for a page with no words, shingle set
    when verifying, extraction seconds, shingling + MinHash seconds).
    """
    path, keep_shingles = job
    t0 = time.perf_counter()
    text, failed = extract(path)
    t1 = time.perf_counter()
    grams = shingles(text)
    mh = None
    if grams:
        mh = RMinHash(num_perm=NUM_PERM, seed=SEED)
        mh.update(list(grams))
    t2 = time.perf_counter()
    return failed, mh, (grams if keep_shingles else None), t1 - t0, t2 - t1


def shingles(text):
    """Word 5-shingles of the lowercased text; a text of 1-4 words is one shingle."""
    words = WORD.findall(text.lower())
    if not words:
        return set()
    if len(words) < SHINGLE:
        return {" ".join(words)}
    return {" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


class UnionFind:
    def __init__(self, n):
        self.parent = list(range(n))

    def find(self, x):
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]  # path halving
            x = self.parent[x]
        return x

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", help="directory of *.html pages, searched recursively")
    ap.add_argument("-o", "--output", default="-", help="clusters JSON (default: stdout)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="extraction processes (default: all cores)")
    ap.add_argument("--verify", type=float, metavar="J", help="keep only candidate pairs with exact shingle Jaccard >= J")
    args = ap.parse_args()
    if not os.path.isdir(args.pages):
        ap.error(f"{args.pages}: not a directory")

    stages = [("imports", time.perf_counter() - T_START)]

    def stage(name, t0):
        stages.append((name, time.perf_counter() - t0))

    t = time.perf_counter()
    paths = sorted(
        os.path.join(root, name)
        for root, _, files in os.walk(args.pages)
        for name in files
        if name.endswith(".html")
    )
    ids = [os.path.relpath(p) for p in paths]
    stage("list files", t)

    # Read, extract, shingle and sketch on all cores (pool start-up included);
    # the main process keeps only the signatures (and shingles if verifying).
    t = time.perf_counter()
    jobs = [(p, args.verify is not None) for p in paths]
    with Pool(args.jobs) as pool:
        results = pool.map(process, jobs, chunksize=max(1, len(jobs) // (args.jobs * 16)))
    failures = sum(r[0] for r in results)
    sigs = {i: r[1] for i, r in enumerate(results) if r[1] is not None}
    sets = [r[2] for r in results]
    extract_cpu = sum(r[3] for r in results)
    sketch_cpu = sum(r[4] for r in results)
    stage(f"read + extract + shingle + minhash ({args.jobs} processes)", t)
    del results

    # Documents without a word have no signature and are never clustered:
    # an all-empty MinHash would put every such page in one bucket.
    t = time.perf_counter()
    indexed = sorted(sigs)
    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=BANDS)
    for i in indexed:
        lsh.insert(i, sigs[i])
    stage("LSH index", t)

    # query() returns every key sharing a band with the document, itself included.
    t = time.perf_counter()
    uf = UnionFind(len(paths))
    candidates = kept = 0
    for i in indexed:
        for j in lsh.query(sigs[i]):
            if j <= i:  # each pair once (band collisions are symmetric)
                continue
            candidates += 1
            if args.verify is not None:
                a, b = sets[i], sets[j]
                if len(a & b) < args.verify * len(a | b):
                    continue
            kept += 1
            uf.union(i, j)
    stage("query + union-find" + (f" (verify {args.verify})" if args.verify is not None else ""), t)

    t = time.perf_counter()
    groups = {}
    for i in range(len(paths)):
        groups.setdefault(uf.find(i), []).append(ids[i])
    clusters = sorted((sorted(m) for m in groups.values() if len(m) > 1), key=lambda m: m[0])
    report = {
        "tool": "trafilatura+rensa",
        "versions": {"trafilatura": trafilatura.__version__, "rensa": _version("rensa")},
        "settings": {
            "shingle_size": SHINGLE,
            "permutations": NUM_PERM,
            "seed": SEED,
            "threshold": THRESHOLD,
            "bands": BANDS,
            "verify": args.verify,
            "jobs": args.jobs,
        },
        "summary": {
            "documents": len(paths),
            "empty_text": len(paths) - len(indexed),
            "extract_errors": failures,
            "candidate_pairs": candidates,
            "merged_pairs": kept,
            "clusters": len(clusters),
            "clustered_documents": sum(map(len, clusters)),
        },
        "clusters": [
            {"id": n, "size": len(m), "members": [{"id": p} for p in m]} for n, m in enumerate(clusters, 1)
        ],
    }
    if args.output == "-":
        json.dump(report, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        with open(args.output, "w") as f:
            json.dump(report, f, indent=1)
    stage("write", t)

    s = report["summary"]

    def log(msg):
        print(msg, file=sys.stderr)

    log(
        f"{s['documents']} documents ({s['empty_text']} with no text, {failures} extraction errors), "
        f"{candidates} candidate pairs, {kept} merged, {s['clusters']} clusters of {s['clustered_documents']} documents"
    )
    for name, secs in stages:
        log(f"  {name:<56} {secs:8.2f} s")
    log(f"  {'total wall':<56} {time.perf_counter() - T_START:8.2f} s")
    log(f"  worker CPU: extraction {extract_cpu:.2f} s, shingling + MinHash {sketch_cpu:.2f} s")
    # /usr/bin/time's peak RSS is the largest single process, not the sum over the pool.
    main_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    log(f"  peak RSS: main {main_kib} KiB, largest worker {child_kib} KiB")


def _version(dist):
    from importlib.metadata import version

    return version(dist)


if __name__ == "__main__":
    main()
