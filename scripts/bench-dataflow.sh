#!/usr/bin/env bash
# The distributed path against `webdup cluster`, side by side in one run,
# on DOCS text documents (default 100,000 of 500 words, 30% planted
# near-duplicates; the corpus of scripts/bench-cluster.sh) and on the same
# documents as HTML pages in a WARC.gz.
#
# Text to clusters (ingest + dcluster), each report checked with cmp
# against `webdup cluster`'s:
#   cluster        webdup cluster, every core
#   dist 1x2       1 ingest task + dcluster -n 1 -w 2, every core
#   dist 1 core    1 ingest task + dcluster -n 1 -w 1, RAYON_NUM_THREADS=1,
#                  pinned to CPU 0 (taskset), which ingest's writer
#                  thread shares
#   dist 2 procs   2 ingest tasks at once + dcluster -n 2 -w 1 on loopback,
#                  RAYON_NUM_THREADS=1 in each process
# documents/s per core = documents / wall / cores used.
# WARC.gz to clusters: MB/s per core of the compressed archive.
#
#   scripts/bench-dataflow.sh [DOCS] [WORDS]
# BENCH_SKIP_WARC=1 stops after the text runs.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-100000}
words=${2:-500}
corpus=${BENCH_DIR:-/tmp/webdup-bench-$docs-$words}
out=$(mktemp -d /tmp/webdup-bench-dataflow.XXXXXX)
trap 'rm -rf "$out"' EXIT
cargo build --release --quiet --bin webdup --example synth_corpus
W=$PWD/target/release/webdup
if [ ! -d "$corpus" ]; then
  echo "generating $docs documents in $corpus" >&2
  target/release/examples/synth_corpus "$corpus" "$docs" "$words"
fi
find "$corpus" -type f -exec cat {} + >/dev/null   # warm the page cache
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

now() { date +%s.%N; }
report() { # name seconds cores
  python3 -c "import sys; n=$docs; s=float(sys.argv[2]); c=int(sys.argv[3]); print(f'{sys.argv[1]:<14} {s:8.2f} s  {n/s:9.0f} docs/s  {n/s/c:9.0f} docs/s/core')" "$@"
}

sync; t0=$(now)
"$W" cluster "$corpus" -q -f json -o "$out/single.json" || true
t1=$(now); single=$(echo "$t1 - $t0" | bc); report cluster "$single" "$(nproc)"

dist() { # name tasks processes workers rayon-threads [cpu to pin every process to]
  local name=$1 tasks=$2 procs=$3 workers=$4 rayon=$5 work="$out/work-$1"
  local -a pin=()
  [ -n "${6:-}" ] && pin=(taskset -c "$6")
  # The earlier runs' files written back before the clock starts: on a VM
  # the write-back takes the guest's CPU, which would go to this run.
  sync
  local start; start=$(now)
  for t in $(seq 0 $((tasks - 1))); do
    RAYON_NUM_THREADS=$rayon "${pin[@]}" "$W" ingest "$corpus" --work "$work" --task "$t/$tasks" -q &
  done
  wait
  local ingested; ingested=$(now)
  local hosts="$out/hosts-$name"
  : > "$hosts"
  for p in $(seq 0 $((procs - 1))); do echo "127.0.0.1:$((2300 + p))" >> "$hosts"; done
  # Process 0 writes the report; the processes find each other in any
  # start order (a refused connection is retried every 5 ms).
  RAYON_NUM_THREADS=$rayon "${pin[@]}" "$W" dcluster --work "$work" -w "$workers" -n "$procs" -p 0 --hostfile "$hosts" \
    -q -f json -o "$out/$name.json" &
  local first=$!
  for p in $(seq 1 $((procs - 1))); do
    RAYON_NUM_THREADS=$rayon "${pin[@]}" "$W" dcluster --work "$work" -w "$workers" -n "$procs" -p "$p" --hostfile "$hosts" -q &
  done
  wait "$first" || true
  wait
  local end; end=$(now)
  cmp -s "$out/single.json" "$out/$name.json" && same="identical to cluster" || same="DIFFERS from cluster"
  rm -rf "$work"
  echo "$(echo "$end - $start" | bc) $same (ingest $(printf %.2f "$(echo "$ingested - $start" | bc)") s, dcluster $(printf %.2f "$(echo "$end - $ingested" | bc)") s)"
}

read -r s same <<< "$(dist 1x2 1 1 2 "$(nproc)")"; report "dist 1x2" "$s" "$(nproc)"; echo "               $same; $(python3 -c "print(f'{$s/$single*100-100:+.1f}% against cluster')")"
read -r one same <<< "$(dist 1core 1 1 1 1 0)"; report "dist 1 core" "$one" 1; echo "               $same"
read -r two same <<< "$(dist 2procs 2 2 1 1)"; report "dist 2 procs" "$two" 2; echo "               $same; $(python3 -c "print(f'{$one/$two:.2f}x one process')")"

[ -n "${BENCH_SKIP_WARC:-}" ] && exit 0

# The same documents as HTML responses in 8 WARC.gz archives (a gzip member
# per record, as Common Crawl writes them), for the tasks to share.
mkdir -p "$out/warc"
python3 - "$corpus" "$out/warc" <<'PY'
import gzip, os, sys, uuid
src, dst = sys.argv[1], sys.argv[2]
folders = sorted(os.listdir(src))
for part in range(8):
  with open(os.path.join(dst, f"crawl-{part}.warc.gz"), "wb") as f:
    for folder in folders[part::8]:
        for name in sorted(os.listdir(os.path.join(src, folder))):
            text = open(os.path.join(src, folder, name), encoding="utf-8").read()
            body = f"<html><head><title>{name}</title></head><body><article><p>{text}</p></article></body></html>".encode()
            http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body) + body
            url = f"https://bench.example/{folder}/{name}.html"
            head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nWARC-Record-ID: <urn:uuid:{uuid.uuid4()}>\r\n"
                    f"WARC-Date: 2026-11-26T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n").encode()
            f.write(gzip.compress(head + http + b"\r\n\r\n", compresslevel=6))
PY
mb=$(du -sb "$out/warc" | python3 -c "import sys; print(int(sys.stdin.read().split()[0])/1e6)")
corpus="$out/warc"
sync; t0=$(now); "$W" cluster "$corpus" -q -f json -o "$out/single.json" || true; t1=$(now)
warc_single=$(echo "$t1 - $t0" | bc)
python3 -c "print(f'WARC.gz {$mb:.0f} MB: cluster     {$warc_single:8.2f} s  {$mb/$warc_single/$(nproc):6.2f} MB/s/core')"
read -r w same <<< "$(dist warc2 2 2 1 1)"
python3 -c "print(f'WARC.gz {$mb:.0f} MB: dist 2 procs {$w:8.2f} s  {$mb/$w/2:6.2f} MB/s/core  ($same)')"
