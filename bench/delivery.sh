#!/usr/bin/env bash
# Delivery to frontends (issue 24): what a website's visitors cost, against today's keyed read,
# on SQLite and PostgreSQL, with the release binary and wrk on loopback (2 threads, 32
# connections). The organization's `public` role is granted `document.read`; the anonymous rate
# limit is raised out of the way (the benchmark's one client address would otherwise meet it).
#   1. GET one published post by id with an API key (the keyed read of issue 23's comparison);
#   2. the same read anonymously, naming the organization (`x-cms-organization`);
#   3. its revalidation: the same request with `If-None-Match` of its ETag, answered 304;
#   4. the keyed read's revalidation, 304;
#   5. a published list of 20 read anonymously, and its 304.
# Each line: requests/s, p50, p99 and the server's CPU (cores busy on average during the phase).
# Usage: [POSTS=1000] [CMS_BIN=path] bench/delivery.sh [seconds-per-phase] [sqlite|postgres|both]
# Needs wrk (apt-get install -y wrk), curl, python3, and for PostgreSQL psql and the server of
# CMS_TEST_POSTGRES_URL (a database cms_delivery of its own is dropped and created).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
posts=${POSTS:-1000}
engines=${2:-both}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install -y wrk" >&2; exit 1; }
if [ -z "${CMS_BIN:-}" ]; then
  cargo build --release --quiet
fi
bin=${CMS_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/cms}
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# name, pid, expected status, wrk arguments...: runs wrk and prints one line, flagging answers
# of another status than the phase expects.
phase() {
  local name=$1 pid=$2 expect=$3 before after out hz script
  shift 3
  hz=$(getconf CLK_TCK)
  script=$(mktemp --suffix=.lua)
  cat > "$script" <<LUA
local seen = {}
response = function(status) seen[status] = (seen[status] or 0) + 1 end
done = function()
  for status, n in pairs(seen) do
    if status ~= $expect then io.write(string.format("UNEXPECTED %d x%d\n", status, n)) end
  end
end
LUA
  before=$(cpu_ticks "$pid")
  out=$(wrk --latency -s "$script" "$@")
  after=$(cpu_ticks "$pid")
  rm -f "$script"
  awk -v name="$name" -v cpu="$(python3 -c "print(round(($after - $before) / $hz / $secs, 2))")" \
    '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /UNEXPECTED/ {bad=bad " " $2 "x" $3}
     END {printf "  %-46s %10s req/s  p50 %8s  p99 %8s  cpu %5s%s\n", name, rps, p50, p99, cpu, (bad ? "  UNEXPECTED:" bad : "")}' <<<"$out"
}

etag_of() { curl -sf -o /dev/null -D - "$@" | awk 'tolower($1) == "etag:" {print $2}' | tr -d '\r'; }

run_engine() {
  local engine=$1 url work port base pid
  work=$(mktemp -d)
  case $engine in
    sqlite) url="sqlite://$work/cms-data/cms.db" ;;
    postgres)
      psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_delivery" -qc "CREATE DATABASE cms_delivery" >/dev/null
      url="${pg_server%/*}/cms_delivery" ;;
  esac
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  base=http://127.0.0.1:$port
  (cd "$work" && RUST_LOG=warn CMS_DATABASE_URL=$url CMS_DELIVERY_PUBLIC_READS_PER_MINUTE=100000000 \
    exec "$bin" serve --port "$port") & pid=$!
  trap "kill $pid 2>/dev/null || true" EXIT
  until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.01; done
  local json='content-type: application/json' token key org id i tag list_tag
  token=$(curl -sf -H "$json" -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
    "$base/api/auth/sign-up/email" | sed -E 's/.*"token":"([^"]+)".*/\1/')
  key=$(curl -sf -H "$json" -H "authorization: Bearer $token" -d '{"name":"bench","permissions":["write"]}' \
    "$base/api/settings/api-keys" | sed -E 's/.*"key":"([^"]+)".*/\1/')
  org=$(curl -sf -H "authorization: Bearer $token" "$base/api/organizations" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["slug"])')
  curl -sf -o /dev/null -X PATCH -H "$json" -H "authorization: Bearer $token" \
    -d '{"capabilities":["document.read"]}' "$base/api/roles/public"
  for i in $(seq 1 "$posts"); do
    printf '{"type":"post","data":{"title":"Post %d","views":%d},"publish":true}\n' "$i" "$i"
  done | while read -r body; do
    curl -sf -o /dev/null -H "x-api-key: $key" -H "$json" -d "$body" "$base/api/documents"
  done
  id=$(curl -sf -H "x-api-key: $key" "$base/api/documents?type=post&pageSize=1" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
  echo "$engine ($posts published posts):"
  phase "GET by id, API key" "$pid" 200 -t2 -c32 -d"${secs}s" -H "x-api-key: $key" \
    "$base/api/documents/$id"
  phase "GET by id, anonymous (public role)" "$pid" 200 -t2 -c32 -d"${secs}s" \
    -H "x-cms-organization: $org" "$base/api/documents/$id"
  tag=$(etag_of -H "x-cms-organization: $org" "$base/api/documents/$id")
  phase "  its revalidation (304)" "$pid" 304 -t2 -c32 -d"${secs}s" \
    -H "x-cms-organization: $org" -H "if-none-match: $tag" "$base/api/documents/$id"
  tag=$(etag_of -H "x-api-key: $key" "$base/api/documents/$id")
  phase "GET by id, API key, revalidation (304)" "$pid" 304 -t2 -c32 -d"${secs}s" \
    -H "x-api-key: $key" -H "if-none-match: $tag" "$base/api/documents/$id"
  phase "list of 20, anonymous" "$pid" 200 -t2 -c32 -d"${secs}s" \
    -H "x-cms-organization: $org" "$base/api/documents?type=post&pageSize=20"
  list_tag=$(etag_of -H "x-cms-organization: $org" "$base/api/documents?type=post&pageSize=20")
  phase "  its revalidation (304)" "$pid" 304 -t2 -c32 -d"${secs}s" \
    -H "x-cms-organization: $org" -H "if-none-match: $list_tag" "$base/api/documents?type=post&pageSize=20"
  echo "  RSS after load: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
  [ "$engine" = postgres ] && psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_delivery" >/dev/null
  return 0
}

case $engines in
  both) run_engine sqlite; run_engine postgres ;;
  *) run_engine "$engines" ;;
esac
