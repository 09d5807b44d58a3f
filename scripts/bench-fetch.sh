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
WORK=$(mktemp -d /tmp/webdup-bench-fetch.XXXXXX)
PORT=${PORT:-18089}

need() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
if ! need nginx || [ ! -x /usr/bin/time ]; then
    apt-get update -qq
    apt-get install -y -qq nginx-light time >/dev/null 2>&1 || apt-get install -y -qq nginx time >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

cleanup() {
    if [ -f "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

echo "generating $COUNT pages in $WORK/site" >&2
mkdir -p "$WORK/site/p" "$WORK/logs"
chmod 755 "$WORK"  # nginx workers run unprivileged and must read the pages
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

cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    types { text/html html; }
    default_type text/html;
    server {
        listen 127.0.0.1:$PORT;
        root $WORK/site;
        location = /robots.txt { return 404; }
    }
}
CONF
"$NGINX" -c "$WORK/nginx.conf" -p "$WORK"
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$PORT/p/0.html" >/dev/null 2>&1 && break
    sleep 0.1
done

cd "$ROOT"
cargo build --release --example fetch_bench >&2
/usr/bin/time -v "$ROOT/target/release/examples/fetch_bench" "http://127.0.0.1:$PORT" "$COUNT" "$CONCURRENCY" \
    2> "$WORK/time.txt"
grep -E "Maximum resident set size|Elapsed \(wall clock\)|Percent of CPU" "$WORK/time.txt" | sed 's/^\s*//'
