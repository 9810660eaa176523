"""Requests per second and p50/p99 latency of an authenticated endpoint next to /healthz.

    python benchmarks/auth_overhead.py [--seconds 5] [--clients 4]

Starts `appliance serve` on a temporary data directory, then measures both endpoints on the
same server in the same run. The load comes from `wrk` when it is installed (Debian package
`wrk`: a C client leaves the two cores to the server) and also from Python keep-alive
clients, which compete with the server for CPU. Prints figures; never passes or fails.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-m", "appliance", "serve", "--data-dir", str(data), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        # The per-credential limit would answer 429s and flatter the figure.
        env={
            **os.environ,
            "APPLIANCE_LIMIT_RATE_PER_CREDENTIAL": "1000000",
            "APPLIANCE_LIMIT_BURST_PER_CREDENTIAL": "1000000",
        },
    )
    for _ in range(200):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.05)
    raise SystemExit("server did not start")


def hammer(port: int, path: str, headers: dict[str, str], seconds: float, clients: int):
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine = []
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            mine.append(time.perf_counter() - started)
            if response.status != 200:
                errors[0] += 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    latencies.sort()

    def pct(p: float) -> float:
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    return len(latencies) / elapsed, pct(0.50), pct(0.99), errors[0]


def wrk(port: int, path: str, headers: dict[str, str], seconds: float, clients: int):
    command = ["wrk", "-t2", f"-c{clients}", f"-d{max(1, int(seconds))}s", "--latency"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    out = subprocess.run(
        command + [f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True
    ).stdout

    def millis(label: str) -> float:
        value, unit = re.search(rf"{label}\s+([\d.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return rps, millis("50%"), millis("99%"), int(non_2xx.group(1)) if non_2xx else 0


def report(title: str, results: dict) -> None:
    print(title)
    for name, (rps, p50, p99, errors) in results.items():
        print(
            f"  {name:28} {rps:8.0f} req/s  p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  non-200 {errors}"
        )
    ratio = results["GET /api/v1/organization"][0] / results["GET /healthz"][0]
    print(f"  authenticated / healthz throughput: {ratio:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-")) / "data"
    port = free_port()
    proc = start_server(data, port)
    try:
        key = (data / "initial-admin-key").read_text().strip()
        auth = {"Authorization": f"Bearer {key}"}
        hammer(port, "/healthz", {}, 1.0, args.clients)  # warm up
        hammer(port, "/api/v1/organization", auth, 1.0, args.clients)
        targets = (
            ("GET /healthz", "/healthz", {}),
            ("GET /api/v1/organization", "/api/v1/organization", auth),
        )
        loaders = [("python keep-alive clients", hammer)]
        if shutil.which("wrk"):
            loaders.insert(0, ("wrk", wrk))
        for title, load in loaders:
            results = {
                name: load(port, path, headers, args.seconds, args.clients)
                for name, path, headers in targets
            }
            report(f"{title}, {args.clients} connections, {args.seconds:g} s each:", results)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


if __name__ == "__main__":
    main()
