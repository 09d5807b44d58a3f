#!/usr/bin/env bash
# What webdup's Scrapy pipeline costs a crawl (issue 39): a real Scrapy crawl
# of a corpus served on loopback, without and with the pipeline, ROUNDS
# times each; CPU ms per page and peak RSS (crates/python/bench/bench_scrapy.py
# says what is measured). Builds the release wheel, installs it in a venv
# beside the tests' pinned Scrapy, and crawls CORPUS (default
# /tmp/ndc-scrapy-2000, made from ../shared/data by the near_dup_corpus
# example when missing: 2,000 pages, about 10 a site).
#
#   usage: scripts/bench-scrapy.sh [CORPUS] [ROUNDS]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-/tmp/ndc-scrapy-2000}
rounds=${2:-3}
venv=${BENCH_VENV:-/tmp/webdup-scrapy-bench-venv}
cd "$repo"
if [ ! -d "$corpus/pages" ]; then
  # Fewer sites than loopback addresses: each is served on one of its own.
  cargo run --quiet --example near_dup_corpus -- --data ../shared/data --out "$corpus" --pages 2000 --seed 1 \
    --pages-per-template 10
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r crates/python/tests/requirements.txt
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target} "$venv/bin/maturin" build --quiet --release \
  -m crates/python/Cargo.toml --out "$wheels"
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/webdup-*.whl
echo "nproc $(nproc), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$venv/bin/python" crates/python/bench/bench_scrapy.py "$corpus" "$rounds"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
