#!/usr/bin/env bash
# /media benchmark (issue 6), with the release binary on SQLite and local storage, and wrk on
# loopback:
#   1. GET /media/{id}/{filename} of a 100 KiB image at concurrency 32 (2 wrk threads);
#   2. the same with If-None-Match (304s: the cost of the request without the bytes);
#   3. image transforms (issue 27) of a 12-megapixel photo-like JPEG: the first transform to a
#      1,200 px WebP (20 different ones, each rendered, never cached: p50 and p90), a cached
#      derivative's reads next to the same bytes read as an original (wrk, c=32), and the
#      server's peak resident set while 16 different first transforms are asked at once;
#   4. memory while serving a 1 GiB file: the server's resident set sampled every 20 ms during
#      the upload and during the download, next to the same for a 16 MiB file. Streaming means
#      the peak does not grow with the file's size.
# Usage: bench/media.sh [seconds] — SQLite unless CMS_DATABASE_URL names an empty PostgreSQL
# database; needs wrk (apt-get install -y wrk), curl, python3 with
# Pillow (pip install pillow) to draw the photo.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install -y wrk" >&2; exit 1; }
cargo build --release --quiet
bin=$PWD/target/release/cms
work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
(cd "$work" && RUST_LOG=warn CMS_ASSETS_MAX_UPLOAD_BYTES=$((2 * 1024 * 1024 * 1024)) \
  exec "$bin" serve --port "$port") & pid=$!
until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.01; done

rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
idle=$(rss_kib)

json='content-type: application/json'
token=$(curl -sf -H "$json" -d '{"name":"B","email":"b@example.com","password":"bench password"}' \
  "$base/api/auth/sign-up/email" | sed -E 's/.*"token":"([^"]+)".*/\1/')
key=$(curl -sf -H "$json" -H "authorization: Bearer $token" -d '{"name":"bench","permissions":["write"]}' \
  "$base/api/settings/api-keys" | sed -E 's/.*"key":"([^"]+)".*/\1/')

upload() { # file -> url of the new asset
  curl -sf -H "x-api-key: $key" -F "file=@$1" "$base/api/assets" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["url"])'
}

# A 100 KiB PNG: a real header (so it is sniffed and measured as an image) and filler.
python3 - "$work/image.png" <<'PY'
import struct, sys, zlib
w, h = 320, 240
ihdr = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
body = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
filler = bytes((i * 7) % 256 for i in range(100 * 1024 - len(body) - 24))
open(sys.argv[1], "wb").write(body + chunk(b"tEXt", filler) + chunk(b"IEND", b""))
PY
image=$(upload "$work/image.png")
etag=$(curl -sfI "$base$image" | awk 'tolower($1)=="etag:" {print $2}' | tr -d '\r')

report() { # name, wrk output
  awk -v name="$1" '/Requests\/sec/ {rps=$2} /Transfer\/sec/ {tps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Non-2xx/ {bad=$5}
    END {printf "  %-40s %10s req/s %10s/s  p50 %8s  p99 %8s%s\n", name, rps, tps, p50, p99, (bad ? "  NON-2xx: " bad : "")}'
}

case "${CMS_DATABASE_URL:-}" in
  postgres*) engine=PostgreSQL ;;
  *) engine=SQLite ;;
esac
echo "media ($engine, local storage):"
wrk -t2 -c32 -d"${secs}s" --latency "$base$image" | report "GET /media 100 KiB image (c=32)"
wrk -t2 -c32 -d"${secs}s" --latency -H "if-none-match: $etag" "$base$image" \
  | report "  the same with If-None-Match (304)"

# Peak resident memory while a command runs.
peak_during() {
  local peak=0 rss
  "$@" & local job=$!
  while kill -0 "$job" 2>/dev/null; do
    rss=$(rss_kib); [ "$rss" -gt "$peak" ] && peak=$rss
    sleep 0.02
  done
  wait "$job"
  echo "$peak"
}

# A 4000x3000 photo-like JPEG (smooth gradients under fine noise, quality 90: about 6 MB).
python3 - "$work/photo.jpg" <<'PY'
import sys
from PIL import Image, ImageChops
w, h = 4000, 3000
r = Image.linear_gradient("L").resize((w, h))
g = Image.radial_gradient("L").resize((w, h))
b = r.transpose(Image.Transpose.ROTATE_90).resize((w, h))
noise = Image.effect_noise((w, h), 40)
base = Image.merge("RGB", (ImageChops.add(r, noise, 1.0, -64), g, ImageChops.add(b, noise, 1.0, -64)))
base.save(sys.argv[1], quality=90)
PY
photo=$(upload "$work/photo.jpg")
printf "  12 MP photo: %d bytes\n" "$(stat -c %s "$work/photo.jpg")"
# First transforms: each quality is another derivative, so each request renders one.
times=()
for q in $(seq 61 80); do
  times+=("$(curl -sf -o /dev/null -w '%{time_total}' "$base$photo?w=1200&fm=webp&q=$q")")
done
printf '%s\n' "${times[@]}" | sort -n | awk '{t[NR]=$1} END {printf "  first transform 12 MP JPEG -> 1200 px WebP: p50 %.0f ms, p90 %.0f ms, max %.0f ms (%d runs)\n", t[int(NR/2)+1]*1000, t[int(NR*0.9)]*1000, t[NR]*1000, NR}'
cached="$base$photo?w=1200&fm=webp&q=80"
curl -sf -D "$work/cached.h" -o "$work/derivative.webp" "$cached"
grep -qi '^x-cache: HIT' "$work/cached.h" || { echo "the derivative was not served from the cache" >&2; exit 1; }
copy=$(upload "$work/derivative.webp")
printf "  derivative: %d bytes\n" "$(stat -c %s "$work/derivative.webp")"
wrk -t2 -c32 -d"${secs}s" --latency "$cached" | report "GET cached derivative (c=32)"
wrk -t2 -c32 -d"${secs}s" --latency "$base$copy" | report "  the same bytes as an original (c=32)"
# 16 different first transforms at once: two render (one per core), the others wait.
concurrent() {
  for q in $(seq 41 56); do curl -sf -o /dev/null "$base$photo?w=1200&fm=webp&q=$q" & done
  wait
}
before=$(rss_kib)
start=$(date +%s%N)
peak=$(peak_during concurrent)
printf "  16 concurrent first transforms: %.2f s in all, server RSS %d KiB before, peak %d KiB\n" \
  "$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN {print (b - a) / 1e9}')" "$before" "$peak"

big_file() { # name, MiB
  head -c "$(($2 * 1024 * 1024))" /dev/urandom > "$work/$1"
}

# Uploads first; then a fresh server process, so the download peaks are not the upload's.
declare -A urls
for size in 16 1024; do
  big_file "big-$size.bin" "$size"
  start=$(date +%s%N)
  up_peak=$(peak_during curl -sf -o "$work/up-$size.json" -H "x-api-key: $key" -F "file=@$work/big-$size.bin" "$base/api/assets")
  up_secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN {print (b - a) / 1e9}')
  urls[$size]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["url"])' "$work/up-$size.json")
  printf "  %5s MiB upload:   %6.2f s, server peak RSS %6d KiB\n" "$size" "$up_secs" "$up_peak"
  rm -f "$work/big-$size.bin"
done
kill "$pid"; wait "$pid" 2>/dev/null || true
(cd "$work" && RUST_LOG=warn exec "$bin" serve --port "$port") & pid=$!
until curl -sf "$base/healthz" >/dev/null 2>&1; do sleep 0.01; done
printf "  restarted: RSS idle %d KiB\n" "$(rss_kib)"
for size in 16 1024; do
  start=$(date +%s%N)
  down_peak=$(peak_during curl -sf -o /dev/null "$base${urls[$size]}")
  down_secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN {print (b - a) / 1e9}')
  printf "  %5s MiB download: %6.2f s, server peak RSS %6d KiB\n" "$size" "$down_secs" "$down_peak"
done
printf "  RSS idle after the first start %d KiB\n" "$idle"
