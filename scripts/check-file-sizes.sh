#!/usr/bin/env bash
# Fails, listing them, when a Rust source under crates/ has more than
# MAX_LINES lines before its test module: a file that size holds more than
# one responsibility (ARCHITECTURE.md). A file's own tests do not count: the
# count stops at the first `#[cfg(test)]` at column 0, or is the whole file.
set -euo pipefail
cd "$(dirname "$0")/.."
max=${MAX_LINES:-900}
over=$(find crates -name '*.rs' -not -path '*/target/*' -print0 | sort -z |
    xargs -0 awk -v max="$max" '
        FNR == 1 { if (NR > 1) report(); file = FILENAME; n = 0; done = 0 }
        /^#\[cfg\(test\)\]/ { done = 1 }
        !done { n++ }
        END { if (NR > 0) report() }
        function report() { if (n > max) printf "%6d  %s\n", n, file }
    ')
if [ -n "$over" ]; then
    echo "Rust files over $max lines before their tests (split them by responsibility):" >&2
    echo "$over" >&2
    exit 1
fi
