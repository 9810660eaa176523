"""kill -9 while a client creates API keys: no acknowledged key is lost."""

from __future__ import annotations

import threading
import time

import apsw
import requests

from tests.e2e.server import ServerProcess


def test_kill_9_loses_no_acknowledged_key(tmp_path) -> None:
    server = ServerProcess(tmp_path / "data")
    headers = {"Authorization": f"Bearer {server.key}"}
    acknowledged: list[str] = []
    stop = threading.Event()

    def create_keys(worker: int) -> None:
        n = 0
        while not stop.is_set():
            name = f"w{worker}-{n}"
            n += 1
            try:
                r = requests.post(
                    server.base + "/api/v1/auth/key",
                    json={"name": name},
                    headers=headers,
                    timeout=5,
                )
            except requests.RequestException:
                return
            if r.status_code == 200:
                acknowledged.append(name)

    threads = [threading.Thread(target=create_keys, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(acknowledged) < 40 and time.monotonic() < deadline:
        time.sleep(0.05)
    server.kill()
    stop.set()
    for t in threads:
        t.join(10)
    assert len(acknowledged) >= 40

    conn = apsw.Connection(str(server.data_dir / "appliance.db"))
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()

    restarted = ServerProcess(tmp_path / "data")
    try:
        r = requests.get(
            restarted.base + "/api/v1/auth/keys?limit=1000", headers=headers, timeout=5
        )
        names = {k["name"] for k in r.json()["list"]}
        assert set(acknowledged) <= names
    finally:
        restarted.terminate()
