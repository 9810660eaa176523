"""Long-lived API keys (spec 4.1, DESIGN.md 4.3): shown once, stored as SHA-256."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from appliance.domain.listing import ListQuery, ListSpec
from appliance.domain.tokens import new_api_key, sha256_hex
from appliance.errors import Conflict, Invalid, NotFound
from appliance.models import ApiKey, User
from appliance.models.db import write_transaction
from appliance.services.context import ServiceContext
from appliance.services.listing import Columns, paginate

KEY_LIST = ListSpec(sorts=("created_at", "name", "updated_at"), default_sort="created_at")
_COLUMNS = Columns(
    sorts={"created_at": ApiKey.created_at, "name": ApiKey.name, "updated_at": ApiKey.updated_at},
    tiebreak=ApiKey.id,
    search=ApiKey.name,
)
MAX_NAME = 128


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise Invalid(f"name must be a string of 1 to {MAX_NAME} characters")
    return name.strip()


def create_key(
    ctx: ServiceContext,
    org_id: str,
    user_pk: int,
    name: str | None = None,
    expires_in_days: Any = None,
) -> str:
    """Create a key acting as the user; returns the key itself, the only time it exists."""
    if expires_in_days is not None and (
        isinstance(expires_in_days, bool)
        or not isinstance(expires_in_days, int)
        or not 1 <= expires_in_days <= 3650
    ):
        raise Invalid("expires_in_days must be an integer from 1 to 3650")
    key = new_api_key()
    now = ctx.now()
    with write_transaction():
        if name is None:
            count = ApiKey.select().where(ApiKey.organization == org_id).count()
            name = f"key-{count + 1}"
            while (
                ApiKey.select().where(ApiKey.organization == org_id, ApiKey.name == name).exists()
            ):
                count += 1
                name = f"key-{count + 1}"
        name = _check_name(name)
        if ApiKey.select().where(ApiKey.organization == org_id, ApiKey.name == name).exists():
            raise Conflict(f"api key already exists: {name}")
        row = ApiKey.create(
            id=ctx.new_id(),
            organization=org_id,
            user=user_pk,
            name=name,
            key_hash=sha256_hex(key),
            created_at=now,
            expiration_time=now + timedelta(days=expires_in_days) if expires_in_days else None,
        )
        ctx.emit("api_key:created", org_id, {"id": row.id, "name": name})
    return key


def list_keys(org_id: str, lq: ListQuery) -> tuple[int, list[tuple[ApiKey, User]]]:
    """A page of the organization's keys with their creators, in one query."""
    query = ApiKey.select(ApiKey, User).join(User).where(ApiKey.organization == org_id)
    total, rows = paginate(query, lq, _COLUMNS)
    return total, [(row, row.user) for row in rows]


def set_active(ctx: ServiceContext, org_id: str, name: Any, active: bool) -> ApiKey:
    """Activate or deactivate a key by name."""
    name = _check_name(name)
    with write_transaction():
        row = ApiKey.get_or_none(ApiKey.organization == org_id, ApiKey.name == name)
        if row is None:
            raise NotFound(f"api key not found: {name}")
        if row.is_disabled == (not active):
            return row
        row.is_disabled = not active
        row.updated_at = ctx.now()
        row.save()
        if not active:
            ctx.emit("api_key:deactivated", org_id, {"id": row.id, "name": name})
    return row
