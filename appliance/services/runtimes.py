"""Runtime credentials (DESIGN.md 4.3): `rt_` usernames, 40-character passwords, SHA-256 stored."""

from __future__ import annotations

from typing import Any

from appliance.domain.tokens import random_base62, sha256_hex
from appliance.errors import NotFound
from appliance.models import RuntimeCredential
from appliance.models.db import to_iso, write_transaction
from appliance.services.context import ServiceContext


def create_runtime(ctx: ServiceContext, org_id: str, name: str | None = None) -> dict[str, str]:
    """New credentials for a runtime of `org_id`; the password is shown once."""
    username = f"rt_{random_base62(16)}"
    password = random_base62(40)
    with write_transaction():
        RuntimeCredential.create(
            id=ctx.new_id(),
            organization=org_id,
            username=username,
            password_hash=sha256_hex(password),
            name=name or username,
            created_at=ctx.now(),
        )
    return {"username": username, "password": password}


def list_runtimes(org_id: str) -> list[dict[str, Any]]:
    query = (
        RuntimeCredential.select()
        .where(RuntimeCredential.organization == org_id)
        .order_by(RuntimeCredential.created_at, RuntimeCredential.id)
    )
    return [
        {
            "username": r.username,
            "name": r.name,
            "created_at": to_iso(r.created_at),
            "revoked_at": to_iso(r.revoked_at),
        }
        for r in query
    ]


def revoke_runtime(ctx: ServiceContext, org_id: str, username: str) -> None:
    with write_transaction():
        row = RuntimeCredential.get_or_none(
            RuntimeCredential.organization == org_id, RuntimeCredential.username == username
        )
        if row is None:
            raise NotFound(f"runtime not found: {username[:80]}")
        if row.revoked_at is None:
            row.revoked_at = ctx.now()
            row.save()
