"""Archive checks and the artifact hash (DESIGN.md 5)."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from appliance.domain.archives import ArchiveLimits, artifact_hash_of_files, inspect_archive
from appliance.errors import Invalid


def make_zip(path: Path, entries: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries:
            archive.writestr(name, content)
    return path


def test_hash_is_over_sorted_paths_and_content(tmp_path: Path) -> None:
    files = {"b/main.tf": b"b", "a.tf": b"a"}
    info = inspect_archive(make_zip(tmp_path / "x.zip", list(files.items()) + [("dir/", b"")]))
    assert info.artifact_hash == artifact_hash_of_files(files)
    assert info.files == 2 and info.uncompressed_size == 2
    reordered = inspect_archive(make_zip(tmp_path / "y.zip", list(reversed(files.items()))))
    assert reordered.artifact_hash == info.artifact_hash


def _symlink() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("link")
    info.create_system = 3
    info.external_attr = 0o120777 << 16
    return info


@pytest.mark.parametrize(
    ("entries", "fragment"),
    [
        ([("../../etc/cron.d/x", b"x")], "zip slip"),
        ([("a/../../x", b"x")], "zip slip"),
        ([("/etc/passwd", b"x")], "absolute"),
        ([("C:/windows/x", b"x")], "absolute"),
        ([("a\\..\\x", b"x")], "backslash"),
        ([(_symlink(), b"/etc/passwd")], "symlink"),
        ([("bomb", b"\0" * (8 * 1024 * 1024))], "compression ratio"),
        ([("a", b"1"), ("a", b"2")], "duplicate"),
    ],
)
@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_malicious_archives_refused(tmp_path: Path, entries: list, fragment: str) -> None:
    with pytest.raises(Invalid, match=fragment):
        inspect_archive(make_zip(tmp_path / "bad.zip", entries))


def test_limits_on_entries_and_size(tmp_path: Path) -> None:
    many = make_zip(tmp_path / "many.zip", [(f"f{i}", b"x") for i in range(11)])
    with pytest.raises(Invalid, match="entries"):
        inspect_archive(many, ArchiveLimits(max_entries=10))
    big = make_zip(tmp_path / "big.zip", [("a", b"abc" * 100)])
    with pytest.raises(Invalid, match="uncompressed size"):
        inspect_archive(big, ArchiveLimits(max_uncompressed=100))


def test_overlapping_entries_refused(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "o.zip", [("a", b"same"), ("b", b"same")])
    data = bytearray(path.read_bytes())
    # Point the second central directory record at the first entry's bytes.
    second = data.rfind(b"PK\x01\x02")
    data[second + 42 : second + 46] = struct.pack("<I", 0)
    path.write_bytes(bytes(data))
    with pytest.raises(Invalid, match="overlap"):
        inspect_archive(path)


def test_not_a_zip(tmp_path: Path) -> None:
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    with pytest.raises(Invalid, match="not a valid zip"):
        inspect_archive(tmp_path / "x.zip")
