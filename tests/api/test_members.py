"""Spec 4.4 members: list, invite, remove; the last-Admin rule; tenant isolation."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from appliance.models import Environment, EnvironmentUser, Invitation, MemberRole, Membership
from appliance.models.db import write_transaction
from tests.api.helpers import START_ISO, Clock, authenticates, expected_member, member_ids
from tests.conftest import Caller, World, assert_error

MEMBERS = "/api/v1/organization/members"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings_overrides(clock: Clock) -> dict[str, Any]:
    return {"clock": clock, "base_url": "https://appliance.example/"}


def members(world: World, caller: Caller, **params: Any) -> dict[str, Any]:
    result = world.get(MEMBERS, caller, params=params)
    assert result.status_code == 200, result.text
    return result.json


def invitation_count() -> int:
    return Invitation.select().count()


def roleless(world: World, org: Caller) -> Caller:
    member = world.member(org, "nobody@x.example", "Viewer")
    membership = Membership.get(Membership.user == member.user_pk)
    MemberRole.delete().where(MemberRole.membership == membership).execute()
    return member


# -- list -----------------------------------------------------------------------------------


def test_list_members_full_records(world: World) -> None:
    dev = world.member(world.admin, "dev@x.example", "Developer")
    env = Environment.get(Environment.organization == world.admin.org_id)
    with write_transaction():
        EnvironmentUser.create(environment=env, user=dev.user_pk)
    body = members(world, world.admin, sort="email", order="ASC")
    assert body["total"] == 2
    environment = {
        "id": env.id,
        "slug": "default",
        "name": "default",
        "color": "#888888",
        "allow_pre_release": False,
        "is_default": True,
        "is_active": True,
        "is_deleted": False,
        "created": START_ISO,
        "cloud_account": None,
    }
    assert body["members"] == [
        expected_member(world.admin, ["Admin"]),
        expected_member(dev, ["Developer"], [environment]),
    ]


def test_list_sort_search_filter_paginate(world: World, clock: Clock) -> None:
    for email, role in [
        ("carol@x.example", "Viewer"),
        ("alice@x.example", "Developer"),
        ("bob@y.example", "Viewer"),
    ]:
        clock.advance(minutes=1)
        world.member(world.admin, email, role)
    emails = lambda body: [m["email"] for m in body["members"]]  # noqa: E731
    assert emails(members(world, world.admin)) == [
        "bob@y.example",
        "alice@x.example",
        "carol@x.example",
        "admin@localhost",
    ]
    assert emails(members(world, world.admin, sort="name", order="asc")) == [
        "admin@localhost",
        "alice@x.example",
        "bob@y.example",
        "carol@x.example",
    ]
    page = members(world, world.admin, sort="email", order="ASC", offset=1, limit=2)
    assert page["total"] == 4
    assert emails(page) == ["alice@x.example", "bob@y.example"]
    found = members(world, world.admin, search="X.EXAMPLE", sort="email", order="ASC")
    assert (found["total"], emails(found)) == (2, ["alice@x.example", "carol@x.example"])
    viewers = members(world, world.admin, filter="[role=Viewer]", sort="email", order="ASC")
    assert (viewers["total"], emails(viewers)) == (2, ["bob@y.example", "carol@x.example"])
    either = members(world, world.admin, filter="[role=Viewer&Admin]", sort="email", order="ASC")
    assert either["total"] == 3
    by_email = members(world, world.admin, filter="[email=Bob@Y.example]")
    assert emails(by_email) == ["bob@y.example"]


def test_list_role_filter_counts_members_with_several_roles_once(world: World) -> None:
    dev = world.member(world.admin, "dev@x.example", "Developer")
    roles = [world.role_id("Developer"), world.role_id("Viewer")]
    result = world.post(f"/api/v1/user/{dev.user_id}/roles", world.admin, json={"roles": roles})
    assert result.status_code == 200, result.text
    body = members(world, world.admin, filter="[role=Developer&Viewer]")
    assert body["total"] == 1
    assert [m["email"] for m in body["members"]] == ["dev@x.example"]


def test_list_bad_parameters_are_400(world: World) -> None:
    for params in (
        {"filter": "[colour=red]"},
        {"filter": "role=Viewer"},
        {"sort": "password"},
        {"limit": "0"},
        {"offset": "-2"},
        {"order": "up"},
    ):
        assert_error(world.get(MEMBERS, world.admin, params=params), 400)


def test_list_shows_only_own_organization(world: World) -> None:
    other = world.new_org("Other")
    world.member(other, "theirs@x.example", "Viewer")
    assert member_ids(world, world.admin) == [world.admin.user_id]
    assert len(member_ids(world, other)) == 2


def test_a_user_in_two_organizations_has_separate_roles(world: World) -> None:
    other = world.new_org("Other")
    shared = world.member(world.admin, "both@x.example", "Viewer")
    world.member(other, "both@x.example", "Admin")
    mine = members(world, world.admin, filter="[email=both@x.example]")["members"]
    theirs = members(world, other, filter="[email=both@x.example]")["members"]
    assert [r["name"] for r in mine[0]["roles"]] == ["Viewer"]
    assert [r["name"] for r in theirs[0]["roles"]] == ["Admin"]
    assert mine[0]["id"] == theirs[0]["id"] == shared.user_id


def test_list_needs_read_users(world: World) -> None:
    assert_error(world.get(MEMBERS), 401)
    assert_error(world.get(MEMBERS, headers={"Authorization": "Bearer ses_short"}), 401)
    assert_error(world.get(MEMBERS, roleless(world, world.admin)), 403, "read:users")
    for role in ("Viewer", "Developer"):
        member = world.member(world.admin, f"{role}@x.example", role)
        assert world.get(MEMBERS, member).status_code == 200


# -- invite ---------------------------------------------------------------------------------


def test_invite_one_good_one_unknown_role(world: World) -> None:
    body = {
        "invitees": [
            {"email": " New@X.example ", "role": world.role_id("Developer")},
            {"email": "other@x.example", "role": "rol_doesnotexist000"},
        ]
    }
    result = world.post(MEMBERS, world.admin, json=body)
    assert result.status_code == 200, result.text
    invites, errors = result.json["invites"], result.json["errors"]
    assert set(result.json) == {"invites", "errors"}
    assert len(invites) == 1
    invite = invites[0]
    assert re.match(r"^uinv_[0-9A-Za-z]{16}$", invite["id"])
    url = urlparse(invite["invitation_url"])
    assert (url.scheme, url.netloc, url.path) == (
        "https",
        "appliance.example",
        f"/invitations/{invite['id']}",
    )
    token = parse_qs(url.query)["token"][0]
    assert len(token) == 32
    assert invite == {
        "id": invite["id"],
        "invitee": "new@x.example",
        "organization_id": world.admin.org_id,
        "invitation_url": invite["invitation_url"],
    }
    assert errors == [
        {
            "email": "other@x.example",
            "statusCode": 404,
            "error": "NOT_FOUND",
            "message": "role does not exist: rol_doesnotexist000",
        }
    ]
    assert invitation_count() == 1
    # An invitation is not a membership until accepted.
    assert member_ids(world, world.admin) == [world.admin.user_id]


def test_invite_per_item_errors(world: World) -> None:
    world.member(world.admin, "already@x.example", "Viewer")
    viewer = world.role_id("Viewer")
    body = {
        "invitees": [
            {"email": "already@x.example", "role": viewer},
            {"email": "not-an-email", "role": viewer},
            "just-a-string",
            {"email": "fine@x.example", "role": viewer},
        ]
    }
    result = world.post(MEMBERS, world.admin, json=body)
    assert result.status_code == 200, result.text
    assert [i["invitee"] for i in result.json["invites"]] == ["fine@x.example"]
    errors = result.json["errors"]
    assert [(e["email"], e["statusCode"], e["error"]) for e in errors] == [
        ("already@x.example", 409, "CONFLICT"),
        ("not-an-email", 400, "BAD_REQUEST"),
        (None, 400, "BAD_REQUEST"),
    ]
    assert "already a member" in errors[0]["message"]
    assert invitation_count() == 1


def test_invite_bad_input_is_400_and_invites_nobody(world: World) -> None:
    for body in (
        {},
        {"invitees": []},
        {"invitees": "a@x.example"},
        {"invitees": [{"email": "a@x.example", "role": "r"}] * 101},
        [{"email": "a@x.example"}],
        None,
    ):
        assert_error(world.post(MEMBERS, world.admin, json=body), 400)
        assert invitation_count() == 0


@pytest.mark.parametrize("role", ["Viewer", "Developer"])
def test_invite_needs_create_users(world: World, role: str) -> None:
    member = world.member(world.admin, f"{role}@x.example", role)
    body = {"invitees": [{"email": "n@x.example", "role": world.role_id("Admin")}]}
    result = world.post(MEMBERS, member, json=body)
    assert_error(result, 403, "missing required scopes: create:users")
    assert_error(world.post(MEMBERS, json=body), 401)
    assert invitation_count() == 0


def test_invite_is_scoped_to_the_callers_organization(world: World) -> None:
    other = world.new_org("Other", "boss@other.example")
    body = {"invitees": [{"email": "boss@other.example", "role": world.role_id("Viewer")}]}
    # A member of another organization is not a member here, so can be invited.
    result = world.post(MEMBERS, world.admin, json=body)
    assert result.json["errors"] == []
    assert result.json["invites"][0]["organization_id"] == world.admin.org_id
    assert member_ids(world, other) == [other.user_id]


# -- remove ---------------------------------------------------------------------------------


def test_remove_member(world: World) -> None:
    dev = world.member(world.admin, "dev@x.example", "Developer")
    env = Environment.get(Environment.organization == world.admin.org_id)
    with write_transaction():
        EnvironmentUser.create(environment=env, user=dev.user_pk)
    result = world.delete(f"{MEMBERS}/{dev.user_id}", world.admin)
    assert result.status_code == 200, result.text
    assert result.json == {"status": "success"}
    assert member_ids(world, world.admin) == [world.admin.user_id]
    assert authenticates(world, dev) == 401
    assert EnvironmentUser.select().where(EnvironmentUser.user == dev.user_pk).count() == 0
    assert_error(world.delete(f"{MEMBERS}/{dev.user_id}", world.admin), 404, dev.user_id)


def test_removal_in_one_organization_leaves_the_other_membership(world: World) -> None:
    other = world.new_org("Other")
    mine = world.member(world.admin, "both@x.example", "Viewer")
    theirs = world.member(other, "both@x.example", "Viewer")
    assert world.delete(f"{MEMBERS}/{mine.user_id}", world.admin).status_code == 200
    assert authenticates(world, mine) == 401
    assert authenticates(world, theirs) == 200
    assert theirs.user_id in member_ids(world, other)


def test_remove_another_organizations_member_is_404(world: World) -> None:
    other = world.new_org("Other")
    theirs = world.member(other, "theirs@x.example", "Viewer")
    for target in (theirs.user_id, other.user_id):
        assert_error(world.delete(f"{MEMBERS}/{target}", world.admin), 404, "user not found")
    assert sorted(member_ids(world, other)) == sorted([other.user_id, theirs.user_id])
    assert authenticates(world, theirs) == 200


def test_remove_malformed_or_unknown_id_is_404(world: World) -> None:
    for member_id in ("abc", "local|", "local|x1", "google|1", "1", "local|999"):
        assert_error(world.delete(f"{MEMBERS}/{member_id}", world.admin), 404, "user not found")
    assert member_ids(world, world.admin) == [world.admin.user_id]


@pytest.mark.parametrize("role", ["Viewer", "Developer"])
def test_remove_needs_delete_users(world: World, role: str) -> None:
    member = world.member(world.admin, f"{role}@x.example", role)
    victim = world.member(world.admin, "victim@x.example", "Viewer")
    result = world.delete(f"{MEMBERS}/{victim.user_id}", member)
    assert_error(result, 403, "missing required scopes: delete:users")
    assert_error(world.delete(f"{MEMBERS}/{victim.user_id}"), 401)
    assert victim.user_id in member_ids(world, world.admin)


def test_removing_the_last_admin_is_409(world: World) -> None:
    viewer = world.member(world.admin, "v@x.example", "Viewer")
    before = members(world, world.admin)
    result = world.delete(f"{MEMBERS}/{world.admin.user_id}", world.admin)
    assert_error(result, 409, "at least one Admin")
    assert members(world, world.admin) == before
    assert authenticates(world, world.admin) == 200
    # With a second Admin, either may go.
    world.post(
        f"/api/v1/user/{viewer.user_id}/roles",
        world.admin,
        json={"roles": [world.role_id("Admin")]},
    )
    result = world.delete(f"{MEMBERS}/{world.admin.user_id}", viewer)
    assert result.status_code == 200, result.text
    assert member_ids(world, viewer) == [viewer.user_id]
    assert_error(world.delete(f"{MEMBERS}/{viewer.user_id}", viewer), 409, "at least one Admin")


def test_rejoining_does_not_revive_old_credentials(world: World) -> None:
    dev = world.member(world.admin, "dev@x.example", "Developer")
    world.set_password("default", "dev@x.example", "a long password")
    login = {"email": "dev@x.example", "password": "a long password"}
    session = world.post("/api/v1/auth/login", json=login).json["access_token"]
    assert world.delete(f"{MEMBERS}/{dev.user_id}", world.admin).status_code == 200
    invited = world.post(
        MEMBERS,
        world.admin,
        json={"invitees": [{"email": "dev@x.example", "role": world.role_id("Viewer")}]},
    ).json["invites"][0]
    path = f"/api/v1/invitations/{invited['id']}/accept"
    token = parse_qs(urlparse(invited["invitation_url"]).query)["token"][0]
    accepted = world.post(path, json={"token": token, "password": "a long password"})
    assert accepted.status_code == 200, accepted.text
    assert authenticates(world, dev) == 401
    assert authenticates(world, session) == 401
    assert world.post("/api/v1/auth/login", json=login).status_code == 200
