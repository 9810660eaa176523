"""Start `appliance serve` as a real process on a free loopback port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A running server; `key` is the admin key it printed on first start (or None)."""

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = data_dir.parent / f"server-{self.port}.log"
        self.out_path = data_dir.parent / f"server-{self.port}.out"
        command = [
            sys.executable,
            "-m",
            "appliance",
            "serve",
            "--data-dir",
            str(data_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--threads",
            "8",
        ]
        with open(self.log_path, "wb") as log, open(self.out_path, "wb") as out:
            self.proc = subprocess.Popen(
                command,
                stdout=out,
                stderr=log,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        self.started_in = self._wait_ready(20.0)
        key_file = data_dir / "initial-admin-key"
        self.key = key_file.read_text().strip() if key_file.exists() else None

    def _wait_ready(self, seconds: float) -> float:
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.log_path.read_text()[-2000:]}")
            try:
                if requests.get(self.base + "/healthz", timeout=1).status_code == 200:
                    return time.monotonic() - started
            except requests.RequestException:
                pass
            time.sleep(0.05)
        raise RuntimeError("server did not become healthy")

    @property
    def stdout(self) -> str:
        return self.out_path.read_text()

    @property
    def log(self) -> str:
        return self.log_path.read_text()

    def terminate(self, timeout: float = 10.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
