#!/usr/bin/env bash
# Cache validators benchmark (issue 24 part A): GET one document by id with an API key, as a
# plain read (200, body built and tagged) and as a conditional read naming its current ETag
# (304: the tag decided from the stored row, no body built). wrk on loopback, 2 threads, 32
# connections, on SQLite and PostgreSQL. The 304 must be at least as fast as the 200.
# Usage: [CMS_BIN=path] bench/validators.sh [seconds-per-phase] [sqlite|postgres|both]
# CMS_BIN: measure that binary instead of building this tree's release binary.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
engines=${2:-both}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install -y wrk" >&2; exit 1; }
if [ -z "${CMS_BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${CMS_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/cms}
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}

report() { # name, wrk output
  awk -v name="$1" '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Non-2xx/ {bad=$5}
    END {printf "  %-48s %10s req/s  p50 %8s  p99 %8s%s\n", name, rps, p50, p99, (bad ? "  non-2xx: " bad : "")}'
}

run_engine() {
  local engine=$1 url work port base pid
  work=$(mktemp -d)
  case $engine in
    sqlite) url="sqlite://$work/cms-data/cms.db" ;;
    postgres)
      psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench_validators" -qc "CREATE DATABASE cms_bench_validators" >/dev/null
      url="${pg_server%/*}/cms_bench_validators" ;;
  esac
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  base=http://127.0.0.1:$port
  (cd "$work" && RUST_LOG=warn CMS_DATABASE_URL=$url exec "$bin" serve --port "$port") & pid=$!
  trap "kill $pid 2>/dev/null || true" EXIT
  until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.05; done
  local json='content-type: application/json'
  local token key id etag
  token=$(curl -sf -H "$json" -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
    "$base/api/auth/sign-up/email" | sed -E 's/.*"token":"([^"]+)".*/\1/')
  key=$(curl -sf -H "$json" -H "authorization: Bearer $token" -d '{"name":"bench","permissions":["write"]}' \
    "$base/api/settings/api-keys" | sed -E 's/.*"key":"([^"]+)".*/\1/')
  id=$(curl -sf -H "$json" -H "x-api-key: $key" \
    -d '{"type":"post","publish":true,"data":{"title":"Validators","views":7,"tags":["bench"]}}' \
    "$base/api/documents" | sed -E 's/.*"data":\{"id":"([^"]+)".*/\1/')
  etag=$(curl -sf -o /dev/null -D - -H "x-api-key: $key" "$base/api/documents/$id" \
    | awk 'tolower($1) == "etag:" {print $2}' | tr -d '\r')
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "x-api-key: $key" -H "if-none-match: $etag" "$base/api/documents/$id")" = 304 ] \
    || { echo "no 304 for $etag" >&2; exit 1; }
  echo "$engine:"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" "$base/api/documents/$id" \
    | report "GET /api/documents/{id} (200)"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" -H "if-none-match: $etag" "$base/api/documents/$id" \
    | report "GET /api/documents/{id} If-None-Match (304)"
  wrk -t2 -c32 -d"${secs}s" --latency -H "x-api-key: $key" "$base/api/documents/$id" \
    | report "GET /api/documents/{id} (200, again)"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
  [ "$engine" = postgres ] && psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench_validators" >/dev/null
  return 0
}

case $engines in
  both) run_engine sqlite; run_engine postgres ;;
  *) run_engine "$engines" ;;
esac
