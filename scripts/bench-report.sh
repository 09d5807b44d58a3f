#!/usr/bin/env bash
# Report benchmark: audits COUNT (default 100,000) generated pages served on
# 127.0.0.1 by examples/audit_site.rs (as scripts/bench-audit.sh does, release
# build), then opens the paged report.html from disk in headless Chromium,
# driven over the DevTools protocol (--remote-debugging-pipe), and times
# what a reader waits for: the first screen, sorting a column of each big
# table, filtering the pages, and a cluster's diff (the cluster first on
# the screen and the last cluster, whose chunk is the farthest). The goal is
# under 2 s each. Prints the timings, the report's sizes and the machine's
# load.
#
#   scripts/bench-report.sh [COUNT]     (OUT=DIR keeps the report there;
#                                         REPORT=DIR skips the audit and
#                                         times an existing report; SCALE=10
#                                         times a copy of it made ten times
#                                         larger by scripts/report_scale.py)
set -euo pipefail
COUNT=${1:-100000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/webdup-bench-report.XXXXXX)
trap 'kill ${SERVER:-} 2>/dev/null || true; rm -rf "$WORK"' EXIT
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome) \
    || { echo "chromium not found: apt-get install -y chromium" >&2; exit 2; }
cd "$ROOT"

if [ -z "${REPORT:-}" ]; then
    REPORT=${OUT:-$WORK/report}
    [ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
    cargo build --release --quiet --bin webdup --example audit_site
    target/release/examples/audit_site "$COUNT" > "$WORK/server.log" &
    SERVER=$!
    for _ in $(seq 100); do grep -q "listening on" "$WORK/server.log" 2>/dev/null && break; sleep 0.1; done
    PORT=$(sed -n 's/listening on //p' "$WORK/server.log")
    echo "auditing $COUNT pages from http://127.0.0.1:$PORT/sitemap.xml" >&2
    /usr/bin/time -v target/release/webdup audit "http://127.0.0.1:$PORT/sitemap.xml" --out "$REPORT" \
        --delay 0 --per-host 64 --concurrency 64 --quiet 2> "$WORK/time.txt" || true
    kill $SERVER
    grep -E "Elapsed \(wall clock\)|Maximum resident set size" "$WORK/time.txt" | sed 's/^\s*/audit: /'
fi

if [ -n "${SCALE:-}" ]; then
    echo "scaling the report $SCALE times" >&2
    python3 scripts/report_scale.py "$REPORT" "$WORK/scaled" "$SCALE"
    REPORT=$WORK/scaled
fi
echo "report.html $(du -k "$REPORT/report.html" | cut -f1) KB; report-data $(du -sk "$REPORT/report-data" 2>/dev/null | cut -f1) KB in $(ls "$REPORT/report-data" 2>/dev/null | wc -l) files; report.json $(du -k "$REPORT/report.json" | cut -f1) KB"
echo "load before the browser: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

python3 - "$BROWSER" "$REPORT" "$WORK" <<'PY'
import json, os, subprocess, sys, time

browser, report, work = sys.argv[1:4]
data = json.load(open(os.path.join(report, "report.json")))
clusters = data["clusters"]
first = min(clusters, key=lambda c: (c["severity"], c["id"]))
last = max(clusters, key=lambda c: c["id"])

# Chromium reads commands from fd 3 and answers on fd 4, NUL-terminated JSON.
to_chrome_r, to_chrome_w = os.pipe()
from_chrome_r, from_chrome_w = os.pipe()
def fds():
    os.dup2(to_chrome_r, 3)
    os.dup2(from_chrome_w, 4)
proc = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                         "--disable-background-networking", "--disable-sync", "--disable-component-update",
                         "--remote-debugging-pipe", f"--user-data-dir={work}/profile", "--window-size=1400,1000",
                         "about:blank"],
                        pass_fds=(3, 4), preexec_fn=fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# pass_fds keeps 3 and 4 open in the child; dup2 in preexec_fn points them at the pipes.
os.close(to_chrome_r); os.close(from_chrome_w)
out = os.fdopen(to_chrome_w, "wb", buffering=0)
inp = os.fdopen(from_chrome_r, "rb", buffering=0)
buf = b""
ids = iter(range(1, 1 << 30))

def call(method, session=None, **params):
    global buf
    i = next(ids)
    msg = {"id": i, "method": method, "params": params}
    if session:
        msg["sessionId"] = session
    out.write(json.dumps(msg).encode() + b"\0")
    while True:
        while b"\0" not in buf:
            chunk = inp.read(1 << 16)
            if not chunk:
                raise SystemExit("chromium closed the pipe")
            buf += chunk
        line, buf = buf.split(b"\0", 1)
        m = json.loads(line)
        if m.get("id") == i:
            if "error" in m:
                raise SystemExit(f"{method}: {m['error']}")
            return m["result"]

target = call("Target.createTarget", url="about:blank")["targetId"]
session = call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

def js(expr):
    r = call("Runtime.evaluate", session, expression=expr, awaitPromise=True, returnByValue=True)
    if "exceptionDetails" in r:
        raise SystemExit(f"page error: {r['exceptionDetails']}")
    return r["result"].get("value")

# Waits in the page for `cond`, then for the next frame (the rows painted);
# returns the milliseconds since `start` (a performance.now() value).
WAIT = """new Promise(function (done) {
  (function w() { if (%s) requestAnimationFrame(function () { setTimeout(function () { done(performance.now() - %s); }); });
                  else setTimeout(w, 2); })();
})"""

def timed(action, cond):
    return js("(function () { var t = performance.now(); %s; return %s; })()" % (action, WAIT % (cond, "t")))

def redraw(table, action):
    drawn = f'+document.getElementById("{table}").getAttribute("data-drawn")'
    return js(f"(function () {{ var n = {drawn}, t = performance.now(); {action}; return {WAIT % (drawn + ' > n', 't')}; }})()")

url = "file://" + os.path.abspath(os.path.join(report, "report.html"))
results = []
for run in range(3):
    t = time.time()
    call("Page.navigate", session, url=url)
    while not js('document.body && document.body.getAttribute("data-ready") === "1"'):
        if js('document.getElementById("js-errors") && document.getElementById("js-errors").textContent'):
            raise SystemExit(js('document.getElementById("js-errors").textContent'))
        time.sleep(0.01)
    wall = time.time() - t
    ready = js('(performance.getEntriesByName("webdup-ready")[0] || {}).startTime')
    if ready is None:
        raise SystemExit("no webdup-ready mark: is this a paged report?")
    r = {"first screen (navigation to tables drawn)": ready, "first screen (seen from the driver)": wall * 1000}
    click = 'document.querySelector(\'#%s th[data-sort="%d"]\').click()'
    r["sort pages by title"] = redraw("pages", click % ("pages", 3))
    r["sort pages by title, reversed"] = redraw("pages", click % ("pages", 3))
    r["sort pages by URL"] = redraw("pages", click % ("pages", 0))
    r["sort clusters by pages"] = redraw("clusters", click % ("clusters", 3))
    r["next page of the sorted pages"] = redraw("pages", 'document.querySelector("#pages .pager button:last-child").click()')
    for c, name in ((first, "first"), (last, "last")):
        a, b = c["representative"], next(m["page"] for m in c["members"] if m["page"] != c["representative"])
        r[f"diff of the {name} cluster ({c['size']} pages)"] = timed(
            f'location.hash = "#diff={a},{b}"',
            '!document.getElementById("diff-overlay").hidden && document.getElementById("diff-a")')
        js('document.getElementById("diff-close").click()')
    r["open the last cluster's members"] = timed(
        f'location.hash = "#cluster={last["id"]}"', 'document.querySelector("#clusters tr.members")')
    r["filter pages (every chunk read)"] = redraw(
        "pages", 'var i = document.querySelector("#pages .filter"); i.value = "%s"; i.dispatchEvent(new Event("input"))'
        % data["pages"][len(data["pages"]) // 2]["url"].rsplit("/", 1)[-1])
    errors = js('document.getElementById("js-errors").textContent')
    if errors:
        raise SystemExit(errors)
    results.append(r)

print(f"{data.get('rows', len(data['pages']))} pages; milliseconds, best and worst of {len(results)} loads:")
for k in results[0]:
    v = sorted(r[k] for r in results)
    print(f"  {k:<48} {v[0]:8.0f} {v[-1]:8.0f}")
proc.kill()
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
