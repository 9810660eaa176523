"""Organization key pairs for secrets: made at creation, private key sealed under the master key.

A managed key (POST /public-keys) replaces the current key: from then on the
appliance cannot decrypt, and secrets are handed out as ciphertext with the
key identifier (DESIGN.md 6).
"""

from __future__ import annotations

import base64
import os

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from appliance.domain import secretbox
from appliance.errors import Invalid
from appliance.masterkey import derive
from appliance.models import OrganizationKey, User
from appliance.models.db import write_transaction
from appliance.services.context import ServiceContext

_SEAL_PURPOSE = "organization-private-key"
MAX_KEY_IDENTIFIER = 2048


def _sealing_key(ctx: ServiceContext) -> AESGCM:
    return AESGCM(derive(ctx.master_key, _SEAL_PURPOSE))


def seal_private_key(ctx: ServiceContext, org_id: str, key: rsa.RSAPrivateKey) -> str:
    """AES-GCM under a master-derived key, bound to the organization id."""
    nonce = os.urandom(12)
    sealed = _sealing_key(ctx).encrypt(nonce, secretbox.private_der(key), org_id.encode())
    return base64.b64encode(nonce + sealed).decode("ascii")


def unseal_private_key(ctx: ServiceContext, org_id: str, sealed: str) -> rsa.RSAPrivateKey:
    """The inverse of seal_private_key."""
    raw = base64.b64decode(sealed)
    der = _sealing_key(ctx).decrypt(raw[:12], raw[12:], org_id.encode())
    return secretbox.load_private_der(der)


def new_private_key(ctx: ServiceContext) -> rsa.RSAPrivateKey:
    """A fresh key pair of the configured size; made outside any write transaction (slow)."""
    return secretbox.generate_private_key(ctx.settings.org_key_bits)


def store_key_pair(ctx: ServiceContext, org_id: str, private: rsa.RSAPrivateKey) -> OrganizationKey:
    """Record an own key pair as the organization's current key (inside a transaction)."""
    return OrganizationKey.create(
        id=ctx.new_id(),
        organization=org_id,
        public_key=secretbox.public_pem(private),
        sealed_private_key=seal_private_key(ctx, org_id, private),
        created_at=ctx.now(),
    )


def _current(org_id: str) -> OrganizationKey | None:
    return (
        OrganizationKey.select()
        .where(OrganizationKey.organization == org_id, OrganizationKey.is_current == True)  # noqa: E712
        .order_by(OrganizationKey.created_at.desc())
        .first()
    )


def current_key(ctx: ServiceContext, org_id: str) -> OrganizationKey:
    """The key secrets are encrypted with; organizations made before keys existed get one now."""
    found = _current(org_id)
    if found is not None:
        return found
    private = new_private_key(ctx)
    with write_transaction():
        found = _current(org_id) or store_key_pair(ctx, org_id, private)
    return found


def modulus_bytes(key: OrganizationKey) -> int:
    """Length of an RSA-OAEP block under this key (what a wrapped content key must measure)."""
    return secretbox.load_public_key(key.public_key).key_size // 8


def private_key_of(ctx: ServiceContext, key: OrganizationKey) -> rsa.RSAPrivateKey | None:
    """The private key when the appliance holds it; None for a managed key."""
    if key.sealed_private_key is None:
        return None
    return unseal_private_key(ctx, key.organization_id, key.sealed_private_key)


def register_managed_key(
    ctx: ServiceContext,
    org_id: str,
    user_pk: int | None,
    public_key: object,
    key_identifier: object,
) -> tuple[OrganizationKey, User | None]:
    """Store a managed key (RSA, at least 2048 bits); it becomes the current key."""
    if not isinstance(public_key, str) or not public_key.strip():
        raise Invalid("public_key is required: a PEM-encoded RSA public key")
    if not isinstance(key_identifier, str) or not key_identifier.strip():
        raise Invalid("key_identifier is required: a key-management key identifier")
    if len(key_identifier) > MAX_KEY_IDENTIFIER:
        raise Invalid(f"key_identifier must be at most {MAX_KEY_IDENTIFIER} characters")
    pem = secretbox.public_pem(secretbox.load_public_key(public_key.strip()))
    with write_transaction():
        OrganizationKey.update(is_current=False).where(
            OrganizationKey.organization == org_id
        ).execute()
        row = OrganizationKey.create(
            id=ctx.new_id(),
            organization=org_id,
            public_key=pem,
            key_identifier=key_identifier.strip(),
            created_by=user_pk,
            created_at=ctx.now(),
        )
    creator = User.get_or_none(User.id == user_pk) if user_pk is not None else None
    return row, creator
