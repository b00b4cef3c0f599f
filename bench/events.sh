#!/usr/bin/env bash
# The live event stream (issue 25): how soon a publish reaches a stream, and what open streams
# cost, on SQLite and PostgreSQL, with the release binary on loopback.
#   1. publish -> stream on the same instance: one stream of document.published, COUNT posts
#      published one at a time through the API, each timed from the moment its request is sent
#      to the moment its event arrives (so the figure includes the publish request itself);
#   2. the same with the post published through a SECOND `cms serve` on the same database
#      (PostgreSQL: LISTEN/NOTIFY; SQLite: the hub's poll);
#   3. STREAMS streams of one organization held open on one instance: the server's extra
#      resident memory for them (must stay under 100 MiB), and one publish fanned out to all.
# The client is bench/events_client.py (Python's standard library).
# Usage: [COUNT=200] [STREAMS=1000] [CMS_BIN=path] bench/events.sh [sqlite|postgres|both]
# Needs curl, python3, and for PostgreSQL psql and the server of CMS_TEST_POSTGRES_URL (a
# database cms_events of its own is dropped and created).
set -euo pipefail
cd "$(dirname "$0")/.."
engines=${1:-both}
count=${COUNT:-200}
streams=${STREAMS:-1000}
if [ -z "${CMS_BIN:-}" ]; then
  cargo build --release --quiet --bin cms
fi
bin=${CMS_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/cms}
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
client=bench/events_client.py
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# dir, url, port: starts `cms serve` in the background; its pid in $started.
start() {
  (cd "$1" && RUST_LOG=warn CMS_DATABASE_URL=$2 CMS_AUTH_SECRET="events bench secret of thirty-two chars" \
    CMS_EVENTS_MAX_STREAMS=$((streams + 10)) exec "$bin" serve --port "$3") &
  started=$!
  until curl -sf "http://127.0.0.1:$3/healthz" >/dev/null 2>&1; do sleep 0.01; done
}

run_engine() {
  local engine=$1 work url port other_port base other pid other_pid token
  work=$(mktemp -d)
  mkdir -p "$work/a" "$work/b"
  case $engine in
    sqlite) url="sqlite://$work/cms.db" ;;
    postgres)
      psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_events" -qc "CREATE DATABASE cms_events" >/dev/null
      url="${pg_server%/*}/cms_events" ;;
  esac
  port=$(free_port); other_port=$(free_port)
  base=http://127.0.0.1:$port; other=http://127.0.0.1:$other_port
  start "$work/a" "$url" "$port"; pid=$started
  start "$work/b" "$url" "$other_port"; other_pid=$started
  trap "kill $pid $other_pid 2>/dev/null || true" EXIT
  token=$(curl -sf -H 'content-type: application/json' \
    -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
    "$base/api/auth/sign-up/email" | sed -E 's/.*"token":"([^"]+)".*/\1/')
  echo "$engine:"
  python3 "$client" latency "$base" "$base" "$token" "$count"
  echo "  published through a second instance on the same database:"
  python3 "$client" latency "$base" "$other" "$token" "$count"
  python3 "$client" streams "$base" "$token" "$streams" "$pid"
  kill "$pid" "$other_pid"; wait "$pid" "$other_pid" 2>/dev/null || true
  trap - EXIT
  rm -rf "$work"
  [ "$engine" = postgres ] && psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_events" >/dev/null
  return 0
}

case $engines in
  both) run_engine sqlite; run_engine postgres ;;
  *) run_engine "$engines" ;;
esac
