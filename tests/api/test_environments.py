"""4.3 Environments: records, slugs, default, enable/disable, delete, edit, clone, access."""

from __future__ import annotations

import re
import uuid

import pytest

from appliance.models import Environment, EnvironmentSecret, Event
from tests.api.envhelpers import create_env, roleless, seal
from tests.conftest import assert_error

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
ENV_FIELDS = {
    "id",
    "slug",
    "name",
    "color",
    "allow_pre_release",
    "is_default",
    "is_active",
    "is_deleted",
    "created",
    "users",
    "cloud_account",
}


def test_create_returns_every_field_and_emits_created(world) -> None:
    env = create_env(world, world.admin, "Prod EU (main)", color="#A1b2C3")
    assert set(env) == ENV_FIELDS
    uuid.UUID(env["id"])
    assert env["slug"] == "prod-eu-main"
    assert env["name"] == "Prod EU (main)"
    assert env["color"] == "#A1b2C3"
    assert env["allow_pre_release"] is False
    assert (env["is_default"], env["is_active"], env["is_deleted"]) == (False, True, False)
    assert ISO.match(env["created"])
    assert env["users"] == [] and env["cloud_account"] is None
    event = Event.get(Event.type == "environment:created", Event.environment_id == env["id"])
    assert event.payload["slug"] == "prod-eu-main"


def test_same_name_gets_a_distinct_slug_and_settings_is_reserved(world) -> None:
    first = create_env(world, world.admin, "Staging")
    second = create_env(world, world.admin, "staging")
    reserved = create_env(world, world.admin, "Settings")
    assert (first["slug"], second["slug"]) == ("staging", "staging-2")
    assert reserved["slug"] == "settings-2"
    assert world.get("/api/v1/environment/settings-2", world.admin).json["id"] == reserved["id"]


def test_rename_keeps_the_slug(world) -> None:
    env = create_env(world, world.admin, "Blue")
    result = world.put(f"/api/v1/environment/{env['id']}/edit", world.admin, json={"name": "Green"})
    assert result.status_code == 200, result.text
    assert (result.json["name"], result.json["slug"]) == ("Green", "blue")
    assert world.get("/api/v1/environment/blue", world.admin).json["name"] == "Green"


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "name"),
        ({"name": ""}, "name"),
        ({"name": 7}, "name"),
        ({"name": "x" * 129}, "name"),
        ({"name": "ok", "color": "red"}, "color"),
        ({"name": "ok", "color": "#12345"}, "color"),
        ({"name": "ok", "default": "yes"}, "default"),
        ({"name": "ok", "extra": 1}, "unknown"),
    ],
)
def test_create_bad_input_is_400_and_creates_nothing(world, body, message) -> None:
    before = Environment.select().count()
    assert_error(world.post("/api/v1/environment", world.admin, json=body), 400, message)
    assert Environment.select().count() == before


def test_create_with_default_moves_the_default(world) -> None:
    env = create_env(world, world.admin, "New default", default=True)
    assert env["is_default"] is True
    assert world.get("/api/v1/environment/default", world.admin).json["is_default"] is False


def test_describe_has_cloud_accounts_and_counts(world) -> None:
    env = create_env(world, world.admin, "Described")
    viewer = world.member(world.admin, "viewer@x.example", "Viewer")
    world.put(
        f"/api/v1/environment/{env['slug']}/edit", world.admin, json={"users": [viewer.user_id]}
    )
    world.post(
        f"/api/v1/environment/{env['slug']}/props",
        world.admin,
        json=[{"name": "a", "content": "1"}, {"name": "b", "content": "2"}],
    )
    world.post(
        f"/api/v1/environment/{env['slug']}/settings/secrets",
        world.admin,
        json=[{"key": "TOKEN", "value": seal(world, world.admin, "s3cret")}],
    )
    for ref in (env["id"], env["slug"]):
        result = world.get(f"/api/v1/environment/{ref}", viewer)
        assert result.status_code == 200, result.text
        body = result.json
        assert set(body) == ENV_FIELDS | {"cloud_accounts", "associated_items_count"}
        assert body["cloud_accounts"] == []
        assert body["associated_items_count"] == {
            "members": 1,
            "properties": 2,
            "secrets": 1,
            "live_deployments": 0,
        }
        [user] = body["users"]
        assert user["id"] == viewer.user_id and user["email"] == "viewer@x.example"
        assert [r["name"] for r in user["roles"]] == ["Viewer"]
        assert {"id", "name", "email", "nickname", "picture", "roles"} <= set(user)


def test_edit_changes_fields_and_users(world) -> None:
    env = create_env(world, world.admin, "Edited")
    dev = world.member(world.admin, "dev@x.example", "Developer")
    body = {
        "name": "Edited 2",
        "color": "#fff",
        "allow_pre_release": True,
        "users": [dev.user_id, world.admin.user_id, dev.user_id],
    }
    result = world.put(f"/api/v1/environment/{env['slug']}/edit", world.admin, json=body)
    assert result.status_code == 200, result.text
    got = result.json
    assert (got["name"], got["color"], got["allow_pre_release"]) == ("Edited 2", "#fff", True)
    assert sorted(u["id"] for u in got["users"]) == sorted([dev.user_id, world.admin.user_id])
    result = world.put(f"/api/v1/environment/{env['slug']}/edit", world.admin, json={"users": []})
    assert result.json["users"] == []
    assert Event.select().where(Event.type == "environment:updated").count() == 2


@pytest.mark.parametrize(
    "users",
    [["local|999999"], ["nobody"], "local|1", [1]],
)
def test_edit_with_unknown_users_is_400_and_changes_nothing(world, users) -> None:
    env = create_env(world, world.admin, "Keep")
    body = {"name": "Changed", "users": users}
    assert_error(world.put(f"/api/v1/environment/{env['slug']}/edit", world.admin, json=body), 400)
    assert world.get(f"/api/v1/environment/{env['slug']}", world.admin).json["name"] == "Keep"


def test_edit_with_another_organizations_user_is_400(world) -> None:
    other = world.new_org("Other")
    env = create_env(world, world.admin, "Mine")
    body = {"users": [other.user_id]}
    result = world.put(f"/api/v1/environment/{env['slug']}/edit", world.admin, json=body)
    assert_error(result, 400, other.user_id)


@pytest.mark.parametrize(
    "body", [{}, {"color": "blue"}, {"allow_pre_release": "yes"}, {"slug": "new"}]
)
def test_edit_bad_input_is_400(world, body) -> None:
    env = create_env(world, world.admin, "Same")
    assert_error(world.put(f"/api/v1/environment/{env['slug']}/edit", world.admin, json=body), 400)
    assert world.get(f"/api/v1/environment/{env['slug']}", world.admin).json["color"] == "#888888"


def test_set_default_moves_it_and_refuses_a_disabled_environment(world) -> None:
    env = create_env(world, world.admin, "Next")
    result = world.put(f"/api/v1/environment/{env['slug']}/default", world.admin)
    assert result.status_code == 200 and result.json["is_default"] is True
    assert world.get("/api/v1/environment/default", world.admin).json["is_default"] is False
    other = create_env(world, world.admin, "Off")
    world.delete("/api/v1/environment", world.admin, json={"slug": "off"})
    assert_error(
        world.put(f"/api/v1/environment/{other['id']}/default", world.admin), 409, "disabled"
    )


def test_disable_and_enable_on_the_collection_path(world) -> None:
    env = create_env(world, world.admin, "Toggle")
    result = world.delete("/api/v1/environment", world.admin, json={"slug": "toggle"})
    assert result.status_code == 200 and result.json["is_active"] is False
    assert set(result.json) == ENV_FIELDS
    result = world.put("/api/v1/environment", world.admin, json={"slug": env["slug"]})
    assert result.status_code == 200 and result.json["is_active"] is True


def test_disabling_or_deleting_the_default_is_409(world) -> None:
    assert_error(world.delete("/api/v1/environment", world.admin, json={"slug": "default"}), 409)
    assert_error(world.delete("/api/v1/environment/default", world.admin), 409, "default")
    env = world.get("/api/v1/environment/default", world.admin).json
    assert (env["is_active"], env["is_deleted"], env["is_default"]) == (True, False, True)


@pytest.mark.parametrize("method", ["put", "delete"])
@pytest.mark.parametrize("body", [{}, {"slug": 5}, {"slug": ""}])
def test_enable_disable_bad_input_is_400(world, method, body) -> None:
    assert_error(getattr(world, method)("/api/v1/environment", world.admin, json=body), 400, "slug")


def test_delete_is_soft_and_keeps_the_slug_taken(world) -> None:
    env = create_env(world, world.admin, "Gone")
    result = world.delete(f"/api/v1/environment/{env['id']}", world.admin)
    assert result.status_code == 200, result.text
    assert result.json["is_deleted"] is True and result.json["cloud_account"] is None
    assert Environment.get_by_id(env["id"]).is_deleted is True
    assert_error(world.get("/api/v1/environment/gone", world.admin), 404, "gone")
    assert create_env(world, world.admin, "Gone")["slug"] == "gone-2"
    assert Event.select().where(Event.type == "environment:deleted").count() == 1


def test_clone_copies_props_users_color_and_pre_release_but_not_secrets(world) -> None:
    dev = world.member(world.admin, "dev@x.example", "Developer")
    env = create_env(world, world.admin, "Source", color="#123", allow_pre_release=True)
    world.put(f"/api/v1/environment/{env['slug']}/edit", world.admin, json={"users": [dev.user_id]})
    world.post(
        f"/api/v1/environment/{env['slug']}/props",
        world.admin,
        json=[{"name": "region", "content": "eu", "is_enforced": True}],
    )
    world.post(
        f"/api/v1/environment/{env['slug']}/settings/secrets",
        world.admin,
        json=[{"key": "K", "value": seal(world, world.admin, "v")}],
    )
    result = world.put(f"/api/v1/environment/{env['slug']}/clone", dev, json={"name": "Copy"})
    assert result.status_code == 200, result.text
    copy = result.json
    assert copy["slug"] == "copy" and copy["id"] != env["id"]
    assert (copy["color"], copy["allow_pre_release"], copy["is_default"]) == ("#123", True, False)
    assert [u["id"] for u in copy["users"]] == [dev.user_id]
    props = world.get("/api/v1/environment/copy/props", dev).json["props"]
    assert [(p["name"], p["content"], p["is_enforced"]) for p in props] == [("region", "eu", True)]
    assert (
        EnvironmentSecret.select().where(EnvironmentSecret.environment == copy["id"]).count() == 0
    )


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "x", "other": 1}])
def test_clone_bad_input_is_400(world, body) -> None:
    before = Environment.select().count()
    assert_error(world.put("/api/v1/environment/default/clone", world.admin, json=body), 400)
    assert Environment.select().count() == before


# -- access: 401, 403 naming the permission, 404 for another organization --------------

SEALED = [{"key": "K", "value": "{sealed}"}]
ENDPOINTS = [
    ("get", "/api/v1/environment/{env}", "read:environment", None),
    ("delete", "/api/v1/environment/{env}", "delete:environment", None),
    ("post", "/api/v1/environment", "create:environment", {"name": "n"}),
    ("put", "/api/v1/environment", "update:environment", {"slug": "{env}"}),
    ("delete", "/api/v1/environment", "delete:environment", {"slug": "{env}"}),
    ("put", "/api/v1/environment/{env}/default", "update:environment", None),
    ("put", "/api/v1/environment/{env}/edit", "update:environment", {"name": "n"}),
    ("put", "/api/v1/environment/{env}/clone", "create:environment", {"name": "n"}),
    ("get", "/api/v1/environment/{env}/props", "read:environment", None),
    (
        "post",
        "/api/v1/environment/{env}/props",
        "update:environment",
        [{"name": "a", "content": ""}],
    ),
    ("put", "/api/v1/environment/{env}/props", "update:environment", [{"id": "x"}]),
    ("delete", "/api/v1/environment/{env}/props", "update:environment", ["a"]),
    ("get", "/api/v1/environment/{env}/settings/secrets", "read:secret", None),
    ("post", "/api/v1/environment/{env}/settings/secrets", "create:secret", SEALED),
    ("put", "/api/v1/environment/{env}/settings/secrets", "update:secret", SEALED),
    ("delete", "/api/v1/environment/{env}/settings/secrets", "delete:secret", ["K"]),
    ("get", "/api/v1/environment/settings/secrets", "read:environment", None),
    ("get", "/api/v1/public-keys", "read:organization", None),
    ("post", "/api/v1/public-keys", "update:organization", {"public_key": "x"}),
]


def _call(world, method, path, body, caller, env_ref):
    path = path.replace("{env}", env_ref)
    if isinstance(body, dict):
        body = {
            k: (v.replace("{env}", env_ref) if isinstance(v, str) else v) for k, v in body.items()
        }
    if body is SEALED:  # a valid ciphertext under the caller organization's key
        body = [{"key": "K", "value": seal(world, world.admin, "v")}]
    kwargs = {} if body is None else {"json": body}
    return getattr(world, method)(path, caller, **kwargs)


@pytest.mark.parametrize("method, path, permission, body", ENDPOINTS)
def test_without_credentials_is_401(world, method, path, permission, body) -> None:
    assert_error(_call(world, method, path, body, None, "default"), 401)


@pytest.mark.parametrize("method, path, permission, body", ENDPOINTS)
def test_without_the_permission_is_403_naming_it(world, method, path, permission, body) -> None:
    caller = roleless(world, world.admin, "nobody@x.example")
    env = create_env(world, world.admin, "Target")
    before = Event.select().count()
    assert_error(_call(world, method, path, body, caller, env["slug"]), 403, permission)
    assert Event.select().count() == before


@pytest.mark.parametrize(
    "method, path, permission, body", [e for e in ENDPOINTS if "{env}" in e[1] + str(e[3])]
)
def test_another_organizations_environment_is_404(world, method, path, permission, body) -> None:
    other = world.new_org("Other")
    env = create_env(world, other, "Theirs")
    for ref in (env["id"], env["slug"]):
        assert_error(_call(world, method, path, body, world.admin, ref), 404, "not found")
    assert Environment.get_by_id(env["id"]).name == "Theirs"


def test_viewer_reads_but_cannot_create(world) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert world.get("/api/v1/environment/default", viewer).status_code == 200
    result = world.post("/api/v1/environment", viewer, json={"name": "n"})
    assert_error(result, 403, "create:environment")
