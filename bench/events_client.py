#!/usr/bin/env python3
"""The clients of bench/events.sh (Python's standard library only: asyncio over plain sockets).

  latency STREAM_BASE PUBLISH_BASE TOKEN COUNT
      One stream of document.published on STREAM_BASE; COUNT posts published one after the
      other through PUBLISH_BASE (the same instance or another), each waited for on the stream.
      Prints the publish-to-stream latency (from the moment the publish request is sent to the
      moment its event arrives) p50/p99/max, and the publish request's own p50 for context.

  streams BASE TOKEN COUNT SERVER_PID
      COUNT streams of one organization held open on BASE; prints the server's extra resident
      memory for them (its VmRSS with them open less before), then publishes one post and prints
      how long each stream took to get its event (p50/p99/max), and that every stream got it.
"""

import asyncio
import json
import statistics
import sys
import time
from urllib.parse import urlsplit

WAIT = 30.0


def endpoint(base):
    parts = urlsplit(base)
    return parts.hostname, parts.port


async def connect(base):
    host, port = endpoint(base)
    return await asyncio.open_connection(host, port)


async def read_head(reader):
    status = await reader.readline()
    headers = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status.split()[1]), headers


async def request(reader, writer, base, method, path, token, body=None):
    """One request on a kept-alive connection; the answer's status and JSON body."""
    host, port = endpoint(base)
    data = json.dumps(body).encode() if body is not None else b""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    writer.write(head.encode() + data)
    await writer.drain()
    status, headers = await read_head(reader)
    if "content-length" in headers:
        payload = await reader.readexactly(int(headers["content-length"]))
    else:
        payload = await read_chunked(reader)
    return status, json.loads(payload) if payload else None


async def read_chunked(reader):
    out = b""
    while True:
        size = int((await reader.readline()).split(b";")[0], 16)
        if size == 0:
            await reader.readline()
            return out
        out += await reader.readexactly(size)
        await reader.readexactly(2)


async def open_stream(base, token, query):
    reader, writer = await connect(base)
    host, port = endpoint(base)
    writer.write(
        (
            f"GET /api/events/stream{query} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    status, _ = await read_head(reader)
    if status != 200:
        raise SystemExit(f"the stream was refused: {status}")
    return reader, writer


async def sse_events(reader):
    """The events of a chunked SSE body, as dicts (`data` parsed)."""
    text = ""
    while True:
        line = await reader.readline()
        if not line:
            return
        size = int(line.split(b";")[0], 16)
        if size == 0:
            return
        text += (await reader.readexactly(size)).decode()
        await reader.readexactly(2)
        while "\n\n" in text:
            block, text = text.split("\n\n", 1)
            data = [l[5:].lstrip() for l in block.split("\n") if l.startswith("data:")]
            if data:
                yield json.loads("\n".join(data))


def summary(name, seconds):
    ms = sorted(s * 1000 for s in seconds)
    p99 = ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]
    return (
        f"  {name:<44} n={len(ms):<5} p50 {statistics.median(ms):7.2f} ms  "
        f"p99 {p99:7.2f} ms  max {ms[-1]:7.2f} ms"
    )


def post_body(i):
    return {"type": "post", "data": {"title": f"Event bench {i}"}, "publish": True}


async def latency(stream_base, publish_base, token, count):
    reader, _ = await open_stream(stream_base, token, "?types=document.published")
    arrived = {}
    signal = asyncio.Event()

    async def follow():
        async for event in sse_events(reader):
            arrived[event["payload"]["documentId"]] = time.monotonic()
            signal.set()

    follower = asyncio.create_task(follow())
    pub_reader, pub_writer = await connect(publish_base)
    latencies, requests = [], []
    for i in range(count):
        sent = time.monotonic()
        status, body = await request(
            pub_reader, pub_writer, publish_base, "POST", "/api/documents", token, post_body(i)
        )
        answered = time.monotonic()
        if status != 201:
            raise SystemExit(f"publish failed: {status} {body}")
        doc = body["data"]["id"]
        deadline = sent + WAIT
        while doc not in arrived:
            signal.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SystemExit(f"the event of {doc} never arrived")
            try:
                await asyncio.wait_for(signal.wait(), remaining)
            except asyncio.TimeoutError:
                pass
        latencies.append(arrived[doc] - sent)
        requests.append(answered - sent)
        # Apart, so each publish meets an idle stream: the latency, not a queue's.
        await asyncio.sleep(0.02)
    follower.cancel()
    print(summary("publish -> stream", latencies))
    print(summary("  (the publish request alone)", requests))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS")


async def streams(base, token, count, pid):
    # Warm: one stream opened and closed, so the hub and its first connection exist already.
    reader, writer = await open_stream(base, token, "?types=document.published")
    writer.close()
    await asyncio.sleep(1.0)
    before = rss_kib(pid)
    gate = asyncio.Semaphore(64)

    async def one():
        async with gate:
            return await open_stream(base, token, "?types=document.published")

    opened = await asyncio.gather(*(one() for _ in range(count)))
    await asyncio.sleep(2.0)
    held = rss_kib(pid)
    extra = held - before
    print(
        f"  {count} open streams: server RSS {before / 1024:.1f} MiB -> {held / 1024:.1f} MiB, "
        f"extra {extra / 1024:.1f} MiB ({extra / count:.1f} KiB a stream)"
    )
    arrivals = [None] * count

    async def first_event(i, reader):
        async for _ in sse_events(reader):
            arrivals[i] = time.monotonic()
            return

    waiting = [asyncio.create_task(first_event(i, r)) for i, (r, _) in enumerate(opened)]
    pub_reader, pub_writer = await connect(base)
    sent = time.monotonic()
    status, body = await request(
        pub_reader, pub_writer, base, "POST", "/api/documents", token, post_body("fan-out")
    )
    if status != 201:
        raise SystemExit(f"publish failed: {status} {body}")
    await asyncio.wait_for(asyncio.gather(*waiting), WAIT)
    got = [a - sent for a in arrivals if a is not None]
    print(summary(f"one publish -> each of {count} streams", got))
    print(f"  every stream got it: {len(got) == count}; extra RSS under 100 MiB: {extra < 100 * 1024}")
    after = rss_kib(pid)
    print(f"  server RSS after the fan-out: {after / 1024:.1f} MiB")
    for _, w in opened:
        w.close()
    if len(got) != count or extra >= 100 * 1024:
        raise SystemExit(1)


def main():
    command, *args = sys.argv[1:]
    if command == "latency":
        stream_base, publish_base, token, count = args
        asyncio.run(latency(stream_base, publish_base, token, int(count)))
    elif command == "streams":
        base, token, count, pid = args
        asyncio.run(streams(base, token, int(count), int(pid)))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
