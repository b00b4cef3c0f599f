#!/usr/bin/env bash
# Foundation benchmark: cold start to first healthy answer, idle memory, and throughput of the
# endpoints that exist so far, measured with wrk on loopback against the release binary on an
# empty SQLite database. Usage: bench/foundation.sh [seconds-per-endpoint]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install -y wrk" >&2; exit 1; }
cargo build --release --quiet
bin=$PWD/target/release/cms
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

start=$(date +%s%N)
(cd "$work" && RUST_LOG=warn exec "$bin" serve --port "$port") & pid=$!
until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.002; done
echo "cold start to healthy: $(( ($(date +%s%N) - start) / 1000000 )) ms"
sleep 1
echo "idle RSS: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"

json='content-type: application/json'
token=$(curl -sf -H "$json" -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
  "$base/api/auth/sign-up/email" | sed -E 's/.*"token":"([^"]+)".*/\1/')
key=$(curl -sf -H "$json" -H "authorization: Bearer $token" \
  -d '{"name":"bench","capabilities":["apiKey.manage"]}' "$base/api/settings/api-keys" \
  | sed -E 's/.*"key":"([^"]+)".*/\1/')

run() {
  local name=$1; shift
  printf '%-40s ' "$name"
  wrk -t2 -c32 -d"${secs}s" --latency "$@" | awk '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} END {printf "%10s req/s  p50 %8s  p99 %8s\n", rps, p50, p99}'
}
run "GET /healthz" "$base/healthz"
run "GET /api/auth/get-session (bearer)" -H "authorization: Bearer $token" "$base/api/auth/get-session"
run "GET /api/settings/api-keys (x-api-key)" -H "x-api-key: $key" "$base/api/settings/api-keys"
echo "RSS after load: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
