"""Package archive checks and the artifact hash (DESIGN.md 5), pure over a zip file path.

Refused: absolute paths, `..` segments, backslashes, symlinks and other
non-regular entries, encrypted entries, duplicate names, more than
`max_entries` entries, a total uncompressed size over `max_uncompressed`,
a compression ratio over `max_ratio`, and entries whose bytes overlap in the
archive (the overlapping-entry zip bomb; this Python's zipfile does not check).
"""

from __future__ import annotations

import hashlib
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from appliance.errors import Invalid

MAX_ENTRIES = 10_000
MAX_RATIO = 100
# Small entries may legitimately compress very well; the ratio rule applies above this.
RATIO_FLOOR = 64 * 1024
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_DRIVE = re.compile(r"^[A-Za-z]:")
CHUNK = 1024 * 1024


@dataclass(frozen=True)
class ArchiveLimits:
    max_entries: int = MAX_ENTRIES
    max_uncompressed: int = 512 * 1024 * 1024
    max_ratio: int = MAX_RATIO


@dataclass(frozen=True)
class ArchiveInfo:
    files: int
    uncompressed_size: int
    artifact_hash: str


def _refuse(message: str) -> Invalid:
    return Invalid(f"package archive refused: {message}")


def safe_path(name: str) -> str:
    """The entry's relative `/`-separated path, or Invalid when it could escape."""
    shown = name[:200]
    if "\\" in name:
        raise _refuse(f"backslash in entry path {shown!r}")
    if "\x00" in name:
        raise _refuse(f"NUL in entry path {shown!r}")
    if name.startswith("/") or _DRIVE.match(name):
        raise _refuse(f"absolute entry path {shown!r}")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _refuse(f"'..' in entry path {shown!r} (zip slip)")
    return "/".join(parts)


def _entry_kind(info: zipfile.ZipInfo) -> str:
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_IFMT(mode):  # Unix file type present
        if stat.S_ISLNK(mode):
            return "symlink"
        if stat.S_ISDIR(mode):
            return "dir"
        if not stat.S_ISREG(mode):
            return "special"
    return "dir" if info.is_dir() else "file"


def _data_span(handle, info: zipfile.ZipInfo) -> tuple[int, int]:
    """(start, end) of the entry's local header and data within the archive file."""
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        raise _refuse(f"truncated local header for {info.filename[:200]!r}")
    fields = _LOCAL_HEADER.unpack(header)
    if fields[0] != _LOCAL_SIGNATURE:
        raise _refuse(f"bad local header for {info.filename[:200]!r}")
    name_len, extra_len = fields[9], fields[10]
    end = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len + info.compress_size
    return info.header_offset, end


def _check_overlaps(handle, infos: list[zipfile.ZipInfo], central_start: int) -> None:
    spans = sorted((*_data_span(handle, i), i.filename) for i in infos)
    previous_end, previous_name = 0, ""
    for start, end, name in spans:
        if start < previous_end:
            raise _refuse(f"entries {previous_name[:100]!r} and {name[:100]!r} overlap")
        previous_end, previous_name = end, name
    if previous_end > central_start:
        raise _refuse("entry data overlaps the central directory")


def _check_entries(
    infos: list[zipfile.ZipInfo], limits: ArchiveLimits
) -> dict[str, zipfile.ZipInfo]:
    if len(infos) > limits.max_entries:
        raise _refuse(f"{len(infos)} entries, more than {limits.max_entries}")
    files: dict[str, zipfile.ZipInfo] = {}
    seen: set[str] = set()
    total = 0
    for info in infos:
        path = safe_path(info.filename)
        kind = _entry_kind(info)
        if kind == "symlink":
            raise _refuse(f"symlink entry {info.filename[:200]!r}")
        if kind == "special":
            raise _refuse(f"entry {info.filename[:200]!r} is not a regular file or directory")
        if info.flag_bits & 0x1:
            raise _refuse(f"encrypted entry {info.filename[:200]!r}")
        key = path + ("/" if kind == "dir" else "")
        if key in seen or (kind == "file" and path in files):
            raise _refuse(f"duplicate entry {info.filename[:200]!r}")
        seen.add(key)
        if kind == "dir":
            continue
        if not path:
            raise _refuse(f"empty entry path {info.filename[:200]!r}")
        total += info.file_size
        if total > limits.max_uncompressed:
            raise _refuse(f"uncompressed size over {limits.max_uncompressed} bytes")
        if info.file_size > RATIO_FLOOR and info.file_size > limits.max_ratio * max(
            info.compress_size, 1
        ):
            raise _refuse(
                f"compression ratio of {info.filename[:200]!r} over {limits.max_ratio}:1 (zip bomb)"
            )
        files[path] = info
    return files


def _hash_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> tuple[str, int]:
    """SHA-256 of one entry's content, reading at most `budget` bytes."""
    digest = hashlib.sha256()
    size = 0
    with archive.open(info) as entry:
        while chunk := entry.read(CHUNK):
            size += len(chunk)
            if size > budget or size > info.file_size:
                raise _refuse(f"entry {info.filename[:200]!r} is larger than it declares")
            digest.update(chunk)
    return digest.hexdigest(), size


def inspect_archive(path: Path, limits: ArchiveLimits | None = None) -> ArchiveInfo:
    """Check the zip at `path` and compute its artifact hash; Invalid names the problem."""
    limits = limits or ArchiveLimits()
    archive_size = path.stat().st_size
    try:
        with zipfile.ZipFile(path) as archive, open(path, "rb") as handle:
            infos = archive.infolist()
            files = _check_entries(infos, limits)
            central_start = getattr(archive, "start_dir", archive_size)
            _check_overlaps(handle, infos, central_start)
            declared = sum(i.file_size for i in files.values())
            if declared > RATIO_FLOOR and declared > limits.max_ratio * max(archive_size, 1):
                raise _refuse(f"compression ratio over {limits.max_ratio}:1 (zip bomb)")
            digest = hashlib.sha256()
            budget = limits.max_uncompressed
            for name in sorted(files):
                content_hash, size = _hash_entry(archive, files[name], budget)
                budget -= size
                digest.update(f"{name}\0{content_hash}\n".encode())
    except zipfile.BadZipFile as exc:
        raise _refuse(f"not a valid zip file ({str(exc)[:200]})") from None
    except (NotImplementedError, EOFError, RuntimeError, OSError, zlib.error) as exc:
        raise _refuse(f"unreadable entry ({str(exc)[:200]})") from None
    return ArchiveInfo(len(files), declared, digest.hexdigest())


def artifact_hash_of_files(files: dict[str, bytes]) -> str:
    """The artifact hash of in-memory files (path -> content), for clients and tests."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"{name}\0{hashlib.sha256(files[name]).hexdigest()}\n".encode())
    return digest.hexdigest()
