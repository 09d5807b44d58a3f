#!/usr/bin/env bash
# End-to-end clustering benchmark: 100,000 text documents of 500 words
# (30% planted near-duplicates), clustered by the release binary as a user
# would run it. Prints wall time, documents/s and peak memory.
#   usage: scripts/bench-cluster.sh [DOCS] [WORDS] [extra webdup flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-100000}
words=${2:-500}
shift $(( $# > 2 ? 2 : $# ))
corpus=${BENCH_DIR:-/tmp/webdup-bench-$docs-$words}
command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null
cargo build --release --quiet --bin webdup --example synth_corpus
if [ ! -d "$corpus" ]; then
  echo "generating $docs documents in $corpus"
  target/release/examples/synth_corpus "$corpus" "$docs" "$words"
fi
find "$corpus" -type f -exec cat {} + >/dev/null   # warm the page cache: measure webdup, not the disk
/usr/bin/time -f "wall %e s, peak RSS %M KiB, CPU %P" \
  target/release/webdup cluster "$corpus" --format json --output /tmp/webdup-bench-report.json --quiet "$@" || true
python3 - "$docs" <<'PY'
import json, sys
r = json.load(open("/tmp/webdup-bench-report.json"))
s = r["summary"]
print(f"{s['fingerprinted']} documents, {s['clusters']} clusters, {s['candidate_pairs']} candidates, {s['confirmed_pairs']} confirmed pairs")
PY
