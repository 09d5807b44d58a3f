#!/usr/bin/env bash
# Crawl benchmark: a site of COUNT pages (default 10,000) served by nginx on
# 127.0.0.1, crawled from its home page by `webdup cluster --follow
# --own-site`; prints pages/s and peak RSS (/usr/bin/time -v). Then the
# frontier alone with QUEUED URLs queued (default 1,000,000;
# examples/frontier_memory.rs): its peak RSS.
#
# The site: every page links to the home page, its two neighbours, ten pages
# spread over the site and a few duplicate variants (?sort=, /print/); a
# calendar trap hangs off the home page.
#
#   scripts/bench-crawl.sh [COUNT] [QUEUED]
#
# Installs nginx (and GNU time) from Debian with apt-get when missing.
set -euo pipefail

COUNT=${1:-10000}
QUEUED=${2:-1000000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PORT=${PORT:-18090}

# shellcheck source=lib/nginx.sh
source "$ROOT/scripts/lib/nginx.sh"
nginx_work bench-crawl

echo "generating $COUNT pages in $WORK/site" >&2
mkdir -p "$WORK/site/p" "$WORK/site/print/p" "$WORK/site/cal"
python3 - "$WORK/site" "$COUNT" <<'PY'
import random, sys
out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(7)
vocab = [f"w{i}" for i in range(20000)]
nav = '<nav><a href="/">Home</a> <a href="/p/0.html">First</a> <a href="/cal/0.html">Events</a></nav>'
def page(i, title, body, links):
    a = " ".join(f'<a href="{l}">{l}</a>' for l in links)
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head><body>{nav}"
            f"<main><h1>{title}</h1><p>{body}</p></main><aside>{a}</aside><footer>Example site</footer></body></html>\n")
for i in range(n):
    body = " ".join(rng.choice(vocab) for _ in range(250))
    links = [f"/p/{(i + 1) % n}.html", f"/p/{(i - 1) % n}.html"] + [f"/p/{rng.randrange(n)}.html" for _ in range(10)]
    if i % 10 == 0:
        links += [f"/p/{i}.html?sort=date", f"/print/p/{i}.html"]
    html = page(i, f"Page {i}", body, links)
    open(f"{out}/p/{i}.html", "w").write(html)
    if i % 10 == 0:
        open(f"{out}/print/p/{i}.html", "w").write(html)
for m in range(200):
    open(f"{out}/cal/{m}.html", "w").write(page(m, "Events", f"No events in month {m} yet; check back later for concerts and talks in the hall.", [f"/cal/{m + 1}.html"]))
open(f"{out}/index.html", "w").write(page(0, "Home", "Welcome to the example site.", ["/p/0.html", "/cal/0.html"]))
PY

nginx_serve "$WORK/site" "$PORT" /

cd "$ROOT"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
cargo build --release --bin webdup --example frontier_memory >&2
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
/usr/bin/time -v "$TARGET/release/webdup" cluster --follow "http://127.0.0.1:$PORT/" --own-site \
    -f json -o "$WORK/report.json" 2> "$WORK/time.txt" || true
end=$(date +%s.%N)
if [ ! -s "$WORK/report.json" ]; then
    tail -20 "$WORK/time.txt" >&2
    exit 1
fi
grep "webdup: crawl" "$WORK/time.txt" || true
pages=$(python3 -c "import json; print(json.load(open('$WORK/report.json'))['summary']['documents'])")
echo "crawl: $pages pages in $(python3 -c "print(f'{$end - $start:.1f}')") s: $(python3 -c "print(f'{$pages / ($end - $start):.0f}')") pages/s (fetch, extract, fingerprint, cluster)"
grep -E "Maximum resident set size|Percent of CPU" "$WORK/time.txt" | sed 's/^\s*/crawl: /'
/usr/bin/time -v "$TARGET/release/examples/frontier_memory" "$QUEUED" 2> "$WORK/frontier.txt"
grep -E "Maximum resident set size" "$WORK/frontier.txt" | sed 's/^\s*/frontier: /'
