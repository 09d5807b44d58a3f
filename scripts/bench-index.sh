#!/usr/bin/env bash
# The index on disk at scale: builds an index of N generated text pages
# (default 1,000,000; WORDS words each, default 300, 30% planted near
# duplicates) with `webdup index add`, as a user would, in chunks of CHUNK
# pages (default 100,000: one `index add` each, so no one process holds the
# whole corpus, and the disk holds one chunk of text files at a time), then
# prints `index stats` (bytes per page), the wall time and peak RSS of the
# adds, and the time of `index query` for pages stored and pages not.
#   usage: scripts/bench-index.sh [PAGES] [WORDS] [CHUNK]
#   BENCH_DIR (default /tmp/webdup-bench-index) holds the index and a chunk;
#   BENCH_KEEP=1 keeps the index afterwards; WEBDUP=path runs another
#   webdup binary (an older release, to compare).
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-1000000}
words=${2:-300}
chunk=${3:-100000}
dir=${BENCH_DIR:-/tmp/webdup-bench-index}
index=$dir/index.db
command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null
cargo build --release --quiet --bin webdup --example synth_corpus
bin=${WEBDUP:-target/release/webdup}
rm -rf "$dir"
mkdir -p "$dir"
echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $pages pages of $words words, chunks of $chunk"

add_wall=0
peak=0
start=$(date +%s.%N)
for ((c = 0; c * chunk < pages; c++)); do
  n=$(( pages - c * chunk < chunk ? pages - c * chunk : chunk ))
  # One seed per chunk: other documents, each chunk in its own folders.
  target/release/examples/synth_corpus "$dir/chunk$c" "$n" "$words" $((c + 1))
  /usr/bin/time -f "%e %M" -o "$dir/time" \
    "$bin" index add --index "$index" --crawl bench --quiet "$dir/chunk$c" >/dev/null
  read -r wall rss <"$dir/time"
  add_wall=$(awk "BEGIN { print $add_wall + $wall }")
  (( rss > peak )) && peak=$rss
  echo "chunk $c: $n pages added in $wall s (peak RSS $((rss / 1024)) MB), load $(cut -d' ' -f1 /proc/loadavg)"
  # The first chunk's texts are kept for the queries below.
  if [ "$c" -gt 0 ]; then rm -rf "$dir/chunk$c"; fi
done
end=$(date +%s.%N)

"$bin" index stats --index "$index" >"$dir/stats.json"
grep -E '^  "(pages|band_rows|pending_pages|file_bytes|bytes_per_page)"' "$dir/stats.json"
# Queries: pages stored (the first chunk) and pages never stored (another seed).
target/release/examples/synth_corpus "$dir/unseen" 100 "$words" 999999
stored=$(find "$dir/chunk0" -name '*.txt' | sort | awk 'NR <= 100')
unseen=$(find "$dir/unseen" -name '*.txt' | sort)
for kind in stored unseen; do
  files=${!kind}
  t0=$(date +%s.%N)
  for f in $files; do "$bin" index query --index "$index" "$f" --quiet >/dev/null || true; done
  t1=$(date +%s.%N)
  echo "index query, 100 $kind pages one process each: $(awk "BEGIN { printf \"%.1f\", ($t1 - $t0) * 10 }") ms a query"
done
python3 - "$dir/stats.json" "$add_wall" "$peak" "$(awk "BEGIN { print $end - $start }")" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
add_wall, peak, total = float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
print(f"{s['pages']} pages, {s['file_bytes'] / 1e6:.0f} MB, {s['file_bytes'] // s['pages']} bytes per page; "
      f"index add {add_wall:.0f} s ({s['pages'] / add_wall:.0f} pages/s, corpus generation not counted; "
      f"{total:.0f} s in all), peak RSS {peak / 1024:.0f} MB (one add of a chunk)")
PY
if [ "${BENCH_KEEP:-0}" != 1 ]; then rm -rf "$dir"; fi
