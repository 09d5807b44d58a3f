#!/usr/bin/env bash
# Side-by-side near-duplicate benchmark (issue 13): webdup against the Python
# peer pipeline trafilatura + rensa (scripts/peer_trafilatura_rensa.py) on a
# labelled corpus, both on all cores, scored by `webdup eval cluster`.
# Prints precision, recall, F1, thin-page false merges, wall time, peak RSS
# and the speed ratio peer/webdup.
#
#   usage: scripts/bench-near-dup.sh [CORPUS] [extra webdup cluster flags...]
#
# CORPUS (default /tmp/ndc-2500) holds pages/ and truth.tsv; make it with
#   cargo run --release --example near_dup_corpus -- --data ../shared/data --out CORPUS --pages 2500 --seed 1
# Env: RUNS (runs of each pipeline, default 3; the median is shown),
# WEBDUP (default target/release/webdup), PEER_VENV (default
# /tmp/webdup-peer-venv, created on first use), PEER_FLAGS (extra flags for
# the peer script, e.g. "--verify 0.8"). Writes webdup.json, peer.json and
# their eval-*.json into CORPUS.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
corpus=/tmp/ndc-2500
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then corpus=$1; shift; fi
corpus=$(cd "$corpus" && pwd)
webdup=$(realpath -m "${WEBDUP:-$repo/target/release/webdup}")
venv=${PEER_VENV:-/tmp/webdup-peer-venv}
[ -x "$webdup" ] || { echo "no webdup binary at $webdup (cargo build --release, or set WEBDUP)" >&2; exit 1; }
[ -f "$corpus/truth.tsv" ] || { echo "$corpus has no truth.tsv" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null

# (a) The peer's venv, pinned. lxml_html_clean is listed because jusText
# (a trafilatura dependency) imports lxml.html.clean, which lxml 6 no longer
# ships and whose `lxml[html_clean]` extra lxml 6.1 no longer declares.
pins=(trafilatura==2.3.1 rensa==0.5.0 lxml_html_clean==0.4.6)
py=$venv/bin/python
if ! "$py" - "${pins[@]}" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit(any(version(n) != v for n, v in (p.split("==") for p in sys.argv[1:])))
PY
then
  echo "installing ${pins[*]} into $venv"
  start=$(date +%s.%N)
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
  awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "pip install took %.1f s\n", b - a }'
fi
"$py" -c 'import trafilatura, rensa' # fail early on a broken venv
echo "peer: $("$venv/bin/pip" list --disable-pip-version-check 2>/dev/null | grep -iE '^(trafilatura|rensa|lxml|lxml_html_clean) ' | tr -s ' ' | paste -sd, -)"
echo "webdup: $("$webdup" --version), flags: ${*:-(defaults)}"
echo "nproc $(nproc), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

cd "$corpus"
# (b) Warm the page cache: measure the pipelines, not the disk.
find pages -type f -exec cat {} + >/dev/null

# (c) Both pipelines as a user runs them, under /usr/bin/time, RUNS times
# each (default 3), taking turns, so that a slow spell of a shared machine
# falls on both; the table shows the median run of each.
runs=${RUNS:-3}
run() { # NAME N OUT COMMAND...
  local name=$1 n=$2 out=$3; shift 3
  rm -f "$out"
  /usr/bin/time -f "%e s wall, %M KiB peak" -o "time-$name-$n.txt" "$@" || true
  [ -s "$out" ] || { echo "$name wrote no $out" >&2; exit 1; }
  echo "$name run $n: $(cat "time-$name-$n.txt")"
}
for n in $(seq "$runs"); do
  run webdup "$n" webdup.json "$webdup" cluster pages -f json -o webdup.json --quiet "$@"
  # shellcheck disable=SC2086 # PEER_FLAGS is a list of flags
  run peer "$n" peer.json "$py" "$repo/scripts/peer_trafilatura_rensa.py" pages -o peer.json ${PEER_FLAGS:-}
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# (d) Score both and print one table.
"$webdup" eval cluster truth.tsv webdup.json -f json >eval-webdup.json
"$webdup" eval cluster truth.tsv peer.json -f json >eval-peer.json
python3 - "$runs" "webdup ${*:-}" "trafilatura+rensa ${PEER_FLAGS:-}" <<'PY'
import json, re, statistics, sys
runs = int(sys.argv[1])
rows = []
for key, label in zip(("webdup", "peer"), sys.argv[2:]):
    e = json.load(open(f"eval-{key}.json"))
    timed = [
        tuple(map(float, re.match(r"([\d.]+) s wall, (\d+) KiB", open(f"time-{key}-{n}.txt").read().splitlines()[-1]).groups()))
        for n in range(1, runs + 1)
    ]
    wall = statistics.median(t[0] for t in timed)
    kib = max(t[1] for t in timed)
    thin = next((k["false_merge_pairs"] for k in e["kinds"] if k["kind"] == "thin"), "-")
    rows.append((label.strip(), e["precision"], e["recall"], e["f1"], thin, wall, kib / 1024))
base = rows[0][5]
print(f"\n{'pipeline':<44} {'precision':>9} {'recall':>7} {'F1':>7} {'thin FM':>7} {'wall s':>7} {'peak MiB':>8} {'wall/webdup':>11}")
for label, p, r, f1, thin, wall, mib in rows:
    print(f"{label:<44} {p:9.4f} {r:7.4f} {f1:7.4f} {thin:>7} {wall:7.2f} {mib:8.0f} {wall / base:10.2f}x")
print(f"wall: median of {runs} runs each, taken in turns. thin FM: false-merge pairs with a thin page.")
print("Peak RSS is the largest single process (the peer's pool workers are not summed).")
PY
