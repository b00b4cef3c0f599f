#!/usr/bin/env bash
# The default path (issue 23): what a user who declares no index gets, on SQLite and PostgreSQL,
# with the release binary and wrk on loopback (2 threads, 32 connections; latency phases with
# one connection). The schema is the demo `post` without a single `indexed` key (every field is
# indexed automatically, CONTRACT.md section 14) and with `searchable` title, excerpt and body.
#   1. create (POST /api/documents, a draft post), measured, then unmeasured creates up to POSTS;
#   2. GET one post by id with an API key;
#   3. the undeclared filter + sort: where views > 5000, sort -views, a page of 20 (views are
#      spread over 0..10,000, so about half of the posts match);
#   4. a full-text search for one word of a 50-word vocabulary, ordered by relevance, 20.
# Each line: requests/s, p50, p99 and the server's CPU (cores busy on average during the phase).
# Usage: [POSTS=10000] [KEEP=1] [CMS_BIN=path] bench/compare.sh [seconds-per-phase] [sqlite|postgres|both]
# Needs wrk (apt-get install -y wrk), curl, python3, and for PostgreSQL psql and the server of
# CMS_TEST_POSTGRES_URL (a database cms_compare of its own is dropped and created).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
posts=${POSTS:-10000}
engines=${2:-both}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install -y wrk" >&2; exit 1; }
if [ -z "${CMS_BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${CMS_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/cms}
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"' EXIT

cat > "$scripts/post.json" <<'JSON'
[
  { "type": "document", "name": "author", "title": "Author",
    "fields": [{ "name": "name", "type": "string", "required": true }] },
  { "type": "document", "name": "post", "title": "Post",
    "fields": [
      { "name": "title", "type": "string", "required": true, "searchable": true },
      { "name": "slug", "type": "slug", "source": "title" },
      { "name": "body", "type": "block", "searchable": true },
      { "name": "excerpt", "type": "text", "searchable": true },
      { "name": "author", "type": "reference", "to": ["author"] },
      { "name": "tags", "type": "array", "of": [{ "type": "string" }] },
      { "name": "publishedOn", "type": "date" },
      { "name": "views", "type": "number" }
    ] }
]
JSON

cat > "$scripts/words.lua" <<'LUA'
words = { "river", "stone", "garden", "winter", "copper", "lantern", "harbor", "meadow", "signal",
  "orbit", "canyon", "velvet", "ember", "glacier", "saddle", "thunder", "willow", "marble", "falcon",
  "prairie", "compass", "beacon", "cinder", "dune", "fjord", "grove", "hollow", "island", "jungle",
  "kettle", "ledger", "mosaic", "nectar", "oasis", "pebble", "quartz", "ripple", "summit", "tundra",
  "umber", "valley", "wharf", "yonder", "zephyr", "anchor", "bramble", "citadel", "delta", "estuary",
  "fable" }
word = function() return words[math.random(1, #words)] end
LUA

cat > "$scripts/create.lua" <<'LUA'
dofile(os.getenv("SCRIPTS") .. "/words.lua")
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  local a, b, c = word(), word(), word()
  local body = string.format('{"type":"post","data":{"title":"The %s and the %s %d","views":%d,"publishedOn":"2024-%02d-%02d","excerpt":"On %s, %s and %s.","body":[{"_type":"block","_key":"k","style":"normal","children":[{"_type":"span","_key":"s","text":"A story of the %s near the %s."}]}],"tags":["bench"]}}',
    a, b, math.random(1, 1000000000), math.random(0, 10000), math.random(1, 12), math.random(1, 28), a, b, c, c, a)
  return wrk.format(nil, nil, nil, body)
end
LUA

cat > "$scripts/filter.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.body = '{"type":"post","where":{"views":{"greater_than":5000}},"sort":"-views","limit":20}'
LUA

cat > "$scripts/search.lua" <<'LUA'
dofile(os.getenv("SCRIPTS") .. "/words.lua")
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
request = function()
  return wrk.format(nil, nil, nil, string.format('{"type":"post","search":"%s","limit":20}', word()))
end
LUA

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# name, pid, wrk arguments...: runs wrk and prints one line.
phase() {
  local name=$1 pid=$2 before after out hz
  shift 2
  hz=$(getconf CLK_TCK)
  before=$(cpu_ticks "$pid")
  out=$(SCRIPTS=$scripts wrk --latency "$@")
  after=$(cpu_ticks "$pid")
  awk -v name="$name" -v cpu="$(python3 -c "print(round(($after - $before) / $hz / $secs, 2))")" \
    '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Non-2xx/ {bad=$5}
     END {printf "  %-46s %10s req/s  p50 %8s  p99 %8s  cpu %5s%s\n", name, rps, p50, p99, cpu, (bad ? "  NON-2xx: " bad : "")}' <<<"$out"
}

run_engine() {
  local engine=$1 url work port base pid
  work=$(mktemp -d)
  cp "$scripts/post.json" "$work/post.json"
  case $engine in
    sqlite) url="sqlite://$work/cms-data/cms.db" ;;
    postgres)
      psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_compare" -qc "CREATE DATABASE cms_compare" >/dev/null
      url="${pg_server%/*}/cms_compare" ;;
  esac
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  base=http://127.0.0.1:$port
  (cd "$work" && RUST_LOG=warn CMS_DATABASE_URL=$url CMS_SCHEMAS_PATHS=post.json exec "$bin" serve --port "$port") & pid=$!
  trap "kill $pid 2>/dev/null || true; rm -rf '$scripts'" EXIT
  until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.01; done
  local json='content-type: application/json' token key first total id
  token=$(curl -sf -H "$json" -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
    "$base/api/auth/sign-up/email" | sed -E 's/.*"token":"([^"]+)".*/\1/')
  key=$(curl -sf -H "$json" -H "authorization: Bearer $token" -d '{"name":"bench","permissions":["write"]}' \
    "$base/api/settings/api-keys" | sed -E 's/.*"key":"([^"]+)".*/\1/')
  echo "$engine:"
  phase "POST /api/documents (create)" "$pid" -t2 -c32 -d"${secs}s" -H "x-api-key: $key" \
    -s "$scripts/create.lua" "$base/api/documents"
  count() {
    first=$(curl -sf -H "x-api-key: $key" "$base/api/documents?type=post&pageSize=1")
    total=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["pagination"]["total"])' <<<"$first")
  }
  count
  while [ "$total" -lt "$posts" ]; do
    SCRIPTS=$scripts wrk -t2 -c32 -d5s -H "x-api-key: $key" -s "$scripts/create.lua" "$base/api/documents" >/dev/null
    count
  done
  [ "$engine" = postgres ] && psql "${pg_server%/*}/cms_compare" -qc "VACUUM ANALYZE" >/dev/null
  # The indexes are built beside the service: measure once they are ready.
  until curl -sf "$base/api/cms-health" | grep -q '"state":"ready"'; do sleep 0.2; done
  id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])' <<<"$first")
  echo "  posts: $total"
  phase "GET /api/documents/{id}" "$pid" -t2 -c32 -d"${secs}s" -H "x-api-key: $key" "$base/api/documents/$id"
  phase "filter views > 5000, sort -views, 20" "$pid" -t2 -c32 -d"${secs}s" -H "x-api-key: $key" \
    -s "$scripts/filter.lua" "$base/api/documents/query"
  phase "  the same, one client" "$pid" -t1 -c1 -d"${secs}s" -H "x-api-key: $key" \
    -s "$scripts/filter.lua" "$base/api/documents/query"
  phase "search one word, by relevance, 20" "$pid" -t2 -c32 -d"${secs}s" -H "x-api-key: $key" \
    -s "$scripts/search.lua" "$base/api/documents/query"
  phase "  the same, one client" "$pid" -t1 -c1 -d"${secs}s" -H "x-api-key: $key" \
    -s "$scripts/search.lua" "$base/api/documents/query"
  echo "  RSS after load: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
  [ "$engine" = postgres ] && [ -z "${KEEP:-}" ] && psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_compare" >/dev/null
  return 0
}

case $engines in
  both) run_engine sqlite; run_engine postgres ;;
  *) run_engine "$engines" ;;
esac
