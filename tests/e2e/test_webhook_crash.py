"""kill -9 between an event's commit and its delivery: after a restart it is delivered.

A real `appliance serve` on a free loopback port; the receiver refuses everything until the
server has been killed, so every event is committed but none is delivered before the crash.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import requests

from tests.webhooks_support import Receiver

KEYS = 12


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "APPLIANCE_DATA_DIR": str(self.data_dir),
            "APPLIANCE_HOST": "127.0.0.1",
            "APPLIANCE_PORT": str(self.port),
            "APPLIANCE_THREADS": "4",
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "appliance", "serve"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    return
            except requests.ConnectionError:
                time.sleep(0.05)
        raise AssertionError("server did not start")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def test_events_committed_before_a_kill_are_delivered_after_restart(tmp_path: Path) -> None:
    accepting = {"on": False}
    receiver = Receiver(respond=lambda n: 200 if accepting["on"] else 503)
    server = Server(tmp_path / "data")
    try:
        server.start()
        key = (tmp_path / "data" / "initial-admin-key").read_text().strip()
        auth = {"Authorization": f"Bearer {key}"}
        created = requests.post(
            f"{server.base}/api/v1/webhook",
            json={"name": "crash", "endpoint_url": receiver.url, "events": ["api_key:created"]},
            headers=auth,
            timeout=10,
        )
        assert created.status_code == 200, created.text
        receiver.secret = created.json()["secret"]
        names = [f"crash-{n}" for n in range(KEYS)]
        for name in names:
            ack = requests.post(
                f"{server.base}/api/v1/auth/key", json={"name": name}, headers=auth, timeout=10
            )
            assert ack.status_code == 200, ack.text
        server.kill()  # every change above was acknowledged; none is delivered yet

        accepting["on"] = True
        server.start()
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline and _delivered(receiver) < set(names):
            time.sleep(0.2)
        assert _delivered(receiver) >= set(names)
        assert all(r.verified for r in receiver.received)
        ids_per_name: dict[str, set[str]] = {}
        for r in receiver.received:
            ids_per_name.setdefault(r.payload["data"]["name"], set()).add(r.payload["id"])
        assert all(len(ids) == 1 for ids in ids_per_name.values())  # retries keep the id
        server.stop()

        db = sqlite3.connect(tmp_path / "data" / "appliance.db")
        rows = db.execute(
            "SELECT e.payload, d.status FROM event e LEFT JOIN webhook_delivery d "
            "ON d.event_id = e.seq WHERE e.type = 'api_key:created'"
        ).fetchall()
        db.close()
        status = {json.loads(p)["name"]: s for p, s in rows}
        assert {n: status.get(n) for n in names} == dict.fromkeys(names, "succeeded")
    finally:
        server.stop()
        receiver.close()


def _delivered(receiver: Receiver) -> set[str]:
    """Names of the keys whose event was answered with a 2xx."""
    return {
        r.payload["data"]["name"] for r in list(receiver.received) if r.payload and r.status < 300
    }
