"""A webhook receiver on loopback for tests/api/webhook_endpoints.rs.

It verifies Standard Webhooks signatures with the `standardwebhooks` package from PyPI, an
implementation independent of the service's own. Usage: `python3 webhook_receiver.py PORT`.

- `POST /hook/<name>`: a delivery to receiver `<name>`; recorded (headers, body) and answered
  with the receiver's next scripted status (200 when none is scripted).
- `POST /control/script` `{name, statuses, otherwise}`: how `<name>` answers from now on.
- `GET /control/received?name=<name>`: what `<name>` was sent, oldest first.
- `POST /control/verify` `{secret, headers, body}`: `{ok, error}` from
  `standardwebhooks.Webhook(secret).verify(body, headers)`.
- `GET /control/ready`: 200 once serving.

It stops when its standard input closes (the test that started it ended), so it never
outlives its test.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from standardwebhooks.webhooks import Webhook

LOCK = threading.Lock()
RECEIVED = {}
SCRIPTS = {}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length)

    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/control/ready":
            return self.answer(200, {"ready": True})
        if url.path == "/control/received":
            name = parse_qs(url.query).get("name", [""])[0]
            with LOCK:
                return self.answer(200, list(RECEIVED.get(name, [])))
        return self.answer(404, {"error": "no such path"})

    def do_POST(self):
        url = urlparse(self.path)
        raw = self.body()
        if url.path.startswith("/hook/"):
            name = url.path[len("/hook/"):]
            with LOCK:
                RECEIVED.setdefault(name, []).append(
                    {
                        "method": "POST",
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": raw.decode("utf-8"),
                    }
                )
                script = SCRIPTS.setdefault(name, {"statuses": [], "otherwise": 200})
                status = script["statuses"].pop(0) if script["statuses"] else script["otherwise"]
            return self.answer(status, {"received": True})
        if url.path == "/control/script":
            asked = json.loads(raw)
            with LOCK:
                SCRIPTS[asked["name"]] = {
                    "statuses": list(asked.get("statuses", [])),
                    "otherwise": asked.get("otherwise", 200),
                }
            return self.answer(200, {"scripted": True})
        if url.path == "/control/verify":
            asked = json.loads(raw)
            try:
                Webhook(asked["secret"]).verify(asked["body"], asked["headers"])
                return self.answer(200, {"ok": True, "error": None})
            except Exception as error:  # the package raises its own errors and base64's
                return self.answer(200, {"ok": False, "error": f"{type(error).__name__}: {error}"})
        return self.answer(404, {"error": "no such path"})


def main():
    port = int(sys.argv[1])
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Serve until the test closes our standard input (or dies, which closes it too).
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
