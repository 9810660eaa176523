"""The secret ciphertext format of DESIGN.md 6, and its inverse for a private key we hold.

`v1.<b64url RSA-OAEP(SHA-256) of a random 32-byte key>.<b64url 12-byte nonce>.
<b64url AES-256-GCM ciphertext+tag>`; base64url without padding (padding is accepted).
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from appliance.errors import Invalid

VERSION = "v1"
NONCE_BYTES = 12
KEY_BYTES = 32
TAG_BYTES = 16
MIN_RSA_BITS = 2048
MAX_CIPHERTEXT = 64 * 1024
_OAEP = padding.OAEP(
    mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None
)


@dataclass(frozen=True)
class Envelope:
    """The three parts of a parsed ciphertext."""

    wrapped_key: bytes
    nonce: bytes
    ciphertext: bytes


def b64url(data: bytes) -> str:
    """Unpadded base64url."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    if not text or any(c not in _B64URL for c in text.rstrip("=")):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def load_public_key(pem: str | bytes) -> rsa.RSAPublicKey:
    """An RSA public key of at least 2048 bits from PEM, or a 400 (spec 8)."""
    data = pem.encode("ascii", "ignore") if isinstance(pem, str) else pem
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError, binascii.Error):
        raise Invalid("public_key must be a PEM-encoded RSA public key") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise Invalid("public_key must be an RSA key")
    if key.key_size < MIN_RSA_BITS:
        raise Invalid(f"public_key must be at least {MIN_RSA_BITS} bits, got {key.key_size}")
    return key


def parse(value: object, modulus_bytes: int | None = None) -> Envelope:
    """Check the format without decrypting; the message never repeats the value."""
    if not isinstance(value, str) or len(value) > MAX_CIPHERTEXT:
        raise Invalid("secret value must be a v1 ciphertext string")
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != VERSION:
        raise Invalid("secret value is not in the v1.<key>.<nonce>.<ciphertext> format")
    try:
        wrapped, nonce, ciphertext = (_unb64url(p) for p in parts[1:])
    except (ValueError, binascii.Error):
        raise Invalid("secret value parts must be base64url") from None
    if len(nonce) != NONCE_BYTES or len(ciphertext) < TAG_BYTES:
        raise Invalid("secret value has a wrong nonce or ciphertext length")
    expected = modulus_bytes or len(wrapped)
    if len(wrapped) < MIN_RSA_BITS // 8 or len(wrapped) != expected:
        raise Invalid("secret value was not encrypted with the organization public key")
    return Envelope(wrapped, nonce, ciphertext)


def encrypt(public_key_pem: str | bytes, plaintext: str | bytes) -> str:
    """Encrypt `plaintext` for the holder of the private key of `public_key_pem`."""
    key = load_public_key(public_key_pem)
    data = plaintext.encode("utf-8") if isinstance(plaintext, str) else plaintext
    content_key = os.urandom(KEY_BYTES)
    nonce = os.urandom(NONCE_BYTES)
    sealed = AESGCM(content_key).encrypt(nonce, data, None)
    wrapped = key.encrypt(content_key, _OAEP)
    return ".".join((VERSION, b64url(wrapped), b64url(nonce), b64url(sealed)))


def decrypt(private_key: rsa.RSAPrivateKey, value: str) -> bytes:
    """The plaintext of a v1 ciphertext; a wrong key or altered value is a 400."""
    envelope = parse(value, private_key.key_size // 8)
    try:
        content_key = private_key.decrypt(envelope.wrapped_key, _OAEP)
        return AESGCM(content_key).decrypt(envelope.nonce, envelope.ciphertext, None)
    except (ValueError, InvalidTag):
        raise Invalid("secret value cannot be decrypted with the organization key") from None


def generate_private_key(bits: int) -> rsa.RSAPrivateKey:
    """A fresh RSA key pair."""
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def public_pem(key: rsa.RSAPrivateKey | rsa.RSAPublicKey) -> str:
    """SubjectPublicKeyInfo PEM of a key (or of a private key's public half)."""
    public = key.public_key() if isinstance(key, rsa.RSAPrivateKey) else key
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


def private_der(key: rsa.RSAPrivateKey) -> bytes:
    """PKCS#8 DER of a private key (to be sealed before storage)."""
    return key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def load_private_der(data: bytes) -> rsa.RSAPrivateKey:
    """The inverse of private_der."""
    key = serialization.load_der_private_key(data, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("not an RSA private key")
    return key
