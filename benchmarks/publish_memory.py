"""Publish a large package to a real server and print its resident memory growth.

Usage: python benchmarks/publish_memory.py [--mib 200]

Starts `appliance serve` on a free loopback port with a temporary data
directory, uploads a zip of incompressible content (streamed from disk by
the client), and reads the server's VmRSS before and its peak (VmHWM) after.
It prints figures; it never passes or fails on them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import requests

MiB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memory_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not found")


def make_zip(path: Path, mib: int) -> None:
    """A zip of `mib` MiB of random bytes, stored (random data does not compress)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        per_file = 16
        for index in range(0, mib, per_file):
            size = min(per_file, mib - index) * MiB
            with archive.open(f"data/blob-{index:04d}.bin", "w", force_zip64=True) as out:
                left = size
                while left:
                    chunk = os.urandom(min(left, MiB))
                    out.write(chunk)
                    left -= len(chunk)


def multipart_stream(manifest: bytes, archive: Path, boundary: str):
    """The multipart body as a generator: the archive is read from disk in chunks."""
    yield (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="manifest"; '
            f'filename="manifest.json"\r\nContent-Type: application/json\r\n\r\n'
        ).encode()
        + manifest
        + b"\r\n"
    )
    yield (
        f'--{boundary}\r\nContent-Disposition: form-data; name="package"; '
        f'filename="package.zip"\r\nContent-Type: application/zip\r\n\r\n'
    ).encode()
    with open(archive, "rb") as handle:
        while chunk := handle.read(MiB):
            yield chunk
    yield f"\r\n--{boundary}--\r\n".encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-publish-"))
    data = work / "data"
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "appliance", "serve", "--data-dir", str(data), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                if requests.get(f"{base}/healthz", timeout=1).ok:
                    break
            except requests.ConnectionError:
                time.sleep(0.1)
        key = (data / "initial-admin-key").read_text().strip()
        archive = work / "package.zip"
        make_zip(archive, args.mib)
        manifest = json.dumps(
            {"name": "big", "version": "1.0.0", "native": {"type": "terraform"}}
        ).encode()
        before = memory_kib(server.pid, "VmRSS")
        boundary = "bench-boundary-7d1f"
        started = time.perf_counter()
        result = requests.post(
            f"{base}/api/v1/package",
            data=multipart_stream(manifest, archive, boundary),
            headers={
                "Authorization": f"Bearer {key}",
                "Content-Type": f"multipart/form-data; boundary={boundary}",
            },
            timeout=600,
        )
        elapsed = time.perf_counter() - started
        peak = memory_kib(server.pid, "VmHWM")
        print(f"upload: {archive.stat().st_size / MiB:.1f} MiB, status {result.status_code}")
        print(f"time: {elapsed:.1f} s")
        print(f"server RSS before: {before / 1024:.1f} MiB, peak after: {peak / 1024:.1f} MiB")
        print(f"resident memory growth (peak - before): {(peak - before) / 1024:.1f} MiB")
        if result.status_code != 200:
            print(result.text[:500])
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
