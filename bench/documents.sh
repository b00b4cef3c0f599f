#!/usr/bin/env bash
# Documents benchmark (issue 3): on SQLite and on PostgreSQL, with the release binary and wrk on
# loopback (2 wrk threads, 32 connections):
#   1. create+publish throughput (POST /api/documents with publish: true), which also seeds;
#   2. GET one document by id with an API key;
#   3. a where + sort + page-of-20 query over the seeded posts on an indexed field, once with a
#      bound half the posts pass on average and once with a narrow range (~1% of the posts).
#   4. GET one `page` by id: the demo type with localized fields (issue 26), read in the default
#      locale; with LOCALES=en,de the instance offers both (CMS_LOCALES_AVAILABLE) and the page
#      is read with locale=de, every value served from the English fallback.
# Usage: [POSTS=100000] [KEEP=1] [CMS_BIN=path] [LOCALES=en,de] bench/documents.sh [seconds-per-phase] [sqlite|postgres|both]
# CMS_BIN: measure that binary instead of building this tree's (another build, side by side).
# POSTS: after the measured create phase, keep creating (unmeasured) until this many posts exist,
# so the reads run over a dataset of that size. On PostgreSQL the table is then analyzed (what
# autovacuum does on its own within a minute or so of a bulk load).
# Needs wrk (apt-get install -y wrk) and, for PostgreSQL, the local server (CMS_TEST_POSTGRES_URL).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
posts=${POSTS:-0}
engines=${2:-both}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install -y wrk" >&2; exit 1; }
if [ -z "${CMS_BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${CMS_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/cms}
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"' EXIT

cat > "$scripts/create.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  local views = math.random(0, 1000000)
  local body = string.format('{"type":"post","publish":true,"data":{"title":"Post %d-%d","views":%d,"publishedOn":"2024-%02d-%02d","tags":["bench","t%d"]}}',
    math.random(1, 1000000000), n, views, math.random(1, 12), math.random(1, 28), views % 50)
  return wrk.format(nil, nil, nil, body)
end
LUA
cat > "$scripts/query.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
request = function()
  local low = math.random(0, 990000)
  local body = string.format('{"type":"post","where":{"views":{"greater_than":%d}},"sort":"views","limit":20,"page":1}', low)
  return wrk.format(nil, nil, nil, body)
end
LUA

# The same query with a narrow bound: about 1% of the posts match (a selective filter, where the
# exact total is cheap to count).
cat > "$scripts/query-narrow.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
request = function()
  local low = math.random(0, 990000)
  local body = string.format('{"type":"post","where":{"views":{"greater_than":%d,"less_than":%d}},"sort":"views","limit":20,"page":1}', low, low + 10000)
  return wrk.format(nil, nil, nil, body)
end
LUA

report() { # name, wrk output
  awk -v name="$1" '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Non-2xx/ {bad=$5}
    END {printf "  %-44s %10s req/s  p50 %8s  p99 %8s%s\n", name, rps, p50, p99, (bad ? "  NON-2xx: " bad : "")}'
}

run_engine() {
  local engine=$1 url work port base pid
  work=$(mktemp -d)
  case $engine in
    sqlite) url="sqlite://$work/cms-data/cms.db" ;;
    postgres)
      psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench" -qc "CREATE DATABASE cms_bench" >/dev/null
      url="${pg_server%/*}/cms_bench" ;;
  esac
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  base=http://127.0.0.1:$port
  (cd "$work" && RUST_LOG=warn CMS_DATABASE_URL=$url CMS_LOCALES_AVAILABLE=${LOCALES:-en} exec "$bin" serve --port "$port") & pid=$!
  trap "kill $pid 2>/dev/null || true; rm -rf '$scripts'" EXIT
  until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.01; done
  local json='content-type: application/json'
  local token key id
  token=$(curl -sf -H "$json" -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
    "$base/api/auth/sign-up/email" | sed -E 's/.*"token":"([^"]+)".*/\1/')
  key=$(curl -sf -H "$json" -H "authorization: Bearer $token" -d '{"name":"bench","permissions":["write"]}' \
    "$base/api/settings/api-keys" | sed -E 's/.*"key":"([^"]+)".*/\1/')
  echo "$engine:"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/create.lua" "$base/api/documents" \
    | report "POST /api/documents (create+publish)"
  local first total
  count() {
    first=$(curl -sf -H "x-api-key: $key" "$base/api/documents?type=post&pageSize=1")
    total=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["pagination"]["total"])' <<<"$first")
  }
  count
  while [ "$total" -lt "$posts" ]; do
    wrk -t2 -c32 -d10s -H "x-api-key: $key" -s "$scripts/create.lua" "$base/api/documents" >/dev/null
    count
  done
  [ "$engine" = postgres ] && psql "${pg_server%/*}/cms_bench" -qc "VACUUM ANALYZE" >/dev/null
  id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])' <<<"$first")
  echo "  seeded posts: $total"
  if [ "$posts" -gt 0 ]; then
    wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/create.lua" "$base/api/documents" \
      | report "POST /api/documents (create+publish) at $total"
  fi
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" "$base/api/documents/$id" \
    | report "GET /api/documents/{id} (x-api-key)"
  local page locale
  page=$(curl -sf -H "$json" -H "x-api-key: $key" -d '{"type":"page","publish":true,"data":{"title":"Bench page","body":[{"_type":"block","_key":"a","children":[{"_type":"span","text":"Hello"}]}]}}' \
    "$base/api/documents" | sed -E 's/.*"data":\{"id":"([^"]+)".*/\1/')
  locale=""
  [ -n "${LOCALES:-}" ] && locale="?locale=${LOCALES##*,}"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" "$base/api/documents/$page$locale" \
    | report "GET /api/documents/{page id}$locale"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/query.lua" "$base/api/documents/query" \
    | report "POST /api/documents/query (where+sort, 20)"
  wrk -t1 -c1 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/query.lua" "$base/api/documents/query" \
    | report "  the same, one client (latency)"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/query-narrow.lua" "$base/api/documents/query" \
    | report "POST /api/documents/query (~1% match, 20)"
  wrk -t1 -c1 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/query-narrow.lua" "$base/api/documents/query" \
    | report "  the same, one client (latency)"
  echo "  RSS after load: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
  [ "$engine" = postgres ] && [ -z "${KEEP:-}" ] && psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench" >/dev/null
  return 0
}

case $engines in
  both) run_engine sqlite; run_engine postgres ;;
  *) run_engine "$engines" ;;
esac
