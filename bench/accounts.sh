#!/usr/bin/env bash
# Accounts benchmark (issue 29): what signing in and being signed in cost, on SQLite and on
# PostgreSQL, with the release binary and wrk on loopback (2 threads, 32 connections).
#   1. GET /api/auth/get-session and GET /api/documents/{id} with a session's bearer token: the
#      session's one-query resolution every signed-in request pays (its user, role, the active
#      organization's two-factor requirement and the person's two-factor standing);
#   2. the same for a person with two-factor sign-in on, in an organization that requires it;
#   3. sign-in with e-mail and password (argon2id), one client, as a person signs in; then the
#      two steps of a two-factor sign-in, once per recovery code.
# Rate limits are turned off for the run (CMS_AUTH_RATE_LIMIT_PER_*=0): they would answer 429.
# Usage: [CMS_BIN=path] bench/accounts.sh [seconds-per-phase] [sqlite|postgres|both]
# CMS_BIN: measure that binary instead of building this tree's (another build, side by side;
# phases 2 and 3's two-factor steps need a build with two-factor sign-in).
# Needs wrk (apt-get install -y wrk), python3 and, for PostgreSQL, the local server.
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
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"' EXIT

cat > "$scripts/sign-in.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.body = '{"email":"b@example.com","password":"bench password"}'
LUA

report() { # name, wrk output
  awk -v name="$1" '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Non-2xx/ {bad=$5}
    END {printf "  %-52s %10s req/s  p50 %8s  p99 %8s%s\n", name, rps, p50, p99, (bad ? "  NON-2xx: " bad : "")}'
}

# The current code of a base32 TOTP secret (RFC 6238, SHA-1, 6 digits, 30 s), without a
# package: the standard library's hmac.
totp() {
  python3 - "$1" <<'PY'
import base64, hmac, struct, sys, time
key = base64.b32decode(sys.argv[1] + "=" * (-len(sys.argv[1]) % 8))
mac = hmac.new(key, struct.pack(">Q", int(time.time()) // 30), "sha1").digest()
o = mac[-1] & 15
print("%06d" % ((struct.unpack(">I", mac[o:o + 4])[0] & 0x7fffffff) % 1000000))
PY
}
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval('d' + sys.argv[1]))" "$1"; }

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
  (cd "$work" && RUST_LOG=warn CMS_DATABASE_URL=$url CMS_AUTH_RATE_LIMIT_PER_EMAIL=0 \
    CMS_AUTH_RATE_LIMIT_PER_ADDRESS=0 exec "$bin" serve --port "$port") & pid=$!
  trap "kill $pid 2>/dev/null || true; rm -rf '$scripts'" EXIT
  until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.01; done
  local json='content-type: application/json'
  local token id org
  token=$(curl -sf -H "$json" -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
    "$base/api/auth/sign-up/email" | field '["token"]')
  id=$(curl -sf -H "$json" -H "authorization: Bearer $token" \
    -d '{"type":"post","publish":true,"data":{"title":"Bench"}}' "$base/api/documents" | field '["data"]["id"]')
  echo "$engine:"
  wrk -t2 -c32 -d"${secs}s" --latency -H "authorization: Bearer $token" "$base/api/auth/get-session" \
    | report "GET /api/auth/get-session (session)"
  wrk -t2 -c32 -d"${secs}s" --latency -H "authorization: Bearer $token" "$base/api/documents/$id" \
    | report "GET /api/documents/{id} (session)"
  wrk -t1 -c1 -d"${secs}s" --latency -s "$scripts/sign-in.lua" "$base/api/auth/sign-in/email" \
    | report "POST /api/auth/sign-in/email (one client)"

  local secret enrolled
  if secret=$(curl -sf -X POST -H "authorization: Bearer $token" "$base/api/user/two-factor/enroll" | field '["data"]["secret"]' 2>/dev/null); then
    enrolled=$(curl -sf -H "$json" -H "authorization: Bearer $token" -d "{\"code\":\"$(totp "$secret")\"}" \
      "$base/api/user/two-factor/confirm")
    org=$(curl -sf -H "authorization: Bearer $token" "$base/api/auth/get-session" | field '["session"]["activeOrganizationId"]')
    curl -sf -X PATCH -H "$json" -H "authorization: Bearer $token" -d '{"requireTwoFactor":true}' \
      "$base/api/organizations/$org" >/dev/null
    wrk -t2 -c32 -d"${secs}s" --latency -H "authorization: Bearer $token" "$base/api/documents/$id" \
      | report "GET /api/documents/{id} (session, two-factor on, required)"
    # A whole two-factor sign-in per recovery code (each works once; an app's code would wait
    # 30 s for the next step): the password step, then the second step that opens the session.
    python3 - "$base" "$enrolled" <<'PY'
import json, statistics, sys, time, urllib.request
base, codes = sys.argv[1], json.loads(sys.argv[2])["data"]["recoveryCodes"]
def post(path, body):
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"content-type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(req) as res:
        answer = json.load(res)
    return answer, (time.perf_counter() - started) * 1000
first, second = [], []
for code in codes:
    answer, ms = post("/api/auth/sign-in/email", {"email": "b@example.com", "password": "bench password"})
    first.append(ms)
    answer, ms = post("/api/auth/two-factor", {"challenge": answer["challenge"], "recoveryCode": code})
    assert answer["token"]
    second.append(ms)
print("  %-52s %10.1f ms (median of %d)" % ("sign-in, password step (answers a challenge)", statistics.median(first), len(first)))
print("  %-52s %10.1f ms (median of %d)" % ("sign-in, second step (a recovery code)", statistics.median(second), len(second)))
PY
  fi
  echo "  RSS after load: $(awk '/VmRSS/ {print $2}' /proc/$pid/status) kB"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
  [ "$engine" = postgres ] && psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench" >/dev/null
  return 0
}

case $engines in
  both) run_engine sqlite; run_engine postgres ;;
  *) run_engine "$engines" ;;
esac
