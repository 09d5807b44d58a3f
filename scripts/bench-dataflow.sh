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
# The four run in turn, ROUNDS times (BENCH_ROUNDS, default 5): the speed
# of this VM's cores drifts by 10-20% over a minute, so each round's
# figures are printed, then the median of each over the rounds, and the
# ratios are taken from the medians.
# WARC.gz to clusters: MB/s per core of the compressed archive (once).
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
# The input read into the page cache before every timed run: this VM's
# proactive reclaim (DAMON) evicts files left cold for a few seconds, and a
# run that finds its input on disk waits for it (10-14 MB/s read in a
# cluster run of 6.8 s instead of 4.5 s).
warm() { find "$corpus" -type f -exec cat {} + >/dev/null; }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

now() { date +%s.%N; }
report() { # name seconds cores
  python3 -c "import sys; n=$docs; s=float(sys.argv[2]); c=int(sys.argv[3]); print(f'{sys.argv[1]:<14} {s:8.2f} s  {n/s:9.0f} docs/s  {n/s/c:9.0f} docs/s/core')" "$@"
}

single() { # writes $out/single.json; prints the seconds
  warm; sync
  local t0; t0=$(now)
  "$W" cluster "$corpus" -q -f json -o "$out/single.json" || true
  echo "$(now) - $t0" | bc
}

dist() { # name tasks processes workers rayon-threads [cpu to pin every process to]
  local name=$1 tasks=$2 procs=$3 workers=$4 rayon=$5 work="$out/work-$1"
  local -a pin=()
  [ -n "${6:-}" ] && pin=(taskset -c "$6")
  # The earlier runs' files written back before the clock starts: on a VM
  # the write-back takes the guest's CPU, which would go to this run.
  warm; sync
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
    -f json -o "$out/$name.json" 2> "$out/$name.err" &
  local first=$!
  for p in $(seq 1 $((procs - 1))); do
    RAYON_NUM_THREADS=$rayon "${pin[@]}" "$W" dcluster --work "$work" -w "$workers" -n "$procs" -p "$p" --hostfile "$hosts" -q &
  done
  wait "$first" || true
  wait
  local end; end=$(now)
  cmp -s "$out/single.json" "$out/$name.json" && same="identical to cluster" || same="DIFFERS from cluster"
  rm -rf "$work"
  local stages; stages=$(sed -n 's/^stage \([a-z]*\): done in \(.*\) s$/\1 \2/p' "$out/$name.err" | paste -sd, - | sed 's/,/, /g')
  echo "$(echo "$end - $start" | bc) $same (ingest $(printf %.2f "$(echo "$ingested - $start" | bc)") s, dcluster $(printf %.2f "$(echo "$end - $ingested" | bc)") s: $stages)"
}

rounds=${BENCH_ROUNDS:-5}
declare -a t_single t_1x2 t_one t_two
for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds"
  t_single+=("$(single)"); report cluster "${t_single[-1]}" "$(nproc)"
  read -r s same <<< "$(dist 1x2 1 1 2 "$(nproc)")"; t_1x2+=("$s")
  report "dist 1x2" "$s" "$(nproc)"; echo "               $same; $(python3 -c "print(f'{$s/${t_single[-1]}*100-100:+.1f}% against cluster')")"
  read -r one same <<< "$(dist 1core 1 1 1 1 0)"; t_one+=("$one"); report "dist 1 core" "$one" 1; echo "               $same"
  read -r two same <<< "$(dist 2procs 2 2 1 1)"; t_two+=("$two")
  report "dist 2 procs" "$two" 2; echo "               $same; $(python3 -c "print(f'{$one/$two:.2f}x one process')")"
done
median() { printf '%s\n' "$@" | sort -g | python3 -c "import sys; v=[float(x) for x in sys.stdin]; print(v[len(v)//2] if len(v)%2 else (v[len(v)//2-1]+v[len(v)//2])/2)"; }
ms=$(median "${t_single[@]}"); m12=$(median "${t_1x2[@]}"); m1=$(median "${t_one[@]}"); m2=$(median "${t_two[@]}")
echo "median of $rounds rounds"
report cluster "$ms" "$(nproc)"
report "dist 1x2" "$m12" "$(nproc)"; echo "               $(python3 -c "print(f'{$m12/$ms*100-100:+.1f}% against cluster')")"
report "dist 1 core" "$m1" 1
report "dist 2 procs" "$m2" 2; echo "               $(python3 -c "print(f'{$m1/$m2:.2f}x one process')")"

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
warc_single=$(single)
python3 -c "print(f'WARC.gz {$mb:.0f} MB: cluster     {$warc_single:8.2f} s  {$mb/$warc_single/$(nproc):6.2f} MB/s/core')"
read -r w same <<< "$(dist warc2 2 2 1 1)"
python3 -c "print(f'WARC.gz {$mb:.0f} MB: dist 2 procs {$w:8.2f} s  {$mb/$w/2:6.2f} MB/s/core  ($same)')"
