#!/usr/bin/env bash
# Admin page speed (issue 10, point 7; issue 32): how long after navigation each page of the
# admin is interactive, with DOCS (default 10,000) posts of the type, on SQLite (or PostgreSQL),
# in Debian's headless Chromium against the release binary on loopback.
#
# "Interactive" is the moment the page's module marks `main[data-ready]`: the shell is
# loaded, its modules ran, the API answered and the page is drawn with its controls live. The
# page records `performance.now()` then (`data-ready-at`, milliseconds since navigation
# started), so the figure includes the server's answers, module loading and drawing.
#
# The rich-text editor (issue 30) is measured on a post of 5,000 words in 250 blocks: the edit
# page's interactive time, and the time one typed character takes at the end of that text (the
# editor's synchronous handler, model and drawing, 100 keys).
#
# Usage: [DOCS=10000] [RUNS=30] [ENGINE=sqlite|postgres] bench/admin.sh
# ENGINE=postgres seeds a fresh database `cms_bench` on the server of CMS_TEST_POSTGRES_URL
# (default postgres://postgres@127.0.0.1:5432/test) and drops it afterwards.
# Needs chromium and chromium-driver (apt-get install -y chromium chromium-driver), python3.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${DOCS:-10000}
runs=${RUNS:-30}
for tool in /usr/bin/chromium /usr/bin/chromedriver python3 curl; do
  command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
cargo build --release --quiet -p cms -p cms-bench-seed
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
bin=$target/release/cms
seed=$target/release/cms-bench-seed
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
driver_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pids=()
engine=${ENGINE:-sqlite}
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
pg_bench=${pg_server%/*}/cms_bench
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
  if [ "$engine" = postgres ]; then psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench WITH (FORCE)" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT
case $engine in
  sqlite) export CMS_DATABASE_URL="sqlite://$work/cms-data/cms.db" ;;
  postgres)
    psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench WITH (FORCE)" -qc "CREATE DATABASE cms_bench" >/dev/null
    export CMS_DATABASE_URL=$pg_bench ;;
  *) echo "ENGINE is sqlite or postgres" >&2; exit 2 ;;
esac
export RUST_LOG=warn
export CMS_AUTH_SECRET="the admin bench's auth secret, 32+ characters"

echo "seeding $docs posts (one organization) on $engine"
(cd "$work" && "$seed" --docs "$docs" --orgs 1 --out "$work/load" >/dev/null)
# What autovacuum does on its own some time after a bulk load (as bench/scale.sh).
if [ "$engine" = postgres ]; then psql "$pg_bench" -qc "VACUUM ANALYZE" >/dev/null; fi
(cd "$work" && exec "$bin" serve --port "$port" >>"$work/server.log" 2>&1) & pids+=($!)
for _ in $(seq 1 200); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.05; done
# Signed in with curl; the browser gets the session cookie as sign-in would have set it.
cookie=$(curl -fs -c - -o /dev/null -H 'content-type: application/json' \
  -d '{"email":"bench@example.com","password":"bench password"}' \
  "http://127.0.0.1:$port/api/auth/sign-in/email" | awk '$6 == "cms_session" {print $6 "=" $7}')
[ -n "$cookie" ] || { echo "sign-in failed" >&2; exit 1; }
# The seeded organization (the first account also owns "Default", which is empty).
org=$(curl -fs -b "$cookie" "http://127.0.0.1:$port/api/organizations" \
  | python3 -c 'import json,sys; print([o["id"] for o in json.load(sys.stdin)["data"] if o["slug"] != "default"][0])')
curl -fs -o /dev/null -b "$cookie" -H "origin: http://127.0.0.1:$port" -H 'content-type: application/json' \
  -d "{\"organizationId\":\"$org\"}" "http://127.0.0.1:$port/api/organizations/switch"
first=$(curl -fs -b "$cookie" "http://127.0.0.1:$port/api/documents?type=post&pageSize=1" \
  | python3 -c 'import json,sys; b=json.load(sys.stdin); print(b["data"][0]["id"], b["pagination"]["total"])')
/usr/bin/chromedriver --port="$driver_port" >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$driver_port/status" >/dev/null && break; sleep 0.05; done

python3 - "$port" "$driver_port" "$runs" "$cookie" $first <<'PY'
import json, statistics, sys, time, urllib.error, urllib.request

port, driver_port, runs, cookie, doc_id, total = sys.argv[1:7]
runs = int(runs)
origin = f"http://127.0.0.1:{port}"
driver = f"http://127.0.0.1:{driver_port}"

def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(driver + path, data=data, method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return json.load(r)["value"]
    except urllib.error.HTTPError as e:
        raise SystemExit(f"WebDriver {method} {path}: {e.code} {e.read()[:300]!r}")

session = call("POST", "/session", {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
    "binary": "/usr/bin/chromium",
    "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--no-first-run", "--window-size=1280,900"]}}}})["sessionId"]
s = f"/session/{session}"

def ready_at(path):
    call("POST", s + "/url", {"url": origin + path})
    # Poll until the page marks itself ready (the load event does not wait for the API).
    for _ in range(400):
        at = call("POST", s + "/execute/sync", {"script":
            "const m = document.querySelector(\"main[data-ready='true']\"); return m ? Number(m.dataset.readyAt) : null", "args": []})
        if at is not None:
            return at
        time.sleep(0.01)
    raise SystemExit(f"{path} never became ready")

call("POST", s + "/url", {"url": origin + "/admin/sign-in"})
call("POST", s + "/execute/sync", {"script": "document.cookie = arguments[0] + '; path=/'", "args": [cookie]})
print(f"{total} posts in the organization; editing {doc_id}")

# A long post for the editor: 5,000 words of Portable Text in 250 blocks (a heading every
# tenth, list items, bold and linked words), as a long article is.
words = "the quick brown fox jumps over a lazy dog while editors write long articles about rust".split()
def block(i):
    n = 20
    text = " ".join(words[(i + k) % len(words)] for k in range(n))
    key = f"b{i}"
    if i % 10 == 0:
        return {"_type": "block", "_key": key, "style": "h2", "markDefs": [],
                "children": [{"_type": "span", "_key": key + "s", "text": text, "marks": []}]}
    head, bold, tail = text[:40], text[40:60], text[60:]
    extra = {"listItem": "bullet", "level": 1} if i % 10 in (7, 8) else {}
    return {"_type": "block", "_key": key, "style": "normal", **extra,
            "markDefs": [{"_type": "link", "_key": key + "l", "href": "https://example.com/"}],
            "children": [{"_type": "span", "_key": key + "a", "text": head, "marks": []},
                         {"_type": "span", "_key": key + "b", "text": bold, "marks": ["strong", key + "l"]},
                         {"_type": "span", "_key": key + "c", "text": tail, "marks": []}]}
body = [block(i) for i in range(250)]
assert sum(len(c["text"].split()) for b in body for c in b["children"]) >= 5000
req = urllib.request.Request(origin + "/api/documents", method="POST",
    data=json.dumps({"type": "post", "data": {"title": "A long read", "body": body}}).encode(),
    headers={"content-type": "application/json", "cookie": cookie, "origin": origin})
with urllib.request.urlopen(req) as r:
    long_id = json.load(r)["data"]["id"]

def measure(label, path):
    ready_at(path)  # warm: the modules are cached from here on, as for an editor at work
    times = [ready_at(path) for _ in range(runs)]
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    print(f"{label:<28} median {statistics.median(times):6.0f} ms   p95 {p95:6.0f} ms   max {times[-1]:6.0f} ms   ({runs} loads)")
    return {"page": label, "medianMs": statistics.median(times), "p95Ms": p95, "maxMs": times[-1]}

results = [
    measure("document list (page 1)", "/admin/documents/post"),
    measure("document list (search)", "/admin/documents/post?q=Post"),
    measure("document list (page 200)", "/admin/documents/post?page=200"),
    measure("document edit", f"/admin/documents/post/{doc_id}"),
    measure("document edit (5,000 words)", f"/admin/documents/post/{long_id}"),
    measure("document list (100, changed)", "/admin/documents/post?size=100&status=changed"),
    measure("asset library", "/admin/assets"),
    measure("home", "/admin"),
    measure("settings (members)", "/admin/settings/members"),
]

# Typing in the long post: the time the editor takes to put one typed character into the
# model and the page (its beforeinput handler runs synchronously), at the end of the text.
ready_at(f"/admin/documents/post/{long_id}")
typing = call("POST", s + "/execute/sync", {"script": """
    const surface = document.querySelector('.rt-surface');
    const last = surface.lastElementChild;
    surface.focus();
    const range = document.createRange();
    range.selectNodeContents(last);
    range.collapse(false);
    document.getSelection().removeAllRanges();
    document.getSelection().addRange(range);
    const times = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      surface.dispatchEvent(new InputEvent('beforeinput', { inputType: 'insertText', data: 'x', bubbles: true, cancelable: true }));
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return { median: times[50], p95: times[95], max: times[99], typed: last.isConnected ? null : surface.lastElementChild.textContent.endsWith('x'.repeat(100)) };
""", "args": []})
if not typing["typed"]:
    raise SystemExit(f"typing did not reach the text: {typing}")
print(f"{'typing (5,000 words)':<28} median {typing['median']:6.1f} ms   p95 {typing['p95']:6.1f} ms   max {typing['max']:6.1f} ms   (100 keys)")
call("DELETE", s)
print(json.dumps({"documents": total, "runs": runs, "results": results, "typingMs": typing}))
PY
