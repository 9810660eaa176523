"""Test helpers for webhooks: a loopback receiver that verifies signatures, fake DNS, a clock."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import WebhookVerificationError


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    verified: bool
    payload: Any
    status: int = 0


class Clock:
    """A settable clock for Settings.clock."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@dataclass
class FakeDns:
    """Names to addresses; a name not listed does not resolve."""

    table: dict[str, list[str]] = field(default_factory=dict)

    def __call__(self, host: str) -> list[str]:
        if host not in self.table:
            raise OSError(f"no such host: {host}")
        return list(self.table[host])


class Receiver:
    """An HTTP server on loopback; `respond(n)` gives the status for the n-th request (0-based)."""

    def __init__(self, respond: Callable[[int], int] = lambda n: 200) -> None:
        self.respond = respond
        self.secret: str | None = None
        self.check_time = True
        self.received: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                got = receiver._verify(dict(self.headers), body)
                with receiver._lock:
                    got.status = status = receiver.respond(len(receiver.received))
                    receiver.received.append(got)
                self.send_response(status)
                self.send_header("content-length", "2")
                if 300 <= status < 400:
                    self.send_header("location", self.path)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _verify(self, headers: dict[str, str], body: bytes) -> Received:
        """Check the signature with the standardwebhooks package."""
        if self.secret is None:
            return Received(headers, body, False, None)
        hook = StandardWebhook(self.secret)
        try:
            if self.check_time:
                payload = hook.verify(body, headers)
            else:  # an injected clock is far from the wall clock: check the HMAC only
                lower = {k.lower(): v for k, v in headers.items()}
                stamp = datetime.fromtimestamp(int(lower["webhook-timestamp"]), tz=UTC)
                expected = hook.sign(lower["webhook-id"], stamp, body.decode())
                if expected not in lower["webhook-signature"].split(" "):
                    raise WebhookVerificationError("No matching signature found")
                payload = json.loads(body)
        except WebhookVerificationError:
            return Received(headers, body, False, None)
        return Received(headers, body, True, payload)

    def ids(self) -> list[str]:
        return [
            r.headers.get("webhook-id") or r.headers.get("Webhook-Id", "") for r in self.received
        ]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
