"""Password hashing with scrypt (DESIGN.md 4.3)."""

from __future__ import annotations

import base64
import hmac
import os

from cryptography.exceptions import InvalidKey
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

_N, _R, _P = 2**14, 8, 1
MIN_LENGTH = 8


def hash_password(password: str) -> str:
    """`scrypt$n$r$p$salt$hash`, base64 parts."""
    salt = os.urandom(16)
    digest = Scrypt(salt=salt, length=32, n=_N, r=_R, p=_P).derive(password.encode("utf-8"))
    b64 = base64.b64encode
    return f"scrypt${_N}${_R}${_P}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, stored: str | None) -> bool:
    """True when `password` matches the stored hash; never raises on bad input."""
    if not stored:
        hmac.compare_digest(b"x", b"y")
        return False
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        kdf = Scrypt(salt=base64.b64decode(salt), length=32, n=int(n), r=int(r), p=int(p))
        kdf.verify(password.encode("utf-8"), base64.b64decode(digest))
        return True
    except (InvalidKey, ValueError):
        return False
