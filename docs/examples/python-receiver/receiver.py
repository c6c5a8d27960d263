"""A webhook endpoint that verifies paymock's deliveries with the Python
standard library only (no package to install).

    WEBHOOK_SECRET=whsec_... python3 receiver.py

It listens on port 9000 (PORT to change it) and accepts POST /hooks.
"""

import base64
import hashlib
import hmac
import json
import os
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

TOLERANCE = 5 * 60  # seconds between webhook-timestamp and now, either way


class InvalidSignature(Exception):
    pass


def verify(secret: str, headers, body: bytes) -> dict:
    """Check a Standard Webhooks signature and return the parsed event.

    secret is "whsec_" + base64 of the key; headers is any mapping with
    case-insensitive get (http.server's, or a dict with lower-case keys);
    body is the raw request body, before any JSON parsing.
    """
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not (msg_id and timestamp and signatures):
        raise InvalidSignature("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        ts = int(timestamp)
    except ValueError:
        raise InvalidSignature("webhook-timestamp is not a number")
    if abs(time.time() - ts) > TOLERANCE:
        raise InvalidSignature("webhook-timestamp is too old or too new")

    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # The header may carry several space-separated "v1,<base64>" signatures.
    for sig in signatures.split(" "):
        version, _, value = sig.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return json.loads(body)
    raise InvalidSignature("no matching signature")


SECRET = os.environ.get("WEBHOOK_SECRET", "")


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/hooks":
            self.send_response(404)
            self.end_headers()
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            event = verify(SECRET, self.headers, body)
        except InvalidSignature as err:
            print(f"rejected a delivery: {err}", flush=True)
            self.send_response(400)
            self.end_headers()
            return
        data = event["data"]
        print(f"verified {event['id']} {event['type']}: payment {data['id']} is {data['status']}", flush=True)
        self.send_response(204)  # any 2xx marks the delivery delivered
        self.end_headers()

    def log_message(self, *args):
        pass  # keep the output to the lines above


if __name__ == "__main__":
    if not SECRET:
        raise SystemExit("set WEBHOOK_SECRET to the whsec_... secret paymock signs with")
    port = int(os.environ.get("PORT", "9000"))
    print(f"listening on :{port}, POST /hooks", flush=True)
    HTTPServer(("", port), Handler).serve_forever()
