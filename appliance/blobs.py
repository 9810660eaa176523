"""Content-addressed blob store on the filesystem (DESIGN.md 1).

A blob is written to a temporary file, fsynced, renamed into place and its
directory fsynced, so no partial file is ever visible under its hash. Blobs
are never modified; the database refers to them by SHA-256.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from appliance.errors import Invalid, NotFound, PayloadTooLarge

CHUNK = 1024 * 1024
_HEX = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class StoredBlob:
    sha256: str
    size: int


class BlobStore:
    """Blobs under `root/sha256/ab/cd/<hex>`; temporary files under `root/tmp`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.tmp_dir = self.root / "tmp"
        self.tmp_dir.mkdir(parents=True, exist_ok=True)
        (self.root / "sha256").mkdir(parents=True, exist_ok=True)

    def path_for(self, sha256: str) -> Path:
        """Where the blob with this hash lives (whether or not it exists)."""
        if not _HEX.match(sha256):
            raise Invalid(f"not a SHA-256 hex digest: {sha256[:80]}")
        return self.root / "sha256" / sha256[:2] / sha256[2:4] / sha256

    def exists(self, sha256: str) -> bool:
        return self.path_for(sha256).is_file()

    def put_stream(
        self,
        stream: BinaryIO,
        expected_sha256: str | None = None,
        max_bytes: int | None = None,
    ) -> StoredBlob:
        """Store what `stream` yields; verify `expected_sha256` when given."""
        fd, tmp_name = tempfile.mkstemp(dir=self.tmp_dir, prefix="upload-")
        tmp = Path(tmp_name)
        try:
            digest, size = _copy_hashing(stream, fd, max_bytes)
            os.fsync(fd)
            os.close(fd)
            fd = -1
            if expected_sha256 is not None and digest != expected_sha256.lower():
                raise Invalid(f"content hash mismatch: expected {expected_sha256}, got {digest}")
            self._commit(tmp, digest)
            return StoredBlob(digest, size)
        finally:
            if fd >= 0:
                os.close(fd)
            tmp.unlink(missing_ok=True)

    def put_bytes(self, data: bytes) -> StoredBlob:
        """Store a small in-memory value."""
        return self.put_stream(io.BytesIO(data))

    def adopt(self, path: Path, sha256: str) -> StoredBlob:
        """Move an already hashed file from `tmp_dir` into the store (rename only)."""
        size = path.stat().st_size
        with open(path, "rb") as f:
            os.fsync(f.fileno())
        self._commit(path, sha256)
        return StoredBlob(sha256, size)

    def temporary_file(self) -> tuple[int, Path]:
        """A new temporary file in the store's filesystem, for streamed uploads."""
        fd, name = tempfile.mkstemp(dir=self.tmp_dir, prefix="upload-")
        return fd, Path(name)

    def open(self, sha256: str) -> BinaryIO:
        """Open a blob for reading."""
        try:
            return open(self.path_for(sha256), "rb")
        except FileNotFoundError:
            raise NotFound(f"blob not found: {sha256}") from None

    def iter_chunks(self, sha256: str) -> Iterator[bytes]:
        with self.open(sha256) as f:
            while chunk := f.read(CHUNK):
                yield chunk

    def read_bytes(self, sha256: str) -> bytes:
        with self.open(sha256) as f:
            return f.read()

    def delete(self, sha256: str) -> None:
        """Remove a blob no row refers to any more (garbage collection)."""
        self.path_for(sha256).unlink(missing_ok=True)

    def usable(self) -> bool:
        """Can the store write and remove a file right now?"""
        try:
            fd, name = tempfile.mkstemp(dir=self.tmp_dir, prefix="probe-")
            os.close(fd)
            os.unlink(name)
            return True
        except OSError:
            return False

    def _commit(self, tmp: Path, digest: str) -> None:
        final = self.path_for(digest)
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.exists():
            tmp.unlink(missing_ok=True)
            return
        os.replace(tmp, final)
        dir_fd = os.open(final.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _copy_hashing(stream: BinaryIO, fd: int, max_bytes: int | None) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    while chunk := stream.read(CHUNK):
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:
            raise PayloadTooLarge(f"content over the limit of {max_bytes} bytes")
        hasher.update(chunk)
        view = memoryview(chunk)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    return hasher.hexdigest(), size
