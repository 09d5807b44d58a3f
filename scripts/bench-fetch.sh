#!/usr/bin/env bash
# Fetch benchmark: COUNT (default 100,000) small HTML pages served by nginx on
# 127.0.0.1, fetched and decoded by examples/fetch_bench.rs with per-host
# limits lifted. Prints pages/s and the peak RSS (from /usr/bin/time -v).
# Targets (issue 3): >= 2,000 pages/s on 2 cores, peak memory < 300 MB.
#
#   scripts/bench-fetch.sh [COUNT] [CONCURRENCY]
#
# Installs nginx (and GNU time) from Debian with apt-get when missing.
set -euo pipefail

COUNT=${1:-100000}
CONCURRENCY=${2:-64}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PORT=${PORT:-18089}

# shellcheck source=lib/nginx.sh
source "$ROOT/scripts/lib/nginx.sh"
nginx_work bench-fetch

echo "generating $COUNT pages in $WORK/site" >&2
mkdir -p "$WORK/site/p"
python3 - "$WORK/site/p" "$COUNT" <<'PY'
import random, sys
out, n = sys.argv[1], int(sys.argv[2])
words = "the quick brown fox jumps over lazy dog river bank today again page near duplicate web content".split()
rng = random.Random(42)
for i in range(n):
    body = " ".join(rng.choice(words) for _ in range(60))
    with open(f"{out}/{i}.html", "w") as f:
        f.write(f"<!doctype html><html><head><meta charset=utf-8><title>Page {i}</title></head>"
                f"<body><h1>Page {i}</h1><p>{body}</p></body></html>\n")
PY

nginx_serve "$WORK/site" "$PORT" /p/0.html

cd "$ROOT"
cargo build --release --example fetch_bench >&2
/usr/bin/time -v "$ROOT/target/release/examples/fetch_bench" "http://127.0.0.1:$PORT" "$COUNT" "$CONCURRENCY" \
    2> "$WORK/time.txt"
grep -E "Maximum resident set size|Elapsed \(wall clock\)|Percent of CPU" "$WORK/time.txt" | sed 's/^\s*//'
