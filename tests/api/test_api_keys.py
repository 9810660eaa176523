"""Spec 4.1 API keys: create, list, activate, deactivate; lifetime, storage as a hash."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest

from appliance.models import ApiKey
from tests.api.helpers import START, START_ISO, UUID, Clock, authenticates, iso, key_names
from tests.conftest import World, assert_error

KEY = re.compile(r"^apk_[0-9A-Za-z]{38}$")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings_overrides(clock: Clock) -> dict[str, Any]:
    return {"clock": clock}


def listed(world: World, caller: Any, **params: Any) -> dict[str, Any]:
    result = world.get("/api/v1/auth/keys", caller, params=params)
    assert result.status_code == 200, result.text
    return result.json


def record_named(world: World, caller: Any, name: str) -> dict[str, Any]:
    found = [k for k in listed(world, caller, search=name, limit=1000)["list"] if k["name"] == name]
    assert len(found) == 1, found
    return found[0]


ENDPOINTS = [
    ("post", "/api/v1/auth/key", {"name": "x"}, "create:organization_api_key"),
    ("get", "/api/v1/auth/keys", None, "read:organization_api_key"),
    ("post", "/api/v1/auth/key/activate", {"name": "x"}, "update:organization_api_key"),
    ("post", "/api/v1/auth/key/deactivate", {"name": "x"}, "update:organization_api_key"),
]


# -- create --------------------------------------------------------------------------------


def test_create_returns_key_once_and_lists_full_record(world: World, clock: Clock) -> None:
    clock.advance(hours=1)
    result = world.post("/api/v1/auth/key", world.admin, json={"name": "ci"})
    assert result.status_code == 200, result.text
    assert set(result.json) == {"api_key"}
    key = result.json["api_key"]
    assert KEY.match(key)
    record = record_named(world, world.admin, "ci")
    assert UUID.match(record["id"])
    assert record == {
        "id": record["id"],
        "name": "ci",
        "created_at": iso(START.replace(hour=START.hour + 1)),
        "expiration_time": None,
        "updated_at": None,
        "created_by": {
            "id": world.admin.user_id,
            "name": "admin",
            "nickname": "admin",
            "picture": "",
        },
        "is_disabled": False,
    }
    assert authenticates(world, key) == 200


def test_create_with_expiry_and_default_name(world: World) -> None:
    result = world.post("/api/v1/auth/key", world.admin, json={"expires_in_days": 3})
    assert result.status_code == 200, result.text
    names = key_names(world, world.admin)
    assert names == ["initial-admin-key", "key-2"]
    record = record_named(world, world.admin, "key-2")
    assert record["expiration_time"] == "2026-03-07T05:06:07.891Z"
    assert record["created_at"] == START_ISO
    # No body at all is accepted too (name optional).
    assert world.post("/api/v1/auth/key", world.admin).status_code == 200
    assert key_names(world, world.admin) == ["initial-admin-key", "key-2", "key-3"]


def test_created_key_acts_as_its_creator(world: World) -> None:
    developer = world.member(world.admin, "dev@x.example", "Developer")
    result = world.post("/api/v1/auth/key", developer, json={"name": "dev-key"})
    # Developers lack create:organization_api_key.
    assert_error(result, 403, "create:organization_api_key")
    result = world.post("/api/v1/auth/key", world.admin, json={"name": "admin-2"})
    key = result.json["api_key"]
    assert world.get("/api/v1/auth/keys", headers=_bearer(key)).status_code == 200
    assert record_named(world, world.admin, "admin-2")["created_by"]["id"] == world.admin.user_id


BAD_CREATE_BODIES: list[Any] = [
    {"name": ""},
    {"name": "   "},
    {"name": "n" * 129},
    {"name": 12},
    {"name": "ok", "expires_in_days": 0},
    {"name": "ok", "expires_in_days": 3651},
    {"name": "ok", "expires_in_days": "3"},
    {"name": "ok", "expires_in_days": True},
    {"name": "ok", "expires_in_days": 1.5},
    ["name"],
]


def test_create_bad_input_is_400_and_creates_nothing(world: World) -> None:
    before = key_names(world, world.admin)
    for body in BAD_CREATE_BODIES:
        assert_error(world.post("/api/v1/auth/key", world.admin, json=body), 400)
        assert key_names(world, world.admin) == before, body


def test_create_malformed_json_is_400(world: World) -> None:
    before = key_names(world, world.admin)
    result = world.post(
        "/api/v1/auth/key",
        world.admin,
        body='{"name": ',
        headers={"Content-Type": "application/json"},
    )
    assert_error(result, 400, "malformed JSON")
    assert key_names(world, world.admin) == before


def test_create_duplicate_name_is_409(world: World) -> None:
    assert world.post("/api/v1/auth/key", world.admin, json={"name": "dup"}).status_code == 200
    assert_error(world.post("/api/v1/auth/key", world.admin, json={"name": "dup"}), 409, "dup")
    assert key_names(world, world.admin) == ["dup", "initial-admin-key"]


def test_same_name_in_another_organization_is_allowed(world: World) -> None:
    other = world.new_org("Other")
    assert world.post("/api/v1/auth/key", other, json={"name": "ci"}).status_code == 200
    assert world.post("/api/v1/auth/key", world.admin, json={"name": "ci"}).status_code == 200


# -- authentication and permissions on every endpoint --------------------------------------


BAD_HEADERS = [
    None,
    "Bearer ",
    "Bearer apk_notakey",
    "Bearer apk_" + "A" * 38,  # right shape, wrong checksum
    "Basic YWRtaW46YWRtaW4=",
    "Token abc",
]


@pytest.mark.parametrize(("method", "path", "body", "permission"), ENDPOINTS)
def test_endpoints_need_a_credential(
    world: World, method: str, path: str, body: Any, permission: str
) -> None:
    for header in BAD_HEADERS:
        headers = {"Authorization": header} if header is not None else {}
        result = getattr(world, method)(path, headers=headers, json=body)
        assert_error(result, 401, "failed to authenticate")
    assert key_names(world, world.admin) == ["initial-admin-key"]


def test_unknown_well_formed_key_is_401(world: World) -> None:
    from appliance.domain.tokens import new_api_key

    result = world.get("/api/v1/auth/keys", headers={"Authorization": f"Bearer {new_api_key()}"})
    assert_error(result, 401, "failed to authenticate")


@pytest.mark.parametrize(("method", "path", "body", "permission"), ENDPOINTS)
def test_viewer_lacks_key_permissions(
    world: World, method: str, path: str, body: Any, permission: str
) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    result = getattr(world, method)(path, viewer, json=body)
    assert_error(result, 403, f"missing required scopes: {permission}")
    assert key_names(world, world.admin) == ["initial-admin-key", "key-of-v@x.example"]


# -- list -----------------------------------------------------------------------------------


def _make_keys(world: World, clock: Clock, names: list[str]) -> None:
    for name in names:
        clock.advance(minutes=1)
        result = world.post("/api/v1/auth/key", world.admin, json={"name": name})
        assert result.status_code == 200, result.text


def test_list_sort_order_offset_limit_search(world: World, clock: Clock) -> None:
    _make_keys(world, clock, ["charlie", "alpha", "bravo", "alpha-2"])
    everything = listed(world, world.admin)
    assert everything["total"] == 5
    # Default: created_at, newest first.
    assert [k["name"] for k in everything["list"]] == [
        "alpha-2",
        "bravo",
        "alpha",
        "charlie",
        "initial-admin-key",
    ]
    by_name = listed(world, world.admin, sort="name", order="asc")
    assert [k["name"] for k in by_name["list"]] == [
        "alpha",
        "alpha-2",
        "bravo",
        "charlie",
        "initial-admin-key",
    ]
    page = listed(world, world.admin, sort="name", order="ASC", offset=1, limit=2)
    assert page["total"] == 5
    assert [k["name"] for k in page["list"]] == ["alpha-2", "bravo"]
    assert [k["name"] for k in listed(world, world.admin, sort="-name", limit=1)["list"]] == [
        "initial-admin-key"
    ]
    found = listed(world, world.admin, search="ALPHA", sort="name", order="ASC")
    assert found["total"] == 2
    assert [k["name"] for k in found["list"]] == ["alpha", "alpha-2"]
    assert listed(world, world.admin, search="zulu") == {"total": 0, "list": []}


BAD_LIST_PARAMETERS = [
    {"sort": "key_hash"},
    {"order": "sideways"},
    {"offset": "-1"},
    {"limit": "0"},
    {"limit": "1001"},
    {"limit": "ten"},
    {"sort": "name:up"},
    {"filter": "[name=x]"},
    {"search": "s" * 257},
]


def test_list_bad_parameters_are_400(world: World) -> None:
    for params in BAD_LIST_PARAMETERS:
        assert_error(world.get("/api/v1/auth/keys", world.admin, params=params), 400)


def test_list_unknown_sort_names_the_allowed_ones(world: World) -> None:
    result = world.get("/api/v1/auth/keys", world.admin, params={"sort": "secret"})
    assert_error(result, 400, "allowed: created_at, name, updated_at")


def test_list_shows_only_own_organization(world: World) -> None:
    other = world.new_org("Other")
    assert world.post("/api/v1/auth/key", other, json={"name": "theirs"}).status_code == 200
    assert key_names(world, world.admin) == ["initial-admin-key"]
    assert key_names(world, other) == ["initial-admin-key", "theirs"]
    own = listed(world, world.admin)["list"][0]
    assert own["created_by"]["id"] == world.admin.user_id


# -- activate / deactivate ------------------------------------------------------------------


def test_deactivate_then_activate(world: World, clock: Clock) -> None:
    created = world.post("/api/v1/auth/key", world.admin, json={"name": "ci"}).json["api_key"]
    assert authenticates(world, created) == 200
    clock.advance(minutes=5)
    result = world.post("/api/v1/auth/key/deactivate", world.admin, json={"name": "ci"})
    assert result.status_code == 200, result.text
    assert result.json == {"name": "ci", "is_active": False}
    record = record_named(world, world.admin, "ci")
    assert record["is_disabled"] is True
    assert record["updated_at"] == "2026-03-04T05:11:07.891Z"
    assert_error(world.get("/api/v1/organization", headers=_bearer(created)), 401)
    # Deactivating again is idempotent: the record does not change.
    clock.advance(minutes=5)
    again = world.post("/api/v1/auth/key/deactivate", world.admin, json={"name": "ci"})
    assert again.json == {"name": "ci", "is_active": False}
    assert record_named(world, world.admin, "ci") == record

    result = world.post("/api/v1/auth/key/activate", world.admin, json={"name": "ci"})
    assert result.status_code == 200, result.text
    assert result.json == {"name": "ci", "is_active": True}
    assert record_named(world, world.admin, "ci")["is_disabled"] is False
    assert authenticates(world, created) == 200


def test_a_deactivated_key_cannot_reactivate_itself(world: World) -> None:
    result = world.post(
        "/api/v1/auth/key/deactivate", world.admin, json={"name": "initial-admin-key"}
    )
    assert result.json == {"name": "initial-admin-key", "is_active": False}
    again = world.post("/api/v1/auth/key/activate", world.admin, json={"name": "initial-admin-key"})
    assert_error(again, 401)


@pytest.mark.parametrize("path", ["/api/v1/auth/key/activate", "/api/v1/auth/key/deactivate"])
def test_state_change_bad_input_is_400(world: World, path: str) -> None:
    for body in (None, {}, {"name": ""}, {"name": 5}, {"name": "n" * 129}, [1]):
        assert_error(world.post(path, world.admin, json=body), 400)
        assert record_named(world, world.admin, "initial-admin-key")["is_disabled"] is False


@pytest.mark.parametrize("path", ["/api/v1/auth/key/activate", "/api/v1/auth/key/deactivate"])
def test_state_change_of_unknown_or_foreign_key_is_404(world: World, path: str) -> None:
    other = world.new_org("Other")
    world.post("/api/v1/auth/key", other, json={"name": "theirs"})
    assert_error(world.post(path, world.admin, json={"name": "theirs"}), 404, "theirs")
    assert_error(world.post(path, world.admin, json={"name": "nope"}), 404, "nope")
    assert record_named(world, other, "theirs")["is_disabled"] is False


def test_deactivating_another_organizations_key_of_the_same_name_leaves_it(world: World) -> None:
    other = world.new_org("Other")
    result = world.post(
        "/api/v1/auth/key/deactivate", world.admin, json={"name": "initial-admin-key"}
    )
    assert result.status_code == 200
    assert authenticates(world, other) == 200
    assert record_named(world, other, "initial-admin-key")["is_disabled"] is False


# -- lifetime ---------------------------------------------------------------------------------


def test_expired_key_is_401(world: World, clock: Clock) -> None:
    key = world.post(
        "/api/v1/auth/key", world.admin, json={"name": "short", "expires_in_days": 1}
    ).json["api_key"]
    assert authenticates(world, key) == 200
    clock.advance(hours=23, minutes=59)
    assert authenticates(world, key) == 200
    clock.advance(minutes=1)
    assert authenticates(world, key) == 401
    # Activation does not revive an expired key.
    world.post("/api/v1/auth/key/activate", world.admin, json={"name": "short"})
    assert authenticates(world, key) == 401
    assert authenticates(world, world.admin) == 200


def test_key_of_removed_member_is_401(world: World) -> None:
    developer = world.member(world.admin, "dev@x.example", "Developer")
    assert authenticates(world, developer) == 200
    result = world.delete(f"/api/v1/organization/members/{developer.user_id}", world.admin)
    assert result.status_code == 200, result.text
    assert authenticates(world, developer) == 401
    # The key record stays listed (it acted for the organization), now disabled.
    record = record_named(world, world.admin, "key-of-dev@x.example")
    assert record["is_disabled"] is True
    assert record["updated_at"] == START_ISO


def test_key_is_stored_only_as_its_sha256(world: World) -> None:
    key = world.post("/api/v1/auth/key", world.admin, json={"name": "secret"}).json["api_key"]
    digest = hashlib.sha256(key.encode()).hexdigest()
    stored = b""
    for name in ("appliance.db", "appliance.db-wal"):
        path = world.data_dir / name
        if path.exists():
            stored += path.read_bytes()
    assert key.encode() not in stored
    assert world.admin.key.encode() not in stored
    assert digest.encode() in stored
    assert ApiKey.get(ApiKey.name == "secret").key_hash == digest


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
