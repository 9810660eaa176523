"""Helpers shared by the environment, secret and cloud account tests."""

from __future__ import annotations

from typing import Any

from appliance.domain import secretbox
from appliance.models import MemberRole, Membership
from tests.conftest import Caller, World


def roleless(world: World, org: Caller, email: str) -> Caller:
    """A member with no role at all (no fixed role lacks every read permission)."""
    caller = world.member(org, email, "Viewer")
    membership = Membership.get(
        Membership.organization == org.org_id, Membership.user == caller.user_pk
    )
    MemberRole.delete().where(MemberRole.membership == membership).execute()
    return caller


def create_env(world: World, caller: Caller, name: str, **fields: Any) -> dict[str, Any]:
    result = world.post("/api/v1/environment", caller, json={"name": name, **fields})
    assert result.status_code == 200, result.text
    return result.json


def public_key(world: World, caller: Caller) -> str:
    result = world.get("/api/v1/public-keys", caller)
    assert result.status_code == 200, result.text
    return result.json["public_key"]


def seal(world: World, caller: Caller, plaintext: str) -> str:
    """Encrypt as a client would: with the organization's public key."""
    return secretbox.encrypt(public_key(world, caller), plaintext)
