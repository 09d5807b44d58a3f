#!/usr/bin/env bash
# Rendering benchmark: COUNT (default 200) client-rendered pages (an empty
# <div id="root">, the article as inline JSON, /app.js writing it into the
# DOM) served on 127.0.0.1 by python3's threading HTTP server, clustered by the
# release binary with `--render on` and the default pool (one tab per
# core); beside it, the pre-rendered versions of the same pages fetched
# without rendering. Prints pages/s for both.
#
#   scripts/bench-render.sh [COUNT]       (CHROMIUM=PATH to choose the browser)
set -euo pipefail
COUNT=${1:-200}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/webdup-bench-render.XXXXXX)
cd "$ROOT"
cargo build --release --quiet --bin webdup

python3 - "$WORK/site" "$COUNT" <<'PY'
import json, os, random, sys
root, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(39)
vocab = [w.strip() for w in """harbour ferry island winter timetable bicycle market lighthouse keeper lamp channel
storm coast village baker bread oven flour morning river bridge council school garden orchard apple pear cider
festival music choir church bell tower clock station train platform ticket museum painting gallery library book
reader poem author meadow sheep shepherd hill valley stream mill wheel stone wall castle knight horse saddle road
inn traveller""".split()]
os.makedirs(f"{root}/csr"); os.makedirs(f"{root}/ssr")
open(f"{root}/app.js", "w").write("""
const d = JSON.parse(document.getElementById('data').textContent);
const a = document.createElement('article');
const h = document.createElement('h1'); h.textContent = d.title; a.appendChild(h);
for (const t of d.paragraphs) { const p = document.createElement('p'); p.textContent = t; a.appendChild(p); }
document.getElementById('root').appendChild(a);
""")
with open(f"{root}/urls-csr.txt", "w") as csr, open(f"{root}/urls-ssr.txt", "w") as ssr:
    for i in range(count):
        title = f"Article {i}"
        paras = [" ".join(rng.choice(vocab) for _ in range(80)) for _ in range(5)]
        data = json.dumps({"title": title, "paragraphs": paras})
        open(f"{root}/csr/{i}.html", "w").write(
            f'<!doctype html><html><head><title>{title}</title></head><body><div id="root"></div>'
            f'<script type="application/json" id="data">{data}</script><script src="/app.js"></script></body></html>')
        body = "".join(f"<p>{p}</p>" for p in paras)
        open(f"{root}/ssr/{i}.html", "w").write(
            f'<!doctype html><html><head><title>{title}</title></head><body><div id="root"><article>'
            f'<h1>{title}</h1>{body}</article></div></body></html>')
        csr.write(f"/csr/{i}.html\n"); ssr.write(f"/ssr/{i}.html\n")
PY
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# http.server's own listen queue (5) would refuse connections at 64 at once.
python3 - "$PORT" "$WORK/site" > "$WORK/server.log" 2>&1 <<'PY' &
import functools, http.server, sys
class Server(http.server.ThreadingHTTPServer):
    request_queue_size = 1024
    daemon_threads = True
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass
handler = functools.partial(Quiet, directory=sys.argv[2])
Server(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
PY
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/app.js" >/dev/null && break; sleep 0.1; done
sed "s|^|http://127.0.0.1:$PORT|" "$WORK/site/urls-csr.txt" > "$WORK/csr.txt"
sed "s|^|http://127.0.0.1:$PORT|" "$WORK/site/urls-ssr.txt" > "$WORK/ssr.txt"

CHROMIUM_ARGS=()
[ -n "${CHROMIUM:-}" ] && CHROMIUM_ARGS=(--chromium "$CHROMIUM")
FLAGS=(--format json --delay 0 --per-host 64 --concurrency 64 --quiet)
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
rate() { # label, list, extra flags...
    local label=$1 list=$2; shift 2
    local t0 t1
    t0=$(date +%s.%N)
    target/release/webdup cluster "${FLAGS[@]}" "$@" "$list" > "$WORK/out.json" || true
    t1=$(date +%s.%N)
    python3 - "$WORK/out.json" "$label" "$t0" "$t1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); label = sys.argv[2]; secs = float(sys.argv[4]) - float(sys.argv[3])
fetches = r.get("fetches", [])
rendered = sum(1 for f in fetches if f.get("rendered"))
ok = sum(1 for f in fetches if not f.get("error"))
errors = {}
for e in r.get("errors", []):
    errors[e["message"][:60]] = errors.get(e["message"][:60], 0) + 1
print(f"{label}: {len(fetches)} pages in {secs:.1f} s = {len(fetches)/secs:.1f} pages/s "
      f"({ok} fetched, {rendered} rendered, {len(r.get('errors', []))} errors)")
for m, n in sorted(errors.items(), key=lambda x: -x[1])[:5]:
    print(f"  {n} x {m}")
PY
}
rate "plain fetch (pre-rendered pages)" "$WORK/ssr.txt"
rate "rendered (--render on, default pool)" "$WORK/csr.txt" --render on "${CHROMIUM_ARGS[@]}"
