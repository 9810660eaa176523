"""The secret ciphertext format and the key settings."""

from __future__ import annotations

import pytest

from appliance.config import Settings
from appliance.domain import secretbox
from appliance.errors import Invalid


def test_organization_keys_default_to_3072_bits_and_are_configurable() -> None:
    assert Settings().org_key_bits == 3072
    assert Settings.from_env(environ={"APPLIANCE_ORG_KEY_BITS": "4096"}).org_key_bits == 4096


def test_parse_accepts_padded_and_unpadded_base64url() -> None:
    wrapped, nonce, sealed = b"k" * 256, b"n" * 12, b"c" * 20
    unpadded = ".".join(["v1", *(secretbox.b64url(x) for x in (wrapped, nonce, sealed))])
    envelope = secretbox.parse(unpadded, 256)
    assert (envelope.wrapped_key, envelope.nonce, envelope.ciphertext) == (wrapped, nonce, sealed)
    head, *rest = unpadded.split(".")
    padded = ".".join([head, *(p + "=" * (-len(p) % 4) for p in rest)])
    assert padded != unpadded
    assert secretbox.parse(padded, 256) == envelope


@pytest.mark.parametrize(
    "parts",
    [
        (b"k" * 256, b"n" * 11, b"c" * 20),  # short nonce
        (b"k" * 256, b"n" * 12, b"c" * 15),  # no room for the tag
        (b"k" * 128, b"n" * 12, b"c" * 20),  # RSA-1024 block
        (b"k" * 384, b"n" * 12, b"c" * 20),  # another key size than the organization's
    ],
)
def test_parse_refuses_wrong_lengths(parts) -> None:
    value = ".".join(["v1", *(secretbox.b64url(x) for x in parts)])
    with pytest.raises(Invalid):
        secretbox.parse(value, 256)
