"""Shared fixtures: a real appliance on a temporary data directory, driven in-process."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from falcon import testing

from appliance.app import Appliance, build_appliance
from appliance.config import Settings
from appliance.models import Role
from appliance.models.db import database
from appliance.services import api_keys, members, organizations, runtimes

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@dataclass
class Caller:
    """A member of an organization and the headers that authenticate as them."""

    org_id: str
    user_pk: int
    key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    @property
    def user_id(self) -> str:
        return f"local|{self.user_pk}"


class World:
    """An appliance with its bootstrap admin, plus helpers to add organizations and members."""

    def __init__(self, appliance: Appliance, data_dir: Path) -> None:
        self.appliance = appliance
        self.data_dir = data_dir
        self.client = testing.TestClient(appliance.app)
        self.ctx = appliance.services.ctx
        boot = appliance.bootstrap
        assert boot is not None
        self.admin = Caller(boot.organization.id, boot.user.id, boot.api_key)

    def new_org(self, name: str, email: str | None = None) -> Caller:
        created = organizations.create_organization(
            self.ctx, name, email or f"admin@{name.lower()}.example"
        )
        return Caller(created.organization.id, created.user.id, created.api_key)

    def member(self, org: Caller, email: str, role: str) -> Caller:
        """A new member of `org` with the named role, and a key of their own."""
        role_row = Role.get(Role.name == role)
        with database.atomic():
            user = organizations.find_or_create_user(self.ctx, email)
            org_row = organizations.get_organization(org.org_id)
            organizations.add_member(self.ctx, org_row, user, role_row)
        key = api_keys.create_key(self.ctx, org.org_id, user.id, f"key-of-{email}")
        return Caller(org.org_id, user.id, key)

    def runtime(self, org: Caller) -> tuple[str, str]:
        creds = runtimes.create_runtime(self.ctx, org.org_id)
        return creds["username"], creds["password"]

    def role_id(self, name: str) -> str:
        return Role.get(Role.name == name).id

    def set_password(self, org_name: str, email: str, password: str) -> None:
        members.set_password(org_name, email, password)

    # Request helpers: JSON in, the test client's result out.
    def get(self, path: str, caller: Caller | None = None, **kw: Any) -> testing.Result:
        return self.client.simulate_get(path, headers=_headers(caller, kw), **kw)

    def post(self, path: str, caller: Caller | None = None, **kw: Any) -> testing.Result:
        return self.client.simulate_post(path, headers=_headers(caller, kw), **kw)

    def put(self, path: str, caller: Caller | None = None, **kw: Any) -> testing.Result:
        return self.client.simulate_put(path, headers=_headers(caller, kw), **kw)

    def patch(self, path: str, caller: Caller | None = None, **kw: Any) -> testing.Result:
        return self.client.simulate_patch(path, headers=_headers(caller, kw), **kw)

    def delete(self, path: str, caller: Caller | None = None, **kw: Any) -> testing.Result:
        return self.client.simulate_delete(path, headers=_headers(caller, kw), **kw)


def _headers(caller: Caller | None, kw: dict[str, Any]) -> dict[str, str]:
    headers = dict(kw.pop("headers", None) or {})
    if caller is not None:
        headers.setdefault("Authorization", f"Bearer {caller.key}")
    return headers


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    # 2048-bit organization keys keep fixtures fast; the 3072 default has its own test.
    overrides.setdefault("org_key_bits", 2048)
    return Settings(data_dir=data_dir, start_workers=False, **overrides)


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    """Override in a test module to change settings (limits, operator token, clock)."""
    return {}


@pytest.fixture
def world(tmp_path: Path, settings_overrides: dict[str, Any]) -> Iterator[World]:
    appliance = build_appliance(make_settings(tmp_path / "data", **settings_overrides))
    try:
        yield World(appliance, tmp_path / "data")
    finally:
        database.close()


def assert_error(result: testing.Result, status: int, contains: str = "") -> dict[str, Any]:
    """The one error body of DESIGN.md 3, with `contains` in its message."""
    assert result.status_code == status, (result.status_code, result.text)
    body = result.json
    assert body["statusCode"] == status
    assert isinstance(body["error"], str) and body["error"]
    assert contains.lower() in body["message"].lower(), body["message"]
    return body
