#!/usr/bin/env bash
# The Python package against trafilatura + datasketch's MinHashLSH on the
# same pages, side by side in one run (scripts/bench_python.py says what is
# timed). Builds the release wheel, installs it with the peers (pinned) in a
# venv, and runs on CORPUS (default /tmp/ndc-2500, made from ../shared/data
# by the near_dup_corpus example when missing).
#
#   usage: scripts/bench-python.sh [CORPUS]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-/tmp/ndc-2500}
venv=${BENCH_VENV:-/tmp/webdup-python-bench-venv}
cd "$repo"
if [ ! -d "$corpus/pages" ]; then
  cargo run --release --quiet --example near_dup_corpus -- --data ../shared/data --out "$corpus" --pages 2500 --seed 1
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check maturin==1.16.0 pyarrow==26.0.1 datasketch==2.0.0 \
  trafilatura==2.3.1 lxml_html_clean==0.4.6
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
# The workspace target directory: its release build of the dependencies is reused.
CARGO_TARGET_DIR=$repo/target "$venv/bin/maturin" build --quiet --release \
  -m crates/python/Cargo.toml --out "$wheels"
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/webdup-*.whl
echo "nproc $(nproc), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$venv/bin/python" scripts/bench_python.py "$corpus/pages"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
