"""Credential formats: API keys with a checksum, random tokens, hashing."""

from __future__ import annotations

import hashlib
import re
import secrets
import zlib

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
API_KEY_PREFIX = "apk_"
_API_KEY_BODY = 32
_API_KEY_CHECK = 6
_API_KEY_SHAPE = re.compile(r"^apk_[0-9A-Za-z]{38}$")


def random_base62(length: int) -> str:
    """A random string of `length` base62 characters."""
    return "".join(secrets.choice(BASE62) for _ in range(length))


def base62_fixed(number: int, width: int) -> str:
    """`number` in base62, left-padded with zeros to `width`."""
    digits = []
    while number:
        number, rem = divmod(number, 62)
        digits.append(BASE62[rem])
    return "".join(reversed(digits)).rjust(width, "0")


def _checksum(body: str) -> str:
    return base62_fixed(zlib.crc32(body.encode("ascii")), _API_KEY_CHECK)


def new_api_key() -> str:
    """`apk_` + 32 base62 + a 6-character base62 CRC32 of those 32 (DESIGN.md 4.3)."""
    body = random_base62(_API_KEY_BODY)
    return API_KEY_PREFIX + body + _checksum(body)


def looks_like_api_key(token: str) -> bool:
    """Shape and checksum check, so typos are refused without a database hit."""
    if not _API_KEY_SHAPE.match(token):
        return False
    rest = token[len(API_KEY_PREFIX) :]
    return _checksum(rest[:_API_KEY_BODY]) == rest[_API_KEY_BODY:]


def sha256_hex(value: str) -> str:
    """Hex SHA-256 of a high-entropy secret (keys, tokens, runtime passwords)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()
