#!/usr/bin/env bash
# MCP server benchmark (issue 31): on SQLite and on PostgreSQL, default configuration, with the
# release binary and wrk on loopback (2 wrk threads, 32 connections) over 1,000 seeded posts:
#   1. GET /api/documents/{id} with an API key: the REST read, for comparison;
#   2. the same read as an MCP tools/call of get_document on one session (each answer is a
#      one-event stream, as the transport sends them);
#   3. tools/call of query_documents (a page of 20);
#   4. tools/list (the catalog filtered by the caller's rights);
#   5. the cost of sessions: the server's resident set before and after 1,000 sessions are
#      opened (initialize + notifications/initialized), and the time to open them one after
#      another on one connection.
# Usage: bench/mcp.sh [seconds-per-phase] [sqlite|postgres|both]
# Needs wrk (apt-get install -y wrk), curl, python3 and, for PostgreSQL, the local server
# (CMS_TEST_POSTGRES_URL).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
engines=${2:-both}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install -y wrk" >&2; exit 1; }
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/cms
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"' EXIT

# One JSON-RPC request on the session in the environment, as wrk sends it: each with an id of
# its own, as a client numbers them (requests in flight on one session never share an id).
rpc_script() { # file, method, params (JSON)
  cat > "$1" <<LUA
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["accept"] = "application/json, text/event-stream"
wrk.headers["mcp-session-id"] = os.getenv("MCP_SESSION")
wrk.headers["mcp-protocol-version"] = "2025-11-25"
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, string.format('{"jsonrpc":"2.0","id":"%d-%d","method":"$2","params":%s}', tid, n, '$3'))
end
LUA
}

report() { # name, wrk output
  awk -v name="$1" '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Non-2xx/ {bad=$5}
    END {printf "  %-44s %10s req/s  p50 %8s  p99 %8s%s\n", name, rps, p50, p99, (bad ? "  NON-2xx: " bad : "")}'
}

# Opens a session with the key in $key on $base and prints its id.
open_session() {
  local headers
  headers=$(curl -sf -D - -o /dev/null -H 'content-type: application/json' \
    -H 'accept: application/json, text/event-stream' -H "x-api-key: $key" \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' \
    "$base/api/mcp")
  local id
  id=$(awk 'tolower($1)=="mcp-session-id:" {print $2}' <<<"$headers" | tr -d '\r')
  curl -sf -o /dev/null -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -H "x-api-key: $key" -H "mcp-session-id: $id" -H 'mcp-protocol-version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$base/api/mcp"
  echo "$id"
}

run_engine() {
  local engine=$1 url work port pid
  work=$(mktemp -d)
  case $engine in
    sqlite) url="sqlite://$work/cms-data/cms.db" ;;
    postgres)
      psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench" -qc "CREATE DATABASE cms_bench" >/dev/null
      url="${pg_server%/*}/cms_bench" ;;
  esac
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  base=http://127.0.0.1:$port
  (cd "$work" && RUST_LOG=warn CMS_DATABASE_URL=$url exec "$bin" serve --port "$port") & pid=$!
  trap "kill $pid 2>/dev/null || true; rm -rf '$scripts'" EXIT
  until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.01; done
  local json='content-type: application/json' token id
  token=$(curl -sf -H "$json" -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
    "$base/api/auth/sign-up/email" | sed -E 's/.*"token":"([^"]+)".*/\1/')
  key=$(curl -sf -H "$json" -H "authorization: Bearer $token" -d '{"name":"bench","permissions":["write"]}' \
    "$base/api/settings/api-keys" | sed -E 's/.*"key":"([^"]+)".*/\1/')
  for _ in $(seq 1000); do
    curl -sf -o /dev/null -H "$json" -H "x-api-key: $key" \
      -d '{"type":"post","publish":true,"data":{"title":"Seeded"}}' "$base/api/documents"
  done
  id=$(curl -sf -H "x-api-key: $key" "$base/api/documents?type=post&pageSize=1" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
  [ "$engine" = postgres ] && psql "$url" -qc "VACUUM ANALYZE" >/dev/null

  echo "$engine (1,000 posts):"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" "$base/api/documents/$id" \
    | report "REST GET /api/documents/{id}"
  MCP_SESSION=$(open_session)
  export MCP_SESSION
  rpc_script "$scripts/get.lua" tools/call "{\"name\":\"get_document\",\"arguments\":{\"collection\":\"post\",\"id\":\"$id\"}}"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/get.lua" "$base/api/mcp" \
    | report "MCP tools/call get_document"
  rpc_script "$scripts/query.lua" tools/call '{"name":"query_documents","arguments":{"collection":"post","limit":20}}'
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/query.lua" "$base/api/mcp" \
    | report "MCP tools/call query_documents (20)"
  rpc_script "$scripts/list.lua" tools/list '{}'
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" -s "$scripts/list.lua" "$base/api/mcp" \
    | report "MCP tools/list"

  local before after elapsed
  before=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
  # One client on one kept-alive connection: initialize, then notifications/initialized.
  elapsed=$(python3 - "$port" "$key" <<'PY'
import http.client, json, sys, time
port, key = int(sys.argv[1]), sys.argv[2]
conn = http.client.HTTPConnection("127.0.0.1", port)
headers = {"content-type": "application/json", "accept": "application/json, text/event-stream", "x-api-key": key}
init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
done = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
start = time.perf_counter()
for _ in range(1000):
    conn.request("POST", "/api/mcp", init, headers)
    answer = conn.getresponse(); answer.read()
    session = answer.getheader("mcp-session-id")
    conn.request("POST", "/api/mcp", done, {**headers, "mcp-session-id": session})
    conn.getresponse().read()
print(round((time.perf_counter() - start) * 1000))
PY
)
  after=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
  echo "  1,000 sessions opened one after another in ${elapsed} ms (initialize + initialized, one connection)"
  echo "  RSS before ${before} KiB, after ${after} KiB: $(awk -v d=$((after - before)) 'BEGIN {printf "%.1f", d / 1000}') KiB per session"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
  [ "$engine" = postgres ] && psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench" >/dev/null
  return 0
}

case $engines in
  both) run_engine sqlite; run_engine postgres ;;
  *) run_engine "$engines" ;;
esac
