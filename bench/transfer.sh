#!/usr/bin/env bash
# Export/import benchmark (issue 28): `cms export` and `cms import` with the release binary and
# local asset storage, at two sizes (SMALL posts, then DOCS posts; ORGS organizations and
# ASSETS assets at both, so the archives differ only in their documents):
#   1. seeding DOCS posts across ORGS organizations on SQLite (cms-bench-seed: organizations,
#      an API key each, ASSETS / ORGS PNG assets each, 10 authors each, posts with references,
#      90% published), local storage in a temporary data directory;
#   2. `cms export --with-credentials` of that SQLite instance (tar + zstd, asset files
#      included);
#   3. `cms import --into-empty` of the archive into a fresh PostgreSQL database (cms_transfer)
#      and into a fresh SQLite database, each with its own empty local storage;
#   4. the reverse direction: `cms export` of that PostgreSQL database (after VACUUM ANALYZE,
#      timed apart, as autovacuum would on its own), imported into a fresh SQLite database.
# Each command runs under GNU time: wall-clock seconds and peak resident set (the process's
# maximum RSS). After each import the target's row counts (organizations, users, roles,
# members, api_keys, documents, document_versions, document_references, assets, schedules,
# plugin_settings) and its stored files (count and bytes) must equal the seeded source's.
# Streaming means the peak RSS of each phase does not grow from SMALL to DOCS; the last column
# of the summary is that ratio.
# Prints a table and writes bench/results/transfer.json (only when every check passed; a
# mismatch is listed and the script exits 1).
# Usage: [DOCS=100000] [SMALL=10000] [ORGS=100] [ASSETS=1000] [CONCURRENCY=3]
#        [PG_SSLMODE=disable] [KEEP=1] bench/transfer.sh
# KEEP=1 keeps the temporary directory (its path is printed) and the database cms_transfer.
# Needs GNU time at /usr/bin/time (apt-get install -y time), sqlite3, psql, python3, and the
# PostgreSQL server at CMS_TEST_POSTGRES_URL's host (the database cms_transfer is dropped and
# recreated there).
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${DOCS:-100000}
small=${SMALL:-10000}
orgs=${ORGS:-100}
assets=${ASSETS:-1000}
[ -x /usr/bin/time ] || { echo "GNU time is needed: apt-get install -y time" >&2; exit 1; }
for tool in sqlite3 psql python3; do
  command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done
if [ $((assets % orgs)) -ne 0 ] || [ "$small" -ge "$docs" ] || [ "$small" -lt "$orgs" ]; then
  echo "ASSETS ($assets) must be a multiple of ORGS ($orgs), and ORGS <= SMALL ($small) < DOCS ($docs)" >&2
  exit 2
fi
cargo build --release --quiet -p cms -p cms-bench-seed
target=${CARGO_TARGET_DIR:-$PWD/target}
bin=$target/release/cms
seed=$target/release/cms-bench-seed
results=$PWD/bench/results
mkdir -p "$results"
pg_server=${CMS_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
pg_db=${pg_server%/*}/cms_transfer
pg_url=$pg_db${PG_SSLMODE:+?sslmode=$PG_SSLMODE}
# One secret for every instance: API keys and session tokens are stored as keyed hashes, so an
# imported instance only accepts the source's keys under the source's secret.
export CMS_AUTH_SECRET="the transfer bench's auth secret, 32+ characters"
export RUST_LOG=warn
work=$(mktemp -d)
rows=$work/rows.tsv
mismatches=$work/mismatches.txt
: > "$rows"
: > "$mismatches"
cleanup() {
  if [ -n "${KEEP:-}" ]; then
    echo "kept: $work and the database cms_transfer"
  else
    rm -rf "$work"
    psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_transfer WITH (FORCE)" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

fresh_postgres() {
  PGOPTIONS='-c client_min_messages=warning' psql "$pg_server" -qc "DROP DATABASE IF EXISTS cms_transfer WITH (FORCE)" -qc "CREATE DATABASE cms_transfer" >/dev/null
}

# run SIZE PHASE DIR URL ARCHIVE -- COMMAND...: runs COMMAND as the instance whose data
# directory (and local storage, DIR/media) is DIR and whose database is URL, in DIR (so no
# cms.toml is picked up), under GNU time; appends a row to $rows: size, phase, its label,
# archive bytes (of ARCHIVE, the one written or read, or 0 for "-"), seconds, peak RSS KiB.
# Its output goes to DIR/PHASE.log.
run() {
  local size=$1 phase=$2 dir=$3 url=$4 archive=$5 stats secs rss bytes=0
  shift 6
  stats=$dir/$phase.time
  mkdir -p "$dir"
  if ! (cd "$dir" && CMS_DATA_DIR=$dir CMS_DATABASE_URL=$url CMS_STORAGE_KIND=local \
      CMS_STORAGE_PATH=$dir/media /usr/bin/time -v -o "$stats" "$@" >"$dir/$phase.log" 2>&1); then
    echo "$phase failed:" >&2
    tail -n 40 "$dir/$phase.log" >&2
    exit 1
  fi
  # "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.34"
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s}' "$stats")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$stats")
  [ "$archive" != - ] && bytes=$(stat -c %s "$archive")
  printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$size" "$phase" "$(label "$phase")" "$bytes" "$secs" "$rss" >> "$rows"
  awk -F'\t' '{printf "  %-34s %12s %9.2f %9.1f\n", $3, ($4 ? sprintf("%.1f MiB", $4 / 1048576) : "-"), $5, $6 / 1024}' <<<"$(tail -n1 "$rows")"
}

label() {
  case $1 in
    seed) echo "seed SQLite (cms-bench-seed)" ;;
    export-sqlite) echo "export SQLite" ;;
    import-postgres) echo "import into PostgreSQL" ;;
    import-sqlite) echo "import into SQLite" ;;
    export-postgres) echo "export PostgreSQL" ;;
    import-sqlite-from-postgres) echo "import PostgreSQL's into SQLite" ;;
  esac
}

# What must survive the round trip: one line per table, "table|rows".
tables="organizations users roles members api_keys documents document_versions document_references assets schedules plugin_settings"
count_sql() {
  local t sql=
  for t in $tables; do sql+="${sql:+ UNION ALL }SELECT '$t', count(*) FROM $t"; done
  echo "$sql;"
}
counts() { # sqlite PATH | postgres URL
  case $1 in
    sqlite) sqlite3 "$2" "$(count_sql)" | sort ;;
    postgres) psql "$2" -XAtc "$(count_sql)" | sort ;;
  esac
}
files() { # storage directory -> "files|N" and "file bytes|N"
  find "$1" -type f -printf '%s\n' 2>/dev/null | awk '{n++; b += $1} END {printf "files|%d\nfile bytes|%d\n", n, b}'
}

# check SIZE PHASE SOURCE-COUNTS TARGET-COUNTS: every line equal, or the differences are
# recorded in $mismatches.
check() {
  local size=$1 phase=$2
  if ! diff "$3" "$4" >/dev/null; then
    { echo "$size posts, $phase: the target differs from the source (source < > target):"
      diff "$3" "$4" | grep '^[<>]' || true; } | tee -a "$mismatches" >&2
  else
    echo "    checked: $(tr '\n' ' ' < "$4" | sed 's/|/ /g')"
  fi
}

# One size: seed, export, the three imports, the export from PostgreSQL.
run_size() {
  local posts=$1 dir=$work/$1
  local src=$dir/source sqlite_copy=$dir/sqlite pg=$dir/postgres back=$dir/sqlite-from-postgres
  local archive=$dir/sqlite.tar.zst pg_archive=$dir/postgres.tar.zst
  mkdir -p "$dir"
  echo "$posts posts, $orgs organizations, $assets assets:"
  printf "  %-34s %12s %9s %9s\n" phase archive seconds "peak MiB"

  run "$posts" seed "$src" "sqlite://$src/cms.db" - -- \
    "$seed" --docs "$posts" --orgs "$orgs" --assets-per-org $((assets / orgs)) \
    --out "$src/load" --concurrency "${CONCURRENCY:-3}"
  { counts sqlite "$src/cms.db"; files "$src/media"; } > "$dir/source.counts"
  echo "    seeded: $(tr '\n' ' ' < "$dir/source.counts" | sed 's/|/ /g')"

  run "$posts" export-sqlite "$src" "sqlite://$src/cms.db" "$archive" -- \
    "$bin" export --with-credentials --output "$archive"

  fresh_postgres
  run "$posts" import-postgres "$pg" "$pg_url" "$archive" -- \
    "$bin" import "$archive" --into-empty
  { counts postgres "$pg_db"; files "$pg/media"; } > "$dir/postgres.counts"
  check "$posts" import-postgres "$dir/source.counts" "$dir/postgres.counts"

  run "$posts" import-sqlite "$sqlite_copy" "sqlite://$sqlite_copy/cms.db" "$archive" -- \
    "$bin" import "$archive" --into-empty
  { counts sqlite "$sqlite_copy/cms.db"; files "$sqlite_copy/media"; } > "$dir/sqlite.counts"
  check "$posts" import-sqlite "$dir/source.counts" "$dir/sqlite.counts"

  local vbegin=$(date +%s%N)
  psql "$pg_db" -qc "VACUUM ANALYZE" >/dev/null
  echo "    VACUUM ANALYZE of the imported PostgreSQL database: $(( ($(date +%s%N) - vbegin) / 1000000 )) ms"
  run "$posts" export-postgres "$pg" "$pg_url" "$pg_archive" -- \
    "$bin" export --with-credentials --output "$pg_archive"

  run "$posts" import-sqlite-from-postgres "$back" "sqlite://$back/cms.db" "$pg_archive" -- \
    "$bin" import "$pg_archive" --into-empty
  { counts sqlite "$back/cms.db"; files "$back/media"; } > "$dir/back.counts"
  check "$posts" import-sqlite-from-postgres "$dir/source.counts" "$dir/back.counts"

  # The documents row count goes into the JSON beside the posts.
  awk -F'|' '$1 == "documents" {print $2}' "$dir/source.counts" > "$dir/documents"
  # Keep only what the summary needs (the databases of the DOCS run are large).
  [ -n "${KEEP:-}" ] || rm -rf "$src" "$sqlite_copy" "$pg" "$back" "$dir"/*.tar.zst
}

run_size "$small"
run_size "$docs"

echo
python3 - "$rows" "$work" "$small" "$docs" "$orgs" "$assets" "$results/transfer.json" "$mismatches" <<'PY'
import datetime, json, os, platform, sys
rows_path, work, small, docs, orgs, assets, out, mismatches = sys.argv[1:]
documents = {int(s): int(open(os.path.join(work, s, "documents")).read()) for s in (small, docs)}
rows, labels = [], {}
for line in open(rows_path):
    size, phase, label, archive, secs, rss = line.rstrip("\n").split("\t")
    labels[phase] = label
    rows.append({"posts": int(size), "documents": documents[int(size)], "phase": phase,
                 "archiveBytes": int(archive) or None, "seconds": float(secs),
                 "peakRssKiB": int(rss)})
by = {(r["posts"], r["phase"]): r for r in rows}
growth = {}
print(f"  {'phase':<34} {'posts':>8} {'documents':>10} {'archive MiB':>12} {'seconds':>9} {'peak MiB':>9} {'peak x':>7}")
for r in rows:
    base = by.get((int(small), r["phase"]))
    ratio = ""
    if r["posts"] == int(docs) and int(docs) != int(small) and base:
        growth[r["phase"]] = round(r["peakRssKiB"] / base["peakRssKiB"], 2)
        ratio = f"{growth[r['phase']]:.2f}"
    archive = f"{r['archiveBytes'] / 1048576:.1f}" if r["archiveBytes"] else "-"
    print(f"  {labels[r['phase']]:<34} {r['posts']:>8} {r['documents']:>10} {archive:>12}"
          f" {r['seconds']:>9.2f} {r['peakRssKiB'] / 1024:>9.1f} {ratio:>7}")
print(f"  peak x: the phase's peak RSS at {docs} posts over its peak at {small}")
failed = open(mismatches).read().strip()
if failed:
    print("not written: bench/results/transfer.json (the imports did not match the source)")
    sys.exit(1)
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
result = {
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": {"cpu": model, "cores": os.cpu_count(), "kernel": platform.release()},
    "organizations": int(orgs), "assets": int(assets), "storage": "local",
    "sizes": [{"posts": int(s), "documents": documents[int(s)]} for s in (small, docs)],
    "measure": "GNU time -v: wall clock, maximum resident set size of the cms process",
    "phases": rows,
    "peakRssGrowth": {"from": int(small), "to": int(docs), "ratioByPhase": growth},
}
json.dump(result, open(out, "w"), indent=2)
print("written: bench/results/transfer.json")
PY
