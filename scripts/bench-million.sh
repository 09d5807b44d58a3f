#!/usr/bin/env bash
# A million pages on one machine (issue 38): `cluster` and `audit` over a
# generated site served on 127.0.0.1 (examples/audit_site.rs: synthetic
# 400-word texts, 30% edited copies, in a shop template, with canonical and
# robots setups; a sitemap index of 50,000-URL sitemaps), each run by the
# release binary under `--memory` as a user would run it, at a small size
# and at the full one, so wall time and memory per page can be compared.
# Prints one row per run: pages, wall, pages/s, peak RSS, KB per page
# between the two sizes. Not a test: figures go to docs/benchmarks.md.
#
#   scripts/bench-million.sh [PAGES] [SMALL] [MEMORY]
#   (defaults 1000000 20000 2G; COMMANDS="cluster audit" picks the runs;
#    OUT=DIR keeps the reports there; BASELINE=BINARY also runs an older
#    webdup, one without --memory, at the small size, before and after the
#    large run: the speed a page to match)
set -euo pipefail
PAGES=${1:-1000000}
SMALL=${2:-20000}
MEMORY=${3:-2G}
COMMANDS=${COMMANDS:-cluster audit}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/webdup-bench-million.XXXXXX)
OUT=${OUT:-$WORK/out}
mkdir -p "$OUT"
[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
cd "$ROOT"
cargo build --release --quiet --bin webdup --example audit_site
SERVER=
trap '[ -n "$SERVER" ] && kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT

serve() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null || true
    target/release/examples/audit_site "$1" > "$WORK/server.log" &
    SERVER=$!
    for _ in $(seq 3000); do grep -q "listening on" "$WORK/server.log" 2>/dev/null && break; sleep 0.1; done
    PORT=$(sed -n 's/listening on //p' "$WORK/server.log")
}

# One run: prints "command pages wall_s rss_kb" (BIN=BINARY: that webdup,
# without --memory).
run() {
    local command=$1 pages=$2 dest=$OUT/$1-$2 bin=${BIN:-target/release/webdup}
    local fetch=(--delay 0 --per-host 64 --concurrency 64 --quiet)
    [ -z "${BIN:-}" ] && fetch+=(--memory "$MEMORY")
    local args
    if [ "$command" = cluster ]; then
        args=(cluster "http://127.0.0.1:$PORT/sitemap.xml" -f json -o "$dest.json")
    else
        args=(audit "http://127.0.0.1:$PORT/sitemap.xml" --out "$dest")
    fi
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$bin" "${args[@]}" "${fetch[@]}" || true
    echo "$command $pages $(tail -1 "$WORK/time")"
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "memory budget: $MEMORY"
results=()
# The small runs around the baseline's: theirs, then this binary's again.
baseline=()
for n in "$SMALL" "$PAGES"; do
    serve "$n"
    for c in $COMMANDS; do
        results+=("$(run "$c" "$n")")
    done
done
if [ -n "${BASELINE:-}" ]; then
    # The older binary at the small size, twice, around one more run of
    # this one: the machine's drift shows in the pairs.
    serve "$SMALL"
    for c in $COMMANDS; do
        baseline+=("$(BIN=$BASELINE run "$c" "$SMALL")")
        baseline+=("$(run "$c" "$SMALL") this")
        baseline+=("$(BIN=$BASELINE run "$c" "$SMALL")")
    done
fi
printf '%-8s %10s %9s %10s %11s %14s\n' command pages wall_s pages/s peak_MB KB/page_above
for c in $COMMANDS; do
    small=$(printf '%s\n' "${results[@]}" | awk -v c="$c" -v n="$SMALL" '$1==c && $2==n')
    large=$(printf '%s\n' "${results[@]}" | awk -v c="$c" -v n="$PAGES" '$1==c && $2==n')
    for row in "$small" "$large"; do
        echo "$row $small" | awk '{
            pages=$2; wall=$3; rss=$4; srss=$8; spages=$6;
            above = (pages > spages) ? sprintf("%.2f", (rss - srss) / (pages - spages)) : "-";
            printf "%-8s %10d %9.1f %10.0f %11.0f %14s\n", $1, pages, wall, pages / wall, rss / 1024, above }'
    done
done
for row in "${baseline[@]}"; do
    echo "$row" | awk '{ printf "%-8s %10d %9.1f %10.0f %11.0f %14s\n", $1, $2, $3, $2 / $3, $4 / 1024, ($5 ? "(this, again)" : "(baseline)") }'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
