#!/usr/bin/env bash
# Two webdup binaries side by side on one corpus: `cluster` run by each in
# turns, RUNS times (default 5), so a slow spell of a shared machine falls
# on both. Prints each run, the median wall time and peak RSS of each, and
# the ratio new/old. For "within 10% of today's speed" checks: build the old
# commit's binary first (git worktree + cargo build --release) and pass both.
#
#   usage: scripts/bench-versions.sh OLD_BINARY NEW_BINARY CORPUS_DIR [extra cluster flags...]
#
# CORPUS_DIR holds pages/ (e.g. the near-duplicate corpus of
# examples/near_dup_corpus.rs). With a truth.tsv there, each binary's
# report is also scored by the new binary's `eval cluster`.
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,13p "$0" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") corpus=$(realpath "$3")
shift 3
for b in "$old" "$new"; do [ -x "$b" ] || { echo "not an executable: $b" >&2; exit 1; }; done
[ -d "$corpus/pages" ] || { echo "$corpus has no pages/ folder" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || apt-get install -y time >/dev/null
runs=${RUNS:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$corpus"
find pages -type f -exec cat {} + >/dev/null # warm the page cache
echo "nproc $(nproc), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "old: $old ($("$old" --version))"
echo "new: $new ($("$new" --version))"
for n in $(seq "$runs"); do
  for which in old new; do
    bin=$old; [ "$which" = new ] && bin=$new
    /usr/bin/time -f "%e %M" -o "$out/$which-$n.time" "$bin" cluster pages -f json -o "$out/$which.json" --quiet "$@"
    echo "$which run $n: $(awk '{ printf "%.2f s wall, %d MiB peak", $1, $2 / 1024 }' "$out/$which-$n.time")"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$runs" <<'PY'
import statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
med = {}
for which in ("old", "new"):
    t = [tuple(map(float, open(f"{out}/{which}-{n}.time").read().split()[-2:])) for n in range(1, runs + 1)]
    med[which] = statistics.median(x[0] for x in t)
    print(f"{which}: median {med[which]:.2f} s wall of {runs}, peak {max(x[1] for x in t) / 1024:.0f} MiB")
print(f"new/old wall: {med['new'] / med['old']:.3f}")
PY
if [ -f truth.tsv ]; then
  for which in old new; do
    echo "$which: $("$new" eval cluster truth.tsv "$out/$which.json" | sed -n 2p)"
  done
fi
