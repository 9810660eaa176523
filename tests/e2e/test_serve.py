"""The real server: bootstrap, serving, clean shutdown, access log."""

from __future__ import annotations

import subprocess
import sys

import requests

from tests.e2e.server import ServerProcess


def test_first_start_prints_key_serves_and_stops_cleanly(tmp_path) -> None:
    server = ServerProcess(tmp_path / "data")
    try:
        assert server.started_in < 10
        assert server.key and server.key in server.stdout
        assert (server.data_dir / "initial-admin-key").stat().st_mode & 0o777 == 0o600
        headers = {"Authorization": f"Bearer {server.key}"}
        org = requests.get(server.base + "/api/v1/organization", headers=headers, timeout=5)
        assert org.status_code == 200 and org.json()["name"] == "default"
        assert requests.get(server.base + "/readyz", timeout=5).json()["status"] == "ready"
    finally:
        assert server.terminate() == 0
    log = server.log
    assert "GET /api/v1/organization 200" in log
    assert server.key not in log
    assert "Stopped." in log


def test_second_start_prints_no_key(tmp_path) -> None:
    first = ServerProcess(tmp_path / "data")
    first.terminate()
    (tmp_path / "data" / "initial-admin-key").unlink()
    second = ServerProcess(tmp_path / "data")
    try:
        assert second.key is None
        assert "apk_" not in second.stdout
    finally:
        second.terminate()


def test_cli_py_runs_from_a_checkout() -> None:
    result = subprocess.run(
        [sys.executable, "cli.py", "--help"], capture_output=True, text=True, check=True
    )
    assert "serve" in result.stdout and "admin" in result.stdout
