"""Spec 4.5 users: the user record and a member's roles; the last-Admin rule."""

from __future__ import annotations

from typing import Any

import pytest

from appliance.models import MemberRole, Membership
from tests.api.helpers import Clock, authenticates, expected_member, expected_user
from tests.conftest import Caller, World, assert_error


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"clock": Clock()}


def user_path(caller: Caller | str) -> str:
    return f"/api/v1/user/{caller if isinstance(caller, str) else caller.user_id}"


def role_names(world: World, caller: Caller, target: Caller) -> list[str]:
    result = world.get(user_path(target), caller)
    assert result.status_code == 200, result.text
    return [r["name"] for r in result.json["roles"]]


def set_roles(world: World, caller: Caller, target: Caller | str, body: Any) -> Any:
    return world.post(f"{user_path(target)}/roles", caller, json=body)


# -- GET /user/{id} -------------------------------------------------------------------------


def test_get_user_full_record(world: World) -> None:
    dev = world.member(world.admin, "dev@x.example", "Developer")
    result = world.get(user_path(dev), world.admin)
    assert result.status_code == 200, result.text
    assert result.json == expected_user(dev, ["Developer"])
    own = world.get(user_path(world.admin), dev)
    assert own.status_code == 200
    assert own.json == expected_user(world.admin, ["Admin"])


def test_get_user_of_another_organization_is_404(world: World) -> None:
    other = world.new_org("Other")
    theirs = world.member(other, "theirs@x.example", "Viewer")
    for target in (other, theirs):
        assert_error(world.get(user_path(target), world.admin), 404, target.user_id)
    # Also when the same person is a member of both: each sees only their own roles.
    both = world.member(world.admin, "theirs@x.example", "Developer")
    assert both.user_pk == theirs.user_pk
    assert role_names(world, world.admin, both) == ["Developer"]
    assert role_names(world, other, theirs) == ["Viewer"]


def test_get_malformed_or_unknown_user_is_404(world: World) -> None:
    for raw in ("abc", "local|", "local|-1", "auth0|1", "local|99999", "2"):
        assert_error(world.get(user_path(raw), world.admin), 404, "user not found")


def test_get_user_needs_read_users(world: World) -> None:
    assert_error(world.get(user_path(world.admin)), 401)
    assert_error(world.get(user_path(world.admin), headers={"Authorization": "Bearer x"}), 401)
    nobody = world.member(world.admin, "nobody@x.example", "Viewer")
    membership = Membership.get(Membership.user == nobody.user_pk)
    MemberRole.delete().where(MemberRole.membership == membership).execute()
    assert_error(
        world.get(user_path(world.admin), nobody), 403, "missing required scopes: read:users"
    )
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert world.get(user_path(world.admin), viewer).status_code == 200


# -- POST /user/{id}/roles -------------------------------------------------------------------


def test_replace_roles_returns_member_record(world: World) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    result = set_roles(world, world.admin, viewer, {"roles": [world.role_id("Developer")]})
    assert result.status_code == 200, result.text
    assert result.json == expected_member(viewer, ["Developer"])
    assert role_names(world, world.admin, viewer) == ["Developer"]


def test_add_roles_extends(world: World) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    body = {"roles": [world.role_id("Developer"), world.role_id("Viewer")], "add": True}
    result = set_roles(world, world.admin, viewer, body)
    assert result.status_code == 200, result.text
    assert result.json == expected_member(viewer, ["Developer", "Viewer"])
    result = set_roles(
        world, world.admin, viewer, {"roles": [world.role_id("Viewer")], "add": False}
    )
    assert result.json == expected_member(viewer, ["Viewer"])


def test_new_roles_apply_to_existing_keys(world: World) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    assert world.get("/api/v1/auth/keys", viewer).status_code == 403
    set_roles(world, world.admin, viewer, {"roles": [world.role_id("Admin")]})
    assert world.get("/api/v1/auth/keys", viewer).status_code == 200
    set_roles(world, world.admin, viewer, {"roles": [world.role_id("Viewer")]})
    assert world.get("/api/v1/auth/keys", viewer).status_code == 403


BAD_ROLE_BODIES: list[tuple[Any, str]] = [
    ({}, "roles"),
    ({"roles": []}, "roles"),
    ({"roles": "rol_x"}, "roles"),
    ({"roles": [1]}, "roles"),
    ({"roles": ["rol_doesnotexist000"]}, "role does not exist: rol_doesnotexist000"),
    ({"roles": "rol_x", "add": True}, "roles"),
    ({"roles": ["rol_x"], "add": "yes"}, "add must be a boolean"),
    ([], "object"),
]


def test_set_roles_bad_input_is_400_and_changes_nothing(world: World) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    for body, message in BAD_ROLE_BODIES:
        assert_error(set_roles(world, world.admin, viewer, body), 400, message)
        assert role_names(world, world.admin, viewer) == ["Viewer"]


def test_set_roles_mixing_known_and_unknown_ids_changes_nothing(world: World) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    body = {"roles": [world.role_id("Admin"), "rol_doesnotexist000"]}
    assert_error(set_roles(world, world.admin, viewer, body), 400, "rol_doesnotexist000")
    assert role_names(world, world.admin, viewer) == ["Viewer"]


def test_set_roles_of_another_organizations_user_is_404(world: World) -> None:
    other = world.new_org("Other")
    theirs = world.member(other, "theirs@x.example", "Viewer")
    body = {"roles": [world.role_id("Admin")]}
    for target in (theirs, other):
        assert_error(set_roles(world, world.admin, target, body), 404, "user not found")
    assert role_names(world, other, theirs) == ["Viewer"]
    assert_error(set_roles(world, world.admin, "local|x", body), 404)


@pytest.mark.parametrize("role", ["Viewer", "Developer"])
def test_set_roles_needs_update_users(world: World, role: str) -> None:
    member = world.member(world.admin, f"{role}@x.example", role)
    body = {"roles": [world.role_id("Admin")]}
    assert_error(
        set_roles(world, member, member, body), 403, "missing required scopes: update:users"
    )
    assert_error(set_roles(world, member, world.admin, {"roles": [world.role_id("Viewer")]}), 403)
    assert_error(world.post(f"{user_path(member)}/roles", json=body), 401)
    assert role_names(world, world.admin, member) == [role]
    assert role_names(world, world.admin, world.admin) == ["Admin"]


def test_demoting_the_last_admin_is_409(world: World) -> None:
    for body in (
        {"roles": [world.role_id("Viewer")]},
        {"roles": [world.role_id("Developer"), world.role_id("Viewer")], "add": False},
    ):
        result = set_roles(world, world.admin, world.admin, body)
        assert_error(result, 409, "at least one Admin")
        assert role_names(world, world.admin, world.admin) == ["Admin"]
    # Adding to the last Admin, or keeping Admin among the new roles, is fine.
    body = {"roles": [world.role_id("Viewer")], "add": True}
    assert set_roles(world, world.admin, world.admin, body).status_code == 200
    body = {"roles": [world.role_id("Admin"), world.role_id("Developer")]}
    result = set_roles(world, world.admin, world.admin, body)
    assert result.json["roles"] == expected_member(world.admin, ["Admin", "Developer"])["roles"]


def test_demoting_one_of_two_admins_is_allowed(world: World) -> None:
    second = world.member(world.admin, "second@x.example", "Admin")
    body = {"roles": [world.role_id("Viewer")]}
    assert set_roles(world, second, world.admin, body).status_code == 200
    assert role_names(world, second, world.admin) == ["Viewer"]
    assert_error(set_roles(world, second, second, body), 409, "at least one Admin")
    assert role_names(world, second, second) == ["Admin"]
    assert authenticates(world, second) == 200


def test_another_organizations_admins_do_not_count(world: World) -> None:
    world.new_org("Other")
    result = set_roles(world, world.admin, world.admin, {"roles": [world.role_id("Viewer")]})
    assert_error(result, 409, "at least one Admin")
