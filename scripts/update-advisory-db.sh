#!/usr/bin/env bash
# Refresh the RustSec advisory database snapshot that `.ci/run` audits
# Cargo.lock against (`cargo audit --no-fetch`): CI machines reach the crate
# registries but not GitHub, where the database lives.
#
#   scripts/update-advisory-db.sh                 # clone it from GitHub
#   scripts/update-advisory-db.sh PATH-TO-CLONE   # or use a clone you have
#
# Writes .ci/advisory-db.tar.gz (the `crates/` advisories, CC0-1.0) and
# .ci/advisory-db.commit (the database commit and its date). Commit both.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=${1:-}
if [[ -z "$repo" ]]; then
    repo=$(mktemp -d)
    trap 'rm -rf "$repo"' EXIT
    git clone --quiet --depth 1 https://github.com/rustsec/advisory-db "$repo"
fi
git -C "$repo" archive --format=tar.gz HEAD crates > .ci/advisory-db.tar.gz
git -C "$repo" log -1 --format='%H %cs' > .ci/advisory-db.commit
echo "advisory database at $(cat .ci/advisory-db.commit): $(git -C "$repo" ls-tree -r --name-only HEAD crates | wc -l) advisories"
