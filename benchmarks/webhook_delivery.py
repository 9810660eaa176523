"""Events per second delivered to a local receiver by one delivery worker.

    python benchmarks/webhook_delivery.py [--events 2000] [--webhooks 1]

Prints figures; never passes or fails on time.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from appliance.app import build_appliance
from appliance.config import Settings
from appliance.models import WebhookDelivery
from appliance.models.db import database, write_transaction
from appliance.services import webhooks
from appliance.services.delivery import DeliveryWorker


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real receiver would

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(204)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--webhooks", type=int, default=1)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    with tempfile.TemporaryDirectory() as tmp:
        appliance = build_appliance(Settings(data_dir=Path(tmp), start_workers=False))
        ctx = appliance.services.ctx
        org = appliance.bootstrap.organization.id
        for n in range(args.webhooks):
            webhooks.create_webhook(ctx, org, None, {"name": f"b{n}", "endpoint_url": url})
        for start in range(0, args.events, 500):
            with write_transaction():
                for n in range(start, min(start + 500, args.events)):
                    ctx.emit("task:updated", org, {"n": n})
        worker = DeliveryWorker(ctx)
        expected = args.events * args.webhooks
        began = time.perf_counter()
        while WebhookDelivery.select().where(WebhookDelivery.status == "succeeded").count() < (
            expected
        ):
            if not worker.run_once() and worker.fan_out() == 0:
                break
        elapsed = time.perf_counter() - began
        worker.close()
        done = WebhookDelivery.select().where(WebhookDelivery.status == "succeeded").count()
        database.close()
    server.shutdown()
    print(f"webhooks={args.webhooks} events={args.events} deliveries={done}")
    print(f"elapsed={elapsed:.2f}s  deliveries/s={done / elapsed:.0f}")


if __name__ == "__main__":
    main()
