"""Spec 5 authentication: runtime Basic credentials, session login, invitations, rate limits."""

from __future__ import annotations

import base64
import hashlib
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from appliance.config import Limits
from appliance.errors import RateLimited, Unauthenticated
from appliance.models import Invitation, SessionToken, User
from appliance.services import runtimes
from appliance.services.auth import Authenticator
from tests.api.helpers import Clock, authenticates, expected_member, iso, member_ids
from tests.conftest import Caller, World, assert_error

PASSWORD = "correct horse battery"
REAL_TOKEN = "<the invitation's token>"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings_overrides(clock: Clock) -> dict[str, Any]:
    return {"clock": clock}


def authenticator(world: World) -> Authenticator:
    return world.appliance.services.auth


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


# -- runtime Basic credentials (no runtime endpoint is routed yet) --------------------------


@pytest.mark.parametrize("form", ["base64", "literal"])
def test_runtime_basic_both_forms(world: World, form: str) -> None:
    username, password = world.runtime(world.admin)
    header = basic(username, password) if form == "base64" else f"Basic {username}:{password}"
    principal = authenticator(world).authenticate_runtime(header, "10.0.0.1")
    assert principal.kind == "runtime"
    assert principal.organization_id == world.admin.org_id
    assert principal.permissions == frozenset()
    assert principal.user_pk is None
    listed = runtimes.list_runtimes(world.admin.org_id)
    assert [r["username"] for r in listed] == [username]
    assert principal.runtime_id is not None


def test_runtime_belongs_to_its_organization(world: World) -> None:
    other = world.new_org("Other")
    username, password = world.runtime(other)
    principal = authenticator(world).authenticate_runtime(basic(username, password), "a")
    assert principal.organization_id == other.org_id


def _runtime_rejects(world: World, header: str | None) -> None:
    with pytest.raises(Unauthenticated, match="runtime authentication failed"):
        authenticator(world).authenticate_runtime(header, "10.0.0.1")


def test_runtime_wrong_or_malformed_credentials(world: World) -> None:
    username, password = world.runtime(world.admin)
    other_user, other_password = world.runtime(world.admin)
    for header in (
        None,
        "",
        basic(username, password + "x"),
        f"Basic {username}:{password[:-1]}",
        basic(username, other_password),
        basic("rt_doesnotexist0000", password),
        basic(username, ""),
        f"Basic {username}",  # literal form without a password
        "Basic " + base64.b64encode(username.encode()).decode(),  # base64 without a colon
        "Basic !!!notbase64",
        "Basic " + base64.b64encode(b"\xff\xfe:\xff").decode(),
        f"Bearer {password}",
        f"basic {username}:{password}",
        f"Basic admin:{password}",
        f"Basic {username.upper()}:{password}",
        f"Basic rt_{'x' * 70}:{password}",
    ):
        _runtime_rejects(world, header)
    principal = authenticator(world).authenticate_runtime(basic(other_user, other_password), "b")
    assert principal.organization_id == world.admin.org_id


def test_runtime_revoked_credentials(world: World) -> None:
    username, password = world.runtime(world.admin)
    authenticator(world).authenticate_runtime(basic(username, password), "a")
    runtimes.revoke_runtime(world.ctx, world.admin.org_id, username)
    _runtime_rejects(world, basic(username, password))
    _runtime_rejects(world, f"Basic {username}:{password}")


def test_runtime_password_is_stored_as_a_hash(world: World) -> None:
    username, password = world.runtime(world.admin)
    stored = _database_bytes(world)
    assert password.encode() not in stored
    assert hashlib.sha256(password.encode()).hexdigest().encode() in stored


def test_user_key_is_not_a_runtime_credential(world: World) -> None:
    _runtime_rejects(world, f"Basic {world.admin.key}")
    _runtime_rejects(world, f"Bearer {world.admin.key}")


# -- session login (extension) ---------------------------------------------------------------


def login(world: World, body: Any, **kw: Any) -> Any:
    return world.post("/api/v1/auth/login", json=body, **kw)


def test_login_and_use_the_session(world: World, clock: Clock) -> None:
    world.set_password("default", "admin@localhost", PASSWORD)
    result = login(world, {"email": "Admin@Localhost", "password": PASSWORD})
    assert result.status_code == 200, result.text
    body = result.json
    assert set(body) == {"access_token", "token_type", "expires_at"}
    assert body["token_type"] == "Bearer"
    assert body["expires_at"] == "2026-03-04T17:06:07.891Z"
    token = body["access_token"]
    assert token.startswith("ses_") and len(token) == 47
    assert authenticates(world, token) == 200
    # The session acts as the user, with the user's roles: here, key management.
    assert (
        world.get("/api/v1/auth/keys", headers={"Authorization": f"Bearer {token}"}).json["total"]
        == 1
    )
    stored = _database_bytes(world)
    assert token.encode() not in stored
    assert PASSWORD.encode() not in stored
    assert hashlib.sha256(token.encode()).hexdigest().encode() in stored


def test_session_expires_after_twelve_hours(world: World, clock: Clock) -> None:
    world.set_password("default", "admin@localhost", PASSWORD)
    token = login(world, {"email": "admin@localhost", "password": PASSWORD}).json["access_token"]
    clock.advance(hours=11, minutes=59)
    assert authenticates(world, token) == 200
    clock.advance(minutes=1)
    assert authenticates(world, token) == 401
    assert authenticates(world, world.admin) == 200


def test_session_of_removed_member_is_401(world: World) -> None:
    dev = world.member(world.admin, "dev@x.example", "Developer")
    world.set_password("default", "dev@x.example", PASSWORD)
    token = login(world, {"email": "dev@x.example", "password": PASSWORD}).json["access_token"]
    assert authenticates(world, token) == 200
    result = world.delete(f"/api/v1/organization/members/{dev.user_id}", world.admin)
    assert result.status_code == 200, result.text
    assert authenticates(world, token) == 401


def test_session_with_a_viewer_role_is_limited_to_it(world: World) -> None:
    world.member(world.admin, "v@x.example", "Viewer")
    world.set_password("default", "v@x.example", PASSWORD)
    token = login(world, {"email": "v@x.example", "password": PASSWORD}).json["access_token"]
    result = world.get("/api/v1/auth/keys", headers={"Authorization": f"Bearer {token}"})
    assert_error(result, 403, "read:organization_api_key")


def test_login_chooses_the_organization(world: World) -> None:
    other = world.new_org("Other")
    world.member(other, "admin@localhost", "Viewer")
    world.set_password("default", "admin@localhost", PASSWORD)
    for organization, expected in (
        (None, world.admin.org_id),
        ("default", world.admin.org_id),
        ("other", other.org_id),
        (other.org_id, other.org_id),
    ):
        body = {"email": "admin@localhost", "password": PASSWORD, "organization": organization}
        token = login(world, body).json["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        assert world.get("/api/v1/organization", headers=headers).json["id"] == expected
    body = {"email": "admin@localhost", "password": PASSWORD, "organization": "nowhere"}
    assert_error(login(world, body), 404, "organization not found")
    third = world.new_org("Third")
    body = {"email": "admin@localhost", "password": PASSWORD, "organization": third.org_id}
    assert_error(login(world, body), 404, "organization not found")


def test_login_wrong_credentials_is_401(world: World) -> None:
    world.member(world.admin, "dev@x.example", "Developer")
    world.set_password("default", "admin@localhost", PASSWORD)
    for body in (
        {"email": "admin@localhost", "password": PASSWORD + "!"},
        {"email": "admin@localhost", "password": ""},
        {"email": "nobody@localhost", "password": PASSWORD},
        {"email": "dev@x.example", "password": PASSWORD},  # a user without a password
    ):
        assert_error(login(world, body), 401, "wrong e-mail or password")


def test_login_bad_input_is_400(world: World) -> None:
    world.set_password("default", "admin@localhost", PASSWORD)
    for body in (
        {},
        {"email": "admin@localhost"},
        {"password": PASSWORD},
        {"email": 5, "password": PASSWORD},
        {"email": "admin@localhost", "password": PASSWORD, "organization": 7},
        ["admin@localhost", PASSWORD],
        None,
    ):
        assert_error(login(world, body), 400)
        assert SessionToken.select().count() == 0


def test_unknown_or_malformed_session_token_is_401(world: World) -> None:
    for token in ("ses_" + "a" * 43, "ses_short", "ses_" + "a" * 44):
        assert authenticates(world, token) == 401


# -- invitations (extension) ---------------------------------------------------------------


def invite(world: World, caller: Caller, invitees: list[dict[str, Any]]) -> dict[str, Any]:
    result = world.post("/api/v1/organization/members", caller, json={"invitees": invitees})
    assert result.status_code == 200, result.text
    return result.json


def accept_path_and_token(invitation: dict[str, Any]) -> tuple[str, str]:
    url = urlparse(invitation["invitation_url"])
    return f"/api/v1/invitations/{invitation['id']}/accept", parse_qs(url.query)["token"][0]


def test_invite_then_accept(world: World, clock: Clock) -> None:
    result = invite(
        world,
        world.admin,
        [
            {"email": "dev@x.example", "role": world.role_id("Developer")},
            {"email": "ghost@x.example", "role": "rol_doesnotexist000"},
        ],
    )
    assert [i["invitee"] for i in result["invites"]] == ["dev@x.example"]
    assert [(e["email"], e["statusCode"], e["error"]) for e in result["errors"]] == [
        ("ghost@x.example", 404, "NOT_FOUND")
    ]
    path, token = accept_path_and_token(result["invites"][0])
    clock.advance(days=1)
    accepted = world.post(path, json={"token": token, "name": "Dev Eloper", "password": PASSWORD})
    assert accepted.status_code == 200, accepted.text
    user = User.get(User.email == "dev@x.example")
    assert accepted.json == {
        **expected_member(user.id, ["Developer"]),
        "name": "Dev Eloper",
        "created_at": iso(clock.now),
    }
    assert accepted.json["id"] in member_ids(world, world.admin)
    # The new member logs in with the password they chose and acts with the invited role.
    session = login(world, {"email": "dev@x.example", "password": PASSWORD})
    assert session.status_code == 200, session.text
    headers = {"Authorization": f"Bearer {session.json['access_token']}"}
    assert world.get("/api/v1/organization/members", headers=headers).status_code == 200
    result = world.post("/api/v1/auth/key", headers=headers, json={"name": "mine"})
    assert_error(result, 403, "create:organization_api_key")
    # Accepting twice is a conflict, and changes nothing.
    again = world.post(path, json={"token": token, "password": "another password"})
    assert_error(again, 409, "already accepted")
    assert login(world, {"email": "dev@x.example", "password": PASSWORD}).status_code == 200


def test_accept_with_existing_user_keeps_their_password(world: World) -> None:
    other = world.new_org("Other", "boss@other.example")
    world.set_password("other", "boss@other.example", PASSWORD)
    result = invite(
        world, world.admin, [{"email": "boss@other.example", "role": world.role_id("Viewer")}]
    )
    path, token = accept_path_and_token(result["invites"][0])
    accepted = world.post(path, json={"token": token, "password": "not their password"})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json["id"] == other.user_id
    assert [r["name"] for r in accepted.json["roles"]] == ["Viewer"]
    assert login(world, {"email": "boss@other.example", "password": PASSWORD}).status_code == 200
    body = {"email": "boss@other.example", "password": "not their password"}
    assert login(world, body).status_code == 401


def test_accept_with_bad_token_or_unknown_invitation_is_404(world: World) -> None:
    result = invite(world, world.admin, [{"email": "n@x.example", "role": world.role_id("Viewer")}])
    path, token = accept_path_and_token(result["invites"][0])
    for bad_path, bad_token in (
        (path, token[:-1] + ("a" if token[-1] != "a" else "b")),
        (path, ""),
        ("/api/v1/invitations/uinv_doesnotexist0000/accept", token),
    ):
        result = world.post(bad_path, json={"token": bad_token, "password": PASSWORD})
        assert_error(result, 404, "invitation not found")
    assert member_ids(world, world.admin) == [world.admin.user_id]
    assert User.get_or_none(User.email == "n@x.example") is None
    # The real token still works afterwards.
    assert world.post(path, json={"token": token, "password": PASSWORD}).status_code == 200


def test_expired_invitation_is_409(world: World, clock: Clock) -> None:
    result = invite(world, world.admin, [{"email": "n@x.example", "role": world.role_id("Viewer")}])
    path, token = accept_path_and_token(result["invites"][0])
    clock.advance(days=7)
    assert_error(world.post(path, json={"token": token, "password": PASSWORD}), 409, "expired")
    assert member_ids(world, world.admin) == [world.admin.user_id]


BAD_ACCEPT_BODIES: list[Any] = [
    {},
    {"token": REAL_TOKEN},
    {"password": PASSWORD},
    {"token": 5, "password": PASSWORD},
    {"token": REAL_TOKEN, "password": "short"},
    {"token": REAL_TOKEN, "password": PASSWORD, "name": 3},
    {"token": REAL_TOKEN, "password": PASSWORD, "name": "n" * 257},
    [],
]


def test_accept_bad_input_is_400_and_changes_nothing(world: World) -> None:
    result = invite(world, world.admin, [{"email": "n@x.example", "role": world.role_id("Viewer")}])
    path, token = accept_path_and_token(result["invites"][0])
    for body in BAD_ACCEPT_BODIES:
        if isinstance(body, dict) and body.get("token") == REAL_TOKEN:
            body = {**body, "token": token}  # the invitation's real token: only the rest is bad
        assert_error(world.post(path, json=body), 400)
        assert member_ids(world, world.admin) == [world.admin.user_id]
        assert Invitation.get().accepted_at is None


def test_accept_too_long_invitation_id_is_400(world: World) -> None:
    result = world.post(f"/api/v1/invitations/{'u' * 65}/accept", json={"token": "t"})
    assert_error(result, 400, "too long")


# -- rate limits ------------------------------------------------------------------------------


TIGHT = Limits(
    rate_per_credential=1, burst_per_credential=3, failed_auth_rate=1, failed_auth_burst=3
)


def assert_rate_limited(result: Any) -> None:
    body = assert_error(result, 429, "too many requests")
    assert body == {"statusCode": 429, "error": "TOO_MANY_REQUESTS", "message": "too many requests"}
    assert result.headers["Retry-After"] == "1"
    assert result.headers["RateLimit-Policy"] == '"default";q=3;w=3'
    assert result.headers["RateLimit"] == '"default";r=0;t=1'


class TestRateLimits:
    @pytest.fixture
    def settings_overrides(self) -> dict[str, Any]:
        return {"limits": TIGHT}

    def test_per_credential(self, world: World) -> None:
        viewer = world.member(world.admin, "v@x.example", "Viewer")
        for _ in range(3):
            assert world.get("/api/v1/organization", world.admin).status_code == 200
        assert_rate_limited(world.get("/api/v1/organization", world.admin))
        # Another credential of the same organization has its own bucket.
        assert world.get("/api/v1/organization", viewer).status_code == 200

    def test_failed_authentications_per_address(self, world: World) -> None:
        bad = {"Authorization": "Bearer apk_wrong"}
        for _ in range(3):
            assert_error(world.get("/api/v1/organization", headers=bad), 401)
        assert_rate_limited(world.get("/api/v1/organization", headers=bad))
        assert_rate_limited(world.get("/api/v1/organization"))
        # Another address is not affected; a good key from the same address still works.
        assert_error(world.get("/api/v1/organization", headers=bad, remote_addr="10.9.9.9"), 401)
        assert world.get("/api/v1/organization", world.admin).status_code == 200

    def test_failed_logins_per_address(self, world: World) -> None:
        world.set_password("default", "admin@localhost", PASSWORD)
        wrong = {"email": "admin@localhost", "password": "wrong password"}
        for _ in range(3):
            assert_error(login(world, wrong), 401)
        assert_rate_limited(login(world, {"email": "admin@localhost", "password": PASSWORD}))
        good = login(
            world, {"email": "admin@localhost", "password": PASSWORD}, remote_addr="10.1.1.1"
        )
        assert good.status_code == 200

    def test_failed_runtime_authentications_per_address(self, world: World) -> None:
        username, password = world.runtime(world.admin)
        for _ in range(3):
            _runtime_rejects(world, basic(username, "wrong"))
        with pytest.raises(RateLimited):
            authenticator(world).authenticate_runtime(basic(username, "wrong"), "10.0.0.1")
        principal = authenticator(world).authenticate_runtime(basic(username, password), "10.0.0.2")
        assert principal.organization_id == world.admin.org_id

    def test_per_runtime_credential(self, world: World) -> None:
        username, password = world.runtime(world.admin)
        for _ in range(3):
            authenticator(world).authenticate_runtime(basic(username, password), "10.0.0.1")
        with pytest.raises(RateLimited) as raised:
            authenticator(world).authenticate_runtime(f"Basic {username}:{password}", "10.0.0.3")
        assert (raised.value.retry_after, raised.value.limit, raised.value.window) == (1, 3, 3)


class TestOperatorTokenRateLimit:
    @pytest.fixture
    def settings_overrides(self) -> dict[str, Any]:
        return {"limits": TIGHT, "operator_token": "the-operator-token"}

    def test_failed_operator_tokens_per_address(self, world: World) -> None:
        path = f"/internal-api/v1/organization/{world.admin.org_id}/trial"
        guess = {"Authorization": "Bearer guess"}
        for _ in range(3):
            assert_error(world.patch(path, json={"is_trial": True}, headers=guess), 401)
        assert_rate_limited(world.patch(path, json={"is_trial": True}, headers=guess))
        right = {"Authorization": "Bearer the-operator-token"}
        result = world.patch(path, json={"is_trial": True}, headers=right, remote_addr="10.2.2.2")
        assert result.json == {"is_trial": True}


def _database_bytes(world: World) -> bytes:
    stored = b""
    for name in ("appliance.db", "appliance.db-wal"):
        path = world.data_dir / name
        if path.exists():
            stored += path.read_bytes()
    return stored
