#!/usr/bin/env bash
# Scale benchmark (issue 11): on SQLite and on PostgreSQL, with the release binary and wrk on
# loopback (2 threads, 32 connections, --latency):
#   1. cold start of `cms serve` on an empty database (ms to the first healthy /healthz) and its
#      idle RSS;
#   2. seeding DOCS posts across ORGS organizations in process through the service layer
#      (cms-bench-seed: organizations, an API key each, assets, authors, posts with references,
#      90% published), then start and idle RSS again at that size;
#   3. measured phases of SECONDS each: reads by id (each with its organization's key), a GET
#      list page (published, sorted by the indexed `views`), POST /api/documents/query (a range
#      on `views`, sorted, 20), GraphQL (the same with authors resolved), /media reads, creates
#      (drafts), updates with expectedRevision, publishes, and a fixed weighted mix of all.
#      Per phase: requests/s, p50 and p99 latency, the server's peak RSS during the phase.
# Prints a table and writes bench/results/scale-<engine>.json.
# Usage: [DOCS=1000000] [ORGS=1000] [CONCURRENCY=3] [PG_SSLMODE=disable] [KEEP=1]
#        bench/scale.sh [seconds-per-phase] [sqlite|postgres|both]
# PG_SSLMODE: the service's `sslmode` for PostgreSQL (unset: the driver's default, `prefer`, which
# uses TLS when the server offers it; see docs/PERFORMANCE.md). KEEP=1 keeps the database.
# Needs wrk (apt-get install -y wrk), curl, python3, and for PostgreSQL psql and the server at
# CMS_TEST_POSTGRES_URL's host (the database cms_bench is dropped and recreated there).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
engines=${2:-both}
docs=${DOCS:-1000000}
orgs=${ORGS:-1000}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install -y wrk" >&2; exit 1; }
cargo build --release --quiet -p cms -p cms-bench-seed
target=${CARGO_TARGET_DIR:-$PWD/target}
bin=$target/release/cms
seed=$target/release/cms-bench-seed
lua=$PWD/bench/scale.lua
results=$PWD/bench/results
mkdir -p "$results"
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
pg_bench=${pg_server%/*}/cms_bench
pid=
work=
started_ms=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ -n "$work" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

# Starts `cms serve` in $work on $port and waits for /healthz; sets $pid and $started_ms, the
# milliseconds from launch to the first healthy answer.
start_server() {
  local begin
  begin=$(date +%s%N)
  (cd "$work" && exec "$bin" serve --port "$port" >>"$work/server.log" 2>&1) & pid=$!
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
    sleep 0.002
  done
  started_ms=$(( ($(date +%s%N) - begin) / 1000000 ))
}

stop_server() {
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}

rss_kib() { awk "/^$1:/ {print \$2}" "/proc/$pid/status"; }

# wrk's figures as one tab-separated line: req/s, p50 ms, p99 ms, requests, non-2xx, errors.
parse_wrk() {
  awk 'function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec/ {rps=$2} /^ +50%/ {p50=ms($2)} /^ +99%/ {p99=ms($2)}
    /requests in/ {n=$1} /Non-2xx/ {bad=$5} /Socket errors/ {err=$4+$6+$8+$10}
    END {printf "%s\t%.3f\t%.3f\t%d\t%d\t%d\n", rps, p50, p99, n, bad+0, err+0}'
}

run_engine() {
  local engine=$1 url rows
  work=$(mktemp -d)
  case $engine in
    sqlite) url="sqlite://$work/cms-data/cms.db" ;;
    postgres)
      psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench WITH (FORCE)" -qc "CREATE DATABASE cms_bench" >/dev/null
      url=$pg_bench${PG_SSLMODE:+?sslmode=$PG_SSLMODE} ;;
  esac
  export CMS_DATABASE_URL=$url RUST_LOG=warn
  export CMS_AUTH_SECRET="the scale bench's auth secret, 32+ characters"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  base=http://127.0.0.1:$port
  rows=$work/rows.tsv
  : > "$rows"
  echo "$engine ($docs posts, $orgs organizations, ${secs}s per phase):"

  local cold idle seed_secs warm idle_seeded
  start_server
  cold=$started_ms
  sleep 1
  idle=$(rss_kib VmRSS)
  echo "  cold start to healthy (empty database): $cold ms; idle RSS $idle KiB"
  stop_server

  local begin=$(date +%s%N)
  (cd "$work" && "$seed" --docs "$docs" --orgs "$orgs" --out "$work/load" --concurrency "${CONCURRENCY:-3}")
  seed_secs=$(awk -v a="$begin" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}')
  if [ "$engine" = postgres ]; then
    # What autovacuum does on its own some time after a bulk load; timed apart from the seed.
    local vbegin=$(date +%s%N)
    psql "$pg_bench" -qc "VACUUM ANALYZE" >/dev/null
    echo "  VACUUM ANALYZE: $(( ($(date +%s%N) - vbegin) / 1000000 )) ms"
  fi
  start_server
  warm=$started_ms
  sleep 1
  idle_seeded=$(rss_kib VmRSS)
  echo "  seeded in $seed_secs s; start to healthy at that size: $warm ms; idle RSS $idle_seeded KiB"

  printf "  %-38s %10s %9s %9s %12s %9s\n" phase "req/s" "p50 ms" "p99 ms" "peak RSS KiB" "non-2xx"
  local entry phase clients threads debug figures hwm
  # phase@clients: 32 connections on 2 threads, or one client for the latency of one request
  # on an otherwise idle server. Write phases print their first non-2xx answers (debug).
  for entry in read@32 list@32 query@32 graphql@32 media@32 create@32 update@32 publish@32 \
      mixed@32 read@1 list@1 query@1 graphql@1; do
    phase=${entry%@*} clients=${entry#*@}
    threads=$(( clients < 2 ? 1 : 2 ))
    case $phase in create | update | publish | mixed) debug=debug ;; *) debug= ;; esac
    echo 5 > "/proc/$pid/clear_refs"
    figures=$(wrk -t"$threads" -c"$clients" -d"${secs}s" --latency -s "$lua" "$base" \
      -- "$phase" "$work/load" "$threads" $debug | parse_wrk)
    hwm=$(rss_kib VmHWM)
    printf "%s\t%s\t%s\t%s\n" "$phase" "$clients" "$figures" "$hwm" >> "$rows"
    awk -F'\t' -v label="$(label "$phase") c=$clients" '{printf "  %-38s %10.0f %9.2f %9.2f %12d %9s\n", label, $3, $4, $5, $9, ($7 + $8) ? $7 + $8 : ""}' <<<"$(tail -n1 "$rows")"
  done
  stop_server

  python3 - "$rows" "$results/scale-$engine.json" <<PY
import json, sys, datetime, platform
names = {"read": "GET /api/documents/{id}", "list": "GET /api/documents (published, sort -views, 20)",
         "query": "POST /api/documents/query (views range, sort, 20)",
         "graphql": "POST /api/graphql (allPost range, sort, 20, author)", "media": "GET /media/{id}/{file}",
         "create": "POST /api/documents (draft)", "update": "PUT /api/documents/{id} (expectedRevision)",
         "publish": "POST /api/documents/{id}/publish", "mixed": "mixed"}
phases = []
for line in open(sys.argv[1]):
    p, clients, rps, p50, p99, n, bad, err, hwm = line.rstrip("\n").split("\t")
    phases.append({"phase": p, "endpoint": names[p], "connections": int(clients),
                   "requestsPerSecond": float(rps), "p50Ms": float(p50),
                   "p99Ms": float(p99), "requests": int(n), "non2xx": int(bad), "socketErrors": int(err),
                   "peakRssKiB": int(hwm)})
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
out = {"engine": "$engine", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "machine": {"cpu": model, "cores": __import__("os").cpu_count(), "kernel": platform.release()},
       "documents": $docs, "organizations": $orgs, "secondsPerPhase": $secs,
       "wrk": {"threads": "2 (1 for one connection)", "connections": "32 or 1, per phase"},
       "coldStartMs": $cold, "idleRssKiB": $idle, "seedSeconds": $seed_secs,
       "startAtSizeMs": $warm, "idleRssAtSizeKiB": $idle_seeded, "phases": phases}
json.dump(out, open(sys.argv[2], "w"), indent=2)
PY
  echo "  written: bench/results/scale-$engine.json"
  rm -rf "$work"; work=
  [ "$engine" = postgres ] && [ -z "${KEEP:-}" ] && psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_bench WITH (FORCE)" >/dev/null
  return 0
}

label() {
  case $1 in
    read) echo "GET by id (x-api-key)" ;;
    list) echo "GET list (published, -views, 20)" ;;
    query) echo "POST query (views range, 20)" ;;
    graphql) echo "GraphQL allPost (+author)" ;;
    media) echo "GET /media" ;;
    create) echo "POST create (draft)" ;;
    update) echo "PUT update (expectedRevision)" ;;
    publish) echo "POST publish" ;;
    mixed) echo "mixed (weighted)" ;;
  esac
}

case $engines in
  both) run_engine sqlite; run_engine postgres ;;
  sqlite | postgres) run_engine "$engines" ;;
  *) echo "usage: bench/scale.sh [seconds] [sqlite|postgres|both]" >&2; exit 2 ;;
esac
