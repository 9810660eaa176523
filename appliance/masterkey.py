"""The master key: 32 random bytes in `<data>/master.key`, mode 0600 (DESIGN.md 1)."""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

MASTER_KEY_FILE = "master.key"


def load_or_create(data_dir: Path) -> bytes:
    """Read the master key, creating it atomically on first start."""
    path = Path(data_dir) / MASTER_KEY_FILE
    if path.exists():
        key = path.read_bytes()
        if len(key) != 32:
            raise RuntimeError(f"{path} is not a 32-byte key")
        return key
    key = os.urandom(32)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails if another process made it first
    except FileExistsError:
        tmp.unlink(missing_ok=True)
        return load_or_create(data_dir)
    tmp.unlink(missing_ok=True)
    return key


def derive(master_key: bytes, purpose: str) -> bytes:
    """A sub-key for one purpose, so no two uses share key material."""
    return hmac.new(master_key, purpose.encode("utf-8"), hashlib.sha256).digest()
