"""Spec 4.4 organization record, roles, and the internal trial endpoint."""

from __future__ import annotations

from typing import Any

import pytest

from appliance.models import MemberRole, Membership
from tests.api.helpers import ORG_ID, ROLE_ID, START_ISO, Clock
from tests.conftest import Caller, World, assert_error

OPERATOR_TOKEN = "operator-secret-for-tests"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings_overrides(clock: Clock) -> dict[str, Any]:
    return {"clock": clock, "operator_token": OPERATOR_TOKEN}


def organization(world: World, caller: Caller) -> dict[str, Any]:
    result = world.get("/api/v1/organization", caller)
    assert result.status_code == 200, result.text
    return result.json


def roleless(world: World, org: Caller) -> Caller:
    """A member whose roles were all taken away: holds no permission at all."""
    member = world.member(org, "nobody@x.example", "Viewer")
    membership = Membership.get(Membership.user == member.user_pk)
    MemberRole.delete().where(MemberRole.membership == membership).execute()
    return member


# -- roles -----------------------------------------------------------------------------------


def test_roles_lists_the_three_fixed_roles(world: World) -> None:
    result = world.get("/api/v1/organization/roles", world.admin)
    assert result.status_code == 200, result.text
    roles = result.json
    assert [r["name"] for r in roles] == ["Admin", "Developer", "Viewer"]
    for role in roles:
        assert set(role) == {"id", "name", "description"}
        assert ROLE_ID.match(role["id"])
        assert isinstance(role["description"], str) and role["description"]
    # Stable ids: the same for every organization and every call.
    other = world.new_org("Other")
    assert world.get("/api/v1/organization/roles", other).json == roles


def test_viewer_and_developer_read_roles(world: World) -> None:
    for role in ("Viewer", "Developer"):
        member = world.member(world.admin, f"{role.lower()}@x.example", role)
        assert world.get("/api/v1/organization/roles", member).status_code == 200


@pytest.mark.parametrize("path", ["/api/v1/organization/roles", "/api/v1/organization"])
def test_reads_need_read_organization(world: World, path: str) -> None:
    assert_error(world.get(path), 401, "failed to authenticate")
    assert_error(world.get(path, headers={"Authorization": "Bearer nope"}), 401)
    result = world.get(path, roleless(world, world.admin))
    assert_error(result, 403, "missing required scopes: read:organization")


# -- organization record -------------------------------------------------------------------


def test_get_organization_full_record(world: World) -> None:
    record = organization(world, world.admin)
    assert ORG_ID.match(record["id"])
    assert record == {
        "id": world.admin.org_id,
        "name": "default",
        "display_name": "Default",
        "branding": {"logo_url": None},
        "metadata": {"org_status": "active"},
        "is_trial": False,
        "created_at": START_ISO,
        "trial_started": None,
    }


def test_each_caller_sees_own_organization(world: World) -> None:
    other = world.new_org("Other Org", "boss@other.example")
    record = organization(world, other)
    assert record["id"] == other.org_id != world.admin.org_id
    assert record["name"] == "other-org"
    assert record["display_name"] == "Other Org"
    viewer = world.member(other, "v@x.example", "Viewer")
    assert organization(world, viewer) == record


def test_patch_organization(world: World) -> None:
    body = {
        "name": "default",
        "display_name": "  Acme Corp ",
        "branding": {"logo_url": "https://acme.example/logo.png", "color": "#ff0000"},
        "metadata": {"org_status": "suspended", "tier": "gold"},
    }
    result = world.patch("/api/v1/organization", world.admin, json=body)
    assert result.status_code == 200, result.text
    expected = {
        "id": world.admin.org_id,
        "name": "default",
        "display_name": "Acme Corp",
        "branding": {"logo_url": "https://acme.example/logo.png", "color": "#ff0000"},
        "metadata": {"org_status": "suspended", "tier": "gold"},
        "is_trial": False,
        "created_at": START_ISO,
        "trial_started": None,
    }
    assert result.json == expected
    assert organization(world, world.admin) == expected
    # Objects merge: a later patch keeps the other keys.
    result = world.patch("/api/v1/organization", world.admin, json={"branding": {"color": "#0f0"}})
    assert result.json["branding"] == {
        "logo_url": "https://acme.example/logo.png",
        "color": "#0f0",
    }
    assert result.json["metadata"] == {"org_status": "suspended", "tier": "gold"}


def test_patch_touches_only_own_organization(world: World) -> None:
    other = world.new_org("Other")
    before = organization(world, other)
    result = world.patch("/api/v1/organization", world.admin, json={"display_name": "Mine"})
    assert result.status_code == 200
    assert organization(world, other) == before


BAD_PATCHES: list[tuple[Any, str]] = [
    ({"name": "renamed"}, "cannot be changed"),
    ({"display_name": ""}, "display_name"),
    ({"display_name": "   "}, "display_name"),
    ({"display_name": 7}, "display_name"),
    ({"display_name": "d" * 257}, "display_name"),
    ({"branding": "blue"}, "branding"),
    ({"metadata": ["x"]}, "metadata"),
    ({"metadata": {"org_status": 3}}, "org_status"),
    ({"branding": {"logo_url": 5}}, "logo_url"),
    ({"display_name": "Fine", "branding": {"logo_url": ["x"]}}, "logo_url"),
    ({"display_name": "Fine", "metadata": {"org_status": None}}, "org_status"),
    ({"colour": "red"}, "unknown fields: colour"),
    ([], "object"),
    (None, "required"),
]


def test_patch_bad_input_is_400_and_changes_nothing(world: World) -> None:
    before = organization(world, world.admin)
    for body, message in BAD_PATCHES:
        result = world.patch("/api/v1/organization", world.admin, json=body)
        assert_error(result, 400, message)
        assert organization(world, world.admin) == before, body


def test_patch_unsupported_media_type_is_415(world: World) -> None:
    result = world.patch(
        "/api/v1/organization",
        world.admin,
        body="display_name=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_error(result, 415)


@pytest.mark.parametrize("role", ["Viewer", "Developer"])
def test_patch_needs_update_organization(world: World, role: str) -> None:
    member = world.member(world.admin, f"{role.lower()}@x.example", role)
    result = world.patch("/api/v1/organization", member, json={"display_name": "Hijack"})
    assert_error(result, 403, "missing required scopes: update:organization")
    assert organization(world, world.admin)["display_name"] == "Default"


def test_patch_needs_a_credential(world: World) -> None:
    assert_error(world.patch("/api/v1/organization", json={"display_name": "X"}), 401)
    result = world.patch(
        "/api/v1/organization",
        headers={"Authorization": "Basic dXNlcjpwYXNz"},
        json={"display_name": "X"},
    )
    assert_error(result, 401)
    assert organization(world, world.admin)["display_name"] == "Default"


# -- internal trial endpoint ---------------------------------------------------------------


def _trial(world: World, org_id: str, body: Any, token: str | None = OPERATOR_TOKEN) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return world.patch(f"/internal-api/v1/organization/{org_id}/trial", headers=headers, json=body)


def test_trial_switch(world: World, clock: Clock) -> None:
    other = world.new_org("Other")
    clock.advance(days=1)
    result = _trial(world, other.org_id, {"is_trial": True})
    assert result.status_code == 200, result.text
    assert result.json == {"is_trial": True}
    record = organization(world, other)
    assert record["is_trial"] is True
    assert record["trial_started"] == "2026-03-05T05:06:07.891Z"
    assert organization(world, world.admin)["is_trial"] is False
    # Switching on again keeps the first start; switching off keeps the record of it.
    clock.advance(days=1)
    assert _trial(world, other.org_id, {"is_trial": True}).json == {"is_trial": True}
    assert organization(world, other)["trial_started"] == "2026-03-05T05:06:07.891Z"
    assert _trial(world, other.org_id, {"is_trial": False}).json == {"is_trial": False}
    record = organization(world, other)
    assert record["is_trial"] is False
    assert record["trial_started"] == "2026-03-05T05:06:07.891Z"


def test_trial_needs_the_operator_token(world: World) -> None:
    for token in (None, "", "wrong", OPERATOR_TOKEN + "x", "apk_x", OPERATOR_TOKEN[:-1]):
        result = _trial(world, world.admin.org_id, {"is_trial": True}, token)
        assert_error(result, 401, "operator")
    assert organization(world, world.admin)["is_trial"] is False


def test_trial_refuses_a_user_api_key(world: World) -> None:
    result = _trial(world, world.admin.org_id, {"is_trial": True}, world.admin.key)
    assert_error(result, 401, "operator")
    assert organization(world, world.admin)["is_trial"] is False


def test_trial_unknown_organization_is_404(world: World) -> None:
    assert_error(_trial(world, "org_doesnotexist0000", {"is_trial": True}), 404, "organization")


def test_trial_bad_input_is_400(world: World) -> None:
    for body in ({}, {"is_trial": "true"}, {"is_trial": 1}, [True], None):
        assert_error(_trial(world, world.admin.org_id, body), 400)
        assert organization(world, world.admin)["is_trial"] is False


class TestTrialWithoutOperatorToken:
    @pytest.fixture
    def settings_overrides(self) -> dict[str, Any]:
        return {"operator_token": ""}

    def test_trial_is_404_when_no_operator_token_is_configured(self, world: World) -> None:
        for token in (None, "", "anything"):
            result = _trial(world, world.admin.org_id, {"is_trial": True}, token)
            assert_error(result, 404, "route not found")
        assert organization(world, world.admin)["is_trial"] is False
