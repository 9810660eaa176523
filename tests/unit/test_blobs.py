"""The content-addressed blob store."""

from __future__ import annotations

import hashlib
import io

import pytest

from appliance.blobs import BlobStore
from appliance.errors import Invalid, PayloadTooLarge


def test_put_stream_is_content_addressed_and_verified(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    data = b"x" * 3_000_000
    digest = hashlib.sha256(data).hexdigest()
    stored = store.put_stream(io.BytesIO(data), expected_sha256=digest)
    assert stored.sha256 == digest and stored.size == len(data)
    assert (
        store.path_for(digest) == tmp_path / "blobs" / "sha256" / digest[:2] / digest[2:4] / digest
    )
    assert store.read_bytes(digest) == data
    assert list(store.tmp_dir.iterdir()) == []


def test_wrong_hash_leaves_nothing(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    with pytest.raises(Invalid):
        store.put_stream(io.BytesIO(b"abc"), expected_sha256="0" * 64)
    assert not store.exists(hashlib.sha256(b"abc").hexdigest())
    assert list(store.tmp_dir.iterdir()) == []


def test_over_limit_leaves_nothing(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    with pytest.raises(PayloadTooLarge):
        store.put_stream(io.BytesIO(b"y" * 100), max_bytes=10)
    assert list(store.tmp_dir.iterdir()) == []
    assert not any(p.is_file() for p in (tmp_path / "blobs" / "sha256").rglob("*"))


def test_bad_hash_text_is_refused(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    with pytest.raises(Invalid):
        store.path_for("../../etc/passwd")


def test_same_content_twice_is_one_blob(tmp_path) -> None:
    store = BlobStore(tmp_path / "blobs")
    a = store.put_bytes(b"same")
    b = store.put_bytes(b"same")
    assert a == b
    assert store.read_bytes(a.sha256) == b"same"
