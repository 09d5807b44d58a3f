#!/usr/bin/env python3
"""Makes a paged report FACTOR times larger from a real one, for
scripts/bench-report.sh (SCALE=FACTOR): the pages and clusters tables, their
sort orders and the clusters' texts are copied FACTOR times, each copy's URLs
under /cK/ and its page and cluster numbers shifted, in the chunk format of
docs/formats.md. The other tables and the static HTML (summary counts) stay
as they were. A 100,000-page audit takes minutes and gigabytes; a
1,000,000-page report made this way tests the viewer, not the audit.

    scripts/report_scale.py SRC_DIR DST_DIR FACTOR
"""
import json
import os
import re
import shutil
import sys

src, dst, factor = sys.argv[1], sys.argv[2], int(sys.argv[3])
html = open(os.path.join(src, "report.html"), encoding="utf-8").read()
blob = re.search(r'<script type="application/json" id="audit-data">(.*?)</script>', html, re.S)
M = json.loads(blob.group(1))
data_in = os.path.join(src, M["dir"])
data_out = os.path.join(dst, M["dir"])
shutil.rmtree(dst, ignore_errors=True)
os.makedirs(data_out)


def read(name):
    text = open(os.path.join(data_in, name + ".js"), encoding="utf-8").read()
    return json.loads(text[text.index(",") + 1:text.rindex(")")])


def write(name, value):
    with open(os.path.join(data_out, name + ".js"), "w", encoding="utf-8") as f:
        f.write('webdupChunk("%s",' % name)
        json.dump(value, f, ensure_ascii=False, separators=(",", ":"))
        f.write(");\n")


def rows_of(table):
    T = M["tables"][table]
    out, chunks = [], []
    for k in range((T["rows"] + T["chunk"] - 1) // T["chunk"]):
        c = read(f"{table}-{k}")
        out.extend(c["rows"])
        chunks.append(c)
    return out, chunks


def moved(url, k):
    return None if url is None else re.sub(r"^([a-z]+://[^/]+)/", r"\1/c%d/" % k, url) if k else url


pages, _ = rows_of("pages")
clusters, cchunks = rows_of("clusters")
N, C = len(pages), len(clusters)
member_rows = {}
for c in cchunks:
    member_rows.update({int(p): r for p, r in c["P"].items()})


def page_row(r, k):
    r = list(r)
    r[0], r[11] = moved(r[0], k), moved(r[11], k)
    if r[5] is not None:
        r[5] += k * N
    if r[8] is not None:
        r[8] += k * C
    return r


def cluster_row(c, k):
    c = list(c)
    c[0] += k * C
    members = []
    for m in c[8]:
        m = list(m)
        m[0] += k * N
        if m[4] and "against" in m[4]:
            m[4] = dict(m[4], against=m[4]["against"] + k * N)
        members.append(m)
    c[8], c[9], c[12] = members, c[9] + k * N, moved(c[12], k)
    return c


# Data chunks, rows in order, re-chunked across the copies.
def write_rows(table, rows, make, extra=None):
    R = M["tables"][table]["chunk"]
    buf, n = [], 0
    for k in range(factor):
        for r in rows:
            buf.append(make(r, k))
            if len(buf) == R:
                chunk = {"rows": buf}
                if extra:
                    chunk.update(extra(buf))
                write(f"{table}-{n}", chunk)
                buf, n = [], n + 1
    if buf:
        chunk = {"rows": buf}
        if extra:
            chunk.update(extra(buf))
        write(f"{table}-{n}", chunk)


write_rows("pages", pages, page_row)
write_rows("clusters", clusters, cluster_row, lambda rows: {"P": {
    str(m[0]): page_row(member_rows[m[0] % N], m[0] // N) for c in rows for m in c[8]}})

# Texts, by the clusters' data chunks.
R = M["tables"]["clusters"]["chunk"]
B, T, Mi = {}, {}, {}
for k in range((C + R - 1) // R):
    t = read(f"clusters-t{k}")
    B.update({int(p): b for p, b in t["B"].items()})
    T.update({int(p): s for p, s in t["T"].items()})
    for p in t["M"]:
        Mi.setdefault(pages[p][8] - 1, []).append(p)
for k in range((C * factor + R - 1) // R):
    lo, hi = k * R, min((k + 1) * R, C * factor)
    out = {"B": {}, "T": {}, "M": []}
    for pos in range(lo, hi):
        copy, orig = divmod(pos, C)
        out["B"][str(pos)] = B.get(orig, "")
        for m in clusters[orig][8]:
            if m[0] in T:
                s = T[m[0]]
                out["T"][str(m[0] + copy * N)] = [s[0] + copy * N, s[1] + copy * C, s[2]]
        out["M"].extend(p + copy * N for p in Mi.get(orig, []))
    write(f"clusters-t{k}", out)

# Sort orders: numbers, then text, empty cells last; ties in row order.
def key_of(v):
    return (2, 0, "") if v is None else (0, v, "") if isinstance(v, (int, float)) else (1, 0, v)


cluster_cols = [lambda c: c[10], lambda c: c[0], lambda c: c[1], lambda c: c[2], lambda c: c[3], lambda c: c[4],
                lambda c: len(c[7]), lambda c: c[11], lambda c: c[12]]
page_cols = [lambda p: p[0], lambda p: p[1], lambda p: p[2], lambda p: p[3], lambda p: p[4], lambda p: p[11],
             lambda p: p[6], lambda p: p[7], lambda p: p[8]]
first = {}
for table, rows, make, cols in (("pages", pages, page_row, page_cols), ("clusters", clusters, cluster_row, cluster_cols)):
    Tm = M["tables"][table]
    total = len(rows) * factor
    for col, f in enumerate(cols):
        keys = [key_of(f(make(r, k))) for k in range(factor) for r in rows]
        ids = sorted(range(total), key=keys.__getitem__)
        Tm["sorts"][col] = sum(1 for kk in keys if kk[0] < 2)
        for n, start in enumerate(range(0, total, Tm["order"])):
            write(f"{table}-s{col}-{n}", ids[start:start + Tm["order"]])
        if Tm["default"] == col:
            first[table] = ids[:50]
    shown = first.get(table, list(range(min(50, total))))
    Tm["first"] = [[i, make(rows[i % len(rows)], i // len(rows))] for i in shown]
    if table == "clusters":
        for f in Tm["first"]:
            f[1][8] = []
    Tm["rows"] = total

# Unscaled tables keep their chunks.
for name in os.listdir(data_in):
    if not re.match(r"(pages|clusters)-", name):
        shutil.copy(os.path.join(data_in, name), data_out)
manifest = json.dumps(M, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
with open(os.path.join(dst, "report.html"), "w", encoding="utf-8") as f:
    f.write(html[:blob.start(1)] + manifest + html[blob.end(1):])
# What bench-report.sh reads: the clusters and pages it names.
last = cluster_row(clusters[-1], factor - 1)
json.dump({"clusters": [
    {"id": c[0], "severity": c[10], "size": c[2], "representative": c[9], "members": [{"page": m[0]} for m in c[8]]}
    for c in (clusters[0], last)], "pages": [{"url": page_row(pages[N // 2], factor // 2)[0]}], "rows": N * factor},
    open(os.path.join(dst, "report.json"), "w"))
