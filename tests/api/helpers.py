"""Shared helpers of the identity-and-access API tests: an injectable clock, record checks."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from appliance.models import Role, User
from appliance.models.db import to_iso
from tests.conftest import Caller, World

START = datetime(2026, 3, 4, 5, 6, 7, 891000, tzinfo=UTC)
START_ISO = "2026-03-04T05:06:07.891Z"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
ROLE_ID = re.compile(r"^rol_[0-9A-Za-z]{16}$")
ORG_ID = re.compile(r"^org_[0-9A-Za-z]{16}$")


class Clock:
    """A settable wall clock for Settings.clock."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def iso(moment: datetime) -> str:
    """The wire form of a timestamp."""
    result = to_iso(moment)
    assert result is not None
    return result


def role_record(name: str) -> dict[str, Any]:
    """The expected role record, read from the roles table."""
    row = Role.get(Role.name == name)
    return {"id": row.id, "name": row.name, "description": row.description}


def expected_user(
    caller: Caller | int, roles: list[str], created_at: str = START_ISO
) -> dict[str, Any]:
    """The full user record expected for a member created by the test fixtures."""
    user_pk = caller if isinstance(caller, int) else caller.user_pk
    row = User.get_by_id(user_pk)
    local = row.email.split("@", 1)[0]
    return {
        "id": f"local|{user_pk}",
        "name": local,
        "email": row.email,
        "picture": "",
        "roles": [role_record(r) for r in sorted(roles)],
        "first_name": None,
        "last_name": None,
        "nickname": local,
        "created_at": created_at,
    }


def expected_member(
    caller: Caller | int, roles: list[str], environments: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A member record: the user record plus its assigned environments."""
    return {**expected_user(caller, roles), "assigned_environments": environments or []}


def member_ids(world: World, caller: Caller) -> list[str]:
    """The ids of every member of the caller's organization, via the API."""
    result = world.get("/api/v1/organization/members?limit=1000", caller)
    assert result.status_code == 200, result.text
    return sorted(m["id"] for m in result.json["members"])


def key_names(world: World, caller: Caller) -> list[str]:
    """The names of every API key of the caller's organization, via the API."""
    result = world.get("/api/v1/auth/keys?limit=1000&sort=name&order=ASC", caller)
    assert result.status_code == 200, result.text
    return [k["name"] for k in result.json["list"]]


def authenticates(world: World, caller: Caller | str) -> int:
    """The status of a harmless authenticated read with this caller or bearer token."""
    token = caller if isinstance(caller, str) else caller.key
    headers = {"Authorization": f"Bearer {token}"}
    return world.get("/api/v1/organization", headers=headers).status_code
