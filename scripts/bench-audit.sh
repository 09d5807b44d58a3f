#!/usr/bin/env bash
# Audit benchmark: COUNT (default 10,000) generated pages served on
# 127.0.0.1 by examples/audit_site.rs (synthetic texts, 30% edited copies,
# canonical and noindex setups, ten 404s), audited by the release binary
# through the site's sitemap. Prints wall time, peak RSS and report sizes.
#
# Measured on 2 cores: 10,000 pages (10,010 URLs) in 8.2 s wall, 284 MB peak
# RSS; report.html 2.8 MB, report.json 7.3 MB, pages.csv 1.9 MB.
#
#   scripts/bench-audit.sh [COUNT]        (OUT=DIR keeps the report there)
set -euo pipefail
COUNT=${1:-10000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/webdup-bench-audit.XXXXXX)
OUT=${OUT:-$WORK/report}
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
cd "$ROOT"
cargo build --release --quiet --bin webdup --example audit_site

target/release/examples/audit_site "$COUNT" > "$WORK/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do grep -q "listening on" "$WORK/server.log" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/listening on //p' "$WORK/server.log")

echo "auditing $COUNT pages from http://127.0.0.1:$PORT/sitemap.xml" >&2
/usr/bin/time -v target/release/webdup audit "http://127.0.0.1:$PORT/sitemap.xml" --out "$OUT" \
    --delay 0 --per-host 64 --concurrency 64 --quiet 2> "$WORK/time.txt" || true
grep -E "Elapsed \(wall clock\)|Maximum resident set size|Percent of CPU" "$WORK/time.txt" | sed 's/^\s*//'
ls -l "$OUT" | awk 'NR>1 {printf "%-14s %8.1f KB\n", $9, $5/1024}'
python3 - "$OUT/report.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print(f"{s['pages']} pages, {s['analysed']} analysed, {s['errors']} errors, {s['clusters']} clusters "
      f"({s['clusters_handled']} handled, {s['clusters_with_problems']} with problems), "
      f"{s['duplicate_title_groups']} duplicate titles, {s['thin_pages']} thin")
PY
